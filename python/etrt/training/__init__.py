"""etrt.training: on-device training with joint forward-backward programs, shaped like
``executorch.extension.training``::

    from etrt.training import _load_for_executorch_for_training, get_sgd_optimizer
    module = _load_for_executorch_for_training("xor.pte")            # .ptd: data_path="xor.ptd"
    loss, predicted = module.forward_backward("forward", (x, label))
    optimizer = get_sgd_optimizer(module.named_parameters(), 0.1, 0, 0, 0, False)
    optimizer.step(module.named_gradients())

Programs come from ``torch.export.experimental._export_forward_backward`` lowered by ExecuTorch. The module
is libetrt_training (C++), a consumer of the same libetrt as ``import etrt``: the plugins, registry and
thread pool ``etrt`` reports serve it. ``named_parameters()`` and ``named_gradients()`` are views of the
method's memory, not copies: a parameter view stays valid as long as its module (an optimizer step
changes it in place); a gradient view holds the last step's gradients until the next forward_backward.
Inputs may be NumPy arrays or torch tensors; outputs and views come back as the same kind as the last
inputs (NumPy before any). Beyond ExecuTorch: ``get_adam_optimizer`` / ``get_adamw_optimizer``,
``TrainingModule.save_parameters`` (a .ptd checkpoint), and ``named_parameters()`` works before the first
step. See docs/TRAINING.md.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from .. import _training

__all__ = ["TrainingModule", "get_sgd_optimizer", "get_adam_optimizer", "get_adamw_optimizer",
           "_load_for_executorch_for_training", "_load_for_executorch_for_training_from_buffer"]


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch")


class TrainingModule:
    """A loaded joint forward-backward program (executorch's TrainingModule)."""

    def __init__(self, module: _training.TrainingModule):
        self._module = module
        self._torch = False

    def _out(self, arrays):
        if not self._torch:
            return arrays
        import torch
        return {k: torch.from_numpy(v) for k, v in arrays.items()} if isinstance(arrays, dict) else \
            [torch.from_numpy(a) if hasattr(a, "__array_interface__") else a for a in arrays]

    def forward_backward(self, method_name: str, inputs: Sequence[Any]) -> List[Any]:
        """Runs forward and backward; returns the user outputs (the loss first), copied."""
        self._torch = any(_is_torch(i) for i in inputs)
        arrays = [i.detach().cpu().numpy() if _is_torch(i) else i for i in inputs]
        return self._out(self._module.forward_backward(method_name, arrays))

    def named_parameters(self, method_name: str = "forward") -> Dict[str, Any]:
        return self._out(self._module.named_parameters(method_name))

    def named_gradients(self, method_name: str = "forward") -> Dict[str, Any]:
        return self._out(self._module.named_gradients(method_name))

    def save_parameters(self, path: Union[str, os.PathLike], method_name: str = "forward") -> None:
        """Writes the parameters as a .ptd keyed by their fully qualified names (not in ExecuTorch): a
        program exported with external constants of those names loads it, in ExecuTorch and in etrt."""
        self._module.save_parameters(os.fspath(path), method_name)


def _load_for_executorch_for_training(path: Union[str, os.PathLike], data_path: Optional[str] = None) -> TrainingModule:
    return TrainingModule(_training.TrainingModule.load(os.fspath(path), os.fspath(data_path) if data_path else ""))


def _load_for_executorch_for_training_from_buffer(buffer: Union[bytes, bytearray, memoryview],
                                                  data_buffer: Optional[Union[bytes, bytearray, memoryview]] = None
                                                  ) -> TrainingModule:
    """The program (and .ptd) bytes are copied: the buffers need not outlive the module."""
    return TrainingModule(_training.TrainingModule.load_bytes(buffer, data_buffer))


def get_sgd_optimizer(named_parameters: Dict[str, Any], lr: float, momentum: float = 0, dampening: float = 0,
                      weight_decay: float = 0, nesterov: bool = False) -> _training.Optimizer:
    """SGD over the parameters of one module (the dict named_parameters() returned, or part of it)."""
    return _training.get_sgd_optimizer(named_parameters, lr, momentum, dampening, weight_decay, nesterov)


def get_adam_optimizer(named_parameters: Dict[str, Any], lr: float = 1e-3, beta1: float = 0.9,
                       beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0) -> _training.Optimizer:
    """torch.optim.Adam's update (weight_decay as L2 added to the gradient)."""
    return _training.get_adam_optimizer(named_parameters, lr, beta1, beta2, eps, weight_decay, False)


def get_adamw_optimizer(named_parameters: Dict[str, Any], lr: float = 1e-3, beta1: float = 0.9,
                        beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> _training.Optimizer:
    """torch.optim.AdamW's update (decoupled weight decay)."""
    return _training.get_adam_optimizer(named_parameters, lr, beta1, beta2, eps, weight_decay, True)

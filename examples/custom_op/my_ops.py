"""The custom operator, defined for PyTorch: my_ops::scaled_swish(x, beta) = x * sigmoid(beta * x).

ExecuTorch needs two overloads of a custom operator: the functional one, which the
model calls and torch.export traces, and the `.out` one, which the exported
program calls at run time with a pre-allocated output (the runtime never
allocates). The schemas below are what etrt's kernel receives, argument by
argument: `Tensor x` -> a tensor, `float beta` -> a double, then `out`.
"""
import torch

LIBRARY = torch.library.Library("my_ops", "DEF")
LIBRARY.define("scaled_swish(Tensor x, float beta) -> Tensor")
LIBRARY.define("scaled_swish.out(Tensor x, float beta, *, Tensor(a!) out) -> Tensor(a!)")


def scaled_swish(x: torch.Tensor, beta: float) -> torch.Tensor:
    return x * torch.sigmoid(beta * x)


def scaled_swish_out(x: torch.Tensor, beta: float, *, out: torch.Tensor) -> torch.Tensor:
    out.copy_(scaled_swish(x, beta))
    return out


LIBRARY.impl("scaled_swish", scaled_swish, "CompositeExplicitAutograd")
LIBRARY.impl("scaled_swish.out", scaled_swish_out, "CompositeExplicitAutograd")


@torch.library.register_fake("my_ops::scaled_swish")
def _scaled_swish_shape(x: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.empty_like(x)


class SwishMlp(torch.nn.Module):
    """A small model calling the operator between two linear layers."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.ops.my_ops.scaled_swish(self.fc1(x), 1.5))

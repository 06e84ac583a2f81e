"""EwChainBackend, the ahead-of-time half: runs chains of float32 elementwise
operators fused, one pass over the data instead of one per operator.

- EwChainPartitioner tags connected groups of supported nodes (relu, sigmoid,
  tanh, neg, add, sub, mul on float32 tensors of one shape; add/sub/mul may take
  a number instead of a tensor).
- EwChainBackend.preprocess turns one such subgraph into the blob the runtime
  half (ewchain_backend.cpp) runs. Blob format "EWC1", little endian:

    header   magic "EWC1", u32 version (1), u32 inputs, u32 outputs, u32 slots, u32 instructions
    code     per instruction: u8 opcode, u8 0, u16 dst, u16 a, u16 b, f32 immediate  (12 bytes)
    outputs  per output: u16 slot

  Slots 0..inputs-1 hold the delegate's inputs in order; each instruction writes
  a new slot (dst = inputs + its index) from earlier slots a and b (b unused by
  unary opcodes; the *_IMM opcodes use the immediate instead of slot b).
"""
import struct
from typing import Dict, List, final

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.canonical_partitioners.pattern_op_partitioner import generate_pattern_op_partitions
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.dialects._ops import ops as exir_ops
from torch.export import ExportedProgram
from torch.fx.passes.operator_support import OperatorSupportBase

MAGIC = b"EWC1"
VERSION = 1
MAX_SLOTS = 64  # the runtime keeps a block of every slot on its stack

# opcode of each operator: (tensor-tensor, tensor-number)
UNARY = {exir_ops.edge.aten.relu.default: 1, exir_ops.edge.aten.sigmoid.default: 2,
         exir_ops.edge.aten.tanh.default: 3, exir_ops.edge.aten.neg.default: 4}
BINARY = {exir_ops.edge.aten.add.Tensor: (10, 20), exir_ops.edge.aten.sub.Tensor: (11, 21),
          exir_ops.edge.aten.mul.Tensor: (12, 22)}


def _tensor_meta(node):
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


class _ElementwiseSupport(OperatorSupportBase):
    """Float32 elementwise nodes whose tensor operands all have the output's shape (no broadcasting)
    and are computed values or user inputs (a chain carries no weights)."""

    def __init__(self, exported_program: ExportedProgram) -> None:
        super().__init__()
        self.user_inputs = set(exported_program.graph_signature.user_inputs)

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function" or (node.target not in UNARY and node.target not in BINARY):
            return False
        out = _tensor_meta(node)
        if out is None or out.dtype != torch.float32:
            return False
        if node.kwargs.get("alpha", 1) != 1:
            return False
        operands = node.args[:1] if node.target in UNARY else node.args[:2]
        for arg in operands:
            meta = _tensor_meta(arg)
            if meta is None:
                if not isinstance(arg, (int, float)) or arg is operands[0]:
                    return False
            elif meta.dtype != torch.float32 or meta.shape != out.shape:
                return False
            elif arg.op == "placeholder" and arg.name not in self.user_inputs:
                return False  # a parameter, buffer or lifted constant
        return True


@final
class EwChainBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: List[CompileSpec]) -> PreprocessResult:
        graph = edge_program.graph_module.graph
        user_inputs = set(edge_program.graph_signature.user_inputs)
        slots: Dict[torch.fx.Node, int] = {}
        for node in graph.nodes:
            if node.op == "placeholder":
                if node.name not in user_inputs:
                    raise RuntimeError(f"EwChainBackend: {node.name} is a parameter or buffer; chains take inputs only")
                slots[node] = len(slots)
        inputs = len(slots)
        code = []
        outputs: List[int] = []
        for node in graph.nodes:
            if node.op == "call_function":
                a = slots[node.args[0]]
                b, immediate = 0, 0.0
                if node.target in UNARY:
                    opcode = UNARY[node.target]
                else:
                    other = node.args[1]
                    if isinstance(other, torch.fx.Node):
                        opcode, b = BINARY[node.target][0], slots[other]
                    else:
                        opcode, immediate = BINARY[node.target][1], float(other)
                slots[node] = len(slots)
                code.append(struct.pack("<BBHHHf", opcode, 0, slots[node], a, b, immediate))
            elif node.op == "output":
                outputs = [slots[n] for n in node.args[0]]
        if len(slots) > MAX_SLOTS:
            raise RuntimeError(f"EwChainBackend: {len(slots)} values, at most {MAX_SLOTS} per chain")
        blob = MAGIC + struct.pack("<5I", VERSION, inputs, len(outputs), len(slots), len(code))
        blob += b"".join(code) + struct.pack(f"<{len(outputs)}H", *outputs)
        return PreprocessResult(processed_bytes=blob)


@final
class EwChainPartitioner(Partitioner):
    def __init__(self) -> None:
        super().__init__()
        self.delegation_spec = DelegationSpec(EwChainBackend.__name__, [])

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        tags = {}
        for partition in generate_pattern_op_partitions(exported_program.graph_module,
                                                         op_support=_ElementwiseSupport(exported_program)):
            tag = f"ewchain_{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = self.delegation_spec
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)

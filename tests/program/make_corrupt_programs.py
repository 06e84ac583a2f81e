#!/usr/bin/env python3
"""Writes tests/program/corrupt/<case>.pte and cases.json.

Every case starts from a reference program exported by ExecuTorch 1.5.1
(tests/models/generated) and changes exactly one thing, so the file is still a
well-formed flatbuffer (or a well-formed header) and only etrt's own bounds
checks can catch it. Two ways of editing:

  * semantic: executorch's own deserialise_pte_binary -> edit the Program
    dataclass -> serialize_pte_binary (the same code path the exporter uses);
  * surgical: patch bytes of the original file at offsets computed by a small
    flatbuffer walker below (for fields the serialiser recomputes: segment
    offsets/sizes, the extended header, and union slots it would never omit).

The output is deterministic: running the script again rewrites identical
files (checked by --check, which the test suite does not need python for).

Usage: python3 tests/program/make_corrupt_programs.py [--check]
"""

import argparse
import copy
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(ROOT, "tests", "models", "generated")
OUT_DIR = os.path.join(HERE, "corrupt")

I32_MAX = 2**31 - 1


# --------------------------------------------------------------------------
# A minimal flatbuffer walker (little-endian), enough to find a field's bytes.
# Field numbers follow core/schema/program.fbs (a union takes two slots: type
# then value).

class Fb:
    def __init__(self, data):
        self.b = bytearray(data)

    def u16(self, o):
        return struct.unpack_from("<H", self.b, o)[0]

    def u32(self, o):
        return struct.unpack_from("<I", self.b, o)[0]

    def i32(self, o):
        return struct.unpack_from("<i", self.b, o)[0]

    def root(self):
        return self.u32(0)

    def vtable(self, table):
        return table - self.i32(table)

    def slot(self, table, field):
        """Absolute position of the vtable entry for `field`."""
        vt = self.vtable(table)
        entry = 4 + 2 * field
        if entry >= self.u16(vt):
            raise KeyError(f"field {field} is beyond the vtable")
        return vt + entry

    def field(self, table, field):
        """Absolute position of a field's data, or None when absent."""
        vt = self.vtable(table)
        entry = 4 + 2 * field
        off = self.u16(vt + entry) if entry < self.u16(vt) else 0
        return table + off if off else None

    def deref(self, pos):
        return pos + self.u32(pos)

    def vector(self, table, field):
        """(count, first element position) of a vector field."""
        pos = self.field(table, field)
        if pos is None:
            return 0, None
        vec = self.deref(pos)
        return self.u32(vec), vec + 4

    def detach_field(self, table, field):
        """Gives `table` a private copy of its vtable, appended at the end of
        the buffer, with `field` marked absent. (Vtables are shared between
        tables of the same shape, even of different types, so zeroing the
        shared one would change other tables too.) Only for files without
        segments, where the flatbuffer is the whole file."""
        vt = self.vtable(table)
        size = self.u16(vt)
        copy = bytearray(self.b[vt:vt + size])
        struct.pack_into("<H", copy, 4 + 2 * field, 0)
        while len(self.b) % 4:
            self.b.append(0)
        new_vt = len(self.b)
        self.b += copy
        struct.pack_into("<i", self.b, table, table - new_vt)

    def table_at(self, table, field, index):
        n, first = self.vector(table, field)
        if index >= n:
            raise IndexError(index)
        return self.deref(first + 4 * index)


# Field numbers of the tables we walk.
PROGRAM_EXECUTION_PLAN, PROGRAM_SEGMENTS = 1, 4
SEGMENT_OFFSET, SEGMENT_SIZE = 0, 1
PLAN_NAME, PLAN_VALUES, PLAN_CHAINS = 0, 2, 5
EVALUE_VAL = 1  # slot 0 is val_type
KERNEL_TYPES_INT_LIST = 7  # NONE, Null, Int, Bool, Double, Tensor, String, IntList
CHAIN_INSTRUCTIONS = 2
INSTRUCTION_ARGS = 1  # slot 0 is instr_args_type


# --------------------------------------------------------------------------

def read_model(rel):
    with open(os.path.join(MODELS, rel), "rb") as f:
        return f.read()


class Serialiser:
    """executorch's own (de)serialisation, imported lazily (it pulls in torch)."""

    def __init__(self):
        from executorch.exir._serialize import _program
        import executorch.exir.schema as schema

        self.program_mod = _program
        self.schema = schema

    def load(self, rel):
        return self.program_mod.deserialize_pte_binary(read_model(rel))

    def save(self, pte_file):
        return bytes(self.program_mod.serialize_pte_binary(pte_file))


def plan_named(program, name):
    for plan in program.execution_plan:
        if plan.name == name:
            return plan
    raise KeyError(name)


def build_cases(ser):
    S = ser.schema
    cases = []

    def add(name, source, data, stage, error, description, **extra):
        case = {"file": name + ".pte", "source": source, "stage": stage, "error": error,
                "description": description}
        case.update(extra)
        cases.append((case, bytes(data)))

    def semantic(name, source, method, edit, stage, error, description, **extra):
        pte_file = ser.load(source)
        plan = plan_named(pte_file.program, method) if method else None
        edit(pte_file.program, plan)
        add(name, source, ser.save(pte_file), stage, error, description, **extra)

    OP_ADD = "op_add/portable.pte"        # methods broadcast, forward, rank0; values 0,1 inputs, 2 out, 3 alpha
    DYN = "dynamic_mlp/portable.pte"      # extended header + constant segment, IntLists, dynamic input
    DYN_X = "dynamic_mlp/xnnpack.pte"     # two segments, the second at a non-zero offset

    def value(plan, index):
        return plan.values[index].val

    # ---- tensors
    def huge_sizes(program, plan):
        t = value(plan, 2)
        t.sizes = [I32_MAX] * 3
        t.dim_order = [0, 1, 2]
    semantic("tensor_size_overflow", OP_ADD, "forward", huge_sizes, "program",
             "value 2: byte size overflows",
             "output tensor sizes [2^31-1]*3: 4*(2^31-1)^3 bytes overflows 64 bits")

    def empty_with_huge_sizes(program, plan):
        t = value(plan, 2)
        t.sizes = [0, I32_MAX, I32_MAX, I32_MAX]
        t.dim_order = [0, 1, 2, 3]
    semantic("tensor_stride_overflow", OP_ADD, "forward", empty_with_huge_sizes, "program",
             "value 2: sizes overflow 64-bit strides",
             "output tensor sizes [0, 2^31-1, 2^31-1, 2^31-1]: 0 bytes, but its dense strides overflow int64 "
             "(found by the pte fuzzer)")

    def huge_sizes_rank2(program, plan):
        value(plan, 2).sizes = [I32_MAX, I32_MAX]
    semantic("tensor_size_huge_rank2", OP_ADD, "forward", huge_sizes_rank2, "program",
             "exceed planned buffer 1 of 192 bytes",
             "output tensor sizes [2^31-1, 2^31-1]: ~2^64 bytes, no overflow but far beyond its planned buffer")

    def negative(program, plan):
        value(plan, 0).sizes = [3, -5]
    semantic("negative_size", OP_ADD, "forward", negative, "program",
             "value 0: negative size -5 at dim 1", "input tensor sizes [3, -5]")

    def rank17(program, plan):
        t = value(plan, 0)
        t.sizes = [1] * 17
        t.dim_order = list(range(17))
    semantic("rank_17", OP_ADD, "forward", rank17, "program", "value 0: rank 17 exceeds 16",
             "input tensor of rank 17 (ET_MAX_RANK is 16)")

    def dim_order_dup(program, plan):
        value(plan, 0).dim_order = [0, 0]
    semantic("dim_order_not_permutation", OP_ADD, "forward", dim_order_dup, "program",
             "value 0: dim order is not a permutation", "dim_order [0, 0]")

    def dim_order_range(program, plan):
        value(plan, 0).dim_order = [0, 200]
    semantic("dim_order_out_of_range", OP_ADD, "forward", dim_order_range, "program",
             "value 0: dim order is not a permutation", "dim_order [0, 200] for a rank-2 tensor")

    def dim_order_short(program, plan):
        value(plan, 0).dim_order = [0]
    semantic("dim_order_wrong_length", OP_ADD, "forward", dim_order_short, "program",
             "value 0: dim order has 1 entries for rank 2", "dim_order of length 1 for a rank-2 tensor")

    def bad_dtype(program, plan):
        value(plan, 0).scalar_type = S.ScalarType.QINT8
    semantic("unsupported_dtype", OP_ADD, "forward", bad_dtype, "program",
             "value 0: unsupported scalar type 12", "input tensor of scalar type QINT8")

    def unbound(program, plan):
        value(plan, 0).shape_dynamism = S.TensorShapeDynamism.DYNAMIC_UNBOUND
    semantic("dynamic_unbound", OP_ADD, "forward", unbound, "program",
             "value 0: unbounded dynamic shapes are not supported", "input tensor DYNAMIC_UNBOUND")

    def storage_offset(program, plan):
        value(plan, 0).storage_offset = 4
    semantic("storage_offset", OP_ADD, "forward", storage_offset, "program",
             "value 0: non-zero storage offset is not supported", "input tensor storage_offset 4")

    # ---- memory planning
    def memory_id(n):
        def edit(program, plan):
            value(plan, 0).allocation_info.memory_id = n
        return edit
    semantic("memory_id_zero", OP_ADD, "forward", memory_id(0), "program",
             "value 0: memory id 0 out of range (2 buffers, 1-based)",
             "planned tensor in memory id 0 (the placeholder entry)")
    semantic("memory_id_beyond_buffers", OP_ADD, "forward", memory_id(2), "program",
             "value 0: memory id 2 out of range (2 buffers, 1-based)",
             "planned tensor in memory id 2; non_const_buffer_sizes has entries 0 and 1")

    def offset_past(program, plan):
        value(plan, 0).allocation_info.memory_offset_low = 184
    semantic("planned_offset_past_buffer", OP_ADD, "forward", offset_past, "program",
             "value 0: 60 bytes at offset 184 exceed planned buffer 1 of 192 bytes",
             "[3,5] float tensor at offset 184 of a 192-byte buffer")

    def offset_misaligned(program, plan):
        value(plan, 0).allocation_info.memory_offset_low = 98  # inside the buffer, not 4-byte aligned
    semantic("planned_offset_misaligned", OP_ADD, "forward", offset_misaligned, "program",
             "is not aligned to its 4-byte elements", "float32 input planned at byte offset 98 (in bounds, not a multiple of 4)")

    def offset_high(program, plan):
        value(plan, 0).allocation_info.memory_offset_high = 0xFFFFFFFF
    semantic("planned_offset_high_word", OP_ADD, "forward", offset_high, "program",
             "exceed planned buffer 1 of 192 bytes", "memory_offset_high 0xffffffff (offset ~2^64)")

    def buffer_negative(program, plan):
        plan.non_const_buffer_sizes = [0, -1]
    semantic("buffer_size_negative", OP_ADD, "forward", buffer_negative, "program",
             "negative planned buffer size", "non_const_buffer_sizes [0, -1]")

    def buffer_huge(program, plan):
        plan.non_const_buffer_sizes = [0, 1 << 60]
    semantic("buffer_size_huge", OP_ADD, "forward", buffer_huge, "ok", None,
             "non_const_buffer_sizes [0, 2^60]: valid, the runtime allocates only what its tensors use (192 bytes)",
             rlimit_test=True)

    def offset_beyond_limit(program, plan):
        plan.non_const_buffer_sizes = [0, 1 << 60]
        value(plan, 0).allocation_info.memory_offset_high = 1 << 8  # 2^40 bytes
    semantic("planned_offset_1tib", OP_ADD, "forward", offset_beyond_limit, "method",
             "more than the 32 GiB limit",
             "buffer of 2^60 bytes with a tensor at offset 2^40: refused at method load")

    def offset_8gib(program, plan):
        plan.non_const_buffer_sizes = [0, 1 << 60]
        value(plan, 0).allocation_info.memory_offset_high = 2  # 8 GiB
    semantic("planned_offset_8gib", OP_ADD, "forward", offset_8gib, "rlimit", None,
             "buffer of 2^60 bytes with a tensor at offset 8 GiB: under the 32 GiB cap, so the runtime "
             "allocates (and zero-fills) 8 GiB for a 3 KB file; only run under RLIMIT_AS",
             rlimit_test=True)

    # ---- constants and segments
    def const_idx(program, plan):
        value(plan, 0).data_buffer_idx = 99
    semantic("constant_buffer_index_out_of_range", DYN, "forward", const_idx, "program",
             "value 0: constant 99 is missing or smaller than the tensor's 2048 bytes",
             "weight tensor data_buffer_idx 99; the constant segment has 5 entries")

    def const_small(program, plan):
        value(plan, 0).sizes = [64, 16]
    semantic("constant_smaller_than_tensor", DYN, "forward", const_small, "program",
             "value 0: constant 1 is missing or smaller than the tensor's 4096 bytes",
             "weight tensor grown to [64, 16] while its constant data stays 2048 bytes")

    # ---- instructions
    def arg_oob(program, plan):
        plan.chains[0].instructions[0].instr_args.args[4] = 9999
    semantic("kernel_arg_out_of_range", OP_ADD, "forward", arg_oob, "program",
             "instruction 0 of chain 0: argument 9999 out of range (4 values)",
             "aten::add.out's out argument is value 9999")

    def op_oob(program, plan):
        plan.chains[0].instructions[0].instr_args.op_index = 7
    semantic("op_index_out_of_range", OP_ADD, "forward", op_oob, "program",
             "instruction 0 of chain 0: operator index 7 out of range", "KernelCall op_index 7 of 1 operator")

    def op_negative(program, plan):
        plan.chains[0].instructions[0].instr_args.op_index = -1
    semantic("op_index_negative", OP_ADD, "forward", op_negative, "program",
             "instruction 0 of chain 0: operator index -1 out of range", "KernelCall op_index -1")

    def delegate_oob(program, plan):
        plan.chains[0].instructions[0] = S.Instruction(S.DelegateCall(delegate_index=3, args=[0, 1, 2]))
    semantic("delegate_index_out_of_range", OP_ADD, "forward", delegate_oob, "program",
             "instruction 0 of chain 0: delegate index 3 out of range",
             "DelegateCall delegate_index 3 in a method without delegates")

    def jump_oob(program, plan):
        plan.values.append(S.EValue(S.Bool(False)))
        plan.chains[0].instructions.append(
            S.Instruction(S.JumpFalseCall(cond_value_index=len(plan.values) - 1, destination_instruction=99)))
    semantic("jump_destination_out_of_range", OP_ADD, "forward", jump_oob, "program",
             "instruction 1 of chain 0: jump destination out of range",
             "JumpFalseCall to instruction 99 of a 2-instruction chain")

    def jump_cond_oob(program, plan):
        plan.chains[0].instructions.append(
            S.Instruction(S.JumpFalseCall(cond_value_index=4000, destination_instruction=0)))
    semantic("jump_condition_out_of_range", OP_ADD, "forward", jump_cond_oob, "program",
             "instruction 1 of chain 0: condition index out of range", "JumpFalseCall condition value 4000")

    def move_oob(program, plan):
        plan.chains[0].instructions.append(S.Instruction(S.MoveCall(move_from=0, move_to=77)))
    semantic("move_index_out_of_range", OP_ADD, "forward", move_oob, "program",
             "instruction 1 of chain 0: move index out of range", "MoveCall to value 77")

    def free_oob(program, plan):
        plan.chains[0].instructions.append(S.Instruction(S.FreeCall(value_index=-3)))
    semantic("free_index_out_of_range", OP_ADD, "forward", free_oob, "program",
             "instruction 1 of chain 0: free index out of range", "FreeCall of value -3")

    # ---- lists
    def intlist_not_int(program, plan):
        plan.values[8].val.items = [6, 4]  # value 4 is the input tensor
    semantic("intlist_item_not_int", DYN, "forward", intlist_not_int, "program",
             "value 8: int list item 4 is not an int value",
             "permute_copy's dims IntList refers to a tensor value")

    def intlist_oob(program, plan):
        plan.values[8].val.items = [6, 1 << 40]
    semantic("intlist_item_out_of_range", DYN, "forward", intlist_oob, "program",
             "value 8: int list item 1099511627776 is not an int value", "IntList item 2^40")

    def tensorlist_not_tensor(program, plan):
        plan.values.append(S.EValue(S.TensorList(items=[0, 3])))  # value 3 is the Int alpha
    semantic("tensorlist_item_not_tensor", OP_ADD, "forward", tensorlist_not_tensor, "program",
             "value 4: tensor list item 3 is not a tensor value", "TensorList [0, 3]; value 3 is an Int")

    def opt_tensorlist(program, plan):
        plan.values.append(S.EValue(S.OptionalTensorList(items=[-1, 0, 12])))
    semantic("optional_tensorlist_item_out_of_range", OP_ADD, "forward", opt_tensorlist, "program",
             "value 4: optional tensor list item 12 is not a tensor value", "OptionalTensorList [-1, 0, 12]")

    # ---- method signature
    def input_oob(program, plan):
        plan.inputs = [0, 999]
    semantic("input_index_out_of_range", OP_ADD, "forward", input_oob, "program",
             "input/output index 999 out of range (4 values)", "method input list [0, 999]")

    def output_oob(program, plan):
        plan.outputs = [-1]
    semantic("output_index_out_of_range", OP_ADD, "forward", output_oob, "program",
             "input/output index -1 out of range (4 values)", "method output list [-1]")

    # ---- operators and delegates
    def unknown_op(program, plan):
        plan.operators[0] = S.Operator(name="custom::nope", overload="out")
    semantic("unknown_operator", OP_ADD, "forward", unknown_op, "method",
             "custom::nope.out", "operator renamed to custom::nope.out, which no plugin provides",
             load_method="forward")

    def empty_program(program, plan):
        program.execution_plan = []
    semantic("no_methods", OP_ADD, None, empty_program, "program", "program has no methods",
             "execution_plan is empty")

    def delegate_data_oob(program, plan):
        plan.delegates[0].processed.index = 7
    semantic("delegate_data_index_out_of_range", DYN_X, "forward", delegate_data_oob, "program",
             "delegate 0 data index 7 out of range", "XnnpackBackend's processed data refers to inline blob 7 of 1")

    # ---- surgical: header and segments of the original bytes
    data = bytearray(read_model(DYN))
    patched = bytearray(data)
    struct.pack_into("<Q", patched, 16, len(data) + 1)
    add("header_program_size_past_eof", DYN, patched, "program",
        f"extended header says the program is {len(data) + 1} bytes but the file has {len(data)}",
        "extended header program_size = file size + 1")

    patched = bytearray(data)
    struct.pack_into("<Q", patched, 24, len(data) + 4096)
    add("header_segment_base_past_eof", DYN, patched, "program",
        f"extended header puts segments at byte {len(data) + 4096}",
        "extended header segment_base_offset beyond the file")

    patched = bytearray(data)
    struct.pack_into("<I", patched, 12, 0x7FFFFFF0)
    add("header_length_huge", DYN, patched, "program", "extended header length 2147483632 is invalid",
        "extended header length field 0x7ffffff0")

    patched = bytearray(data[: len(data) - 100])
    add("segment_data_truncated", DYN, patched, "program", "file is truncated: segments need 3232 bytes",
        "the last 100 bytes of the constant segment cut off")

    fb = Fb(data)
    root = fb.root()
    seg0 = fb.table_at(root, PROGRAM_SEGMENTS, 0)
    size_pos = fb.field(seg0, SEGMENT_SIZE)
    patched = bytearray(data)
    struct.pack_into("<Q", patched, size_pos, 1 << 62)
    add("segment_size_past_eof", DYN, patched, "program",
        f"segment 0 (offset 0, size {1 << 62}) extends past the end of the file",
        "DataSegment 0 size 2^62")

    patched = bytearray(data)
    struct.pack_into("<Q", patched, size_pos, 2**64 - 1)
    add("segment_size_wraps", DYN, patched, "program",
        f"segment 0 (offset 0, size {2**64 - 1}) extends past the end of the file",
        "DataSegment 0 size 2^64-1 (offset + size wraps)")

    xdata = bytearray(read_model(DYN_X))
    xfb = Fb(xdata)
    xroot = xfb.root()
    n_segments, _ = xfb.vector(xroot, PROGRAM_SEGMENTS)
    offset_pos = None
    for i in range(n_segments):
        pos = xfb.field(xfb.table_at(xroot, PROGRAM_SEGMENTS, i), SEGMENT_OFFSET)
        if pos is not None:
            offset_pos, seg_index = pos, i
            break
    assert offset_pos is not None, "no segment with a stored offset in " + DYN_X
    original_offset = struct.unpack_from("<Q", xdata, offset_pos)[0]
    patched = bytearray(xdata)
    struct.pack_into("<Q", patched, offset_pos, original_offset + len(xdata))
    add("segment_offset_past_eof", DYN_X, patched, "program",
        f"segment {seg_index} (offset {original_offset + len(xdata)}",
        f"DataSegment {seg_index} offset moved {len(xdata)} bytes further, past the end of the file")

    # ---- surgical: a union whose type is set but whose value is absent.
    # The flatbuffer verifier accepts this (a missing table is "valid"); a
    # reader that trusts the type then gets a null table.
    base = read_model(OP_ADD)
    fb = Fb(base)
    plan0 = fb.table_at(fb.root(), PROGRAM_EXECUTION_PLAN, 0)
    ev0 = fb.table_at(plan0, PLAN_VALUES, 0)
    fb.detach_field(ev0, EVALUE_VAL)
    add("evalue_union_without_value", OP_ADD, fb.b, "program", "value 0 declares a type but has no content",
        "EValue 0 of the first method: val_type Tensor but no val table",
        fixed_in="04600a8 (validate_plan dereferenced val_as_Tensor() without a null check)")

    fb = Fb(base)
    plan0 = fb.table_at(fb.root(), PROGRAM_EXECUTION_PLAN, 0)
    chain0 = fb.table_at(plan0, PLAN_CHAINS, 0)
    instr0 = fb.table_at(chain0, CHAIN_INSTRUCTIONS, 0)
    fb.detach_field(instr0, INSTRUCTION_ARGS)
    add("instruction_union_without_value", OP_ADD, fb.b, "program", "instruction 0 of chain 0 has no arguments table",
        "Instruction 0 of the first method: instr_args_type KernelCall but no instr_args table",
        fixed_in="04600a8 (validate_plan dereferenced instr_args_as_KernelCall() without a null check)")

    # ---- surgical: an int list whose 8-byte items sit 4 bytes off their
    # alignment. The verifier only checks the vector's 4-byte length field;
    # reading the items as int64 would be undefined behaviour (found by the fuzzer).
    fb = Fb(read_model(DYN))
    plan0 = fb.table_at(fb.root(), PROGRAM_EXECUTION_PLAN, 0)
    n_values, _ = fb.vector(plan0, PLAN_VALUES)
    for index in range(n_values):
        ev = fb.table_at(plan0, PLAN_VALUES, index)
        type_pos = fb.field(ev, EVALUE_VAL - 1)
        if type_pos is not None and fb.b[type_pos] == KERNEL_TYPES_INT_LIST:
            int_list = fb.deref(fb.field(ev, EVALUE_VAL))
            if fb.vector(int_list, 0)[0] >= 2:
                break
    else:
        raise AssertionError("no int list of two or more items in " + DYN)
    items_pos = fb.field(int_list, 0)
    # The vector now starts 4 bytes later: its length is the low half of item 0 (a small value
    # index) and its items are misaligned.
    struct.pack_into("<I", fb.b, items_pos, fb.u32(items_pos) + 4)
    add("int_list_misaligned", DYN, fb.b, "program", f"value {index}: int list is misaligned",
        f"IntList of value {index}: items vector moved 4 bytes, so its int64 items are 4-byte aligned",
        fixed_in="elements_aligned() in Program::validate_plan (UBSan: misaligned int64 load)")

    # ---- runtime-state cases (load fine; exercised by dedicated tests)
    def unplanned_output(program, plan):
        value(plan, 2).allocation_info = None
    semantic("unplanned_intermediate", OP_ADD, "forward", unplanned_output, "execute", "tensor argument 3 has no data",
             "add's output tensor has neither planned memory nor constant data: the kernel must refuse it "
             "(the runtime itself passes data == NULL through)")

    def free_input(program, plan):
        plan.chains[0].instructions.insert(0, S.Instruction(S.FreeCall(value_index=0)))
    semantic("free_before_use", OP_ADD, "forward", free_input, "ok", None,
             "FreeCall on input 0 before aten::add.out reads it: planned memory belongs to the plan, so the "
             "free releases nothing and the program runs (before 04600a8 it left the input NULL for good)")

    def move_over_input(program, plan):
        plan.inputs = [0, 1, 3]  # input 2 is the Int alpha
        plan.chains[0].instructions.append(S.Instruction(S.MoveCall(move_from=0, move_to=3)))
    semantic("move_tensor_over_scalar_input", OP_ADD, "forward", move_over_input, "method",
             "instruction 1 (MoveCall): value 0 (a float32 tensor of rank 2) cannot move into value 3 (an int): a "
             "move keeps the destination's kind",
             "input 2 is an Int; a MoveCall copies tensor value 0 over it, so after one run the input "
             "looked like a tensor without a tensor slot (fixed after 04600a8 by the declaration deciding); a move "
             "that changes a value's kind is now refused when the method loads")

    def jump_on_tensor_without_data(program, plan):
        plan.values.append(S.EValue(S.Tensor(
            scalar_type=S.ScalarType.BOOL, storage_offset=0, sizes=[4], dim_order=[0], requires_grad=False,
            layout=0, data_buffer_idx=0, allocation_info=None, shape_dynamism=S.TensorShapeDynamism.STATIC,
            extra_tensor_info=None)))
        plan.chains[0].instructions.append(
            S.Instruction(S.JumpFalseCall(cond_value_index=len(plan.values) - 1, destination_instruction=0)))
    semantic("jump_condition_without_data", OP_ADD, "forward", jump_on_tensor_without_data, "execute",
             "jump condition tensor has no data",
             "JumpFalseCall on a bool tensor that has neither planned memory nor constant data",
             fixed_in="04600a8 (Method::execute read the NULL data of a bool condition tensor)")

    def prim_floordiv_overflow(program, plan):
        plan.operators.append(S.Operator(name="executorch_prim::floordiv", overload="int"))
        base = len(plan.values)
        plan.values += [S.EValue(S.Int(-2**63)), S.EValue(S.Int(-1)), S.EValue(S.Int(0))]
        plan.chains[0].instructions.append(S.Instruction(
            S.KernelCall(op_index=len(plan.operators) - 1, args=[base, base + 1, base + 2])))
    semantic("prim_floordiv_overflow", OP_ADD, "forward", prim_floordiv_overflow, "execute", "integer overflow",
             "executorch_prim::floordiv.int(INT64_MIN, -1): the quotient does not fit int64",
             fixed_in="04600a8 (prim_ops.cpp divided INT64_MIN by -1: SIGFPE)")

    add_instruction_operand_cases(S, semantic, OP_ADD, DYN)
    return cases


# --------------------------------------------------------------------------
# Instruction operands, checked once when a method loads (core/src/program/method_verify.cpp): what a built-in
# op, a move, a free or a jump does to the values it names. Each case adds a few values and instructions at the
# start of the first chain, so they run before anything else.

def add_instruction_operand_cases(S, semantic, OP_ADD, DYN):
    def tensor(scalar_type, sizes, data_buffer_idx=0, allocation=None, dynamism=None):
        return S.EValue(S.Tensor(
            scalar_type=scalar_type, storage_offset=0, sizes=sizes, dim_order=list(range(len(sizes))),
            requires_grad=False, layout=0, data_buffer_idx=data_buffer_idx, allocation_info=allocation,
            shape_dynamism=dynamism or S.TensorShapeDynamism.STATIC, extra_tensor_info=None))

    def planned(offset):
        return S.AllocationDetails(memory_id=1, memory_offset_low=offset, memory_offset_high=0)

    def append_values(plan, *values):
        base = len(plan.values)
        plan.values += list(values)
        return base

    def operator(plan, name, overload):
        plan.operators.append(S.Operator(name=name, overload=overload))
        return len(plan.operators) - 1

    def prepend(plan, *instructions):
        plan.chains[0].instructions[0:0] = [S.Instruction(i) for i in instructions]

    F32, I64 = S.ScalarType.FLOAT, S.ScalarType.LONG

    # ---- Free
    def free_constant(program, plan):
        item = operator(plan, "aten::_local_scalar_dense", "")
        c = append_values(plan, tensor(F32, [1], data_buffer_idx=1), S.EValue(S.Double(0.0)))
        prepend(plan, S.FreeCall(value_index=c), S.KernelCall(op_index=item, args=[c, c + 1]))
    semantic("free_constant", DYN, "forward", free_constant, "method",
             "instruction 0 (FreeCall): value 20 (a float32 tensor of rank 1) is a constant: its data belongs to the "
             "program and cannot be freed",
             "FreeCall on a one-element constant tensor, then aten::_local_scalar_dense reads it: the free cleared "
             "the constant's data pointer and the op dereferenced NULL (issue 32 D6, SIGSEGV)")

    def free_int(program, plan):
        prepend(plan, S.FreeCall(value_index=3))
    semantic("free_not_a_tensor", OP_ADD, "forward", free_int, "method",
             "instruction 0 (FreeCall): value 3 (an int) is not a tensor",
             "FreeCall on the Int alpha: the run skipped it silently")

    # ---- Move
    def move_longer_list(program, plan):
        view = operator(plan, "executorch_prim::et_view", "default")
        item = append_values(plan, S.EValue(S.Int(1)))
        longer = append_values(plan, S.EValue(S.IntList(items=[item] * 64)))
        a = append_values(plan, S.EValue(S.Int(3)), S.EValue(S.Int(5)))
        shorter = append_values(plan, S.EValue(S.IntList(items=[a, a + 1])))
        out = append_values(plan, tensor(F32, [3, 5]))
        prepend(plan, S.MoveCall(move_from=longer, move_to=shorter), S.KernelCall(op_index=view, args=[0, shorter, out]))
    semantic("move_longer_list_into_shorter", OP_ADD, "forward", move_longer_list, "method",
             "instruction 0 (MoveCall): value 5 (an int list of 64 items) cannot move into value 8 (an int list of 2 "
             "items): a move keeps the destination's length",
             "MoveCall of a 64-item IntList into a 2-item one that et_view then reads: refreshing the list wrote 64 "
             "int64 into 2 slots and read 62 item indices past its own (issue 32 D7, issue 31: a heap overflow, SIGSEGV)")

    def move_list_alias(program, plan):
        add = operator(plan, "executorch_prim::add", "Scalar")
        view = operator(plan, "executorch_prim::et_view", "default")
        c = append_values(plan, S.EValue(S.Int(0)), S.EValue(S.Int(5)), S.EValue(S.Int(0)), S.EValue(S.Int(3)))
        first = append_values(plan, S.EValue(S.IntList(items=[c + 2, c + 3])))  # [i0, 3]; i0 becomes 5
        d = append_values(plan, S.EValue(S.Int(15)), S.EValue(S.Int(1)))
        second = append_values(plan, S.EValue(S.IntList(items=[d, d + 1])))  # [15, 1]
        out = append_values(plan, tensor(F32, [3, 5]))
        prepend(plan, S.KernelCall(op_index=add, args=[c + 1, c, c + 2]),
                S.MoveCall(move_from=first, move_to=second),
                S.KernelCall(op_index=view, args=[0, second, out]))
        plan.outputs = [2, out]
    semantic("move_list_alias", OP_ADD, "forward", move_list_alias, "ok", None,
             "add.Scalar sets an item of list A to 5, MoveCall A into list B of the same length, et_view(x, B): "
             "B is now A, so the view is [5, 3] (output 1); the executor refreshed B's own items instead and the "
             "view read A's stale [0, 3] (issue 31)")

    def move_constant(program, plan):
        prepend(plan, S.MoveCall(move_from=0, move_to=5))
    semantic("move_constant_tensor", DYN, "forward", move_constant, "method",
             "instruction 0 (MoveCall): value 0 (a float32 tensor of rank 2) cannot move into value 5 (a float32 "
             "tensor of rank 2): the source's data belongs to the program",
             "MoveCall of a constant weight into permute_copy's planned out: the kernel then wrote into the "
             "program's constant bytes")

    def move_dtype(program, plan):
        t = append_values(plan, tensor(I64, [3, 5]))
        prepend(plan, S.MoveCall(move_from=0, move_to=t))
    semantic("move_tensor_dtype", OP_ADD, "forward", move_dtype, "method",
             "instruction 0 (MoveCall): value 0 (a float32 tensor of rank 2) cannot move into value 4 (an int64 "
             "tensor of rank 2): a move keeps the destination's dtype and rank",
             "MoveCall of a float32 tensor into an int64 one")

    # ---- JumpFalse
    def jump_on_int(program, plan):
        prepend(plan, S.JumpFalseCall(cond_value_index=3, destination_instruction=1))
    semantic("jump_condition_not_bool", OP_ADD, "forward", jump_on_int, "method",
             "instruction 0 (JumpFalseCall): the condition, value 3 (an int), is neither a bool nor a bool tensor",
             "JumpFalseCall on the Int alpha: refused only when it ran")

    # ---- built-in ops
    def view_of_int(program, plan):
        view = operator(plan, "executorch_prim::et_view", "default")
        out = append_values(plan, tensor(F32, [3, 5]))
        prepend(plan, S.KernelCall(op_index=view, args=[0, 3, out]))
    semantic("prim_operand_kind", OP_ADD, "forward", view_of_int, "method",
             "instruction 0 (executorch_prim::et_view.default, served by 'etrt (built-in)'): operand 1 is an int, "
             "expected an int list",
             "et_view's size operand is an Int: refused only when it ran")

    def sym_size_into_tensor(program, plan):
        size = operator(plan, "aten::sym_size", "int")
        dim = append_values(plan, S.EValue(S.Int(0)))
        plan.chains[0].instructions.append(S.Instruction(S.KernelCall(op_index=size, args=[0, dim, 2])))
    semantic("prim_out_kind", OP_ADD, "forward", sym_size_into_tensor, "method",
             "instruction 1 (aten::sym_size.int, served by 'etrt (built-in)'): operand 2 (out) is a float32 tensor "
             "of rank 2, but the result is an int",
             "sym_size.int writes its int into the method's output tensor: the run replaced the tensor by an int")

    def view_size_overflow(program, plan):
        view = operator(plan, "executorch_prim::et_view", "default")
        gather = operator(plan, "aten::gather", "out")
        plan.non_const_buffer_sizes = [0, 224]
        # 7 * 7905747460161236409 = 15 (mod 2^64): the 15 elements of input 0.
        n = append_values(plan, S.EValue(S.Int(7)), S.EValue(S.Int(7905747460161236409)))
        size = append_values(plan, S.EValue(S.IntList(items=[n, n + 1])))
        v = append_values(plan, tensor(F32, [3, 5]))
        index = append_values(plan, tensor(I64, [2, 1], allocation=planned(192)))  # zeros
        gathered = append_values(plan, tensor(F32, [2, 1], allocation=planned(208)))
        flags = append_values(plan, S.EValue(S.Int(1)), S.EValue(S.Bool(False)))
        prepend(plan, S.KernelCall(op_index=view, args=[0, size, v]),
                S.KernelCall(op_index=gather, args=[v, flags, index, flags + 1, gathered, gathered]))
        plan.outputs = [2, gathered]
    semantic("et_view_size_overflow", OP_ADD, "forward", view_size_overflow, "execute",
             "size [7, 7905747460161236409]: byte size overflows",
             "et_view of input 0 (15 elements) as [7, 7905747460161236409], whose product is 15 modulo 2^64; "
             "gather then read row 1, 7.9e18 elements away (issue 32 D8: a wild read, SIGSEGV)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="verify the committed files instead of writing them")
    args = parser.parse_args()

    ser = Serialiser()
    cases = build_cases(ser)
    names = [c["file"] for c, _ in cases]
    assert len(names) == len(set(names)), "duplicate case names"

    index = {
        "generator": "tests/program/make_corrupt_programs.py",
        "note": "stage: where the error is raised (program = et_program_load_*, method = et_method_load, "
                "execute = et_method_execute with zero inputs, ok = loads and runs, rlimit = only run in a child "
                "under a lowered RLIMIT_AS). error: a substring of the message (the message also names the file). "
                "fixed_in: the core commit that fixed the defect the case reproduced. core_bug: a known core defect the case reproduces; such cases run in a child process (pte_probe "
                "in mode `probe`), are reported as skipped while the child crashes and checked like any other "
                "once it does not.",
        "cases": [],
    }
    mismatches = []
    os.makedirs(OUT_DIR, exist_ok=True)
    for case, data in cases:
        case = dict(case)
        case["size"] = len(data)
        case["sha256"] = hashlib.sha256(data).hexdigest()
        index["cases"].append(case)
        path = os.path.join(OUT_DIR, case["file"])
        if args.check:
            if not os.path.exists(path) or open(path, "rb").read() != data:
                mismatches.append(case["file"])
        else:
            with open(path, "wb") as f:
                f.write(data)
    text = json.dumps(index, indent=1, sort_keys=False) + "\n"
    json_path = os.path.join(OUT_DIR, "cases.json")
    if args.check:
        if not os.path.exists(json_path) or open(json_path).read() != text:
            mismatches.append("cases.json")
        if mismatches:
            print("out of date: " + ", ".join(mismatches), file=sys.stderr)
            return 1
        print(f"{len(cases)} cases up to date")
        return 0
    with open(json_path, "w") as f:
        f.write(text)
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT_DIR, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

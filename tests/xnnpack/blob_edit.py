"""Reads and edits the XNNPACK delegate blob inside a .pte in place, field by field, for tests that craft damaged
graphs from real ones. A small flatbuffer reader (tables, vtables, vectors) over the layout that
plugins/xnnpack/schema/xnnpack_blob.fbs describes; field numbers are the schema's declaration order (a union
takes two: its type, then its table)."""
import struct

# Operation union member numbers (schema order) and the field numbers of their input and output ids.
FULLY_CONNECTED = 2
OPERATION_NAMES = ["NONE", "Add", "FullyConnected", "Softmax", "Sigmoid", "Transpose", "Clamp", "Conv2d", "Divide",
                   "ResizeBilinear", "ConstantPad", "AveragePool2d", "Minimum", "DepthwiseConv2d", "MaxPool2d",
                   "Multiply", "Subtract", "Floor", "Convert", "GlobalAveragePool2d", "Reshape", "ArgMaxPool2d",
                   "SquareRoot", "Ceiling", "HardSwish", "LeakyRelu", "Maximum", "Negate", "Square", "Elu",
                   "Absolute", "PRelu", "Concat2", "Concat3", "Concat4", "Slice", "Attention", "BatchMatMul",
                   "Concat5", "ConvTranspose2d", "ReciprocalSquareRoot", "Log", "Gelu", "Tanh", "Exp", "Sine",
                   "Cosine", "Copy"]
_BINARY = ([0, 1], 2)        # lhs, rhs -> output
_UNARY = ([0], 1)            # input -> output
_CONV = ([15, 16, 17], 18)   # input, weights, bias -> output
_POOL = ([10], 11)
_LISTED = ([2], 3)           # Transpose, Reshape: rank, list, input -> output
_CONCAT = ([1, 2, 3, 4, 7], 5)
NODE_IO = {
    "Add": _BINARY, "FullyConnected": ([0, 1, 2], 3), "Softmax": _UNARY, "Sigmoid": _UNARY, "Transpose": _LISTED,
    "Clamp": _UNARY, "Conv2d": _CONV, "Divide": _BINARY, "ResizeBilinear": ([2], 3), "ConstantPad": ([3], 4),
    "AveragePool2d": _POOL, "Minimum": _BINARY, "DepthwiseConv2d": _CONV, "MaxPool2d": _POOL, "Multiply": _BINARY,
    "Subtract": _BINARY, "Floor": _UNARY, "Convert": _UNARY, "GlobalAveragePool2d": _UNARY, "Reshape": _LISTED,
    "SquareRoot": _UNARY, "Ceiling": _UNARY, "HardSwish": _UNARY, "LeakyRelu": ([1], 2), "Maximum": _BINARY,
    "Negate": _UNARY, "Square": _UNARY, "Elu": ([1], 2), "Absolute": _UNARY, "PRelu": _BINARY,
    "Concat2": _CONCAT, "Concat3": _CONCAT, "Concat4": _CONCAT, "Concat5": _CONCAT, "Slice": ([3], 4),
    "BatchMatMul": _BINARY, "ConvTranspose2d": _CONV, "ReciprocalSquareRoot": _UNARY, "Log": _UNARY,
    "Gelu": _UNARY, "Tanh": _UNARY, "Exp": _UNARY, "Sine": _UNARY, "Cosine": _UNARY, "Copy": _UNARY,
}
NO_VALUE = 0xFFFFFFFF


class Table:
    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos

    def field_pos(self, field):
        """Absolute position of a field's bytes, or None when absent."""
        vtable = self.pos - struct.unpack_from("<i", self.buf, self.pos)[0]
        vtable_size = struct.unpack_from("<H", self.buf, vtable)[0]
        slot = 4 + 2 * field
        if slot >= vtable_size:
            return None
        offset = struct.unpack_from("<H", self.buf, vtable + slot)[0]
        return self.pos + offset if offset else None

    def vtable_slot_pos(self, field):
        """Position of the field's entry in this table's vtable (zeroing it makes the field absent)."""
        return self.pos - struct.unpack_from("<i", self.buf, self.pos)[0] + 4 + 2 * field

    def u8(self, field, default=0):
        at = self.field_pos(field)
        return self.buf[at] if at is not None else default

    def u32(self, field, default=0):
        at = self.field_pos(field)
        return struct.unpack_from("<I", self.buf, at)[0] if at is not None else default

    def set_u32(self, field, value):
        at = self.field_pos(field)
        assert at is not None, f"field {field} is absent"
        struct.pack_into("<I", self.buf, at, value)

    def table(self, field):
        at = self.field_pos(field)
        return Table(self.buf, at + struct.unpack_from("<I", self.buf, at)[0]) if at is not None else None

    def vector(self, field):
        """(position of the first element, count), or (None, 0)."""
        at = self.field_pos(field)
        if at is None:
            return None, 0
        start = at + struct.unpack_from("<I", self.buf, at)[0]
        return start + 4, struct.unpack_from("<I", self.buf, start)[0]

    def tables(self, field):
        first, count = self.vector(field)
        return [Table(self.buf, first + 4 * i + struct.unpack_from("<I", self.buf, first + 4 * i)[0])
                for i in range(count)]


class Node:
    def __init__(self, table):
        self.table = table
        self.kind = OPERATION_NAMES[table.u8(0)] if table.u8(0) < len(OPERATION_NAMES) else str(table.u8(0))
        self.op = table.table(1)
        inputs, output = NODE_IO.get(self.kind, ([], None))
        self.input_fields = inputs
        self.output_field = output

    def inputs(self):
        return [self.op.u32(f, NO_VALUE) for f in self.input_fields]

    def output(self):
        return self.op.u32(self.output_field)

    def set_input(self, slot, value_id):
        self.op.set_u32(self.input_fields[slot], value_id)


class Value:
    """A value's tensor (TensorValue or a QuantizedTensorValue's base)."""

    def __init__(self, table):
        self.table = table
        self.kind = table.u8(0)  # 1 TensorValue, 2 QuantizedTensorValue
        self.holder = table.table(1)
        self.tensor = self.holder.table(0) if self.kind == 2 else self.holder
        self.id = self.tensor.u32(6)
        self.io = self.tensor.u32(5)
        self.constant = self.tensor.u32(3) != 0
        first, count = self.tensor.vector(2)
        self.dims = tuple(struct.unpack_from(f"<{count}I", table.buf, first)) if count else ()


class Blob:
    """An XNNPACK blob starting at `start` in `buf` (a bytearray of the whole .pte, edited in place)."""

    def __init__(self, buf, start):
        self.buf, self.start = buf, start
        self.fb = start + struct.unpack_from("<I", buf, start + 10)[0]
        self.root = Table(buf, self.fb + struct.unpack_from("<I", buf, self.fb)[0])

    def nodes(self):
        return [Node(t) for t in self.root.tables(1)]

    def values(self):
        return [Value(t) for t in self.root.tables(2)]


def blobs(buf):
    """Every XNNPACK blob of a .pte: an XH00 header whose flatbuffer says XN00 or XN01."""
    found, at = [], bytes(buf).find(b"XH00")
    while at >= 0:
        start = at - 4
        if start >= 0 and start + 30 <= len(buf):
            fb = start + struct.unpack_from("<I", buf, start + 10)[0]
            if fb + 8 <= len(buf) and bytes(buf[fb + 4:fb + 8]) in (b"XN00", b"XN01"):
                found.append(Blob(buf, start))
        at = bytes(buf).find(b"XH00", at + 4)
    return found

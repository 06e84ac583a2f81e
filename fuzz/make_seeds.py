"""Seed corpora for the parser fuzzers, from real files (run by fuzz/CMakeLists.txt at build time).

    make_seeds.py OUT_DIR --models tests/models/generated --manifests DIR [DIR ...]

OUT_DIR/xnnpack_blob: every XNNPACK delegate blob of tests/models/generated/*/xnnpack.pte, cut out of the
    program by its XH00 header (flatbuffer and constant region sizes give the blob's length);
OUT_DIR/npy: every array of the reference programs' .npz files (an .npz is a zip of .npy files);
OUT_DIR/manifest: every *.json (and *.json.in template) in the manifest directories given;
OUT_DIR/etdump: scripts of tracing-session calls (fuzz/etdump_fuzzer.cpp's encoding) that trace the
    instructions of each reference program's portable.pte as a host would: one or two runs, each
    instruction's output recorded in a debug buffer, delegate calls with events, results fetched; and
    as hosts of ABI 1.5/1.6 would: whole spans, raw records in batches with runs open across them.
"""
import argparse
import shutil
import struct
import sys
import zipfile
from pathlib import Path


def blobs(program: bytes):
    """(offset, bytes) of each XNNPACK blob: 4 bytes, 'XH00', u16 header size, u32 flatbuffer offset and size,
    u32 constant offset, u64 constant size."""
    at = program.find(b"XH00")
    while at >= 4:
        start = at - 4
        if start + 30 <= len(program):
            _fb_offset, _fb_size, c_offset, c_size = struct.unpack_from("<IIIQ", program, start + 10)
            end = start + c_offset + c_size
            if c_offset > 0 and end <= len(program):
                yield start, program[start:end]
        at = program.find(b"XH00", at + 4)


def text(value: bytes) -> bytes:
    return bytes([len(value)]) + value


def trace_step(op: int, kind: int, name: bytes = b"", plugin: bytes = b"", index: int = -1, ts: int = 0) -> bytes:
    """One call of the script: op (0 begin, 1 end, 2 value, 3 fetch, 4 span: a 1.6 host's), then the event's
    fields."""
    return (bytes([op]) + text(name) + text(plugin) + bytes([kind, index & 0xFF, 0, 0xFF])
            + ts.to_bytes(3, "big") + bytes([0]))


def tensor_value(dtype_index: int, sizes, is_output: int = 0) -> bytes:
    numel = 1
    for size in sizes:
        numel *= size
    return bytes([5, 0, 0, dtype_index, len(sizes)]) + bytes(sizes) + bytes(range(numel * 4)) + bytes([is_output])


def etdump_scripts(operators):
    """Five scripts over one program's operator names (the last two from hosts of ABI 1.5 and 1.6)."""
    ops = [name.encode()[:31] for name in operators][:12]
    ts = 1
    run = b""
    for runs in (1, 2):
        run = trace_step(0, 0, b"forward", ts=ts)
        for index, name in enumerate(ops):
            run += trace_step(0, 1, name, b"kernels_optimized", index, ts + 2 * index + 1)
            run += trace_step(1, 1, name, b"kernels_optimized", index, ts + 2 * index + 2)
            run += trace_step(2, 1, name, index=index) + tensor_value(6, [2, 3])
        run += trace_step(1, 0, b"forward", ts=ts + 2 * len(ops) + 3)
        yield bytes([1, 0, 64]) + text(b"seed.pte") + run * runs + trace_step(3, 0) + bytes([0])
    delegate = (trace_step(0, 0, b"forward") + trace_step(0, 2, b"XnnpackBackend", index=0, ts=2)
                + trace_step(0, 4, b"xnn_fully_connected", index=0, ts=3) + trace_step(1, 4, b"xnn_fully_connected", index=0, ts=4)
                + trace_step(0, 5, b"chunk", index=0, ts=3) + trace_step(1, 5, b"chunk", index=0, ts=4)
                + trace_step(1, 2, b"XnnpackBackend", index=0, ts=5) + trace_step(1, 0, b"forward", ts=6))
    yield bytes([0]) + text(b"") + delegate + trace_step(3, 0) + bytes([1])
    yield from host_1_6_scripts(ops)


def record(kind: int, name_pick: int = 1, duration: int = 3) -> bytes:
    """One raw record of a session_records step: kind (0 operator, 1 delegate, 2 the run), which kept name."""
    return bytes([kind | (name_pick << 4), duration])


def records_step(records, in_run: bool = False, anchor_ns: int = 1000, rate_index: int = 2) -> bytes:
    """A session_records step of a 1.6 host: op 5, flags (0x01 in a run), count, anchor at the host's counter
    (mode 0) with its ns (3 bytes) and rate kRates[rate_index] (2: a 24 MHz counter), then the records."""
    return bytes([5, 1 if in_run else 0, len(records), rate_index << 2]) + anchor_ns.to_bytes(3, "big") + b"".join(records)


def host_1_6_scripts(ops):
    """Scripts of hosts of ABI 1.5 and 1.6 (header bit 0x02) over one program's operators: raw records in
    batches with runs open across them, a delegate event and a worker chunk between batches, whole spans."""
    run = [record(1 if index % 5 == 4 else 0, index % 4) for index in range(len(ops))] + [record(2, 0, 40)]
    split = min(2, len(run) - 1)
    batches = (records_step(run + run[:split], in_run=True)
               + trace_step(0, 4, b"xnn_fully_connected", index=0, ts=3) + trace_step(1, 4, b"xnn_fully_connected", index=0, ts=4)
               + trace_step(0, 5, b"chunk", index=0, ts=3) + trace_step(1, 5, b"chunk", index=0, ts=4)
               + records_step(run[split:]) + trace_step(3, 0) + bytes([1])
               + records_step([], in_run=True) + trace_step(0, 4, b"event", ts=9) + trace_step(1, 4, b"event", ts=10)
               + records_step(run * 3, anchor_ns=1 << 20, rate_index=1))
    yield bytes([2]) + text(b"records.pte") + batches + trace_step(3, 0) + bytes([0])
    spans = trace_step(0, 0, b"forward", ts=1)
    for index, name in enumerate(ops):
        spans += trace_step(4, 1, name, b"kernels_optimized", index, ts=2 * index + 3) + (2 * index + 2).to_bytes(3, "big")
        spans += trace_step(2, 1, name, index=index) + tensor_value(6, [2, 3])
    spans += trace_step(1, 0, b"forward", ts=2 * len(ops) + 4)
    yield bytes([3, 0, 64]) + text(b"spans.pte") + spans * 2 + trace_step(3, 0) + bytes([1])


def operator_names(program: bytes):
    """The aten operator names a program spells (the strings of its operator table)."""
    names = []
    at = program.find(b"aten::")
    while at >= 0 and len(names) < 32:
        end = at
        while end < len(program) and 0x20 < program[end] < 0x7F:
            end += 1
        names.append(program[at:end].decode())
        at = program.find(b"aten::", end)
    return names


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--models", type=Path, required=True)
    parser.add_argument("--manifests", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    for kind in ("xnnpack_blob", "npy", "manifest", "etdump"):
        shutil.rmtree(args.out / kind, ignore_errors=True)
        (args.out / kind).mkdir(parents=True)
    count = {"xnnpack_blob": 0, "npy": 0, "manifest": 0, "etdump": 0}
    for pte in sorted(args.models.glob("*/xnnpack.pte")):
        for index, (_, blob) in enumerate(blobs(pte.read_bytes())):
            (args.out / "xnnpack_blob" / f"{pte.parent.name}_{index}.bin").write_bytes(blob)
            count["xnnpack_blob"] += 1
    for npz in sorted(args.models.glob("*/*.npz")):
        with zipfile.ZipFile(npz) as archive:
            for name in archive.namelist():
                data = archive.read(name)
                if len(data) <= 64 << 10:  # small inputs keep the fuzzer fast
                    (args.out / "npy" / f"{npz.parent.name}_{npz.stem}_{Path(name).stem}.npy").write_bytes(data)
                    count["npy"] += 1
    for pte in sorted(args.models.glob("*/portable.pte")):
        for index, script in enumerate(etdump_scripts(operator_names(pte.read_bytes()))):
            (args.out / "etdump" / f"{pte.parent.name}_{index}.bin").write_bytes(script)
            count["etdump"] += 1
    for directory in args.manifests:
        for manifest in sorted(list(directory.glob("*.json")) + list(directory.glob("*.json.in"))):
            (args.out / "manifest" / f"{directory.name}_{manifest.name}").write_bytes(manifest.read_bytes())
            count["manifest"] += 1
    for kind, n in count.items():
        if n == 0:
            print(f"make_seeds.py: no {kind} seeds found", file=sys.stderr)
            return 1
    (args.out / "stamp").write_text(" ".join(f"{k}={v}" for k, v in count.items()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of tracing per run, in instructions (callgrind), on the reference programs.

    python3 bench/tracing_overhead.py [--build build] [--baseline OTHER_BUILD] [--runs 40] [--only NAME ...]

For each program, callgrind_counts.per_run counts the instructions of one
execute ((Ir at 1 + RUNS runs - Ir at 1 run) / RUNS, inside et_method_execute). That is done
with tracing off, with --profile (the etdump tracer on, no debug buffer) and
with --etdump --debug-buffer (debug events too). "of which re-anchoring" is the
part of --profile's count spent in TraceClock::reanchor (a fresh clock pair
every ~1 ms of wall time: under callgrind a run lasts ~50 times longer than
natively, so most runs re-anchor here and few do natively). --baseline names a build of
etrt from before tracing existed: its "off" count against this build's is the
cost of the tracing hooks when nothing is traced. Instruction counts are
stable on a loaded machine; wall-clock times here are not.
"""
import argparse
from pathlib import Path

from callgrind_counts import per_run, per_run_split

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models" / "generated"
PROGRAMS = ["mlp/portable.pte", "mlp/xnnpack.pte", "small_cnn/portable.pte", "small_cnn/xnnpack.pte",
            "mobilenet_v2_block/portable.pte", "mobilenet_v2_block/xnnpack.pte", "resnet_basic/portable.pte",
            "resnet_basic/xnnpack.pte", "transformer_encoder/portable.pte", "transformer_encoder/xnnpack.pte",
            "dynamic_mlp/portable.pte", "two_methods/portable.pte"]
MODES = {"off": [], "profile": ["--profile"], "debug": ["--etdump", "{tmp}/d.etdp", "--debug-buffer", "{tmp}/d.bin"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--baseline", help="a build of etrt without tracing, for the cost of the hooks when off")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    etrt = Path(args.build) / "bin" / "etrt"
    print("| program | baseline Ir/run | off Ir/run | off vs baseline | --profile Ir/run | on vs off | "
          "of which re-anchoring | + debug buffer Ir/run | on vs off |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in PROGRAMS:
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        program = MODELS / name
        counts = {mode: per_run(etrt, program, args.runs, extra) for mode, extra in MODES.items() if mode != "profile"}
        counts["profile"], reanchor = per_run_split(etrt, program, args.runs, MODES["profile"], "etrt::TraceClock::reanchor")
        base = per_run(Path(args.baseline) / "bin" / "etrt", program, args.runs, []) if args.baseline else None
        off = counts["off"]
        cells = [name, f"{base:,.0f}" if base else "-", f"{off:,.0f}",
                 f"{100 * (off / base - 1):+.2f}%" if base else "-",
                 f"{counts['profile']:,.0f}", f"{100 * (counts['profile'] / off - 1):+.1f}%", f"{reanchor:,.0f}",
                 f"{counts['debug']:,.0f}", f"{100 * (counts['debug'] / off - 1):+.1f}%"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

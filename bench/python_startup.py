"""Python start-up cost of etrt vs ExecuTorch: import, and cold start (import +
load + first run) of the MobileNetV2-style program, each in a fresh process.

    python3 bench/python_startup.py [--python PY] [--repeats 15] [--markdown]

Every measurement is its own child process of `--python` (default: this
interpreter), so nothing is cached in-process. Runs alternate etrt / ExecuTorch
inside each repetition so machine drift hits both alike; cells are medians.
Wall time is taken from outside (spawn to reap); peak RSS is the child's own
ru_maxrss from os.wait4 (RUSAGE_CHILDREN only gives a running max over all
children, so it cannot be split per child).
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
INPUT = DEMO / "input_0.npy"
EXPECTED = DEMO / "expected_0.npy"
PROGRAMS = [("portable", DEMO / "mobilenet_v2_block.pte"),
            ("XNNPACK", ROOT / "tests" / "models" / "generated" / "mobilenet_v2_block" / "xnnpack.pte")]

IMPORTS = [  # (label, code); nothing is subtracted, the baseline shows interpreter start-up
    ("interpreter baseline", "pass"),
    ("etrt", "import etrt"),
    ("ExecuTorch bindings", "from executorch.extension.pybindings import portable_lib"),
    ("ExecuTorch runtime API", "from executorch.runtime import Runtime"),
]

# Cold-start children: argv = [program, input]. The clock starts before any import;
# etrt's count includes `import numpy` (its input type), ExecuTorch's includes
# `import torch` (its input type, and portable_lib imports torch anyway).
ETRT_COLD = """\
import time; t0 = time.perf_counter()
import sys, json
from etrt import Runtime
import numpy as np
m = Runtime.get().load_program(sys.argv[1]).load_method("forward")
out = m.execute([np.load(sys.argv[2])])
t1 = time.perf_counter()
print(json.dumps({"inside": t1 - t0, "out": np.asarray(out[0]).ravel().tolist()}))
"""
ET_COLD = """\
import time; t0 = time.perf_counter()
import sys, json
import numpy as np, torch
ta = time.perf_counter()  # the "excluding import torch" clock starts here
from executorch.runtime import Runtime
m = Runtime.get().load_program(sys.argv[1]).load_method("forward")
out = m.execute([torch.from_numpy(np.load(sys.argv[2]))])
t1 = time.perf_counter()
print(json.dumps({"inside": t1 - t0, "after_torch": t1 - ta, "out": out[0].numpy().ravel().tolist()}))
"""


def run_child(python, code, *args):
    """Spawn `python -c code args`; return (wall s, peak RSS MiB, last JSON line or None)."""
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err:
        actions = [(os.POSIX_SPAWN_DUP2, write_fd, 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
                   (os.POSIX_SPAWN_CLOSE, read_fd)]
        start = time.perf_counter()
        pid = os.posix_spawn(python, [python, "-c", code, *map(str, args)], os.environ, file_actions=actions)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            stdout = pipe.read()
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"child failed: {code!r}\n{err.read().decode(errors='replace')[-3000:]}")
    lines = [l for l in stdout.decode().splitlines() if l.startswith("{")]
    return wall, usage.ru_maxrss / 1024, json.loads(lines[-1]) if lines else None


def cpu_name():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--markdown", action="store_true", help="print the RESULTS.md section")
    args = parser.parse_args()
    py = args.python

    cases = {}  # key tuple -> zero-argument function returning (wall s, RSS MiB, child JSON)
    for label, code in IMPORTS:
        cases[("import", label)] = (lambda c=code: run_child(py, c))
    programs = [(name, path) for name, path in PROGRAMS if path.exists()]
    for name, path in programs:
        cases[("cold", name, "etrt")] = (lambda p=path: run_child(py, ETRT_COLD, p, INPUT))
        cases[("cold", name, "ExecuTorch")] = (lambda p=path: run_child(py, ET_COLD, p, INPUT))

    for fn in cases.values():  # one untimed round: warms the page cache for both alike
        fn()
    samples = {key: [] for key in cases}
    for rep in range(args.repeats):
        for key, fn in cases.items():  # fixed order alternates etrt / ExecuTorch
            samples[key].append(fn())
        print(f"repetition {rep + 1}/{args.repeats} done", file=sys.stderr, flush=True)

    def med(key, field):  # field: 0 wall, 1 rss, or a JSON key
        vals = [s[field] if isinstance(field, int) else s[2][field] for s in samples[key]]
        return statistics.median(vals)

    imp = {label: (med(("import", label), 0) * 1e3, med(("import", label), 1)) for label, _ in IMPORTS}
    lines = ["| import (fresh process) | command | wall ms | peak RSS MiB |", "|---|---|---:|---:|"]
    for label, code in IMPORTS:
        lines.append(f"| {label} | `python -c \"{code}\"` | {imp[label][0]:.0f} | {imp[label][1]:.0f} |")
    et_b = imp["ExecuTorch bindings"]
    r_wall, r_rss = imp["etrt"][0] / et_b[0], imp["etrt"][1] / et_b[1]
    verdict = lambda r, t: f"{r:.3f} (target <= {t}: {'met' if r <= t else 'missed'})"
    lines += ["", f"etrt / ExecuTorch bindings import: wall {verdict(r_wall, 0.1)}, peak RSS {verdict(r_rss, 0.3)}.", ""]

    lines += ["| cold start (fresh process) | runtime | process wall ms | peak RSS MiB | inside ms | inside, excl. `import torch`, ms |",
              "|---|---|---:|---:|---:|---:|"]
    ratios, diffs = [], []
    for name, path in programs:
        e, t = ("cold", name, "etrt"), ("cold", name, "ExecuTorch")
        for key in (e, t):
            excl = f"{med(key, 'after_torch') * 1e3:.0f}" if key == t else "n/a (no torch)"
            lines.append(f"| {path.relative_to(ROOT)} ({name}) | {key[2]} | {med(key, 0) * 1e3:.0f} | "
                         f"{med(key, 1):.0f} | {med(key, 'inside') * 1e3:.0f} | {excl} |")
        ratios.append(f"- {name}: etrt / ExecuTorch process wall {verdict(med(e, 0) / med(t, 0), 0.5)}; "
                      f"inside {med(e, 'inside') / med(t, 'inside'):.3f}; etrt inside vs ExecuTorch inside "
                      f"excluding `import torch` {med(e, 'inside') / med(t, 'after_torch'):.3f} (information).")
        # Equal work: both runtimes' first outputs must agree (and match eager PyTorch).
        out_e, out_t = np.array(samples[e][0][2]["out"]), np.array(samples[t][0][2]["out"])
        ref = np.load(EXPECTED).ravel()
        diffs.append(f"- {name}: max |etrt - ExecuTorch| = {np.abs(out_e - out_t).max():.2e}; "
                     f"max |etrt - eager PyTorch| = {np.abs(out_e - ref).max():.2e}.")
    lines += ["", "Cold-start ratios (target: etrt / ExecuTorch <= 0.5):", *ratios, "",
              "Outputs of the first run:", *diffs]

    if not args.markdown:
        print("\n".join(lines))
        return
    # Versions as the measured interpreter sees them (metadata only: no heavy import).
    _, _, ver = run_child(py, "import json, importlib.metadata as m; "
                              "print(json.dumps({p: m.version(p) for p in ('etrt', 'torch', 'executorch')}))")
    command = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    head = [
        "## Python start-up (`bench/python_startup.py`)",
        "",
        f"Machine: {cpu_name()}, {os.cpu_count()} logical CPUs; numbers are noisy (shared machine), the ratios "
        f"come from one alternating run. Python {platform.python_version()}, etrt {ver['etrt']}, "
        f"torch {ver['torch']}, executorch {ver['executorch']}. Medians of {args.repeats} fresh processes per "
        f"row, etrt and ExecuTorch alternating, after one untimed warm-up round. Generated on "
        f"{time.strftime('%Y-%m-%d')} by `{command}`.",
        "",
        "Wall time is the whole child process (spawn to exit) measured from outside; peak RSS is the child's "
        "`ru_maxrss` (`os.wait4`). Nothing is subtracted: the baseline row is the interpreter alone. "
        "Cold start = import + load program + first `execute` of the MobileNetV2-style program; \"inside\" is "
        "the child's own `perf_counter` from before its first import to after `execute` returns. etrt gets a "
        "NumPy input (its time includes `import numpy`); ExecuTorch gets a torch tensor, so its time includes "
        "`import torch` (which `portable_lib` imports in any case); the last column starts ExecuTorch's clock "
        "after `import torch`.",
        "",
    ]
    print("\n".join(head + lines))


if __name__ == "__main__":
    main()

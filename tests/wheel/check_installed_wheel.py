"""Run by test_without_system_libraries.sh with the fresh venv's Python, where
Debian's spdlog, fmt, XNNPACK, pthreadpool and cpuinfo are absent: a portable and
an XNNPACK program of each reference model run, agree with eager PyTorch's
outputs and with each other, and every native file etrt mapped came from the
installed package. Exits non-zero with the reason on the first failure.

    python check_installed_wheel.py <models dir> <xnnpack stats file>

The programs run in a child process (--run): the XNNPACK plugin writes its
statistics (ETRT_XNNPACK_STATS) when that process exits."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

MODELS = ("mlp", "small_cnn", "mobilenet_v2_block")
# File names of the Debian libraries that must not be needed (and, here, cannot be found); the package's
# private copies are named <soname>.etrt.
SYSTEM_LIBRARY = re.compile(r"^lib(spdlog|fmt|XNNPACK|pthreadpool|cpuinfo)\.so(\.[0-9]+)*$")
# (kernels_optimized is mapped from the build of the CPU level the loader chose, checked separately.)
MAPPED_FROM_PACKAGE = ("lib/libetrt.so.1", "lib/etrt/private/libcpuinfo.so.0.etrt",
                       "lib/etrt/plugins/libetrt_xnnpack.so.1",
                       "lib/etrt/plugins/xnnpack_private/libXNNPACK.so.0.etrt",
                       "lib/etrt/plugins/xnnpack_private/libcpuinfo.so.0.etrt",
                       "lib/etrt/plugins/xnnpack_private/libetrt_pthreadpool_shim.so.1")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def arrays(path, prefix):
    data = np.load(path)
    return [data[f"{prefix}_{i}"] for i in range(len(data.files))]


def installed_package():
    import etrt
    package = Path(etrt.__file__).resolve().parent
    if "site-packages" not in package.parts or not str(package).startswith(sys.prefix):
        fail(f"etrt was imported from {package}, not from this venv ({sys.prefix})")
    return package


def run_programs(models_dir):
    import etrt
    package = installed_package()
    runtime = etrt.Runtime.get()
    for name in MODELS:
        model = models_dir / name
        tolerance = json.loads((model / "meta.json").read_text())["tolerance"]
        inputs = arrays(model / "inputs.npz", "input")
        expected = arrays(model / "expected.npz", "output")
        outputs = {}
        for pte in ("portable.pte", "xnnpack.pte"):
            got = runtime.load_program(model / pte).load_method("forward").execute(inputs)
            if len(got) != len(expected):
                fail(f"{name}/{pte}: {len(got)} outputs, expected {len(expected)}")
            for i, (g, want) in enumerate(zip(got, expected)):
                np.testing.assert_allclose(g, want, rtol=tolerance["rtol"], atol=tolerance["atol"],
                                           err_msg=f"{name}/{pte} output {i} against eager PyTorch")
            outputs[pte] = got
        # Parity: the delegated program computes what the portable one computes.
        for i, (portable, xnnpack) in enumerate(zip(outputs["portable.pte"], outputs["xnnpack.pte"])):
            np.testing.assert_allclose(xnnpack, portable, rtol=tolerance["rtol"], atol=tolerance["atol"],
                                       err_msg=f"{name} output {i}: xnnpack.pte against portable.pte")
        print(f"ok {name}: portable and xnnpack agree with eager and with each other")

    # Every etrt file in the process is the package's and no Debian library is mapped. Sizing the pool opens
    # libetrt's private cpuinfo (without it libetrt warns "cannot count the cores" and takes 1 thread).
    if etrt.num_threads() < 1:
        fail("the thread pool has no thread")
    mapped = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
              if len(line.split()) >= 6 and line.split()[-1].startswith("/")}
    system = sorted(p for p in mapped if SYSTEM_LIBRARY.match(Path(p).name))
    ours = sorted(p for p in mapped if "etrt" in Path(p).name or "XNNPACK" in p or "cpuinfo" in p)
    outside = [p for p in ours if not Path(p).resolve().is_relative_to(package)]
    if system or outside:
        fail(f"mapped from outside the package: {system + outside}")
    (kernels,) = [p for p in etrt.plugins() if p["name"] == "kernels_optimized"]
    chosen = Path(kernels["library_path"])
    if kernels["state"] != "loaded" or not chosen.is_relative_to(package) or not chosen.name.startswith("libetrt_kernels"):
        fail(f"kernels_optimized: {kernels}")
    print(f"ok: kernels_optimized runs its {kernels['cpu_level']} build ({kernels['cpu_level_reason']})")
    missing = [f for f in MAPPED_FROM_PACKAGE + (chosen.relative_to(package).as_posix(),)
               if str(package / f) not in mapped]
    if missing:
        fail(f"not mapped: {missing}; mapped: {ours}")
    print("ok: every etrt file in the process came from the installed wheel; no Debian library was mapped")


def main(models_dir, stats_file):
    package = installed_package()
    child = subprocess.run([sys.executable, __file__, "--run", str(models_dir)],
                           env=dict(os.environ, ETRT_XNNPACK_STATS=stats_file))
    if child.returncode != 0:
        fail(f"the programs' process exited with {child.returncode}")

    # The delegates really ran XNNPACK: the package's private copy, with DEEPBIND.
    stats_path = Path(stats_file)
    stats = [json.loads(line) for line in stats_path.read_text().splitlines()] if stats_path.exists() else []
    if len(stats) < len(MODELS) or not all(line["xnnpack_invocations"] >= 1 for line in stats):
        fail(f"the XNNPACK delegate did not run: {stats}")
    private = package / "lib" / "etrt" / "plugins" / "xnnpack_private"
    for line in stats:
        if Path(line["xnnpack_library"]).resolve().parent != private or not line["deep_bind"]:
            fail(f"XNNPACK came from {line['xnnpack_library']} (deep_bind={line['deep_bind']}), not {private}")
    print(f"ok: {len(stats)} XNNPACK delegates ran the package's private libXNNPACK with DEEPBIND")

    # The console script finds both plugins in the package.
    listing = json.loads(subprocess.run([str(Path(sys.executable).parent / "etrt"), "plugins", "--json"],
                                        capture_output=True, text=True, check=True).stdout)
    found = {Path(p["library"]).name for p in listing["plugins"]
             if Path(p["library"]).resolve().is_relative_to(package)}
    if not {"libetrt_kernels_optimized.so.1", "libetrt_xnnpack.so.1"} <= found:
        fail(f"etrt plugins --json: {listing['plugins']}")
    print("ok: `etrt plugins` lists both plugins from the package")


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        run_programs(Path(sys.argv[2]))
    else:
        main(Path(sys.argv[1]), sys.argv[2])

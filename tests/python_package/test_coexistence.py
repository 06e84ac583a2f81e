"""etrt beside PyTorch and ExecuTorch's own bindings in one process: torch
imported first, ExecuTorch's runtime (which carries its own XNNPACK,
pthreadpool and cpuinfo) loaded and run too. etrt's results must not change
and its XNNPACK plugin must still run Debian's XNNPACK through its own pool.

Also the hostile variant: TORCH_USE_RTLD_GLOBAL=1 puts libtorch_cpu's
pthreadpool_* and libc10's cpuinfo_* into the global scope before etrt loads;
the dynamic linker's own trace (LD_DEBUG=bindings) must show libetrt and
libXNNPACK binding those names to Debian's libraries, never to torch's."""
import json
import re

import pytest

from conftest import run_python

pytest.importorskip("torch")
pytest.importorskip("executorch")

MODELS = ("mlp", "small_cnn", "mobilenet_v2_block")

SCRIPT = """
import json, os, sys
import numpy as np
import torch                                   # first, as most users do
import etrt
{executorch_first}
models = {models!r}
root = {root!r}

def cases(name):
    d = os.path.join(root, name)
    x = [v for _, v in sorted(np.load(os.path.join(d, 'inputs.npz')).items())]
    want = [v for _, v in sorted(np.load(os.path.join(d, 'expected.npz')).items())]
    return d, x, want

def run_etrt():
    diffs = {{}}
    for name in models:
        d, x, want = cases(name)
        for pte in ('portable.pte', 'xnnpack.pte'):
            got = etrt.Runtime.get().load_program(os.path.join(d, pte)).load_method('forward').execute(x)
            diffs[name + '/' + pte] = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    return diffs

before = run_etrt()
from executorch.runtime import Runtime as EtRuntime
et_diffs = {{}}
for name in models:
    d, x, want = cases(name)
    et_method = EtRuntime.get().load_program(os.path.join(d, 'xnnpack.pte')).load_method('forward')
    got = et_method.execute([torch.from_numpy(v) for v in x])
    et_diffs[name] = max(float(np.abs(g.numpy() - w).max()) for g, w in zip(got, want))
after = run_etrt()
maps = open('/proc/self/maps').read()
libs = sorted({{l.split()[-1] for l in maps.splitlines()
               if any(k in l for k in ('XNNPACK', 'xnnpack', 'pthreadpool', 'libexecutorch', 'libtorch_cpu'))}})
print(json.dumps({{'before': before, 'after': after, 'executorch': et_diffs, 'libs': libs,
                  'torch_first': list(sys.modules).index('torch') < list(sys.modules).index('etrt')}}))
"""


def run(models_dir, tmp_path, env, executorch_first=""):
    stats = tmp_path / "xnnpack_stats.jsonl"
    code = SCRIPT.format(models=MODELS, root=str(models_dir), executorch_first=executorch_first)
    result = run_python(code, tmp_path, env={"ETRT_XNNPACK_STATS": str(stats), **env})
    state = json.loads(result.stdout.strip().splitlines()[-1])
    lines = [json.loads(l) for l in stats.read_text().splitlines()] if stats.exists() else []
    return state, lines, result


def check(state, stats):
    for phase in ("before", "after"):
        assert set(state[phase]) == {f"{m}/{p}" for m in MODELS for p in ("portable.pte", "xnnpack.pte")}
        for program, diff in state[phase].items():
            assert diff < 1e-4, f"{phase}: {program} differs from eager by {diff}"
    assert state["before"] == state["after"], "ExecuTorch's runtime changed etrt's results"
    assert all(diff < 1e-4 for diff in state["executorch"].values()), state["executorch"]
    assert state["torch_first"]
    assert any("libexecutorch_backend_xnnpack" in lib for lib in state["libs"]), state["libs"]
    # Every etrt delegate ran XNNPACK, and the XNNPACK it ran is the plugin's private copy of Debian's
    # (on etrt's pthreadpool shim), opened with DEEPBIND.
    assert len(stats) >= 2 * len(MODELS), stats
    for line in stats:
        assert line["xnnpack_invocations"] >= line["executes"] >= 1, line
        assert re.search(r"/xnnpack_private/libXNNPACK\.so\.\d+\.etrt$", line["xnnpack_library"]) and line["deep_bind"], line
        assert "executorch" not in line["xnnpack_library"]


def test_torch_first_then_executorch_bindings(models_dir, tmp_path):
    state, stats, _ = run(models_dir, tmp_path, {})
    check(state, stats)


def test_executorch_bindings_loaded_before_etrt_runs(models_dir, tmp_path):
    state, stats, _ = run(models_dir, tmp_path, {},
                          executorch_first="from executorch.extension.pybindings import portable_lib  # noqa")
    check(state, stats)


def test_torch_global_symbols_do_not_capture_etrt(models_dir, tmp_path):
    state, stats, result = run(models_dir, tmp_path, {"TORCH_USE_RTLD_GLOBAL": "1", "LD_DEBUG": "bindings"})
    check(state, stats)
    bindings = re.findall(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `((?:pthreadpool|cpuinfo)_\w+)'",
                          result.stderr)
    # libetrt has its own pool and looks cpuinfo up in its own handle; libXNNPACK (the plugin's private copy)
    # binds its pthreadpool calls to etrt's shim and resolves its own calls under DEEPBIND.
    ours = [(src, dst, sym) for src, dst, sym in bindings
            if any(lib in src for lib in ("libetrt", "libXNNPACK", "libcpuinfo"))]
    assert any(sym.startswith("pthreadpool_parallelize") and "libetrt_pthreadpool_shim.so" in dst
               for _, dst, sym in ours), "no trace of libXNNPACK's pthreadpool calls resolving to etrt's shim"
    wrong = [b for b in ours if "libetrt_pthreadpool_shim.so" not in b[1] and "libcpuinfo.so" not in b[1]]
    assert not wrong, f"bound to a foreign copy: {wrong[:5]}"

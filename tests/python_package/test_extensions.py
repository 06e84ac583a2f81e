"""The package's extension modules: each imports, both link libetrt and see
its one registry and thread pool, and the devtools one explains a program's
plugins without loading them."""
import importlib.machinery
import json
from pathlib import Path

from conftest import run_python


def extension_modules(package_dir):
    """Dotted names of every extension module the installed package holds, from its files."""
    root = package_dir.parent
    names = []
    for path in sorted(package_dir.rglob("*")):
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if path.name.endswith(suffix) and path.is_file():
                names.append(".".join(path.relative_to(root).with_name(path.name[: -len(suffix)]).parts))
                break
    return names


def test_every_installed_extension_imports(package_dir, tmp_path):
    modules = extension_modules(package_dir)
    assert {"etrt._etrt", "etrt._devtools"} <= set(modules), modules
    for module in modules:
        out = run_python(f"import importlib; m = importlib.import_module({module!r}); print(m.__file__)", tmp_path)
        assert Path(out.stdout.strip()).resolve().parent == package_dir, (module, out.stdout)


def test_both_extensions_see_one_registry_and_one_thread_pool(package_dir, tmp_path):
    kernels = package_dir / "lib" / "etrt" / "plugins" / "libetrt_kernels_optimized.so.1"
    assert kernels.is_file()
    out = run_python(
        "import json\n"
        "from etrt import _devtools as devtools, _etrt as core\n"
        "before = len(core.registry(core.ENTRY_OPERATOR))\n"
        f"devtools.load_plugin({str(kernels)!r})          # loaded through one module...\n"
        "devtools.set_num_threads(3)\n"
        "print(json.dumps({\n"
        "  'before': before,\n"
        "  'core_ops': core.registry(core.ENTRY_OPERATOR),  # ...seen through the other\n"
        "  'devtools_ops': devtools.registry(core.ENTRY_OPERATOR),\n"
        "  'core_plugins': [p['name'] for p in core.plugins() if p['state'] == 'loaded'],\n"
        "  'identities': [core.registry_identity(), devtools.registry_identity()],\n"
        "  'pools': [core.threadpool_identity(), devtools.threadpool_identity()],\n"
        "  'threads': [core.num_threads(), devtools.num_threads()],\n"
        "}))\n", tmp_path)
    state = json.loads(out.stdout)
    assert state["before"] == 0
    assert len(state["core_ops"]) > 100 and state["core_ops"] == state["devtools_ops"]
    assert state["core_plugins"] == ["kernels_optimized"]
    assert state["identities"][0] == state["identities"][1] != 0
    assert state["pools"][0] == state["pools"][1] != 0
    assert state["threads"] == [3, 3]


def test_devtools_plans_without_loading(models_dir, tmp_path):
    out = run_python(
        "import json, etrt, etrt.devtools as dt\n"
        f"plan = dt.program_plan({str(models_dir / 'mlp' / 'xnnpack.pte')!r})\n"
        f"missing = dt.missing_providers({str(models_dir / 'mlp' / 'portable.pte')!r})\n"
        "unknown = dt.provider_of('custom::not_provided.out')\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(json.dumps({'plan': plan, 'missing': missing, 'unknown': unknown,\n"
        "                  'mapped': 'libetrt_' in maps,\n"
        "                  'loaded': [p['name'] for p in etrt.plugins() if p['state'] == 'loaded']}))\n", tmp_path)
    state = json.loads(out.stdout)
    entries = {e["name"]: e for e in state["plan"]["forward"]}
    assert entries["XnnpackBackend"]["kind"] == "backend" and entries["XnnpackBackend"]["plugin"] == "xnnpack"
    assert entries["aten::_log_softmax.out"]["plugin"] == "kernels_optimized"
    assert all(e["state"] == "declared" for e in entries.values())
    assert state["missing"] == []
    assert state["unknown"]["plugin"] is None and not state["unknown"]["builtin"]
    assert not state["mapped"] and state["loaded"] == []

"""What importing and loading map into the process (/proc/self/maps), each
check in a fresh interpreter so nothing earlier loaded plugins for it."""
import json

from conftest import run_python

PROBE = ("import json, sys\n"
         "def mapped():\n"
         "    maps = open('/proc/self/maps').read()\n"
         "    return {name: name in maps for name in ('libetrt.so.1', 'libetrt_kernels_optimized', 'libetrt_xnnpack',\n"
         "                                           'libXNNPACK', 'libpthreadpool')}\n")


def test_import_maps_libetrt_and_no_plugin(tmp_path):
    out = run_python(PROBE + "import etrt\n"
                     "print(json.dumps([mapped(), 'torch' in sys.modules, 'numpy' in sys.modules,\n"
                     "                  [p['state'] for p in etrt.plugins()]]))\n", tmp_path)
    maps, torch_imported, numpy_imported, states = json.loads(out.stdout)
    assert maps == {"libetrt.so.1": True, "libetrt_kernels_optimized": False, "libetrt_xnnpack": False,
                    "libXNNPACK": False, "libpthreadpool": False}
    assert not torch_imported and not numpy_imported
    assert states and set(states) == {"declared"}  # the package's manifests are known, nothing is loaded


def test_plain_program_maps_kernels_not_xnnpack(models_dir, tmp_path):
    out = run_python(PROBE + "import etrt\n"
                     f"program = etrt.Runtime.get().load_program({str(models_dir / 'small_cnn' / 'portable.pte')!r})\n"
                     "after_program = mapped()\n"
                     "program.load_method('forward')\n"
                     "print(json.dumps([after_program, mapped()]))\n", tmp_path)
    after_program, after_method = json.loads(out.stdout)
    assert not after_program["libetrt_kernels_optimized"]  # plugins load with the method, not the program
    assert after_method["libetrt_kernels_optimized"] and not after_method["libetrt_xnnpack"]
    assert not after_method["libXNNPACK"]


def test_delegated_program_maps_xnnpack(models_dir, tmp_path):
    out = run_python(PROBE + "import etrt\n"
                     f"etrt.Runtime.get().load_program({str(models_dir / 'small_cnn' / 'xnnpack.pte')!r})"
                     ".load_method('forward')\n"
                     "print(json.dumps(mapped()))\n", tmp_path)
    maps = json.loads(out.stdout)
    assert maps["libetrt_xnnpack"] and maps["libXNNPACK"]


def test_registry_views_answer_from_manifests_before_anything_loads(tmp_path):
    # As executorch.runtime: code that asks for availability first must get the truth
    # although no plugin is loaded yet -- and asking must not load one.
    out = run_python(PROBE + "import etrt\n"
                     "rt = etrt.Runtime.get()\n"
                     "answers = ['aten::add.out' in rt.operator_registry.operator_names,\n"
                     "           'my_ops::nothing.out' in rt.operator_registry.operator_names,\n"
                     "           rt.backend_registry.registered_backend_names,\n"
                     "           rt.backend_registry.is_available('XnnpackBackend'),\n"
                     "           rt.backend_registry.is_available('NoSuchBackend')]\n"
                     "print(json.dumps([answers, mapped()]))\n", tmp_path)
    answers, maps = json.loads(out.stdout)
    assert answers == [True, False, ["XnnpackBackend"], True, False]
    assert not maps["libetrt_kernels_optimized"] and not maps["libetrt_xnnpack"]

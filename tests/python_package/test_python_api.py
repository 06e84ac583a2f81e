"""The package's Python surface as ExecuTorch's users meet it (python/etrt/__init__.py): KeyError for a
method the program lacks, TensorInfo and MethodMeta printed as executorch.runtime prints them (plus
whether a shape is dynamic), and type stubs installed with the package that match the compiled modules
(tests/wheel/test_wheel_python_files.py checks the wheel itself: no byte code, the stubs in it)."""
import ast
import importlib
import inspect

import pytest

import etrt


def executorch_runtime():
    return pytest.importorskip("executorch.runtime").Runtime.get()


def test_a_missing_method_raises_key_error_naming_the_methods(models_dir):
    program = etrt.Runtime.get().load_program(models_dir / "two_methods" / "portable.pte")
    with pytest.raises(KeyError) as missing:
        program.load_method("decode")
    assert missing.value.args == ("'decode': the program has no such method (it has 'encode', 'forward')",)
    # The program stays usable, and ExecuTorch raises the same type.
    assert program.load_method("encode") is program.load_method("encode")
    reference = executorch_runtime().load_program(str(models_dir / "two_methods" / "portable.pte"))
    with pytest.raises(KeyError):
        reference.load_method("decode")


@pytest.mark.parametrize("model", ["op_add", "two_methods", "mlp", "small_cnn", "mutable_buffer"])
def test_metadata_prints_as_executorchs(models_dir, model):
    path = models_dir / model / "portable.pte"
    ours, theirs = etrt.Runtime.get().load_program(path), executorch_runtime().load_program(str(path))
    assert ours.method_names == theirs.method_names
    for name in sorted(ours.method_names):
        mine, reference = ours.metadata(name), theirs.metadata(name)
        assert repr(mine) == repr(reference)
        assert str(mine.input_tensor_meta(0)) == str(reference.input_tensor_meta(0))
        for i in range(reference.num_inputs()):
            a, b = mine.input_tensor_meta(i), reference.input_tensor_meta(i)
            assert (a.sizes(), a.dtype(), a.nbytes(), a.is_memory_planned()) == \
                (b.sizes(), b.dtype(), b.nbytes(), b.is_memory_planned())
        assert mine.num_attributes() == reference.num_attributes() == 0
        with pytest.raises(IndexError):
            mine.attribute_tensor_meta(0)


def test_tensor_info_names_its_dtype_and_says_when_a_shape_is_dynamic(models_dir):
    program = etrt.Runtime.get().load_program(models_dir / "dynamic_mlp" / "portable.pte")
    x = program.metadata("forward").input_tensor_meta(0)
    assert x.is_dynamic() and x.shape_dynamism() == "dynamic_bound"
    assert (x.dtype(), x.dtype_name()) == (6, "Float")
    assert repr(x) == (f"TensorInfo(sizes={list(x.sizes())}, dtype=Float, is_memory_planned=True, "
                       f"nbytes={x.nbytes()}, shape_dynamism=dynamic_bound)")
    static = etrt.Runtime.get().load_program(models_dir / "op_add" / "portable.pte").metadata("forward")
    assert not static.input_tensor_meta(0).is_dynamic()
    assert static.input_tensor_meta(0).shape_dynamism() == "static"


def stub_names(tree):
    """{name: members} of a .pyi: module-level functions and constants, and each class with its members."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name if not isinstance(n, ast.AnnAssign) else n.target.id
                                for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))} - {"__init__"}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign) and not node.target.id.startswith("_"):
            names[node.target.id] = None
        elif isinstance(node, ast.ImportFrom) and node.module != "typing":  # re-exports: `from ._etrt import f as f`
            names.update({alias.asname: None for alias in node.names if alias.asname == alias.name})
    return names


def public_members(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


@pytest.mark.parametrize("module_name", ["etrt._etrt", "etrt._devtools"])
def test_type_stubs_ship_and_match_the_compiled_modules(package_dir, module_name):
    assert (package_dir / "py.typed").is_file()  # PEP 561: type checkers read the package's annotations
    stub = package_dir / (module_name.split(".")[1] + ".pyi")
    assert stub.is_file(), f"{stub.name} is not in the installed package"
    names = stub_names(ast.parse(stub.read_text()))
    module = importlib.import_module(module_name)
    assert set(names) == public_members(module), set(names) ^ public_members(module)
    for name, members in names.items():
        runtime_object = getattr(module, name)
        if not inspect.isclass(runtime_object):
            continue
        expected = public_members(runtime_object) - public_members(RuntimeError if issubclass(runtime_object, Exception)
                                                                    else object)
        if issubclass(runtime_object, Exception):
            expected |= {"code", "status", "plugin"}  # set on each raised error
        assert members == expected, (name, members ^ expected)


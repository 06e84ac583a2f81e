"""etrt.portable_lib (python/etrt/portable_lib.py) on bundled programs made at test time by ExecuTorch's
devtools.bundled_program: one that verifies and one whose expected output is wrong; the kinds of
program refused where the other is expected; the registry and thread-pool functions."""
import pytest

torch = pytest.importorskip("torch")


class LinearAdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.linear(x) + y


@pytest.fixture(scope="module")
def programs():
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import to_edge

    torch.manual_seed(1)
    model = LinearAdd().eval()
    cases = [(torch.randn(2, 4), torch.randn(2, 3)) for _ in range(2)]
    manager = to_edge(torch.export.export(model, cases[0])).to_executorch()

    def bundle(offset):
        expected = [model(*inputs).detach().clone() for inputs in cases]
        expected[1].view(-1)[4] += offset
        suite = MethodTestSuite(method_name="forward", test_cases=[
            MethodTestCase(inputs=list(inputs), expected_outputs=[out]) for inputs, out in zip(cases, expected)])
        return serialize_from_bundled_program_to_flatbuffer(BundledProgram(manager, [suite]))

    return {"pte": manager.buffer, "good": bundle(0.0), "wrong": bundle(0.25), "cases": cases, "model": model}


def test_a_bundled_program_verifies(programs):
    from etrt import portable_lib

    bundle = portable_lib._load_bundled_program_from_buffer(programs["good"])
    for index, inputs in enumerate(programs["cases"]):
        outputs = bundle.verify_result_with_bundled_expected_output("forward", index)
        assert torch.allclose(outputs[0], programs["model"](*inputs), rtol=1e-5, atol=1e-6)

    module = portable_lib._load_for_executorch_from_bundled_program(bundle)
    module.load_bundled_input(bundle, "forward", 1)
    assert torch.allclose(module.plan_execute("forward")[0], programs["model"](*programs["cases"][1]), atol=1e-6)
    module.verify_result_with_bundled_expected_output(bundle, "forward", 1)


def test_a_wrong_expected_output_fails_naming_the_difference(programs):
    from etrt import portable_lib

    bundle = portable_lib._load_bundled_program_from_buffer(programs["wrong"])
    bundle.verify_result_with_bundled_expected_output("forward", 0)
    with pytest.raises(RuntimeError) as caught:
        bundle.verify_result_with_bundled_expected_output("forward", 1)
    message = str(caught.value)
    assert "forward test case 1: FAILED: output 0 1 of 6 elements differ beyond rtol=1e-05 atol=1e-08" in message
    assert "first at element 4" in message
    # The caller's tolerance decides.
    bundle.verify_result_with_bundled_expected_output("forward", 1, rtol=0.0, atol=0.3)


def test_each_kind_of_program_is_refused_where_the_other_is_expected(programs, tmp_path):
    from etrt import portable_lib

    with pytest.raises(RuntimeError, match=r"is a plain program \(.pte, identifier ET12\), not a bundled program"):
        portable_lib._load_bundled_program_from_buffer(programs["pte"])
    with pytest.raises(RuntimeError, match=r"bundled program \(.bpte\): load it with _load_bundled_program_from_buffer"):
        portable_lib._load_for_executorch_from_buffer(programs["good"])
    path = tmp_path / "model.bpte"
    path.write_bytes(programs["good"])
    with pytest.raises(RuntimeError, match="model.bpte is a bundled program"):
        portable_lib._load_for_executorch(str(path))
    with pytest.raises(RuntimeError, match="no test suite for method 'encode'"):
        portable_lib._load_bundled_program_from_buffer(programs["good"]).verify_result_with_bundled_expected_output(
            "encode", 0)
    with pytest.raises(RuntimeError, match="corrupt bundled program"):
        portable_lib._load_bundled_program_from_buffer(programs["good"][: len(programs["good"]) // 2])


def test_modules_programs_and_methods(programs):
    from etrt import portable_lib

    x, y = programs["cases"][0]
    expected = programs["model"](x, y)
    module = portable_lib._load_for_executorch_from_buffer(programs["pte"])
    assert torch.allclose(module.forward((x, y))[0], expected, atol=1e-6)
    assert torch.allclose(module.run_method("forward", [x, y])[0], expected, atol=1e-6)
    assert module.method_names() == ["forward"]
    assert module.method_meta("forward").num_inputs() == 2
    with pytest.raises(RuntimeError, match="no such method"):
        module.run_method("backward", (x, y))
    with pytest.raises(RuntimeError, match="input 0 is on device meta"):
        module.forward((x.to("meta"), y))

    program = portable_lib._load_program_from_buffer(programs["pte"])
    assert program.num_methods() == 1 and program.get_method_name(0) == "forward"
    method = program.load_method("forward")
    method.set_inputs((x, y))
    method.execute()
    assert torch.allclose(method.get_outputs()[0], expected, atol=1e-6)
    with pytest.raises(NotImplementedError, match="attributes"):
        method.get_attribute("state")


def test_runtime_functions():
    from etrt import portable_lib

    assert "XnnpackBackend" in portable_lib._get_registered_backend_names()
    assert portable_lib._is_available("XnnpackBackend")
    assert "aten::add.out" in portable_lib._get_operator_names()
    before = portable_lib._threadpool_get_thread_count()
    portable_lib._unsafe_reset_threadpool(1)
    assert portable_lib._threadpool_get_thread_count() == 1
    portable_lib._unsafe_reset_threadpool(before)
    assert portable_lib._threadpool_get_thread_count() == before

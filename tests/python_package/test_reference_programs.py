"""Every reference program, plain and XNNPACK-delegated, through the Python
API, against the eager PyTorch outputs recorded next to it (expected*.npz,
re-derived from eager PyTorch by tests/models in every CI run)."""
import json

import numpy as np
import pytest

from conftest import MODELS, assert_close, cases, reference_models

PROGRAMS = [(m["dir"], pte) for m in reference_models() for pte in ("portable.pte", "xnnpack.pte")
            if pte in m["files"]]


def test_the_reference_set_is_all_there(models_dir):
    names = {m["name"] for m in json.loads((models_dir / "index.json").read_text())["models"]}
    assert len(PROGRAMS) >= 48 and sum(p == "xnnpack.pte" for _, p in PROGRAMS) >= 9 and {"mlp", "mobilenet_v2_block", "two_methods", "dynamic_mlp"} <= names


@pytest.mark.parametrize("model,pte", PROGRAMS, ids=[f"{m}/{p}" for m, p in PROGRAMS])
def test_program_matches_eager(model, pte):
    import etrt
    model_dir = MODELS / model
    program = etrt.Runtime.get().load_program(model_dir / pte)
    meta = json.loads((model_dir / "meta.json").read_text())
    assert program.method_names == set(meta["methods"])
    for method_name in sorted(meta["methods"]):
        method = program.load_method(method_name)  # stateful programs: cases run in order on one method
        for case, inputs, expected, tol in cases(model_dir, method_name):
            outputs = method.execute(inputs)
            assert len(outputs) == len(expected)
            for i, (got, want) in enumerate(zip(outputs, expected)):
                assert_close(got, want, tol["rtol"], tol["atol"], f"{model}/{pte} {method_name} {case} output {i}")


def test_torch_tensors_in_torch_tensors_out(models_dir):
    torch = pytest.importorskip("torch")
    import etrt
    model_dir = models_dir / "mobilenet_v2_block"
    _, inputs, expected, tol = next(cases(model_dir, "forward"))
    for pte in ("portable.pte", "xnnpack.pte"):
        method = etrt.Runtime.get().load_program(model_dir / pte).load_method("forward")
        outputs = method.execute([torch.from_numpy(x) for x in inputs])
        assert all(isinstance(o, torch.Tensor) for o in outputs)
        assert_close(outputs[0].numpy(), expected[0], tol["rtol"], tol["atol"], pte)
        # A non-contiguous torch view is accepted too (copied to the program's layout).
        wide = torch.from_numpy(np.repeat(inputs[0], 2, axis=-1))[..., ::2]
        assert not wide.is_contiguous()
        assert_close(method.execute([wide])[0].numpy(), expected[0], tol["rtol"], tol["atol"], pte + " strided")


def test_method_metadata_as_executorch_names_it(models_dir):
    import etrt
    program = etrt.Runtime.get().load_program(models_dir / "two_methods" / "portable.pte")
    meta = program.metadata("encode")
    assert (meta.name(), meta.num_inputs(), meta.num_outputs()) == ("encode", 1, 1)
    tensor = meta.input_tensor_meta(0)
    assert tensor.sizes() == (3, 16) and tensor.dtype() == 6 and tensor.nbytes() == 3 * 16 * 4
    assert tensor.is_memory_planned()
    assert meta.output_tensor_meta(0).sizes() == (3, 8)
    assert meta.num_memory_planned_buffers() >= 1
    with pytest.raises(IndexError):
        meta.input_tensor_meta(1)
    with pytest.raises(KeyError) as missing:
        program.load_method("no_such_method")
    assert missing.value.args == ("'no_such_method': the program has no such method (it has 'encode', 'forward')",)
    assert program.load_method("forward").metadata.name() == "forward"

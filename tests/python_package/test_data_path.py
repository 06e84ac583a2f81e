"""Weights kept outside the program (.ptd): `load_program(..., data_path=...)` as
executorch.runtime spells it, with paths, bytes and file objects."""
import io

import numpy as np
import pytest

import etrt


@pytest.fixture(scope="module")
def data_dir(models_dir):
    return models_dir / "data_file"


@pytest.mark.parametrize("name", ["linear_portable", "linear_xnnpack"])
@pytest.mark.parametrize("form", ["path", "str", "bytes", "file", "list"])
def test_data_path_forms_all_run_and_match_eager(data_dir, name, form):
    ptd = data_dir / f"{name}.ptd"
    data_path = {"path": ptd, "str": str(ptd), "bytes": ptd.read_bytes(), "file": io.BytesIO(ptd.read_bytes()),
                 "list": [str(ptd)]}[form]
    program = etrt.Runtime.get().load_program(data_dir / f"{name}.pte", data_path=data_path)
    x = np.load(data_dir / "input.npy")
    (out,) = program.load_method("forward").execute([x])
    np.testing.assert_allclose(np.asarray(out), np.load(data_dir / "expected.npy"), rtol=1e-5, atol=1e-5)


def test_without_data_the_error_names_the_missing_weight(data_dir):
    program = etrt.Runtime.get().load_program(data_dir / "linear_portable.pte")
    with pytest.raises(etrt.Error, match="external tensor 'l1.weight' not found"):
        program.load_method("forward")


def test_a_corrupt_data_file_is_refused_at_load(data_dir):
    with pytest.raises(etrt.Error, match="no FT01 identifier"):
        etrt.Runtime.get().load_program(data_dir / "linear_portable.pte", data_path=b"not a data file at all")
    with pytest.raises(TypeError, match="data_path"):
        etrt.Runtime.get().load_program(data_dir / "linear_portable.pte", data_path=42)

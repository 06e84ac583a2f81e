"""ETDump from the installed package, as executorch.runtime spells it:
load_program(..., enable_etdump=True, debug_buffer_size=N) and
Program.write_etdump_result_to_file(etdump_path, debug_buffer_path), read back
by ExecuTorch's own deserializer."""
import io

import numpy as np
import pytest

from conftest import MODELS, cases, run_python


def dump_of(path):
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
    return deserialize_from_etdump_flatcc(path.read_bytes())


def output_events(run):
    return [e.debug_event for e in run.events if e.debug_event is not None
            and e.debug_event.debug_entry.output is not None and e.debug_event.debug_entry.output.bool_val]


@pytest.mark.parametrize("model,pte", [("mlp", "portable.pte"), ("mlp", "xnnpack.pte"), ("dynamic_mlp", "portable.pte")])
def test_etdump_and_debug_buffer_hold_each_run_and_its_outputs(models_dir, tmp_path, model, pte):
    import etrt
    program = etrt.Runtime.get().load_program(models_dir / model / pte, enable_etdump=True,
                                              debug_buffer_size=1 << 20)
    method = program.load_method("forward")
    results = [method.execute(inputs)[0] for _, inputs, _, _ in cases(models_dir / model, "forward")]
    program.write_etdump_result_to_file(tmp_path / "run.etdp", tmp_path / "run.bin")
    dump = dump_of(tmp_path / "run.etdp")
    assert [r.name for r in dump.run_data] == ["Execute"] * len(results)
    buffer = (tmp_path / "run.bin").read_bytes()
    for run, result in zip(dump.run_data, results):
        names = [e.profile_event.name for e in run.events if e.profile_event is not None]
        assert names[-1] == "Method::execute" and len(names) > 1
        (output,) = output_events(run)
        t = output.debug_entry.tensor
        got = np.frombuffer(buffer, dtype=np.float32, count=result.size, offset=t.offset).reshape(result.shape)
        np.testing.assert_array_equal(got, result)


def test_inspector_tables_and_numerical_comparison_on_the_packages_dump(models_dir, tmp_path):
    """ExecuTorch's Inspector with the program's ETRecord, on what write_etdump_result_to_file wrote."""
    import etrt
    from executorch.devtools import Inspector
    traced = models_dir / "traced"
    x = np.load(traced / "plain.npz")["input_0"]  # the ETRecord's representative input
    program = etrt.Runtime.get().load_program(traced / "plain.pte", enable_etdump=True, debug_buffer_size=1 << 20)
    program.load_method("forward").execute([x])
    program.write_etdump_result_to_file(tmp_path / "p.etdp", tmp_path / "p.bin")
    inspector = Inspector(etdump_path=str(tmp_path / "p.etdp"), etrecord=str(traced / "plain.etrecord"),
                          debug_buffer_path=str(tmp_path / "p.bin"))
    (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    operators = [e for e in block.events if e.name != "Method::execute"]
    assert operators and all(e.debug_handles is not None for e in operators), "matched to the ETRecord"
    table = io.StringIO()
    inspector.print_data_tabular(file=table)
    assert all(e.name in table.getvalue() for e in operators)
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) > 0
    assert float(np.max(np.asarray(gaps["gap"].tolist(), dtype=np.float64))) < 1e-8


def test_one_dump_for_every_method_of_the_program(models_dir, tmp_path):
    import etrt
    program = etrt.Runtime.get().load_program(models_dir / "two_methods" / "portable.pte", enable_etdump=True)
    for name in ("forward", "encode"):
        _, inputs, _, _ = next(cases(models_dir / "two_methods", name))
        program.load_method(name).execute(inputs)
    program.write_etdump_result_to_file(tmp_path / "two.etdp")
    assert len(dump_of(tmp_path / "two.etdp").run_data) == 2


def test_bytes_bytearray_and_file_objects_behave_like_paths(models_dir, tmp_path):
    import etrt
    path = models_dir / "mlp" / "portable.pte"
    _, inputs, _, _ = next(cases(models_dir / "mlp", "forward"))
    data = path.read_bytes()
    for i, source in enumerate([data, bytearray(data), io.BytesIO(data), open(path, "rb")]):
        program = etrt.Runtime.get().load_program(source, enable_etdump=True)
        program.load_method("forward").execute(inputs)
        program.write_etdump_result_to_file(str(tmp_path / f"{i}.etdp"))
        assert len(dump_of(tmp_path / f"{i}.etdp").run_data) == 1


def test_clear_errors(models_dir, tmp_path):
    import etrt
    path = models_dir / "mlp" / "portable.pte"
    _, inputs, _, _ = next(cases(models_dir / "mlp", "forward"))
    small = etrt.Runtime.get().load_program(path, enable_etdump=True, debug_buffer_size=32)
    small.load_method("forward").execute(inputs)
    with pytest.raises(etrt.Error, match=r"too small.*needed (\d+) bytes"):
        small.write_etdump_result_to_file(tmp_path / "a.etdp", tmp_path / "a.bin")
    plain = etrt.Runtime.get().load_program(path)
    with pytest.raises(RuntimeError, match="enable_etdump=True"):
        plain.write_etdump_result_to_file(tmp_path / "b.etdp")
    no_buffer = etrt.Runtime.get().load_program(path, enable_etdump=True)
    with pytest.raises(ValueError, match="debug_buffer_size"):
        no_buffer.write_etdump_result_to_file(tmp_path / "c.etdp", tmp_path / "c.bin")
    with pytest.raises(ValueError, match="debug_buffer_size"):
        etrt.Runtime.get().load_program(path, debug_buffer_size=-1, enable_etdump=True)


def test_without_etdump_no_tracer_is_mapped(models_dir, tmp_path):
    code = f"""
import numpy as np, etrt
program = etrt.Runtime.get().load_program({str(models_dir / 'mlp' / 'portable.pte')!r})
inputs = np.load({str(models_dir / 'mlp' / 'inputs.npz')!r})
program.load_method('forward').execute([inputs[k] for k in sorted(inputs.files)])
maps = open('/proc/self/maps').read()
assert 'libetrt_kernels_optimized' in maps
assert 'libetrt_etdump' not in maps, 'a tracer is mapped although none was asked for'
print('ok')
"""
    assert run_python(code, cwd=tmp_path).stdout.strip() == "ok"

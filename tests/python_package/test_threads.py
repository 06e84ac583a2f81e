"""Python threads sharing the runtime: the GIL is released while methods run,
runs of one method are serialised, and every result stays correct."""
import threading

import numpy as np

from conftest import cases


def test_threads_running_shared_and_separate_methods(models_dir):
    import etrt
    runtime = etrt.Runtime.get()
    work = []
    for name in ("mlp", "small_cnn", "mobilenet_v2_block"):
        _, inputs, expected, tol = next(cases(models_dir / name, "forward"))
        for pte in ("portable.pte", "xnnpack.pte"):
            method = runtime.load_program(models_dir / name / pte).load_method("forward")
            work.append((f"{name}/{pte}", method, inputs, expected[0], tol))
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(40):
            label, method, inputs, expected, tol = work[rng.integers(len(work))]
            got = method.execute(inputs)[0]
            if not np.allclose(got, expected, rtol=tol["rtol"], atol=tol["atol"]):
                failures.append((label, float(np.abs(got - expected).max())))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_resizing_the_pool_while_other_threads_run(models_dir):
    import etrt
    _, inputs, expected, tol = next(cases(models_dir / "resnet_basic", "forward"))
    method = etrt.Runtime.get().load_program(models_dir / "resnet_basic" / "portable.pte").load_method("forward")
    stop = threading.Event()
    failures = []

    def runner():
        while not stop.is_set():
            got = method.execute(inputs)[0]
            if not np.allclose(got, expected[0], rtol=tol["rtol"], atol=tol["atol"]):
                failures.append(float(np.abs(got - expected[0]).max()))

    thread = threading.Thread(target=runner)
    thread.start()
    try:
        for size in (1, 2, 3, 1, 2) * 4:
            etrt.set_num_threads(size)
            assert etrt.num_threads() == size
    finally:
        stop.set()
        thread.join()
    assert failures == []

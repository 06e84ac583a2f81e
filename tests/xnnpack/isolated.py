"""Runs programs on etrt in a child process, so a crash (an abort inside XNNPACK, a NULL dereference) fails the
test that asked instead of killing pytest.

    results, crash = run_isolated(tmp_path, [Job("name", pte_path, inputs), ...])

`results` maps each job that finished to ("ok", outputs) or ("error", message); `crash` describes how the child
died (None when it exited normally), and the jobs after the one it died in are missing from `results`."""
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


@dataclass
class Job:
    name: str
    pte: Path
    inputs: list = field(default_factory=list)
    method: str = "forward"


def run_isolated(work_dir, jobs, timeout=600):
    work_dir = Path(work_dir)
    spec = []
    for k, job in enumerate(jobs):
        inputs = work_dir / f"job{k}_inputs.npz"
        np.savez(inputs, **{f"input_{i}": x for i, x in enumerate(job.inputs)})
        spec.append({"name": job.name, "pte": str(job.pte), "method": job.method, "inputs": str(inputs),
                     "outputs": str(work_dir / f"job{k}_outputs.npz")})
    (work_dir / "jobs.json").write_text(json.dumps(spec))
    child = subprocess.run([sys.executable, str(HERE / "isolated.py"), str(work_dir / "jobs.json")],
                           capture_output=True, text=True, timeout=timeout, env=dict(os.environ))
    results = {}
    for line in child.stdout.splitlines():
        if not line.startswith("{"):
            continue
        report = json.loads(line)
        if report["status"] == "ok":
            with np.load(report["outputs"]) as data:
                results[report["name"]] = ("ok", [data[f"output_{i}"] for i in range(len(data.files))])
        else:
            results[report["name"]] = ("error", report["message"])
    crash = None
    if child.returncode != 0:
        how = (f"signal {signal.Signals(-child.returncode).name}" if child.returncode < 0
               else f"exit code {child.returncode}")
        started = [line[len("start "):] for line in child.stdout.splitlines() if line.startswith("start ")]
        crash = f"the child died ({how}) in job {started[-1] if started else '?'}: {child.stderr[-2000:]}"
    return results, crash


def _child(jobs_file):
    sys.path.insert(0, str(HERE.parents[1] / "tests" / "support"))
    import etrt_ctypes

    lib = etrt_ctypes.Library()
    for job in json.loads(Path(jobs_file).read_text()):
        print("start " + job["name"], flush=True)
        with np.load(job["inputs"]) as data:
            inputs = [data[f"input_{i}"] for i in range(len(data.files))]
        try:
            program = lib.load_program(job["pte"])
            outputs = program.load_method(job["method"]).execute(inputs)
            np.savez(job["outputs"], **{f"output_{i}": x for i, x in enumerate(outputs)})
            report = {"name": job["name"], "status": "ok", "outputs": job["outputs"]}
        except etrt_ctypes.EtrtError as e:
            report = {"name": job["name"], "status": "error", "message": str(e)}
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    _child(sys.argv[1])

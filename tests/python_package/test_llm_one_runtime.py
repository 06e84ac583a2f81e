"""One process, one runtime: `import etrt` and `import etrt.llm` map one libetrt, and the LLM
runner's programs are served by the registry, plugins and thread pool that etrt sees and sets.
The program (programs/llm/llama.pte, export_llm.py) has an XNNPACK delegate and the custom SDPA
operators, so running it needs plugins."""
import json
from pathlib import Path

from conftest import run_python

PROGRAMS = Path(__file__).resolve().parent / "programs" / "llm"

SCRIPT = r"""
import gc, json, os
import etrt
import etrt.llm
from etrt import _etrt, _llm

package = os.path.dirname(etrt.__file__)
# The plugin is loaded through etrt, before the runner exists.
etrt.load_plugin(os.path.join(package, "lib", "etrt", "manifests", "xnnpack.json"))
etrt.set_num_threads(1)
runner = etrt.llm.TextLLMRunner({model!r}, {tokenizer!r})
config = etrt.llm.GenerationConfig(temperature=0.0, max_new_tokens=6, echo=False)
runner.generate("Once upon a time", config)
threads_seen_by_runner = _llm.num_threads()
del runner
gc.collect()  # the delegate's handle reports its runs when it is destroyed

mapped = {{}}
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split()
        if len(fields) >= 6 and os.path.basename(fields[5]).startswith(("libetrt.so", "libetrt_llm.so", "libetrt_xnnpack")):
            mapped.setdefault(os.path.basename(fields[5]), set()).add((fields[3], fields[4], fields[5]))
print(json.dumps({{
    "mapped": {{name: sorted({{path for _, _, path in files}}) for name, files in mapped.items()}},
    "inodes": {{name: sorted({{dev + ":" + inode for dev, inode, _ in files}}) for name, files in mapped.items()}},
    "registry": [_etrt.registry_identity(), _llm.registry_identity()],
    "threadpool": [_etrt.threadpool_identity(), _llm.threadpool_identity()],
    "threads_seen_by_runner": threads_seen_by_runner,
    "plugins": etrt.plugins(),
    "report": json.loads(_llm.report_json()),
}}))
"""


def test_etrt_and_etrt_llm_share_one_runtime(tmp_path):
    stats = tmp_path / "xnnpack_stats.jsonl"
    code = SCRIPT.format(model=str(PROGRAMS / "llama.pte"), tokenizer=str(PROGRAMS / "tokenizer.model"))
    result = run_python(code, tmp_path, env={"ETRT_XNNPACK_STATS": str(stats), "ETRT_PLUGIN_PATH": ""})
    state = json.loads(result.stdout.strip().splitlines()[-1])

    # One libetrt (one file, one inode), and one libetrt_llm, one XNNPACK plugin.
    for library in ("libetrt.so.1", "libetrt_llm.so.1", "libetrt_xnnpack.so.1"):
        assert len(state["mapped"].get(library, [])) == 1, (library, state["mapped"])
        assert len(state["inodes"][library]) == 1, (library, state["inodes"])
    assert state["registry"][0] == state["registry"][1] != 0
    assert state["threadpool"][0] == state["threadpool"][1] != 0
    assert state["threads_seen_by_runner"] == 1  # set through etrt

    # The plugin etrt loaded is the one instance, and it served the runner's program.
    xnnpack = [p for p in state["plugins"] if p["name"] == "xnnpack"]
    assert len(xnnpack) == 1, xnnpack
    assert xnnpack[0]["state"] == "loaded" and xnnpack[0]["source"] == "explicit", xnnpack
    assert xnnpack[0]["load_count"] == 1, xnnpack
    reported = [p for p in state["report"]["plugins"] if p["name"] == "xnnpack"]
    assert len(reported) == 1 and reported[0]["source"] == "explicit", reported
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert lines and all(line["executes"] > 0 for line in lines), lines
    # The runner's custom SDPA came from a plugin the runner's program loaded; etrt sees it.
    llm_ops = [p for p in state["plugins"] if p["name"] == "llm_ops"]
    assert len(llm_ops) == 1 and llm_ops[0]["state"] == "loaded", llm_ops

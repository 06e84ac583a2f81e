"""Runs the exported program with etrt from Python, the plugin loaded with etrt.load_plugin():

    python3 run_etrt.py PLUGIN MODEL.pte INPUT.npy EXPECTED.npy

PLUGIN is the plugin's manifest (scaled_swish.json) or its library. The output
is compared with EXPECTED.npy, the eager PyTorch output written by export.py.
"""
import sys

import numpy as np

import etrt


def main(plugin: str, model: str, input_path: str, expected_path: str) -> int:
    etrt.load_plugin(plugin)
    method = etrt.Runtime.get().load_program(model).load_method("forward")
    output = np.asarray(method.execute([np.load(input_path)])[0])
    expected = np.load(expected_path)
    difference = float(np.max(np.abs(output - expected)))
    print(f"max |etrt - eager| = {difference:.3g}")
    served = sorted(p["name"] for p in etrt.plugins() if p["state"] == "loaded")
    print("loaded plugins:", ", ".join(served))
    return 0 if np.allclose(output, expected, rtol=1e-5, atol=1e-5) else 1


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))

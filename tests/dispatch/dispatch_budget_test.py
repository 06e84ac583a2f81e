"""CI guard of the per-operator cost of small operators (issue 16): callgrind counts the instructions of one execute
of each case of dispatch_budget.json -- tests/models/dispatch/static_1.pte (65 operators on 1-element tensors, static
shapes: dispatch alone) and elementwise22.pte (22 operators on 70-element tensors) -- and the test fails when a
case's count per operator exceeds its budget for this build type by more than the tolerance.

        python3 tests/dispatch/dispatch_budget_test.py ETRT_BINARY BUILD_TYPE

Instruction counts are deterministic on one build, so the tolerance only absorbs compiler and library updates.
Exits 77 (ctest: skipped) when valgrind is missing; CI installs it (scripts/deps.sh).
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from callgrind_counts import valgrind_available  # noqa: E402
from dispatch_overhead import ir_per_operator  # noqa: E402

SKIP = 77


def main():
    etrt, build_type = Path(sys.argv[1]), sys.argv[2]
    if not valgrind_available():
        print("SKIPPED: valgrind is not installed (scripts/install_deps.sh installs it)")
        return SKIP
    budget = json.loads((Path(__file__).parent / "dispatch_budget.json").read_text())
    status = 0
    for case, budgets in budget["cases"].items():
        entry = budgets.get(build_type)
        if entry is None:
            print(f"FAILED: dispatch_budget.json has no budget of {case} for build type '{build_type}' "
                  f"(it has {sorted(budgets)}); measure one with bench/dispatch_overhead.py --only {case}")
            status = 1
            continue
        limit = entry["ir_per_operator"] * (1 + budget["tolerance"])
        measured = ir_per_operator(etrt, case, runs=10)
        print(f"{case}: {measured:.1f} instructions per operator; budget {entry['ir_per_operator']} "
              f"({build_type}), limit {limit:.1f} (+{100 * budget['tolerance']:.0f} %)")
        if measured > limit:
            print(f"FAILED: {case}'s per-operator cost regressed beyond its budget; profile it with "
                  f"python3 bench/dispatch_overhead.py --annotate {case}")
            status = 1
    return status

if __name__ == "__main__":
    sys.exit(main())

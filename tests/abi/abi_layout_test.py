"""Golden-file test of the plugin ABI layout (plugin_api/etrt/plugin_api.h).

The dump program (abi_layout_dump.c) prints every struct's size, alignment and
field offsets/sizes, every enum constant and the version macros. It is compiled
once per ABI level and its output must equal the frozen record of that level in
plugin_api/abi_layout/<major>.<minor>.txt. Consecutive minors of one major must
be append-only compatible.

Inputs (environment variables):
  ETRT_ABI_DUMP            the dump built from the header as is (current level)
  ETRT_ABI_DUMP_<M>_<m>    the dump built with -DET_ABI_TARGET_MINOR=<m>, e.g.
                           ETRT_ABI_DUMP_1_0; any number of these may be given
                           and each must print level <M>.<m>.
"""

import difflib
import os
import re
import subprocess
from pathlib import Path

import pytest

SOURCE_ROOT = Path(__file__).resolve().parents[2]
LAYOUT_DIR = SOURCE_ROOT / "plugin_api" / "abi_layout"
HEADER = SOURCE_ROOT / "plugin_api" / "etrt" / "plugin_api.h"

BUMP_MESSAGE = (
    "the ABI layout changed without a version bump: bump ET_ABI_MINOR (append-only change) "
    "or ET_ABI_MAJOR and add plugin_api/abi_layout/<new>.txt"
)

# --------------------------------------------------------------------- parsing

_ABI_RE = re.compile(r"^abi (\d+)\.(\d+)$")
_STRUCT_RE = re.compile(r"^struct (\w+) size (\d+) align (\d+)$")
_FIELD_RE = re.compile(r"^  (\w+) offset (\d+) size (\d+)$")
_ENUM_RE = re.compile(r"^enum (\w+) = (-?\d+)$")
_MACRO_RE = re.compile(r"^macro (\w+) = (.*)$")


class LayoutError(ValueError):
    pass


def parse_layout(text, origin="<layout>"):
    """Parses a dump into {"abi": (major, minor), "structs": {name: {...}},
    "enums": {name: value}, "macros": {name: text}}."""
    layout = {"abi": None, "structs": {}, "enums": {}, "macros": {}}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{origin}:{number}: {line!r}"
        if m := _ABI_RE.match(line):
            if layout["abi"] is not None:
                raise LayoutError(f"second abi line at {where}")
            layout["abi"] = (int(m[1]), int(m[2]))
        elif m := _STRUCT_RE.match(line):
            if m[1] in layout["structs"]:
                raise LayoutError(f"struct listed twice at {where}")
            current = {"size": int(m[2]), "align": int(m[3]), "fields": {}}
            layout["structs"][m[1]] = current
        elif m := _FIELD_RE.match(line):
            if current is None:
                raise LayoutError(f"field outside a struct at {where}")
            if m[1] in current["fields"]:
                raise LayoutError(f"field listed twice at {where}")
            current["fields"][m[1]] = (int(m[2]), int(m[3]))
        elif m := _ENUM_RE.match(line):
            current = None
            layout["enums"][m[1]] = int(m[2])
        elif m := _MACRO_RE.match(line):
            current = None
            layout["macros"][m[1]] = m[2]
        else:
            raise LayoutError(f"unrecognised line at {where}")
    if layout["abi"] is None:
        raise LayoutError(f"{origin}: no 'abi MAJOR.MINOR' line")
    return layout


def append_only_problems(old, new):
    """Everything that makes `new` not an append-only extension of `old`
    (an empty list when it is one)."""
    problems = []
    o, n = old["abi"], new["abi"]
    if o[0] != n[0]:
        problems.append(f"majors differ: {o[0]} vs {n[0]} (only minors of one major are compatible)")
    elif n[1] <= o[1]:
        problems.append(f"newer minor {n[1]} is not greater than {o[1]}")
    for name, old_struct in old["structs"].items():
        new_struct = new["structs"].get(name)
        if new_struct is None:
            problems.append(f"struct {name} was removed")
            continue
        if new_struct["size"] < old_struct["size"]:
            problems.append(f"struct {name} shrank from {old_struct['size']} to {new_struct['size']} bytes")
        if new_struct["align"] != old_struct["align"]:
            problems.append(
                f"struct {name} alignment changed from {old_struct['align']} to {new_struct['align']}")
        for field, (offset, size) in old_struct["fields"].items():
            if field not in new_struct["fields"]:
                problems.append(f"field {name}.{field} was removed or renamed")
                continue
            new_offset, new_size = new_struct["fields"][field]
            if new_offset != offset:
                problems.append(f"field {name}.{field} moved from offset {offset} to {new_offset}")
            if new_size != size:
                problems.append(f"field {name}.{field} changed size from {size} to {new_size}")
        # Fields the newer minor adds must start at or beyond the older struct's
        # size: readers decide whether a field is present from struct_size, so a
        # field placed in the older struct's padding would be "present" (and
        # garbage) in every struct an older peer fills in.
        for field, (offset, _size) in new_struct["fields"].items():
            if field not in old_struct["fields"] and offset < old_struct["size"]:
                problems.append(
                    f"field {name}.{field} was added at offset {offset}, inside the older struct "
                    f"(size {old_struct['size']}); new fields go at the end")
    for constant, value in old["enums"].items():
        if constant not in new["enums"]:
            problems.append(f"enum constant {constant} was removed")
        elif new["enums"][constant] != value:
            problems.append(f"enum constant {constant} changed from {value} to {new['enums'][constant]}")
    for macro, value in old["macros"].items():
        if macro == "ET_ABI_MINOR":
            continue  # the one thing a minor bump changes
        if macro not in new["macros"]:
            problems.append(f"macro {macro} was removed")
        elif new["macros"][macro] != value:
            problems.append(f"macro {macro} changed from {value!r} to {new['macros'][macro]!r}")
    return problems


def golden_files():
    """{(major, minor): path} of every frozen record."""
    found = {}
    for path in LAYOUT_DIR.glob("*.txt"):
        m = re.fullmatch(r"(\d+)\.(\d+)\.txt", path.name)
        assert m, f"{path}: golden files are named <major>.<minor>.txt"
        found[(int(m[1]), int(m[2]))] = path
    return found


def header_version():
    text = HEADER.read_text()
    major = re.search(r"^#define ET_ABI_MAJOR (\d+)\s*$", text, re.M)
    minor = re.search(r"^#define ET_ABI_MINOR (\d+)\s*$", text, re.M)
    assert major and minor, f"{HEADER}: no '#define ET_ABI_MAJOR/ET_ABI_MINOR <n>' lines"
    return int(major[1]), int(minor[1])


# ----------------------------------------------------------------------- dumps


def configured_dumps():
    """[(env var, expected level or None, executable)] from the environment."""
    dumps = []
    for var, value in sorted(os.environ.items()):
        if var == "ETRT_ABI_DUMP":
            dumps.append((var, None, value))
        elif m := re.fullmatch(r"ETRT_ABI_DUMP_(\d+)_(\d+)", var):
            dumps.append((var, (int(m[1]), int(m[2])), value))
    return dumps


def run_dump(executable):
    result = subprocess.run([executable], capture_output=True, text=True, check=False)
    assert result.returncode == 0, (
        f"{executable} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result.stdout


def test_dumps_are_configured():
    names = [var for var, _, _ in configured_dumps()]
    assert "ETRT_ABI_DUMP" in names, "set ETRT_ABI_DUMP to the abi_layout_dump executable"
    assert "ETRT_ABI_DUMP_1_0" in names, (
        "set ETRT_ABI_DUMP_1_0 to abi_layout_dump built with -DET_ABI_TARGET_MINOR=0")


@pytest.mark.parametrize("var,expected,executable", configured_dumps(),
                         ids=[d[0] for d in configured_dumps()])
def test_dump_matches_golden(var, expected, executable):
    output = run_dump(executable)
    layout = parse_layout(output, f"{var}={executable}")
    level = layout["abi"]
    if expected is None:
        assert level == header_version(), (
            f"{executable} prints abi {level[0]}.{level[1]} but plugin_api.h is at "
            f"{header_version()[0]}.{header_version()[1]}: build it without ET_ABI_TARGET_MINOR")
    else:
        assert level == expected, (
            f"{executable} ({var}) prints abi {level[0]}.{level[1]}, expected {expected[0]}.{expected[1]}")
    golden = LAYOUT_DIR / f"{level[0]}.{level[1]}.txt"
    assert golden.is_file(), (
        f"{BUMP_MESSAGE}\n(no frozen record {golden} for level {level[0]}.{level[1]}; "
        f"the dump printed:\n{output})")
    expected_text = golden.read_text()
    if output != expected_text:
        diff = "".join(difflib.unified_diff(
            expected_text.splitlines(keepends=True), output.splitlines(keepends=True),
            fromfile=str(golden), tofile=f"{executable} (built from the current header)"))
        pytest.fail(f"{BUMP_MESSAGE}\n{diff}", pytrace=False)


def test_golden_for_current_version_exists():
    major, minor = header_version()
    golden = LAYOUT_DIR / f"{major}.{minor}.txt"
    assert golden.is_file(), (
        f"plugin_api.h declares ABI {major}.{minor} but {golden} does not exist: "
        f"record the layout of every released level")
    assert parse_layout(golden.read_text(), str(golden))["abi"] == (major, minor), (
        f"{golden} does not describe abi {major}.{minor}")


def test_every_minor_of_current_major_is_recorded():
    major, minor = header_version()
    have = sorted(m for (M, m) in golden_files() if M == major)
    assert have == list(range(minor + 1)), (
        f"golden files for major {major} cover minors {have}; expected 0..{minor} without gaps")


def consecutive_pairs():
    by_major = {}
    for (major, minor), path in golden_files().items():
        by_major.setdefault(major, []).append((minor, path))
    pairs = []
    for major, entries in sorted(by_major.items()):
        entries.sort()
        pairs += [(a[1], b[1]) for a, b in zip(entries, entries[1:])]
    return pairs


def test_there_is_a_pair_to_compare():
    # Guards the parametrised test below against silently running zero cases.
    assert consecutive_pairs(), f"no two consecutive minors of one major in {LAYOUT_DIR}"


@pytest.mark.parametrize("older,newer", consecutive_pairs(),
                         ids=[f"{a.stem}->{b.stem}" for a, b in consecutive_pairs()])
def test_consecutive_minors_are_append_only(older, newer):
    old = parse_layout(older.read_text(), str(older))
    new = parse_layout(newer.read_text(), str(newer))
    problems = append_only_problems(old, new)
    assert not problems, (
        f"{newer.name} is not an append-only extension of {older.name}; "
        f"a change like this needs a new ET_ABI_MAJOR:\n  " + "\n  ".join(problems))


def test_golden_files_check_struct_size_at_offset_zero():
    for path in golden_files().values():
        layout = parse_layout(path.read_text(), str(path))
        assert layout["structs"], f"{path}: no structs"
        for name, struct in layout["structs"].items():
            assert struct["fields"].get("struct_size") == (0, 8), (
                f"{path}: struct {name} does not start with an 8-byte struct_size")


# ------------------------------------------------- the checker on itself

_SYNTHETIC_OLD = """\
abi 7.0
macro ET_ABI_MAJOR = 7
macro ET_ABI_MINOR = 0
struct thing size 16 align 8
  struct_size offset 0 size 8
  a offset 8 size 4
  b offset 12 size 4
enum THING_A = 0
enum THING_B = 1
"""

_SYNTHETIC_COMPATIBLE = """\
abi 7.1
macro ET_ABI_MAJOR = 7
macro ET_ABI_MINOR = 1
struct thing size 24 align 8
  struct_size offset 0 size 8
  a offset 8 size 4
  b offset 12 size 4
  c offset 16 size 8
struct other size 8 align 8
  struct_size offset 0 size 8
enum THING_A = 0
enum THING_B = 1
enum THING_C = 2
"""

# `b` moved behind a field inserted in front of it.
_SYNTHETIC_FIELD_MOVED = """\
abi 7.1
macro ET_ABI_MAJOR = 7
macro ET_ABI_MINOR = 1
struct thing size 24 align 8
  struct_size offset 0 size 8
  a offset 8 size 4
  inserted offset 12 size 4
  b offset 16 size 4
enum THING_A = 0
enum THING_B = 1
"""


def test_checker_accepts_an_append_only_change():
    old = parse_layout(_SYNTHETIC_OLD)
    new = parse_layout(_SYNTHETIC_COMPATIBLE)
    assert append_only_problems(old, new) == []


def test_checker_rejects_a_moved_field():
    problems = append_only_problems(parse_layout(_SYNTHETIC_OLD), parse_layout(_SYNTHETIC_FIELD_MOVED))
    assert "field thing.b moved from offset 12 to 16" in problems
    assert any("thing.inserted" in p and "inside the older struct" in p for p in problems), problems


@pytest.mark.parametrize("edit,expected", [
    (lambda t: t.replace("struct thing size 24", "struct thing size 8"), "struct thing shrank from 16 to 8 bytes"),
    (lambda t: t.replace("enum THING_B = 1", "enum THING_B = 5"), "enum constant THING_B changed from 1 to 5"),
    (lambda t: t.replace("enum THING_B = 1\n", ""), "enum constant THING_B was removed"),
    (lambda t: t.replace("  b offset 12 size 4", "  b offset 12 size 8"), "field thing.b changed size from 4 to 8"),
    (lambda t: t.replace("  b offset 12 size 4", "  renamed offset 12 size 4"), "field thing.b was removed or renamed"),
    (lambda t: t.replace("struct thing", "struct renamed"), "struct thing was removed"),
    (lambda t: t.replace("  c offset 16 size 8", "  c offset 12 size 8"),
     "field thing.c was added at offset 12, inside the older struct (size 16); new fields go at the end"),
    (lambda t: t.replace("abi 7.1", "abi 8.0"), "majors differ: 7 vs 8 (only minors of one major are compatible)"),
])
def test_checker_rejects_other_breaks(edit, expected):
    broken = edit(_SYNTHETIC_COMPATIBLE)
    assert broken != _SYNTHETIC_COMPATIBLE, "the edit must change the synthetic layout"
    problems = append_only_problems(parse_layout(_SYNTHETIC_OLD), parse_layout(broken))
    assert expected in problems, problems


def test_parser_rejects_garbage():
    with pytest.raises(LayoutError):
        parse_layout("abi 1.0\nstruct x size 8 align 8\n  field offset zero size 8\n")
    with pytest.raises(LayoutError):
        parse_layout("struct x size 8 align 8\n")

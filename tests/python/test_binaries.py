"""Binary hygiene of what etrt ships, read with binutils (readelf, nm) and ldd.

Shipped objects: lib/libetrt.so.<major>, every file in lib/etrt/plugins/ (and
in its CPU-level directories, e.g. x86-64-v3/, holding builds for that level) and
bin/etrt, all under the build directory given in ETRT_BUILD_DIR (the build tree
mirrors the install tree).

Checks the ABI rules of DESIGN.md that only the binaries can prove: a plugin
exports exactly et_plugin_entry and never links libetrt; libetrt exports only
et_*; sonames equal file names; RUNPATHs are $ORIGIN-relative only; the tree is
relocatable; nothing of etrt's own runs a static initialiser.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# ------------------------------------------------------------------ inputs


def build_dir():
    value = os.environ.get("ETRT_BUILD_DIR")
    if not value:
        pytest.fail("set ETRT_BUILD_DIR to the etrt build directory", pytrace=False)
    path = Path(value).resolve()
    assert (path / "lib").is_dir(), f"ETRT_BUILD_DIR={path} has no lib/ directory"
    return path


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def libetrt(build):
    libs = sorted(p for p in (build / "lib").glob("libetrt.so.*") if not p.is_symlink())
    assert len(libs) == 1, f"expected exactly one lib/libetrt.so.<major> file in {build}, found {libs}"
    return libs[0]


CPU_LEVEL_DIRECTORY = re.compile(r"^(x86-64|armv[0-9])")


def plugin_files(directory):
    """Plugin files of `directory` and of its CPU-level directories (a plugin's builds for other levels)."""
    found = [p for p in directory.iterdir() if p.is_file()]
    for sub in directory.iterdir():
        if sub.is_dir() and CPU_LEVEL_DIRECTORY.match(sub.name):
            found += [p for p in sub.iterdir() if p.is_file()]
    return sorted(found)


def plugins(build):
    directory = build / "lib" / "etrt" / "plugins"
    assert directory.is_dir(), f"{directory} does not exist"
    found = plugin_files(directory)
    assert found, f"{directory} holds no plugin"
    return found


def cli(build):
    path = build / "bin" / "etrt"
    assert path.is_file(), f"{path} does not exist"
    return path


def shipped(build):
    return [libetrt(build), *plugins(build), cli(build)]


def bin_executables(build):
    return sorted(p for p in (build / "bin").iterdir() if p.is_file() and is_elf(p))


# --------------------------------------------------------------- binutils


def run(*args, env=None):
    result = subprocess.run(list(map(str, args)), capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, (
        f"`{' '.join(map(str, args))}` exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result.stdout


def dynamic_tags(path):
    """[(tag, value)] of the dynamic section, e.g. ("NEEDED", "libc.so.6")."""
    tags = []
    for line in run("readelf", "-d", "-W", path).splitlines():
        m = re.match(r"\s*0x[0-9a-f]+\s+\((\w+)\)\s+(.*)$", line)
        if not m:
            continue
        value = m[2].strip()
        bracket = re.search(r"\[(.*)\]", value)
        tags.append((m[1], bracket[1] if bracket else value))
    return tags


def tag_values(path, tag):
    return [value for t, value in dynamic_tags(path) if t == tag]


def version_definitions(path):
    return set(re.findall(r"Flags: \w+\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)",
                          run("readelf", "-V", "-W", path)))


def dynamic_symbols(path):
    """[(name, type, bind, ndx)] of every dynamic symbol, names without their version."""
    symbols = []
    for line in run("readelf", "--dyn-syms", "-W", path).splitlines():
        fields = line.split()
        if len(fields) < 8 or not fields[0].rstrip(":").isdigit():
            continue
        _num, _value, _size, sym_type, bind, _vis, ndx, name = fields[:8]
        symbols.append((name.split("@")[0], sym_type, bind, ndx))
    return symbols


def defined_dynamic_symbols(path):
    """[(name, type, bind, ndx)] of the defined, non-local dynamic symbols."""
    return [s for s in dynamic_symbols(path) if s[3] != "UND" and s[2] != "LOCAL"]


def imported_symbols(path):
    """Names of the undefined dynamic symbols (what the object takes from others)."""
    return {name for name, _t, _b, ndx in dynamic_symbols(path) if ndx == "UND"}


def exported_symbols(path):
    """Defined dynamic symbols, minus the ABS symbols naming version nodes."""
    nodes = version_definitions(path)
    return [(name, sym_type, bind, ndx) for name, sym_type, bind, ndx in defined_dynamic_symbols(path)
            if not (ndx == "ABS" and name in nodes)]


def sections(path):
    """{name: (address, size)} from readelf -S."""
    found = {}
    for line in run("readelf", "-S", "-W", path).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s", line)
        if m:
            found[m[1]] = (int(m[2], 16), int(m[3], 16))
    return found


def relocation_section(path, name):
    """The text of one relocation section from readelf -r (demangled)."""
    text = run("readelf", "-r", "-W", "-C", path)
    m = re.search(rf"^Relocation section '{re.escape(name)}'.*?(?=^Relocation section|\Z)", text, re.M | re.S)
    return m[0].rstrip() if m else f"(no {name} section)"


def object_constructors(obj, section):
    """The functions a relocatable object's constructor section points to:
    readelf shows them as "<section> + <offset>", resolved here through the
    object's symbol table (e.g. _GLOBAL__sub_I_registry.cpp)."""
    index = {}
    for line in run("readelf", "-S", "-W", obj).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
        if m:
            index[m[2]] = m[1]
    functions = {}
    for line in run("readelf", "-s", "-W", "-C", obj).splitlines():
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[3] == "FUNC":
            functions[(fields[6], int(fields[1], 16))] = fields[7]
    found = []
    for line in relocation_section(obj, ".rela" + section).splitlines():
        m = re.search(r"\s(\S+) \+ ([0-9a-f]+)$", line)
        if not m:
            continue
        target, offset = m[1], int(m[2], 16)
        name = functions.get((index.get(target), offset)) if target in index else target
        found.append(f"{target} + 0x{offset:x} = {name or '(no symbol)'}")
    return found


def init_array_entries(path):
    """What each .init_array slot of a linked object points to, by symbol name
    where the static symbol table still knows it."""
    secs = sections(path)
    if ".init_array" not in secs:
        return []
    start, size = secs[".init_array"]
    names = {}
    for line in run("nm", "-C", path).splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[1] in "tTwW":
            names.setdefault(int(parts[0], 16), parts[2])
    entries = []
    for line in run("readelf", "-r", "-W", path).splitlines():
        m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+(\S+)\s+(.*)$", line)
        if not m or not (start <= int(m[1], 16) < start + size):
            continue
        target = m[3].strip()
        addend = re.search(r"([0-9a-f]+)$", target)
        label = names.get(int(addend[1], 16)) if addend and m[2].endswith("RELATIVE") else None
        entries.append(f"slot 0x{m[1]}: {m[2]} {target}" + (f" -> {label}" if label else ""))
    return entries


# -------------------------------------------------------------------- plugins


def plugin_ids():
    """Plugin file names, for parametrising at collection time."""
    value = os.environ.get("ETRT_BUILD_DIR")
    directory = Path(value) / "lib" / "etrt" / "plugins" if value else None
    if not directory or not directory.is_dir():
        return []
    return [p.relative_to(directory).as_posix() for p in plugin_files(directory)]


@pytest.fixture(scope="module")
def build():
    return build_dir()


def test_there_are_plugins_to_check(build):
    assert plugins(build), "no shipped plugin"
    assert plugin_ids(), "ETRT_BUILD_DIR lists no plugin at collection time"


@pytest.mark.parametrize("plugin_name", plugin_ids())
def test_plugin_exports_only_its_entry_point(build, plugin_name):
    path = build / "lib" / "etrt" / "plugins" / plugin_name
    exported = exported_symbols(path)
    names = [name for name, *_ in exported]
    assert names == ["et_plugin_entry"], (
        f"{path} must define exactly one dynamic symbol, et_plugin_entry; it defines {len(names)}:\n  "
        + "\n  ".join(f"{name} ({sym_type} {bind} ndx {ndx})" for name, sym_type, bind, ndx in exported))
    assert exported[0][1] == "FUNC", f"{path}: et_plugin_entry is a {exported[0][1]}, not a FUNC"


@pytest.mark.parametrize("plugin_name", plugin_ids())
def test_plugin_does_not_link_libetrt(build, plugin_name):
    path = build / "lib" / "etrt" / "plugins" / plugin_name
    needed = tag_values(path, "NEEDED")
    offending = [n for n in needed if n.startswith("libetrt")]
    assert not offending, f"{path} has libetrt in DT_NEEDED: {offending} (all NEEDED: {needed})"


@pytest.mark.parametrize("plugin_name", plugin_ids())
def test_plugin_soname_is_its_file_name(build, plugin_name):
    path = build / "lib" / "etrt" / "plugins" / plugin_name
    sonames = tag_values(path, "SONAME")
    assert sonames == [path.name], f"{path}: SONAME is {sonames}, expected [{path.name!r}]"


def test_the_environment_is_read_only_by_the_setuid_safe_rule(build):
    # libetrt reads ETRT_* with secure_getenv (nothing in a setuid or setgid process); a plugin asks the
    # host (et_host_api.setting), so a setuid host's caller cannot steer a plugin through its environment
    # (the XNNPACK plugin once appended to the file ETRT_XNNPACK_STATS named). Plain getenv in any of them
    # breaks that rule; plugins import no environment call at all.
    reads = {"getenv", "secure_getenv", "__secure_getenv", "__libc_secure_getenv"}
    found = {path: sorted(imported_symbols(path) & reads) for path in [libetrt(build), *plugins(build)]}
    allowed = {libetrt(build): {"secure_getenv"}}
    offenders = {str(path): names for path, names in found.items() if set(names) - allowed.get(path, set())}
    assert not offenders, f"objects that read the environment other than by the setuid-safe rule: {offenders}"
    assert found[libetrt(build)] == ["secure_getenv"], found[libetrt(build)]


# -------------------------------------------------------------------- libetrt


def test_libetrt_exports_only_et_symbols(build):
    path = libetrt(build)
    defined = defined_dynamic_symbols(path)
    foreign = [(name, ndx) for name, _t, _b, ndx in defined
               if not name.startswith("et_") and not (name == "ETRT_1" and ndx == "ABS")]
    assert not foreign, (
        f"{path} exports symbols outside et_* (and its version node ETRT_1):\n  "
        + "\n  ".join(f"{name} (ndx {ndx})" for name, ndx in foreign))
    names = {name for name, *_ in defined}
    assert "ETRT_1" in version_definitions(path), f"{path} has no ETRT_1 version node"
    for required in ("et_host_api_get", "et_load_plugin", "et_error_destroy"):
        assert required in names, f"{path} does not export {required}; it exports {sorted(names)}"


def test_libetrt_soname_and_symlink(build):
    path = libetrt(build)
    sonames = tag_values(path, "SONAME")
    assert sonames == [path.name], f"{path}: SONAME is {sonames}, expected [{path.name!r}]"
    link = build / "lib" / "libetrt.so"
    assert link.is_symlink(), f"{link} is not a symlink (exists: {link.exists()})"
    assert link.resolve() == path.resolve(), (
        f"{link} points to {os.readlink(link)} ({link.resolve()}), not {path.name}")


# -------------------------------------------------------------------- runpath


def test_runpaths_are_origin_relative(build):
    objects = [*shipped(build), *(p for p in bin_executables(build) if p not in shipped(build))]
    problems = []
    for path in objects:
        for tag in ("RUNPATH", "RPATH"):
            for value in tag_values(path, tag):
                for entry in value.split(":"):
                    if not entry.startswith("$ORIGIN"):
                        what = "an empty entry (means the current directory)" if entry == "" else repr(entry)
                        problems.append(f"{path}: {tag} [{value}] has {what}")
    assert not problems, "RUNPATH/RPATH entries must all start with $ORIGIN:\n  " + "\n  ".join(problems)


# ----------------------------------------------------------------- resolution


def ldd(path, env=None):
    result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, f"ldd {path} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
    return result.stdout


def clean_env():
    env = dict(os.environ)
    for var in ("LD_LIBRARY_PATH", "LD_PRELOAD", "ETRT_PLUGIN_PATH"):
        env.pop(var, None)
    return env


def assert_resolves(path, env):
    output = ldd(path, env)
    missing = [line.strip() for line in output.splitlines() if "not found" in line]
    assert not missing, f"{path}: DT_NEEDED entries do not resolve:\n  " + "\n  ".join(missing) + f"\nldd:\n{output}"
    return output


def test_needed_libraries_resolve(build):
    env = clean_env()
    for path in shipped(build):
        assert_resolves(path, env)


def test_tree_is_relocatable(build, tmp_path):
    copy = tmp_path / "relocated"
    shutil.copytree(build / "lib", copy / "lib", symlinks=True)
    shutil.copytree(build / "bin", copy / "bin", symlinks=True)
    env = clean_env()
    copied = [copy / p.relative_to(build) for p in shipped(build)]
    for path in copied:
        output = assert_resolves(path, env)
        for line in output.splitlines():
            m = re.match(r"\s*(libetrt\S*)\s+=>\s+(\S+)", line)
            if m:
                assert Path(m[2]).resolve().is_relative_to(copy.resolve()), (
                    f"{path} resolves {m[1]} to {m[2]}, outside the relocated tree {copy}: "
                    f"it would not find its own libetrt after installation elsewhere")
    result = subprocess.run([str(copy / "bin" / "etrt"), "version"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, check=False)
    assert result.returncode == 0, (
        f"{copy / 'bin' / 'etrt'} version (relocated, LD_LIBRARY_PATH cleared) exited with "
        f"{result.returncode}:\nstdout: {result.stdout}\nstderr: {result.stderr}")
    assert result.stdout.startswith("etrt "), f"relocated `etrt version` printed {result.stdout!r}"


# ----------------------------------------------------------- static initialisers


def own_objects(build):
    """{target dir: [object files]} for libetrt and every shipped plugin."""
    found = {}
    for directory in build.rglob("CMakeFiles/*.dir"):
        name = directory.name[:-len(".dir")]
        if name != "etrt" and not (name.startswith("etrt_plugin_") and not name.startswith("etrt_plugin_test_")):
            continue
        found.setdefault(name, []).extend(sorted(directory.rglob("*.o")))
    return found


CONSTRUCTOR_SECTIONS = re.compile(r"^\.(init_array|ctors|preinit_array)(\.|$)")


def test_own_objects_have_no_static_initialisers(build):
    objects = own_objects(build)
    assert objects.get("etrt"), f"no object files under {build}/**/CMakeFiles/etrt.dir/"
    for plugin in plugins(build):
        target = "etrt_plugin_" + re.sub(r"^libetrt_(.*)\.so\.\d+$", r"\1", plugin.name)
        assert objects.get(target), f"no object files of {plugin.name} under {build}/**/CMakeFiles/{target}.dir/"
    problems = []
    for target, files in sorted(objects.items()):
        for obj in files:
            bad = [s for s in sections(obj) if CONSTRUCTOR_SECTIONS.match(s)]
            if bad:
                relocations = "\n".join(
                    relocation_section(obj, ".rela" + s) + "\n  -> " + ", ".join(object_constructors(obj, s))
                    for s in bad)
                problems.append(f"{obj} (target {target}) has {', '.join(bad)}: "
                                f"a static initialiser runs at load time. Its constructors:\n{relocations}")
    assert not problems, "\n\n".join(problems)


# What the toolchain itself puts in .init_array of a shared object, measured on
# this toolchain (GCC 12.2 / binutils 2.40, Debian 12, x86-64): exactly one
# 8-byte slot, a R_X86_64_RELATIVE pointer to crtbeginS.o's `frame_dummy`
# (which registers EH frames / TM clone tables), as in
# libetrt_kernels_optimized.so.1 and libetrt.so.1 built from constructor-free
# objects. Any further slot is a constructor of the object's own code or of a
# static library it bundles.
TOOLCHAIN_INIT_ARRAY_BYTES = 8


@pytest.mark.parametrize("name", ["libetrt", *plugin_ids()])
def test_linked_init_array_is_only_the_toolchains(build, name):
    path = libetrt(build) if name == "libetrt" else build / "lib" / "etrt" / "plugins" / name
    secs = sections(path)
    size = secs.get(".init_array", (0, 0))[1]
    assert size <= TOOLCHAIN_INIT_ARRAY_BYTES, (
        f"{path}: .init_array is {size} bytes, more than the toolchain's own "
        f"{TOOLCHAIN_INIT_ARRAY_BYTES} (frame_dummy): it runs static initialisers:\n  "
        + "\n  ".join(init_array_entries(path)))
    ctors = [s for s in secs if CONSTRUCTOR_SECTIONS.match(s) and s != ".init_array"]
    assert not ctors, f"{path} has constructor sections {ctors}"

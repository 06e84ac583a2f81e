"""The shared objects the wheel ships, read with binutils: names, RUNPATHs,
dependencies (also after the package is copied elsewhere), and which object
owns which part of the runtime."""
import importlib.machinery
import json
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_python

OWNERS = {
    # group: (owner relative to the package, exported symbols, or strings only its code carries)
    "registry": ("lib/libetrt.so.1", {"et_find_kernel", "et_find_backend", "et_registry_count", "et_load_plugin",
                                       "et_add_manifest", "et_registry_identity"}, {"speaks ABI"}),
    "thread pool": ("lib/libetrt.so.1", {"et_threadpool_size", "et_threadpool_set_size", "et_parallel_for",
                                          "et_threadpool_identity"}, {"thread pool size must be between"}),
    "kernels": ("lib/etrt/plugins/libetrt_kernels_optimized.so.1", set(), {"aten::add.out", "aten::convolution.out"}),
    "delegate": ("lib/etrt/plugins/libetrt_xnnpack.so.1", set(), {"XnnpackBackend", "xnn_create_runtime"}),
}


# The XNNPACK plugin's private libraries: a copy of Debian's libXNNPACK patched to use etrt's
# pthreadpool shim and a private copy of cpuinfo (plugins/xnnpack/CMakeLists.txt), that shim and that cpuinfo.
PRIVATE_XNNPACK = "lib/etrt/plugins/xnnpack_private/libXNNPACK.so.0.etrt"
PTHREADPOOL_SHIM = "lib/etrt/plugins/xnnpack_private/libetrt_pthreadpool_shim.so.1"
XNNPACK_CPUINFO = "lib/etrt/plugins/xnnpack_private/libcpuinfo.so.0.etrt"
# libetrt's private cpuinfo (threadpool/CMakeLists.txt), opened by a path relative to libetrt.
LIBETRT_CPUINFO = "lib/etrt/private/libcpuinfo.so.0.etrt"


def cpu_variants(package_dir, plugin):
    """The plugin's builds for higher CPU levels, as its installed manifest lists them (relative to the package)."""
    manifest_path = package_dir / "lib" / "etrt" / "manifests" / f"{plugin}.json"
    manifest = json.loads(manifest_path.read_text())
    return [(manifest_path.parent / v["library"]).resolve().relative_to(package_dir.resolve()).as_posix()
            for v in manifest.get("variants", [])]


def tool(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def elf_files(package_dir):
    return sorted(p for p in package_dir.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF")


def dynamic_tags(path, tag):
    return re.findall(rf"\({tag}\)\s+.*\[(.*)\]", tool("readelf", "-d", str(path)))


def defined_dynamic_symbols(path):
    out = tool("nm", "-D", "--defined-only", str(path))
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def is_extension(path):
    return any(path.name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)


def unresolved(path):
    out = tool("ldd", str(path))
    return [line.strip() for line in out.splitlines() if "not found" in line]


def test_the_package_ships_what_it_should(package_dir):
    names = {p.relative_to(package_dir).as_posix() for p in elf_files(package_dir)}
    assert {"lib/libetrt.so.1", "lib/libetrt_llm.so.1", "lib/libetrt_training.so.1",
            "lib/etrt/plugins/libetrt_kernels_optimized.so.1", "lib/etrt/plugins/libetrt_kernels_training.so.1",
            "lib/etrt/plugins/libetrt_xnnpack.so.1", "bin/etrt"} <= names
    assert sum(1 for n in names if is_extension(Path(n))) >= 4  # etrt._etrt, etrt._devtools, etrt._llm, etrt._bundled
    assert not (package_dir / "lib" / "libetrt.so").exists(), "the dev symlink would be a second copy in a wheel"
    for manifest in ("kernels_optimized.json", "xnnpack.json", "kernels_training.json"):
        assert (package_dir / "lib" / "etrt" / "manifests" / manifest).is_file()
    # kernels_optimized ships a build per CPU level; the loader picks one (docs/ARCHITECTURE.md).
    variants = cpu_variants(package_dir, "kernels_optimized")
    assert set(variants) <= names, variants
    if platform.machine() == "x86_64":
        assert variants == ["lib/etrt/plugins/x86-64-v3/libetrt_kernels_optimized.so.1"]
    assert (package_dir / "lib" / "cmake" / "etrt" / "etrtConfig.cmake").is_file()
    assert (package_dir / "include" / "etrt" / "plugin_api.h").is_file()


def test_sonames_match_file_names(package_dir):
    for path in elf_files(package_dir):
        sonames = dynamic_tags(path, "SONAME")
        if path.name.startswith("lib"):
            assert sonames == [path.name], f"{path}: SONAME {sonames}"
        else:
            assert sonames in ([], [path.name]), f"{path}: SONAME {sonames}"


def test_no_absolute_runpath(package_dir):
    for path in elf_files(package_dir):
        for tag in ("RUNPATH", "RPATH"):
            for value in dynamic_tags(path, tag):
                for entry in value.split(":"):
                    assert entry.startswith("$ORIGIN"), f"{path}: {tag} entry {entry!r}"


def test_extensions_are_glue_that_needs_libetrt(package_dir):
    extensions = [p for p in elf_files(package_dir) if is_extension(p)]
    assert extensions
    for path in extensions:
        assert "libetrt.so.1" in dynamic_tags(path, "NEEDED"), path
        exported = defined_dynamic_symbols(path)
        assert not {s for s in exported if s.startswith(("et_", "pthreadpool_", "xnn_", "cpuinfo_"))}, (path, exported)
        assert [s for s in exported if s.startswith("PyInit_")] == [f"PyInit_{path.name.split('.')[0]}"]
        assert path.stat().st_size < 1024 * 1024, f"{path} is {path.stat().st_size} bytes"


def test_libetrt_training_is_a_consumer_of_the_one_libetrt(package_dir):
    # As libetrt_llm: it links the libetrt beside it, and so does etrt._training through it.
    libetrt_training = package_dir / "lib" / "libetrt_training.so.1"
    assert "libetrt.so.1" in dynamic_tags(libetrt_training, "NEEDED")
    assert dynamic_tags(libetrt_training, "RUNPATH") == ["$ORIGIN"]
    extension = [p for p in elf_files(package_dir) if is_extension(p) and p.name.startswith("_training.")]
    assert len(extension) == 1, extension
    assert "libetrt_training.so.1" in dynamic_tags(extension[0], "NEEDED")
    assert not {s for s in defined_dynamic_symbols(libetrt_training) if s.startswith("et_")}


def test_libetrt_llm_is_a_consumer_of_the_one_libetrt(package_dir):
    # The LLM runner library links libetrt beside it ($ORIGIN), as etrt._llm links both: one libetrt per process.
    libetrt_llm = package_dir / "lib" / "libetrt_llm.so.1"
    assert "libetrt.so.1" in dynamic_tags(libetrt_llm, "NEEDED")
    assert dynamic_tags(libetrt_llm, "RUNPATH") == ["$ORIGIN"]
    llm_extension = [p for p in elf_files(package_dir) if is_extension(p) and p.name.startswith("_llm.")]
    assert len(llm_extension) == 1, llm_extension
    assert "libetrt_llm.so.1" in dynamic_tags(llm_extension[0], "NEEDED")
    assert not {s for s in defined_dynamic_symbols(libetrt_llm) if s.startswith(("et_", "pcre2_", "utf8proc_"))}


@pytest.mark.parametrize("group", sorted(OWNERS))
def test_each_group_is_owned_by_exactly_one_object(package_dir, group):
    owner, symbols, strings = OWNERS[group]
    # A plugin's builds for other CPU levels are the same code: they hold the same names.
    owners = {owner, *(cpu_variants(package_dir, "kernels_optimized") if group == "kernels" else [])}
    holders = set()
    for path in elf_files(package_dir):
        if path.relative_to(package_dir).as_posix() == PRIVATE_XNNPACK:
            continue  # XNNPACK itself carries its own names
        data = path.read_bytes()
        has_symbols = bool(symbols & defined_dynamic_symbols(path))
        has_strings = any(s.encode() in data for s in strings)
        if has_symbols or has_strings:
            holders.add(path.relative_to(package_dir).as_posix())
        if path.relative_to(package_dir).as_posix() in owners:
            assert symbols <= defined_dynamic_symbols(path), f"{path} lacks {symbols - defined_dynamic_symbols(path)}"
            assert all(s.encode() in data for s in strings), f"{path} lacks one of {strings}"
    assert holders == owners, f"{group}: defined by {sorted(holders)}"


def test_no_object_carries_a_pthreadpool_or_xnnpack(package_dir):
    # Only the private copies of libXNNPACK and cpuinfo and etrt's pthreadpool shim name them; everything
    # else opens what it needs privately at run time. The copy needs the shim, never a libpthreadpool.
    private = {PRIVATE_XNNPACK, PTHREADPOOL_SHIM, XNNPACK_CPUINFO, LIBETRT_CPUINFO}
    assert private <= {p.relative_to(package_dir).as_posix() for p in elf_files(package_dir)}
    for path in elf_files(package_dir):
        if path.relative_to(package_dir).as_posix() in private:
            continue
        symbols = tool("nm", "-D", str(path))
        assert not re.search(r"\b(pthreadpool|xnn|cpuinfo)_\w+", symbols), f"{path} links them:\n{symbols}"
    needed = dynamic_tags(package_dir / PRIVATE_XNNPACK, "NEEDED")
    assert "libetrt_pthreadpool_shim.so.1" in needed and not any("libpthreadpool" in n for n in needed), needed
    assert "libcpuinfo.so.0.etrt" in needed and "libcpuinfo.so.0" not in needed, needed
    shim_exports = {s for s in defined_dynamic_symbols(package_dir / PTHREADPOOL_SHIM) if s.startswith("pthreadpool_")}
    assert "pthreadpool_parallelize_2d_tile_2d" in shim_exports and "pthreadpool_create" not in shim_exports


def test_dependencies_resolve_here_and_after_a_copy(package_dir, models_dir, tmp_path):
    for path in elf_files(package_dir):
        assert unresolved(path) == [], path
    copy = tmp_path / "elsewhere" / "etrt"
    shutil.copytree(package_dir, copy, symlinks=True)
    for path in elf_files(copy):
        assert unresolved(path) == [], path
        needs_libetrt = "libetrt.so.1" in dynamic_tags(path, "NEEDED")
        if needs_libetrt:
            resolved = re.search(r"libetrt\.so\.1 => (\S+)", tool("ldd", str(path))).group(1)
            assert Path(resolved).resolve() == (copy / "lib" / "libetrt.so.1").resolve(), (path, resolved)
    # The copy runs on its own: its libetrt finds its own manifests and plugins.
    out = run_python(
        "import sys\n"
        f"sys.path.insert(0, {str(copy.parent)!r})\n"
        "import numpy as np, etrt\n"
        f"assert etrt.__file__.startswith({str(copy)!r}), etrt.__file__\n"
        f"x = np.load({str(models_dir / 'mlp' / 'inputs.npz')!r})['input_0']\n"
        f"y = etrt.Runtime.get().load_program({str(models_dir / 'mlp' / 'portable.pte')!r}).load_method('forward').execute([x])[0]\n"
        f"want = np.load({str(models_dir / 'mlp' / 'expected.npz')!r})['output_0']\n"
        "print(float(abs(y - want).max()), sorted({p['library_path'] for p in etrt.plugins() if p['state'] == 'loaded'}))\n",
        tmp_path, env={"PYTHONNOUSERSITE": "1"})
    diff, loaded = out.stdout.split(" ", 1)
    assert float(diff) < 1e-4
    assert str(copy) in loaded and str(package_dir) not in loaded


def test_libetrt_carries_spdlog_and_fmt_privately(package_dir):
    # Compiled in from their headers and hidden: libetrt needs neither library and exports only its C API.
    libetrt = package_dir / "lib" / "libetrt.so.1"
    needed = dynamic_tags(libetrt, "NEEDED")
    assert not [n for n in needed if "spdlog" in n or "fmt" in n], needed
    exported = defined_dynamic_symbols(libetrt)
    assert exported and all(s.startswith("et_") or s == "ETRT_1" for s in exported), sorted(exported)[:20]


def test_wheel_is_tagged_manylinux(package_dir):
    import importlib.metadata
    import platform
    wheel_info = importlib.metadata.distribution("etrt").read_text("WHEEL")
    tags = re.findall(r"^Tag: (\S+)$", wheel_info, re.M)
    assert tags and all(re.search(rf"-manylinux_2_\d+_{platform.machine()}$", t) for t in tags), wheel_info

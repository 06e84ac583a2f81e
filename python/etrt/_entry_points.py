"""Plugins installed by pip: a Python distribution ships a plugin (its library and
manifest) inside one of its packages and names it with an entry point of the
group ``etrt.plugins``::

    [project.entry-points."etrt.plugins"]
    vendor_backend = "vendor_backend"              # every manifest (*.json) in the package's directory
    vendor_ops = "vendor_backend.ops:vendor_ops"   # the one manifest vendor_backend/ops/vendor_ops.json

``import etrt`` registers each such manifest as ``etrt.add_manifest`` does: nothing
is loaded, neither the plugin nor the distribution's Python code (the package is
located on sys.path, never imported). A plugin loads when a program first needs
what its manifest provides, and the loader's trust rules apply to it as to any
other manifest (docs/TRUST.md). ETRT_PLUGIN_PACKAGES=0 turns the discovery off.
"""
from __future__ import annotations

import importlib.machinery
import importlib.metadata
import os
import warnings
from pathlib import Path
from typing import Any, Dict, List

from . import _etrt

GROUP = "etrt.plugins"

# What discovery found, in the order it registered them (plugin_packages()).
_discovered: List[Dict[str, Any]] = []


def plugin_packages() -> List[Dict[str, Any]]:
    """Every ``etrt.plugins`` entry point found at import: its distribution, name and
    value, the manifest path or directory it names, and the reason it was not
    registered ('error', None when it was)."""
    return [dict(entry) for entry in _discovered]


def manifest_files() -> List[str]:
    """The manifest files of the registered entry points (a directory's *.json in order), e.g. for
    ETRT_PLUGIN_PATH of a native `etrt` command started from Python, which cannot see this registry."""
    files: List[str] = []
    for entry in _discovered:
        if entry["error"] is None:
            path = Path(entry["path"])
            if path.is_dir():
                files.extend(str(manifest) for manifest in sorted(path.glob("*.json")))
            else:
                files.append(str(path))
    return files


def _entry_points() -> list:
    """(distribution name, entry point) of the group, the first distribution of a name on sys.path
    winning as for import. Only the distributions whose entry_points.txt mentions the group are
    parsed (a third of the cost of importlib.metadata.entry_points() over ~150 distributions)."""
    found, seen = [], set()
    for dist in importlib.metadata.distributions():
        try:
            text = dist.read_text("entry_points.txt")
            if not text or GROUP not in text:
                continue
            name = dist.metadata["Name"] or "?"
            key = name.lower().replace("_", "-")
            if key in seen:
                continue
            seen.add(key)
            found.extend((name, ep) for ep in dist.entry_points if ep.group == GROUP)
        except Exception as error:  # one distribution's broken metadata: the others still count
            warnings.warn(f"etrt: cannot read the entry points of {getattr(dist, '_path', dist)}: {error}",
                          RuntimeWarning, stacklevel=4)
    return found


def _package_directory(module: str) -> Path:
    """The directory of package `module`, found the way import would find it, without importing
    it or its parents (their code would run)."""
    search = None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = importlib.machinery.PathFinder.find_spec(name, search)
        if spec is None:
            raise LookupError(f"no package '{name}' on sys.path")
        if not spec.submodule_search_locations:
            raise LookupError(f"'{name}' is a module, not a package (a directory holding the manifest)")
        search = list(spec.submodule_search_locations)
    return Path(search[0])


def _manifest_path(entry_point) -> Path:
    """"package" names the package's directory of manifests; "package:stem" its manifest stem.json."""
    module, _, stem = entry_point.value.partition(":")
    module, stem = module.strip(), stem.strip()
    if not module:
        raise LookupError("the value names no package")
    directory = _package_directory(module)
    if stem:
        return directory / f"{stem}.json"
    if not any(directory.glob("*.json")):
        raise LookupError(f"no manifest (*.json) in {directory}")
    return directory


def register_installed_plugins() -> None:
    """Registers the manifests of every ``etrt.plugins`` entry point (called once by ``import etrt``).
    One that cannot be registered is reported with a RuntimeWarning naming the distribution and the
    reason, and the others are registered all the same."""
    if os.environ.get("ETRT_PLUGIN_PACKAGES", "").strip() == "0":
        return
    try:
        entry_points = _entry_points()
    except Exception as error:  # the installed distributions cannot be listed at all
        warnings.warn(f"etrt: cannot list the '{GROUP}' entry points: {error}", RuntimeWarning, stacklevel=3)
        return
    for distribution, entry_point in sorted(entry_points, key=lambda found: (found[0], found[1].name)):
        entry = {"distribution": distribution, "name": entry_point.name,
                 "value": entry_point.value, "path": None, "error": None}
        try:
            entry["path"] = str(_manifest_path(entry_point))
            known = len(_etrt.rejections())
            _etrt.add_manifest(entry["path"])
            # A directory's manifests are refused one by one, without an error: say why.
            refused = [f"{path}: {reason}" for path, reason in _etrt.rejections()[known:]]
            if refused:
                raise LookupError("; ".join(refused))
        except Exception as error:  # whatever it is, import etrt goes on and says why
            entry["error"] = str(error)
            warnings.warn(f"etrt: plugin package '{entry['distribution']}' (entry point {entry_point.name} = "
                          f"{entry_point.value!r}) not registered: {error}", RuntimeWarning, stacklevel=3)
        _discovered.append(entry)

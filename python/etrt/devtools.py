"""Tools for looking at what etrt would do, without doing it.

``program_plan`` lists, per method of a program, every operator and delegate
with the plugin that would serve it (``builtin`` for the executor's own
operators, ``plugin=None`` for what nothing provides) — and loads no plugin.
This module sits on ``etrt._devtools``, a second extension module linking
libetrt: it sees the same registry and thread pool as ``etrt`` itself.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Union

from . import _devtools

__all__ = ["program_plan", "provider_of", "missing_providers"]


def program_plan(program: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Dict[str, List[Dict[str, Any]]]:
    """{method: [{name, kind, builtin, plugin, library_path, state}, ...]} for a .pte path or its bytes."""
    if isinstance(program, (str, os.PathLike)):
        return _devtools.program_plan_file(os.fspath(program))
    return _devtools.program_plan_bytes(bytes(program))


def provider_of(name: str, kind: str = "operator") -> Dict[str, Any]:
    """The plugin that would serve one operator ("aten::add.out") or backend ("XnnpackBackend")."""
    return _devtools.provider_of(name, kind)


def missing_providers(program: Union[str, Path, bytes]) -> List[str]:
    """Names (operators and backends) of the program that no known plugin provides."""
    return sorted({entry["name"] for entries in program_plan(program).values() for entry in entries
                   if not entry["builtin"] and entry["plugin"] is None})

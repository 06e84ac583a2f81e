#!/usr/bin/env python3
"""Checks what a shared object with the static XNNPACK inside shows the dynamic linker.

  check_module_symbols.py READELF MODULE [--expect-leak] [--call-entry] [--defines-only=NAME,...]

Default: MODULE's dynamic symbol table holds no xnn_*, cpuinfo_* or pthreadpool_* symbol,
defined or imported, and it needs no XNNPACK, cpuinfo or pthreadpool library: the module is
what the XNNPACK plugin will be, XNNPACK hidden inside it. --call-entry also loads it and
calls et_plugin_entry(), which runs XNNPACK (0 is success). --defines-only=NAME,... also requires
that MODULE defines no dynamic symbol but those (the plugin itself: its entry point alone).
--expect-leak: the opposite, for a module that exports an xnn_ function on purpose and is linked
without the version script, to show the check finds such symbols when they are there."""
import ctypes
import re
import subprocess
import sys

HIDDEN = re.compile(r"^(xnn_|cpuinfo_|pthreadpool_)")
LIBRARIES = re.compile(r"(XNNPACK|cpuinfo|pthreadpool)")


def dynamic_symbols(readelf, module):
    out = subprocess.run([readelf, "--dyn-syms", "-W", module], check=True, capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[0].endswith(":") and fields[0][:-1].isdigit():
            names.append((fields[7].split("@")[0], fields[6], fields[3]))
    return names


def needed(readelf, module):
    out = subprocess.run([readelf, "-d", "-W", module], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    readelf, module = args
    leaked = [f"{name} ({'imported' if ndx == 'UND' else 'defined'})"
              for name, ndx, _ in dynamic_symbols(readelf, module) if HIDDEN.match(name)]
    libraries = [lib for lib in needed(readelf, module) if LIBRARIES.search(lib)]
    if "--expect-leak" in sys.argv:
        if not leaked:
            sys.exit(f"FAIL: {module} exports an xnn_ function without a version script, yet the check "
                     "found no xnn_/cpuinfo_/pthreadpool_ symbol in it: the check cannot see leaks")
        print(f"OK: the check sees what {module} leaks: " + ", ".join(leaked))
        return
    problems = [f"exports or imports {s}" for s in leaked] + [f"needs {lib}" for lib in libraries]
    allowed = [a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--defines-only=")]
    if allowed:
        problems += [f"defines {name}, not only {', '.join(allowed[0])}"
                     for name, ndx, kind in dynamic_symbols(readelf, module)
                     # Section symbols (aarch64's linker lists .init and .data) name no code or data of the module.
                     if name and ndx != "UND" and kind != "SECTION" and name not in allowed[0]]
    if problems:
        sys.exit(f"FAIL: {module}:\n  " + "\n  ".join(problems))
    if "--call-entry" in sys.argv:
        status = ctypes.CDLL(module).et_plugin_entry()
        if status != 0:
            sys.exit(f"FAIL: et_plugin_entry() of {module} returned {status}, not 0")
    print(f"OK: {module} shows no XNNPACK, cpuinfo or pthreadpool symbol and needs no such library")


if __name__ == "__main__":
    main()

"""The `etrt` console script: runs the native etrt command shipped in the package."""
import os
import sys
from pathlib import Path


def main() -> None:
    exe = Path(__file__).resolve().parent / "bin" / "etrt"
    if not exe.is_file():
        sys.exit(f"etrt: native command not found at {exe}")
    os.execv(str(exe), [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()

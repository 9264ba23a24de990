#!/usr/bin/env python3
"""Where the Chromium for the browser tests is: the one place scripts and tests look.

Order: ``$CHROMIUM`` (a path or a command name), then ``chromium`` / ``chromium-browser``
on PATH (Debian's and Ubuntu's packages), then ``/usr/bin/chromium``.  Never a browser
downloaded by a test tool.  ``scripts/test.sh`` runs this file to decide whether to install
Debian's chromium; ``tests/conftest.py`` and ``scripts/bench_twin.py`` import
:func:`find_chromium`.

    python3 scripts/find_chromium.py   # prints the path, or exits 1 saying what is missing
"""

from __future__ import annotations

import os
import shutil
import sys

NAMES = ("chromium", "chromium-browser")
FALLBACK = "/usr/bin/chromium"


def find_chromium() -> str | None:
    """Absolute path of an executable Chromium, or None."""
    given = os.environ.get("CHROMIUM")
    if given:
        found = shutil.which(given)
        return os.path.abspath(found) if found else None
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return os.path.abspath(found)
    return FALLBACK if os.access(FALLBACK, os.X_OK) else None


def missing_message() -> str:
    given = os.environ.get("CHROMIUM")
    if given:
        return f"CHROMIUM={given} is not an executable file or a command on PATH"
    return ("no Chromium found (looked for " + ", ".join(NAMES) + f" on PATH and {FALLBACK}); "
            "scripts/test.sh installs Debian's chromium, or set CHROMIUM=/path/to/chromium")


if __name__ == "__main__":
    path = find_chromium()
    if path is None:
        print(missing_message(), file=sys.stderr)
        sys.exit(1)
    print(path)

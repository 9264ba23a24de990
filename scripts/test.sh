#!/usr/bin/env bash
# Run the whole test suite: installs what it needs (the Python packages of
# requirements-test.txt, a CJK font, Chromium for the browser tests, Node.js for the
# JavaScript twin, axe-core for the accessibility tests, and PyTorch for the cross-check
# where a CPU build of it is available), then pytest.
# Usage: bash scripts/test.sh [pytest args]      (VENV=/path to use another venv)
# The tests run on two workers (pytest-xdist: a file's tests on one worker, but for
# tests/conftest.py SPREAD_FILES; the book built once for both).
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$ROOT"
ensure_venv requirements-test.txt project
ensure_cjk_font
ensure_chromium
ensure_axe   # also Node.js and npm
ensure_torch
# Two workers (the machines have two cores); F11_WORKERS=N chooses (0: one process).  --dist loadgroup
# selects tests/conftest.py's scheduler: whole files as units, started in START_ORDER.
# --durations=25: the slowest tests at the end of every run (CI's log shows where the time goes).
exec "$VENV/bin/python" -m pytest -n "${F11_WORKERS:-2}" --dist loadgroup --durations=25 "$@"

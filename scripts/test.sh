#!/usr/bin/env bash
# Run the whole test suite: installs what it needs (the Python packages of
# requirements-test.txt, a CJK font, Chromium for the browser tests, Node.js for the
# JavaScript twin, axe-core for the accessibility tests, and PyTorch for the cross-check
# where a CPU build of it is available), then pytest.
# Usage: bash scripts/test.sh [pytest args]      (VENV=/path to use another venv)
# With F11_WORKERS=2 (the quick tier's default) the tests run on two workers (pytest-xdist: a file's
# tests on one worker, but for tests/conftest.py SPREAD_FILES; the book built once for both).
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$ROOT"
ensure_venv requirements-test.txt project
ensure_cjk_font
ensure_chromium
ensure_axe   # also Node.js and npm
ensure_torch
# Workers: two for the quick tier; the full suite in one process for now (two of its JupyterLab and
# reload tests are not yet reliable beside a second worker).  F11_WORKERS=N chooses.
workers=${F11_WORKERS:-}
if [ -z "$workers" ]; then
  case " $* " in *" quick "*) workers=2 ;; *) workers=0 ;; esac
fi
exec "$VENV/bin/python" -m pytest -n "$workers" --dist loadgroup "$@"

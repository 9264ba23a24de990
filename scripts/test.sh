#!/usr/bin/env bash
# Run the whole test suite: installs what it needs (the CJK font, Chromium for the
# browser tests, Node.js for the JavaScript twin, the Python packages), then pytest.
# Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$ROOT"
ensure_cjk_font
ensure_apt chromium "command -v chromium"
ensure_apt nodejs "command -v node"
ensure_venv requirements-test.txt
exec "$VENV/bin/python" -m pytest "$@"

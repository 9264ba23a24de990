#!/usr/bin/env bash
# Build the website into _build/html: installs what it needs, then builds with
# warnings as errors.  Usage: bash scripts/build.sh [extra jupyter-book args]
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$ROOT"
ensure_cjk_font
ensure_venv requirements.txt
# --all: re-run every notebook, so every number on the site comes from this build.
"$VENV/bin/jupyter-book" build . --all --builder html -W -n --keep-going "$@"
say "site built: open _build/html/index.html, or serve it: $VENV/bin/python -m http.server -d _build/html 8000"

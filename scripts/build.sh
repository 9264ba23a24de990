#!/usr/bin/env bash
# Build the website into _build/html: installs what it needs (requirements.txt and a CJK
# font), then builds with warnings as errors.  Usage: bash scripts/build.sh [jupyter-book args]
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$ROOT"
# A read-only checkout is said now, not deep inside Sphinx: the site goes to _build here
# unless --path-output puts it elsewhere.
case " $* " in
  *" --path-output"*) ;;
  *) ensure_writable "$ROOT" "the site is built into $ROOT/_build (make the checkout writable, or pass --path-output /a/writable/folder)" ;;
esac
ensure_venv requirements.txt
ensure_cjk_font
# --all: re-run every notebook, so every number on the site comes from this build.
"$VENV/bin/jupyter-book" build . --all --builder html -W -n --keep-going "$@"
say "site built: open _build/html/index.html, or serve it: $VENV/bin/python -m http.server -d _build/html 8000 --bind 127.0.0.1"

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
ensure_venv requirements.txt project
ensure_cjk_font
# --all: re-run every notebook, so every number on the site comes from this build.  A failed build
# ends with Sphinx's "Look above for the cause": the first warning is said again as the last line.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
"$VENV/bin/jupyter-book" build . --all --builder html -W -n --keep-going "$@" 2>&1 | tee "$log" || rc=$?
if [ "$rc" != 0 ]; then
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
  # A notebook that failed to run: its page, and the exception's own last line (KeyError: 'Wo').
  exc=$(printf '%s\n' "$plain" | grep -E '^[A-Za-z_.]*(Error|Exception)[A-Za-z]*: ' | grep -v '^nbclient' | tail -n 1) || true
  if [ -n "$exc" ]; then
    page=$(printf '%s\n' "$plain" | grep -m1 -E 'WARNING: Executing notebook failed' | cut -d: -f1) || true
    say "the build failed (exit $rc): ${page:+running $page raised }$exc"
  else
    first=$(printf '%s\n' "$plain" | awk '/(^|: )(WARNING|ERROR): |^Exception occurred:/ && !seen { seen = 1; left = 5 } left > 0 { printf "%s ", $0; left-- }') || true
    say "the build failed (exit $rc)${first:+ on: $first}"
  fi
  exit "$rc"
fi
say "site built: open _build/html/index.html, or serve it: $VENV/bin/python -m http.server -d _build/html 8000 --bind 127.0.0.1"

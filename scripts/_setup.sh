# shellcheck shell=bash
# Shared set-up for scripts/build.sh and scripts/test.sh: sourced, not run.
# Installs what the book needs on a fresh Debian/Ubuntu machine (Python 3.11+),
# or says exactly what to install when it cannot.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}

say() { printf '[setup] %s\n' "$*" >&2; }

# Run apt-get as root, or through sudo; return 1 if neither is possible.
_apt() {
  if [ "$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo DEBIAN_FRONTEND=noninteractive apt-get "$@"
  else return 1; fi
}

_apt_updated=
# ensure_apt PACKAGE CHECK_COMMAND: install PACKAGE with apt unless CHECK_COMMAND succeeds.
ensure_apt() {
  local pkg=$1 check=$2
  eval "$check" >/dev/null 2>&1 && return 0
  if ! command -v apt-get >/dev/null; then
    say "missing: $pkg. Install it with your system's package manager, then run this again."; return 1
  fi
  say "installing $pkg (apt-get)"
  if [ -z "$_apt_updated" ]; then _apt update -qq || { say "cannot run apt-get (not root, no sudo). Run: sudo apt-get install -y $pkg"; return 1; }; _apt_updated=1; fi
  _apt install -y -qq "$pkg" >/dev/null || { say "apt-get install $pkg failed. Run: sudo apt-get install -y $pkg"; return 1; }
}

# The figures' Chinese labels need a CJK font (see attention_lab/fonts.py).
ensure_cjk_font() {
  if ! ensure_apt fonts-noto-cjk "fc-list :lang=zh | grep -q ."; then
    say "No Chinese font found. Install one: sudo apt-get install -y fonts-noto-cjk"
    say "(macOS and Windows already have PingFang SC / Microsoft YaHei.)"
    return 1
  fi
  # A font installed after matplotlib first ran is invisible until its cache is rebuilt.
  rm -rf "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json 2>/dev/null || true
}

# ensure_venv REQUIREMENTS_FILE: a virtual environment with those packages.
ensure_venv() {
  local req=$1
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { say "Python 3.11 or newer is needed ($PY is $("$PY" --version 2>&1))."; return 1; }
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV" 2>/dev/null || { ensure_apt python3-venv true && "$PY" -m venv "$VENV"; } || return 1
  fi
  local stamp="$VENV/.installed-$(basename "$req")"
  # Reinstall only when a requirements file changed since the last install.
  if [ ! -f "$stamp" ] || [ -n "$(find "$ROOT" -maxdepth 2 \( -name 'requirements*.txt' -o -name 'constraints.txt' -o -name pyproject.toml \) -newer "$stamp" -not -path "$VENV/*" 2>/dev/null)" ]; then
    say "installing Python packages from $req into $VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' >&2 || true
    (cd "$ROOT" && "$VENV/bin/python" -m pip install -q -r "$req" 2>&1 | grep -v '^WARNING: Location' >&2; exit "${PIPESTATUS[0]}") || return 1
    touch "$stamp"
  fi
}

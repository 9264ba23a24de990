# shellcheck shell=bash
# Shared set-up for scripts/build.sh and scripts/test.sh: sourced, not run.
# Installs what the book needs on a fresh Debian/Ubuntu machine (Python 3.11+), or stops
# at the first thing it cannot do and says what is missing and why, the real cause on the
# last line.  After every install it checks again, so a problem shows where it happens, not
# later.  A second run only checks (a few seconds): nothing is reinstalled unless a lock
# file changed or a package the lock installed is gone or broken (then only that is repaired).
# It never deletes what it did not make: a folder is cleared only when it is a virtual
# environment (pyvenv.cfg) or carries this script's own marker (.f11-setup-venv).
#
# Settings (environment): VENV (default .venv), PYTHON (default python3),
# F11_TORCH=auto|skip|install (test.sh's PyTorch cross-check; see ensure_torch).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}

say() { printf '[setup] %s\n' "$*" >&2; }
# Print the last lines of a command's output, indented, as the cause of a failure.
cause() { printf '%s\n' "$1" | tail -n "${2:-6}" | sed 's/^/    /' >&2; }

# _apt ARGS: apt-get as root, or through password-less sudo; exit 100 if neither is possible.
_apt() {
  if [ "$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo DEBIAN_FRONTEND=noninteractive apt-get "$@"
  else return 100; fi
}

_apt_updated=
# ensure_apt "PACKAGES" CHECK_COMMAND: unless CHECK_COMMAND succeeds, install PACKAGES with
# apt-get (with their recommends), then run CHECK_COMMAND again; stop if it still fails.
ensure_apt() {
  local pkgs=$1 check=$2 out rc
  eval "$check" >/dev/null 2>&1 && return 0
  if ! command -v apt-get >/dev/null; then
    say "missing: $pkgs (check: $check). This system has no apt-get: install it with your system's package manager, then run this again."
    return 1
  fi
  if [ "$(id -u)" != 0 ] && ! { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; then
    say "missing: $pkgs. Installing it needs root (not root, and no password-less sudo). Run: sudo apt-get install -y $pkgs"
    return 1
  fi
  say "installing $pkgs (apt-get)"
  if [ -z "$_apt_updated" ]; then
    rc=0; out=$(_apt update -qq 2>&1) || rc=$?
    if [ "$rc" != 0 ]; then say "apt-get update failed (exit $rc):"; cause "$out"; return 1; fi
    _apt_updated=1
  fi
  rc=0
  # shellcheck disable=SC2086  # several packages may be given
  out=$(_apt install -y -qq $pkgs 2>&1) || rc=$?
  if [ "$rc" != 0 ]; then say "apt-get install $pkgs failed (exit $rc):"; cause "$out"; return 1; fi
  if ! out=$(eval "$check" 2>&1); then
    say "installed $pkgs, but the check still fails ($check):"; cause "$out"; return 1
  fi
}

# A venv is usable when its python runs and has pip (a venv made without ensurepip has none).
_venv_ok() { "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

# The marker this script leaves in a venv folder it made (so it may clear it after an interrupted run).
_MARKER=.f11-setup-venv

# ensure_writable DIR WHY: stop with the reason (read-only file system, permission) if DIR cannot be written.
ensure_writable() {
  local dir=$1 why=$2 probe err
  probe="$dir/.f11-write-test.$$"
  if err=$( { : >"$probe"; } 2>&1 ); then rm -f "$probe"; return 0; fi
  say "cannot write to $dir (${err##*: }): $why"
  return 1
}

# _venv_place: $VENV is a folder, or is made one; never a file, never a path under a file.
_venv_place() {
  local up err
  if [ -e "$VENV" ]; then
    [ -d "$VENV" ] && return 0
    say "VENV=$VENV is not a folder (a file or device): it is left as it is. Set VENV to a folder for the virtual environment (made if missing)."
    return 1
  fi
  up=$(dirname "$VENV")
  while [ ! -e "$up" ] && [ "$up" != / ] && [ "$up" != . ]; do up=$(dirname "$up"); done
  if [ -e "$up" ] && [ ! -d "$up" ]; then
    say "VENV=$VENV cannot be made: $up is a file, not a folder. Set VENV to a path inside a folder."
    return 1
  fi
  err=$(mkdir -p "$VENV" 2>&1) || { say "cannot make the folder VENV=$VENV: ${err##*: }"; return 1; }
  : >"$VENV/$_MARKER" 2>/dev/null || true
}

# _make_venv: create $VENV with pip, or repair one whose python is gone (never --clear: what is
# in it stays); on Debian/Ubuntu install pythonX.Y-venv if needed.  Only called for an empty
# folder or a virtual environment (pyvenv.cfg or the marker): see ensure_venv.
_make_venv() {
  local out ver
  if out=$("$PY" -m venv "$VENV" 2>&1) && _venv_ok; then : >"$VENV/$_MARKER"; return 0; fi
  ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  say "$PY cannot make a virtual environment with pip (if $PY is not your system's Python, install its venv/ensurepip support, or set PYTHON=/path/to/python3.11+):"
  cause "${out:-($VENV/bin/python -m pip does not run)}" 3
  # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) separately.
  ensure_apt "python3-venv python$ver-venv" "'$PY' -m venv '$VENV' && '$VENV/bin/python' -m pip --version" || {
    say "could not make a virtual environment in $VENV: $PY has no working venv/ensurepip (see above)"
    return 1; }
  : >"$VENV/$_MARKER"
}

# _add_pip: a working virtual environment without pip (uv venv, uv sync, python -m venv --without-pip)
# gets pip from its own python (ensurepip), else from uv; nothing in it is removed or replaced.
_add_pip() {
  local out uv
  if out=$("$VENV/bin/python" -m ensurepip --upgrade --default-pip 2>&1) && _venv_ok; then return 0; fi
  uv=$(command -v uv || true)
  [ -x "$VENV/bin/uv" ] && uv="$VENV/bin/uv"
  if [ -n "$uv" ] && out=$("$uv" pip install --python "$VENV/bin/python" pip 2>&1) && _venv_ok; then return 0; fi
  say "adding pip to $VENV failed:"; cause "$out" 4
  say "$VENV has no pip and its python could not install one (ensurepip${uv:+, then uv pip}): add it yourself ('$VENV/bin/python -m ensurepip' or 'uv pip install --python $VENV/bin/python pip'), or set VENV to a new folder"
  return 1
}

# _pip ARGS: pip of the venv, from the checkout; on failure its last lines, then the cause as
# the last line (the package index out of reach is said as such, not as "no matching distribution").
_pip() {
  local out rc=0 index why
  out=$(cd "$ROOT" && "$VENV/bin/python" -m pip "$@" 2>&1) || rc=$?
  [ "$rc" = 0 ] && return 0
  say "pip $* failed (exit $rc):"; cause "$out" 12
  # "No matching distribution" is also what pip says when it never reached the index: ask the index.
  if [ -z "${PIP_NO_INDEX:-}" ] && printf '%s' "$out" | grep -qiE "No matching distribution|Could not find a version|connection|timed out|resolution|unreachable|ProxyError|Max retries"; then
    index=${PIP_INDEX_URL:-$("$VENV/bin/python" -m pip config get global.index-url 2>/dev/null || true)}
    index=${index:-https://pypi.org/simple}
    if why=$(_unreachable "$index"); then
      say "cannot reach the package index ($index: $why): check the network or proxy (HTTPS_PROXY), or point pip at a mirror or a folder of wheels (PIP_INDEX_URL, PIP_FIND_LINKS)"
    fi
  fi
  return 1
}

# _unreachable URL: succeeds, printing why, when URL cannot be fetched at all (an HTTP error page is reachable).
_unreachable() {
  "$VENV/bin/python" - "$1" <<'PY'
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=10).close()
except urllib.error.HTTPError:
    sys.exit(1)
except Exception as e:
    print(getattr(e, "reason", None) or e)
    sys.exit(0)
sys.exit(1)
PY
}

# _dists: name==version of every installed distribution of the venv but this project itself
# (attention-lab: installed from the checkout, editable or from a copy, never from an index).  _broken FILE: those of FILE that are gone, another version,
# or missing a file their RECORD lists (a deleted package folder leaves its metadata behind).
_dists() {
  "$VENV/bin/python" - "$@" <<'PY'
import importlib.metadata as md, json, re, sys
def norm(name): return re.sub(r"[-_.]+", "-", name or "").lower()
def editable(d):
    try: return json.loads(d.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable", False)
    except ValueError: return False
have = {}
for d in md.distributions():
    have.setdefault(norm(d.metadata["Name"]), d)
if len(sys.argv) == 1:
    print("\n".join(sorted(f"{n}=={d.version}" for n, d in have.items()
                            if n and n != "attention-lab" and not editable(d))))
    sys.exit()
for line in open(sys.argv[1]).read().split():
    name, _, version = line.partition("==")
    if name == "attention-lab":  # a list written before this rule: the project is not the lock's to repair
        continue
    d = have.get(name)
    if d is None or d.version != version or any(
            not d.locate_file(f).exists() for f in d.files or [] if not str(f).endswith(".pyc") and "__pycache__" not in str(f)):
        print(line)
PY
}

# _fingerprint FILE...: sha256 of the files' contents (the lock and pyproject.toml).
_fingerprint() { "$PY" -c 'import hashlib, sys; print(hashlib.sha256(b"".join(open(f, "rb").read() for f in sys.argv[1:])).hexdigest())' "$@"; }

# ensure_python: $PY runs and is Python 3.11 or newer (it must say so: /bin/true says nothing).
ensure_python() {
  local ok
  ok=$("$PY" -c 'import sys; print(sys.version_info >= (3, 11))' 2>/dev/null) || ok=
  [ "$ok" = True ] && return 0
  if ! command -v "$PY" >/dev/null 2>&1; then
    say "PYTHON=$PY: no such command. Set PYTHON=/path/to/python3.11 or newer."
  else
    say "Python 3.11 or newer is needed, and PYTHON=$PY is not one (its --version says: $("$PY" --version 2>&1 | head -n 1 || true)). Set PYTHON=/path/to/python3.11 or newer."
  fi
  return 1
}

# _install_lock LOCK_FILE [project]: pip install -r LOCK_FILE (build.sh's and test.sh's carry every
# file's sha256 from uv.lock: pip checks each one), then, with "project", this checkout's attention_lab
# apart (pip takes no hashes beside an editable "-e ."): editable, built with the venv's own locked
# setuptools when it has one (nothing downloaded), else in pip's isolated build.  A read-only
# checkout (built with --path-output) cannot take the editable install's attention_lab.egg-info:
# attention_lab then comes from a copy of its sources, not editable.
_install_lock() {
  local req=$1 project=${2:-} tmp rc=0 iso=""
  _pip install -q -r "$req" || return 1
  [ "$project" = project ] || return 0
  if "$VENV/bin/python" -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 77)' >/dev/null 2>&1; then
    iso=--no-build-isolation
  fi
  # shellcheck disable=SC2086  # $iso: one option or none
  if ensure_writable "$ROOT" "" >/dev/null 2>&1; then _pip install -q --no-deps $iso -e "$ROOT"; return; fi
  say "the checkout $ROOT is read-only: installing attention_lab from a copy of it (not editable; run this again after changing its code)"
  tmp=$(mktemp -d) || return 1
  mkdir "$tmp/src"
  cp -R "$ROOT/pyproject.toml" "$ROOT/LICENSE" "$ROOT/attention_lab" "$tmp/src/" || rc=$?
  # shellcheck disable=SC2086
  [ "$rc" = 0 ] && { _pip install -q --no-deps $iso --force-reinstall "$tmp/src" || rc=$?; }
  rm -rf "$tmp"
  return $rc
}

# _repair LOCK_FILE NAME==VERSION...: reinstall these packages, each from its own entry in the lock
# (with the lock's --hash values, so pip checks the files as at the first install); one the lock does
# not name (pip itself, say) by its name and version.
_repair() {
  local req=$1 tmp rc=0
  shift
  tmp=$(mktemp -d) || return 1
  (cd "$ROOT" && "$VENV/bin/python" - "$req" "$tmp" "$@") <<'PY' || rc=$?
import re, sys
lock, out, want = sys.argv[1], sys.argv[2], sys.argv[3:]
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
entries = {}
for line in open(lock).read().replace("\\\n", " ").splitlines():  # a pin and its --hash lines as one
    head = line.split("#", 1)[0].split(";", 1)[0].split(" --hash", 1)[0].strip()
    name, _, version = head.partition("==")
    if version:
        entries[norm(name) + "==" + version.strip()] = line.split(" #", 1)[0]
with open(out + "/locked.txt", "w") as f:
    f.write("".join(entries[w] + "\n" for w in want if w in entries))
with open(out + "/other.txt", "w") as f:
    f.write("".join(w + "\n" for w in want if w not in entries))
PY
  [ "$rc" = 0 ] && { _pip install -q --no-deps --force-reinstall -r "$tmp/locked.txt" || rc=$?; }
  [ "$rc" = 0 ] && { _pip install -q --no-deps --force-reinstall -r "$tmp/other.txt" || rc=$?; }
  rm -rf "$tmp"
  return $rc
}

# ensure_venv LOCK_FILE [project]: a virtual environment $VENV holding exactly that lock's packages (a
# requirement file exported from uv.lock by scripts/lock.py: plain pip installs it, no uv needed),
# and with "project" this checkout's attention_lab too (_install_lock).
ensure_venv() {
  local req=$1 project=${2:-} stamp want broken f
  ensure_python || return 1
  for f in "$req" pyproject.toml; do
    (cd "$ROOT" && [ -f "$f" ]) || {
      say "$f is missing from the checkout $ROOT: restore it (git checkout -- $f), or export the requirement files again from uv.lock with .venv/bin/python scripts/lock.py"
      return 1; }
  done
  _venv_place || return 1
  if ! _venv_ok; then
    if [ -z "$(ls -A "$VENV")" ] || [ "$(ls -A "$VENV")" = "$_MARKER" ]; then
      say "making a virtual environment in $VENV"
      ensure_writable "$VENV" "the virtual environment is made in it" || return 1
      _make_venv || return 1
    elif [ -f "$VENV/pyvenv.cfg" ] && "$VENV/bin/python" -c "" >/dev/null 2>&1; then
      say "$VENV has no pip (a venv made by uv, uv sync or python -m venv --without-pip): adding pip; nothing in it is removed"
      ensure_writable "$VENV" "pip is installed into it" || return 1
      _add_pip || return 1
    elif [ -f "$VENV/pyvenv.cfg" ] || [ -f "$VENV/$_MARKER" ]; then
      say "$VENV is half-made (its python does not run): repairing it in place (nothing in it is removed)"
      ensure_writable "$VENV" "the virtual environment is repaired in it" || return 1
      _make_venv || return 1
    else
      say "VENV=$VENV holds files but is no virtual environment (no pyvenv.cfg): it is left as it is. Set VENV to a new or empty folder, or to a virtual environment."
      return 1
    fi
  fi
  stamp="$VENV/.installed-$(basename "$req")"
  want=$(cd "$ROOT" && _fingerprint "$req" pyproject.toml)
  # Reinstall only when the lock or pyproject.toml changed since the last install, or when a
  # package it installed is gone or broken (then only those).
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$stamp.dists" ]; then
    broken=$(_dists "$stamp.dists") || broken="(the check did not run)"
    [ -z "$broken" ] && return 0
    say "$VENV is missing part of what $req installed ($(echo $broken)): reinstalling it from the lock"
    ensure_writable "$VENV" "packages are installed into it" || return 1
  else
    ensure_writable "$VENV" "packages are installed into it" || return 1
    say "installing Python packages from $req into $VENV"
    _pip install -q --upgrade pip >/dev/null 2>&1 || say "upgrading pip failed (continuing with the venv's pip)"
    _install_lock "$req" "$project" || return 1
    _dists >"$stamp.dists"
    broken=$(_dists "$stamp.dists")
  fi
  if [ -n "$broken" ]; then
    # shellcheck disable=SC2086  # one name==version per word
    _repair "$req" $broken || return 1
    _install_lock "$req" "$project" || return 1
    _dists >"$stamp.dists"
    broken=$(_dists "$stamp.dists")
    [ -z "$broken" ] || { say "reinstalled, but these are still broken in $VENV: $(echo $broken)"; return 1; }
  fi
  echo "$want" >"$stamp"
}

# The figures' Chinese labels need a CJK font.  Asked of matplotlib through
# attention_lab/fonts.py (the code the figures use), not fc-list: on macOS and Windows
# there may be no fontconfig at all.  Needs the venv (matplotlib).
ensure_cjk_font() {
  local py="$VENV/bin/python" out
  "$py" -m attention_lab.fonts >/dev/null 2>&1 && return 0
  # Not a font problem when the check cannot even import what it needs (a broken venv): say that, no apt.
  if ! out=$(cd "$ROOT" && "$py" -c 'import matplotlib, attention_lab.fonts' 2>&1); then
    say "the font check cannot run in $VENV:"; cause "$out" 3
    say "$VENV cannot import matplotlib or attention_lab ($(printf '%s' "$out" | tail -n 1)): run this again to repair the venv from the lock"
    return 1
  fi
  # A font installed after matplotlib first ran is invisible until its font list is rebuilt.
  "$py" -m attention_lab.fonts --rescan >/dev/null 2>&1 && return 0
  if ! command -v apt-get >/dev/null; then
    out=$("$py" -m attention_lab.fonts 2>&1) || true
    say "no Chinese font for matplotlib:"; cause "$out" 12; return 1
  fi
  ensure_apt fonts-noto-cjk "'$py' -m attention_lab.fonts --rescan"
}

# Chromium for the browser tests, found by scripts/find_chromium.py (as tests/conftest.py
# finds it); exported as CHROMIUM.
ensure_chromium() {
  ensure_apt chromium "'$VENV/bin/python' '$ROOT/scripts/find_chromium.py'" || return 1
  CHROMIUM=$("$VENV/bin/python" "$ROOT/scripts/find_chromium.py") && export CHROMIUM
}

# ensure_torch: the optional PyTorch cross-check (requirements-torch.txt).  PyPI's torch for
# Linux is a CUDA build of several GB; on macOS and Windows it is a CPU build.  pip is asked
# (a dry run, metadata only) what it would install: torch is installed only when that is a
# CPU build (no nvidia-*/cuda-*/triton packages); otherwise the cross-check is skipped and
# the reason is exported as F11_TORCH_SKIPPED, which the tests show as their skip reason.
# F11_TORCH=skip never installs it; F11_TORCH=install installs whatever pip picks.
ensure_torch() {
  local lock=requirements-torch.txt stamp="$VENV/.torch-decision" want report out reason
  unset F11_TORCH_SKIPPED
  if [ "${F11_TORCH:-auto}" = skip ]; then
    export F11_TORCH_SKIPPED="F11_TORCH=skip was set"; say "PyTorch cross-check skipped: $F11_TORCH_SKIPPED"; return 0
  fi
  # The decision depends on the lock and on where pip looks (PIP_* settings, e.g. a local wheel folder).
  want="$(cd "$ROOT" && _fingerprint "$lock") $({ env | grep '^PIP_' || true; } | sort | "$PY" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')"
  if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
    reason=$(tail -n +2 "$stamp")
  else
    report=$(mktemp)
    if out=$(cd "$ROOT" && "$VENV/bin/python" -m pip install --dry-run -q --report "$report" -r "$lock" 2>&1); then
      reason=$("$VENV/bin/python" - "$report" <<'PY'
import json, re, sys
items = json.load(open(sys.argv[1]))["install"]
names = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in items}
cuda = sorted(n for n in names if re.match(r"(nvidia-|cuda-|triton$)", n))
if cuda:
    print(f"pip would take torch {names.get('torch', '?')} with {len(cuda)} CUDA packages "
          f"({', '.join(cuda[:2])}, ...): PyPI's torch for this platform is a CUDA build of several GB "
          "(set F11_TORCH=install to install it anyway)")
PY
) || reason="could not read pip's dry-run report"
    else
      reason="pip cannot install $lock here: $(printf '%s' "$out" | tail -n 1)"
    fi
    rm -f "$report"
    printf '%s\n%s\n' "$want" "$reason" >"$stamp"
  fi
  if [ -n "$reason" ] && [ "${F11_TORCH:-auto}" != install ]; then
    export F11_TORCH_SKIPPED="$reason"; say "PyTorch cross-check skipped: $reason"; return 0
  fi
  want=$(cd "$ROOT" && _fingerprint "$lock")
  if "$VENV/bin/python" -c 'import torch' >/dev/null 2>&1 && [ -f "$VENV/.installed-torch" ] && [ "$(cat "$VENV/.installed-torch")" = "$want" ]; then
    return 0
  fi
  say "installing PyTorch (CPU build) from $lock for the cross-check"
  out=$(cd "$ROOT" && "$VENV/bin/python" -m pip install -q -r "$lock" 2>&1) || { say "pip install -r $lock failed:"; cause "$out" 10; return 1; }
  out=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>&1) || { say "torch installed but does not import:"; cause "$out"; return 1; }
  echo "$want" >"$VENV/.installed-torch"
}

# axe-core (accessibility checks in the browser tests) from the npm registry, at the version
# package-lock.json pins, into the project's node_modules/ (gitignored); exported as F11_AXE_JS.
ensure_axe() {
  local js="$ROOT/node_modules/axe-core/axe.min.js" want out
  ensure_apt "nodejs npm" "command -v node && command -v npm" || return 1
  want=$(cd "$ROOT" && "$VENV/bin/python" -c 'import json; print(json.load(open("package-lock.json"))["packages"]["node_modules/axe-core"]["version"])')
  if [ ! -f "$js" ] || [ "$(cd "$ROOT" && node -p 'require("./node_modules/axe-core/package.json").version' 2>/dev/null)" != "$want" ]; then
    ensure_writable "$ROOT" "npm ci installs axe-core into $ROOT/node_modules" || return 1
    say "installing axe-core $want (npm ci) into $ROOT/node_modules"
    out=$(cd "$ROOT" && npm ci --no-audit --no-fund 2>&1) || { say "npm ci failed:"; cause "$out" 8; return 1; }
    [ -f "$js" ] || { say "npm ci ran, but $js is missing"; return 1; }
  fi
  export F11_AXE_JS="$js"
}

#!/usr/bin/env python3
"""One lock for every environment: ``uv.lock``, and the requirement files exported from it.

    .venv/bin/python scripts/lock.py                          # after editing pyproject.toml: relock, export
    .venv/bin/python scripts/lock.py --upgrade-package numpy  # move one package (other uv lock options pass through too)
    .venv/bin/python scripts/lock.py --check                  # offline: nothing is out of date (what the tests check)

What is needed is written in ``pyproject.toml``: the package's own dependencies and the
dependency groups (PEP 735) ``docs``, ``binder``, ``test`` (= docs + binder + test tools) and
``torch``.  ``uv lock`` resolves them together, for every platform and Python >= 3.11, from PyPI
alone, into ``uv.lock``; a package has one version for all groups (the version it already had
unless it is asked to move).  The files the scripts and Binder install with plain pip are
``uv export`` of that lock (``EXPORTS``), never edited by hand.  The torch file leaves out the
CUDA packages that PyPI's Linux torch pulls in: scripts/test.sh installs it only where pip
would take a CPU build of torch.

Hashes (``HASHED``): the files scripts/build.sh and scripts/test.sh install carry every file's
sha256 from the lock, so pip installs them in hash-checking mode (a mirror or proxy that serves
another file is refused).  pip takes no hashes beside an editable ``-e .``, so these files leave the
project out and scripts/_setup.sh installs it apart (``ensure_venv FILE project``).  Binder's file
keeps ``-e .`` and no hashes (repo2docker installs the project only from that file), and the torch
file has no hashes (a CPU wheel of torch from another index, or built here, has other hashes; PyPI's
Linux torch needs the CUDA packages the file leaves out, which hash-checking mode would demand).

uv is the ``uv`` package of the test group (scripts/test.sh installs it in .venv), at the
version ``[tool.uv] required-version`` names.  Settings of this machine's pip and uv
(``PIP_*``, ``UV_*``: mirrors, local wheel folders) are not used.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEX = "https://pypi.org/simple"
SCRIPT = "scripts/lock.py"
COMMAND = f"python3 {SCRIPT}"

#: exported file -> the groups of `uv export` (each also gets --frozen --no-header; HASHED --no-emit-project,
#: the others --no-hashes)
EXPORTS = {
    "requirements.txt": ["--no-default-groups", "--group", "docs"],          # scripts/build.sh
    "requirements-test.txt": ["--no-default-groups", "--group", "test"],     # scripts/test.sh
    "binder/requirements.txt": ["--no-default-groups", "--group", "binder"],  # repo2docker
    "requirements-torch.txt": ["--only-group", "torch"],                     # optional PyTorch cross-check
}
#: Exported with every file's sha256 and without the project (the docstring: Hashes).
HASHED = ("requirements.txt", "requirements-test.txt")
#: CUDA-only packages of PyPI's Linux torch: never exported (see the docstring).
CUDA_ONLY = re.compile(r"^(nvidia-[\w-]+|triton|cuda-[\w-]+)$", re.I)


TORCH = "requirements-torch.txt"


def header(name: str) -> str:
    how = " ".join(EXPORTS[name]) + (", without the CUDA packages nvidia-*, cuda-*, triton" if name == TORCH else "")
    apart = ("# Hash-checked (pip --require-hashes); attention_lab itself is not in it: scripts/_setup.sh installs it apart.\n"
             if name in HASHED else "")
    return (f"# {name}: exported from uv.lock by {COMMAND} (uv export {how}).\n"
            "# Do not edit: change pyproject.toml and run that command (README: 依赖).\n" + apart)


def clean_env() -> dict[str, str]:
    """The environment without pip/uv settings that point at local wheels or other indexes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def required_uv() -> str:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["required-version"]
    return spec.removeprefix("==")


def find_uv() -> str:
    """The uv binary of the required version: this Python's uv package, .venv's, or on PATH."""
    candidates = []
    try:
        from uv import find_uv_bin  # the PyPI package installs the binary beside the interpreter
        candidates.append(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    candidates += [str(ROOT / ".venv" / "bin" / "uv"), shutil.which("uv") or ""]
    want = required_uv()
    seen = []
    for uv in filter(None, candidates):
        if not Path(uv).is_file():
            continue
        out = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.split()
        if out[1:2] == [want]:
            return uv
        seen.append(f"{uv} is {' '.join(out[1:2]) or '?'}")
    raise SystemExit(f"uv {want} is needed (pyproject.toml [tool.uv] required-version)"
                     f"{': ' + '; '.join(seen) if seen else ''}. It is in the test group: bash scripts/test.sh "
                     f"installs it in .venv (then run .venv/bin/python {SCRIPT}), or: pip install uv=={want}")


def uv_run(uv: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([uv, *args], cwd=ROOT, env=clean_env(), capture_output=True, text=True, check=check)


def locked_packages() -> dict[str, list[dict]]:
    """{name: [package entries]} of uv.lock (a name may have several versions, by marker)."""
    out: dict[str, list[dict]] = {}
    for pkg in tomllib.loads((ROOT / "uv.lock").read_text())["package"]:
        out.setdefault(pkg["name"], []).append(pkg)
    return out


def export_args(name: str) -> list[str]:
    args = ["export", "--frozen", "--no-header", *(["--no-emit-project"] if name in HASHED else ["--no-hashes"]),
            *EXPORTS[name]]
    if name == TORCH:
        for pkg in sorted(p for p in locked_packages() if CUDA_ONLY.match(p)):
            args += ["--no-emit-package", pkg]
    return args


def export(uv: str, name: str) -> str:
    """What `name` must hold: the header and `uv export` of the lock."""
    return header(name) + uv_run(uv, *export_args(name)).stdout


def check(uv: str) -> list[str]:
    """What is out of date, offline: uv.lock against pyproject.toml, each file against uv.lock."""
    stale = []
    run = uv_run(uv, "lock", "--check", "--offline", check=False)
    if run.returncode:
        stale.append("uv.lock does not match pyproject.toml:\n" + run.stderr.strip())
    else:
        stale += [name for name in EXPORTS if not (ROOT / name).exists() or (ROOT / name).read_text() != export(uv, name)]
    return stale


def main(argv: list[str]) -> int:
    uv = find_uv()
    if argv == ["--check"]:
        stale = check(uv)
        for item in stale:
            print(f"out of date (run {COMMAND}): {item}", file=sys.stderr)
        if not stale:
            print("uv.lock and the exported files are up to date")
        return 1 if stale else 0
    run = uv_run(uv, "lock", "--default-index", INDEX, *argv, check=False)
    if run.returncode:
        print(run.stderr, file=sys.stderr)
        return run.returncode
    print(run.stderr.strip().splitlines()[-1])
    foreign = sorted({f"{p['name']} {p.get('source')}" for pkgs in locked_packages().values() for p in pkgs
                      if p.get("source") not in ({"registry": INDEX}, {"editable": "."})})
    if foreign:
        print(f"uv.lock names sources other than {INDEX} and this checkout: {foreign} (a uv.toml of this machine?)",
              file=sys.stderr)
        return 1
    for name in EXPORTS:
        (ROOT / name).write_text(export(uv, name))
    print("exported: " + ", ".join(EXPORTS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""scripts/_setup.sh recovers and tells the truth (run for real, in temporary folders).

* A half-made venv (python but no pip) is rebuilt by the next run; a second run is fast
  and installs nothing.
* apt failures are reported as what they are (apt's own message), and a check that still
  fails after an install stops right there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

# Runs scripts/_setup.sh for real and makes venvs: the slow tier.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def setup_sh(script: str, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    """Run bash with scripts/_setup.sh sourced (as build.sh/test.sh do), then `script`."""
    full = {**os.environ, "PYTHON": sys.executable, **env}
    return subprocess.run(["bash", "-c", f'set -euo pipefail; source "{ROOT}/scripts/_setup.sh"; {script}'],
                          cwd=tmp_path, capture_output=True, text=True, env=full, timeout=600)


def test_a_half_made_venv_is_rebuilt_and_a_second_run_is_fast(tmp_path):
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)  # python, but no pip: what an interrupted first run leaves
    assert not (home / "bin" / "pip").exists()
    lock = tmp_path / "empty-lock.txt"
    lock.write_text("# no packages: this test is about the venv itself\n")
    first = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    assert first.returncode == 0, first.stderr
    assert "half-made" in first.stderr and "rebuilding" in first.stderr
    pip = subprocess.run([str(home / "bin" / "python"), "-m", "pip", "--version"], capture_output=True, text=True)
    assert pip.returncode == 0, "the rebuilt venv has no pip"
    start = time.monotonic()
    second = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    took = time.monotonic() - start
    assert second.returncode == 0, second.stderr
    assert second.stderr == "", f"a second run should only check, but said: {second.stderr}"
    print(f"second run: {took:.1f} s")


def test_a_venv_whose_python_is_gone_is_rebuilt(tmp_path):
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)
    (home / "bin" / "python").unlink()  # e.g. the Python it pointed to was removed
    lock = tmp_path / "empty-lock.txt"
    lock.write_text("\n")
    run = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    assert run.returncode == 0, run.stderr
    assert "half-made" in run.stderr and (home / "bin" / "python").exists()


needs_root_apt = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None,
                                    reason="needs apt-get and root (as scripts/test.sh runs on CI)")


@needs_root_apt
def test_apt_failures_are_reported_as_apt_failures_not_as_missing_rights(tmp_path):
    run = setup_sh('ensure_apt f11-no-such-package-xyz false', tmp_path)
    assert run.returncode != 0
    assert "apt-get install f11-no-such-package-xyz failed" in run.stderr or "apt-get update failed" in run.stderr
    assert "not root" not in run.stderr
    assert "Unable to locate package" in run.stderr or "E:" in run.stderr, run.stderr


@needs_root_apt
def test_a_check_that_still_fails_after_installing_stops_there_with_the_check(tmp_path):
    # hostname is part of every Debian system: installing it succeeds at once, the check still fails.
    run = setup_sh('ensure_apt hostname "test -e /nonexistent-f11-check"', tmp_path)
    assert run.returncode != 0
    assert "installed hostname, but the check still fails (test -e /nonexistent-f11-check)" in run.stderr, run.stderr


def test_scripts_and_tests_find_the_same_chromium(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from find_chromium import find_chromium

    # tests/conftest.py's CHROMIUM is find_chromium(); scripts/test.sh runs the file.
    assert "CHROMIUM = find_chromium()" in (ROOT / "tests" / "conftest.py").read_text()
    assert "find_chromium.py" in (ROOT / "scripts" / "_setup.sh").read_text()
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "find_chromium.py")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == find_chromium()
    missing = subprocess.run([sys.executable, str(ROOT / "scripts" / "find_chromium.py")], capture_output=True,
                             text=True, env={**os.environ, "CHROMIUM": str(tmp_path / "no-such-chromium")})
    assert missing.returncode == 1 and "not an executable file" in missing.stderr

"""``pip wheel .`` in a copy of the checkout (issue 26, item 10): the wheel declares every package
it ships (no setuptools warning that ``attention_lab.static`` is absent from ``packages``), carries
every file of the lab's view, and leaves the checkout as clean as it found it (``git status``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# Builds a wheel (about 15 s): the slow tier.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def git(*args, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the tracked files as they are now, committed in a fresh repository, and its wheel."""
    copy = tmp_path_factory.mktemp("checkout")
    for name in git("ls-files", "-z", cwd=ROOT).split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git("init", "-q", cwd=copy)
    git("add", "-A", cwd=copy)
    git("-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "copy", cwd=copy)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation",
                           "--no-index", "-w", str(out)], cwd=copy, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return copy, next(out.glob("attention_lab-*.whl")), proc.stdout + proc.stderr


def test_the_wheel_declares_every_package_it_ships(built):
    _, wheel, log = built
    assert "is absent from the `packages` configuration" not in log, log[-3000:]
    names = zipfile.ZipFile(wheel).namelist()
    view = sorted(p.name for p in (ROOT / "attention_lab" / "static" / "attention-lab").iterdir()
                  if git("ls-files", str(p), cwd=ROOT).strip())
    assert view and all(f"attention_lab/static/attention-lab/{name}" in names for name in view)
    assert "attention_lab/strings_zh.json" in names


def test_a_wheel_build_leaves_the_checkout_clean(built):
    copy, _, _ = built
    assert git("status", "--porcelain", cwd=copy) == ""

"""scripts/verify_concepts.py: passes on the real chapter, fails naming a changed number."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "verify_concepts.py"
CHAPTER = ROOT / "book" / "f11-attention.md"


def run(chapter: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--chapter", str(chapter)],
                          capture_output=True, text=True, cwd=ROOT)


def mutated(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the chapter with exactly one occurrence of ``old`` replaced."""
    text = CHAPTER.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} is no longer in the chapter; update this test"
    path = tmp_path / "f11-mutated.md"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_real_chapter_passes():
    proc = run(CHAPTER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("OK")
    # It really checked something: the report counts are not zero.
    assert "25/25 required quantities" in proc.stdout


def test_default_path_is_the_chapter():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "f11-attention.md" in proc.stdout


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        # A share one unit off in the tenth decimal (the softmax step).
        ("除以总和： [0.6697615493", "除以总和： [0.6697615494", "0.6697615494"),
        # A projected row whose written arithmetic no longer gives the stated result.
        ("1×0.5+1×0.5]    = [0,1]", "1×0.5+1×0.5]    = [0,2]", "q₀"),
        # An output cell: the arithmetic is right but the result is mistyped.
        ("≈ 6.6047690135\n", "≈ 6.6047690136\n", "6.6047690136"),
        # The causal mask written without its −∞.
        ("M = [[0,−∞],", "M = [[0,0],", "M is stated as"),
        # The F07 coefficient example.
        ("= [13,16]", "= [13,17]", "[13,17]"),
    ],
)
def test_changed_number_fails_and_is_named(tmp_path, old, new, named):
    proc = run(mutated(tmp_path, old, new))
    assert proc.returncode == 1, proc.stdout
    assert "MISMATCH" in proc.stdout
    assert named in proc.stdout
    assert "line " in proc.stdout  # mismatches point at a line


def test_typed_decimal_in_prose_must_be_computed(tmp_path):
    path = mutated(tmp_path, "## 课后自检\n", "## 课后自检\n\n份额约为 0.6697615400。\n")
    proc = run(path)
    assert proc.returncode == 1
    assert "0.6697615400 is not a number the chapter computes" in proc.stdout


def test_missing_required_quantity_fails(tmp_path):
    path = mutated(tmp_path, "指数之和： 1.4930686914\n", "")
    proc = run(path)
    assert proc.returncode == 1
    assert "coverage: 指数之和" in proc.stdout
    assert "1.4930686914 does not appear" in proc.stdout


def test_unknown_glue_name_fails(tmp_path):
    path = mutated(tmp_path, "{glue:text}`a10:.10f`", "{glue:text}`no_such_value:.10f`")
    proc = run(path)
    assert proc.returncode == 1
    assert "no_such_value" in proc.stdout

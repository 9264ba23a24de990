"""The book's build settings turn a failing cell or stray stderr into a failed build.

Each case builds a one-page book with the project's real _config.yml (and the
files it refers to), so a change to the execution settings that would let an
error or a warning slip onto the website fails here.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PAGE = """---
jupytext:
  text_representation: {{extension: .md, format_name: myst}}
kernelspec: {{display_name: Python 3, language: python, name: python3}}
---

# 检查页

```{{code-cell}} ipython3
{code}
```
"""


def build_one_page(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(ROOT / "book" / "_ext", tmp_path / "book" / "_ext")
    shutil.copytree(ROOT / "book" / "_static", tmp_path / "book" / "_static")
    # html_static_path also names the lab's package data (its JS/CSS, shared with Jupyter).
    shutil.copytree(ROOT / "attention_lab" / "static", tmp_path / "attention_lab" / "static")
    shutil.copy(ROOT / "book" / "references.bib", tmp_path / "book" / "references.bib")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/index\n")
    (tmp_path / "book" / "index.md").write_text(PAGE.format(code=code), encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run(
        [str(jb), "build", str(tmp_path), "--all", "--builder", "html", "-W", "-n", "--keep-going"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )


@pytest.mark.build
def test_a_clean_page_builds(tmp_path):
    proc = build_one_page(tmp_path, 'print("好")')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.build
def test_a_cell_that_raises_fails_the_build(tmp_path):
    proc = build_one_page(tmp_path, 'raise ValueError("故意的错误")')
    assert proc.returncode != 0
    assert "Executing notebook failed: CellExecutionError" in proc.stdout + proc.stderr


@pytest.mark.build
def test_stderr_output_fails_the_build(tmp_path):
    proc = build_one_page(tmp_path, 'import sys; print("stray", file=sys.stderr)')
    assert proc.returncode != 0
    assert "stderr" in (proc.stdout + proc.stderr).lower()

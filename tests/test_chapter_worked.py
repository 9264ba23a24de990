"""The chapter's hand computation of the 爱 row is written by attention_lab.worked, not typed.

Its six text blocks (the row's objects, then the five stages: q·k, ÷√d_k, + M, softmax, × V)
are the outputs of hidden cells tagged ``f11-worked``; on the built page they must be exactly
``worked_stage(attention(**baseline()), 1, k)`` for k = 0..5, in that order, each in the same
kind of ``text`` block as the chapter's typed ones, and under the heading of its stage.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from attention_lab import attention, baseline
from attention_lab.worked import templates, worked_stage

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "book" / "f11-attention.md"
CHAPTER = "book/f11-attention.html"
ORDINALS = "一二三四五"


@pytest.fixture(scope="module")
def page(built_site) -> BeautifulSoup:
    return BeautifulSoup((built_site / CHAPTER).read_text("utf-8"), "html.parser")


def worked_cells(page: BeautifulSoup) -> list:
    return page.select("div.cell.tag_f11-worked")


def test_the_chapters_worked_blocks_are_worked_py_output_for_the_ai_row(page):
    r = attention(**baseline())
    shown = [cell.select_one("pre").get_text().rstrip("\n") for cell in worked_cells(page)]
    assert shown == [worked_stage(r, 1, stage) for stage in range(6)]


def test_each_block_is_a_text_block_like_a_typed_one_with_its_code_hidden(page):
    for cell in worked_cells(page):
        assert cell.select_one("div.highlight-text pre") is not None  # as a typed ```text block
        assert "tag_remove-input" in cell["class"] and cell.select_one(".cell_input") is None


def test_each_stage_block_sits_under_the_heading_of_its_stage(page):
    cells = worked_cells(page)
    assert cells[0].find_parent("section")["id"] == "f11-one-row"
    for stage, cell in enumerate(cells[1:], start=1):
        heading = cell.find_parent("section").find(re.compile("^h[1-6]$")).get_text()
        assert heading.startswith(f"第{ORDINALS[stage - 1]}步"), (stage, heading)


def test_no_line_of_the_generated_computation_is_typed_in_the_chapter_source():
    r = attention(**baseline())
    source = SOURCE.read_text("utf-8")
    for stage in range(6):
        for line in worked_stage(r, 1, stage).splitlines():
            assert line not in source, line
    # ... and the words that would begin a typed copy do not start any line of a text block either.
    starts = [t.split("{")[0] for k, t in templates().items() if k in ("scaled", "sub_max", "exp_sum", "shares")]
    for line in source.splitlines():
        assert not any(line.startswith(s) for s in starts), line

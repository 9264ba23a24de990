"""The CJK font is chosen in one place; without one the build stops with instructions."""

import warnings
from pathlib import Path

import pytest

from attention_lab import attention, baseline, fonts
from attention_lab.plotting import AttentionFigure


def test_a_chinese_font_from_the_fallback_list_is_used():
    name = fonts.use_cjk_font()
    assert name in fonts.CJK_FONT_CANDIDATES
    import matplotlib as mpl

    assert mpl.rcParams["font.sans-serif"][0] == name


def test_figures_draw_chinese_labels_without_missing_glyphs():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing.*")
        png = AttentionFigure(attention(**baseline()), tables=("Q", "K", "V", "S", "A", "O")).to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_cjk_font_stops_with_install_instructions(monkeypatch):
    monkeypatch.setattr(fonts, "CJK_FONT_CANDIDATES", ("No Such Font SC",))
    fonts.find_cjk_font.cache_clear()
    try:
        with pytest.raises(fonts.MissingCJKFontError, match="apt-get install -y fonts-noto-cjk"):
            fonts.use_cjk_font()
    finally:
        fonts.find_cjk_font.cache_clear()


@pytest.fixture
def no_cjk_font(monkeypatch):
    """As on a machine without any Chinese font (Colab): no candidate is installed."""
    monkeypatch.setattr(fonts, "CJK_FONT_CANDIDATES", ("No Such Font SC",))
    monkeypatch.setattr(fonts, "_allow_missing", False)
    fonts.find_cjk_font.cache_clear()
    fonts._warn_once.cache_clear()
    yield
    fonts.find_cjk_font.cache_clear()
    fonts._warn_once.cache_clear()


def test_notebook_figures_fall_back_with_one_clear_warning_instead_of_stopping(no_cjk_font):
    fonts.allow_missing_cjk_font()
    with pytest.warns(fonts.MissingCJKFontWarning, match="fonts-noto-cjk") as caught:
        png = AttentionFigure(attention(**baseline()), tables=("S", "A", "O")).to_png()
        AttentionFigure(attention(**baseline()), tables=("S",)).to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    ours = [w for w in caught if issubclass(w.category, fonts.MissingCJKFontWarning)]
    assert len(ours) == 1, "the missing-font warning must be said once, not per figure"
    assert "方框" in str(ours[0].message)


def test_the_lab_needs_no_cjk_font(no_cjk_font):
    from attention_lab import AttentionLab

    lab = AttentionLab()  # strict mode: any use of the CJK font would raise MissingCJKFontError
    assert lab is not None


def test_set_up_asks_the_same_code_as_the_figures_which_font_is_found():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "attention_lab.fonts"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == fonts.find_cjk_font()
    setup = (Path(__file__).resolve().parents[1] / "scripts" / "_setup.sh").read_text()
    assert "-m attention_lab.fonts" in setup and "fc-list :" not in setup

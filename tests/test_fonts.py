"""The CJK font is chosen in one place; without one the build stops with instructions."""

import warnings

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

"""The one place where the Chinese (CJK) font for figures is chosen.

Matplotlib's default font has no Chinese glyphs and draws empty boxes ("tofu")
with a "Glyph ... missing" warning.  :func:`use_cjk_font` picks the first
installed font from :data:`CJK_FONT_CANDIDATES` and makes it matplotlib's
sans-serif font; if none is installed it raises :class:`MissingCJKFontError`
with instructions, so a build stops instead of shipping boxes.
"""

from __future__ import annotations

from functools import lru_cache

#: Tried in order: Debian/Ubuntu (fonts-noto-cjk), macOS, Windows, others.
CJK_FONT_CANDIDATES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
)

INSTALL_HINT = (
    "No Chinese font for matplotlib was found (tried: {tried}).\n"
    "Install one, then clear matplotlib's font cache (rm -rf ~/.cache/matplotlib):\n"
    "  Debian/Ubuntu: sudo apt-get install -y fonts-noto-cjk\n"
    "  Fedora:        sudo dnf install -y google-noto-sans-cjk-sc-fonts\n"
    "  conda:         conda install -c conda-forge font-ttf-noto-cjk\n"
    "  macOS / Windows already ship PingFang SC / Microsoft YaHei.\n"
    "未找到可用于 matplotlib 的中文字体，请按上面的命令安装（例如 fonts-noto-cjk）。"
)


class MissingCJKFontError(RuntimeError):
    """No font with Chinese glyphs is installed."""


@lru_cache(maxsize=1)
def find_cjk_font() -> str:
    """Name of the first installed CJK font from the candidate list."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONT_CANDIDATES:
        if name in installed:
            return name
    raise MissingCJKFontError(INSTALL_HINT.format(tried=", ".join(CJK_FONT_CANDIDATES)))


def use_cjk_font() -> str:
    """Make the CJK font matplotlib's default sans-serif font; return its name."""
    import matplotlib as mpl

    name = find_cjk_font()
    families = list(mpl.rcParams["font.sans-serif"])
    if not families or families[0] != name:
        mpl.rcParams["font.sans-serif"] = [name] + [f for f in families if f != name]
    mpl.rcParams["font.family"] = "sans-serif"
    # The CJK font's minus sign is fine, but keep matplotlib's Unicode minus consistent.
    mpl.rcParams["axes.unicode_minus"] = True
    return name

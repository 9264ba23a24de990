"""The one place where the Chinese (CJK) font for figures is chosen.

Matplotlib's default font has no Chinese glyphs and draws empty boxes ("tofu")
with a "Glyph ... missing" warning.  :func:`use_cjk_font` picks the first
installed font from :data:`CJK_FONT_CANDIDATES` and makes it matplotlib's
sans-serif font; if none is installed it raises :class:`MissingCJKFontError`
with instructions, so a build stops instead of shipping boxes.

A reader's notebook outside the book (Colab, a plain Jupyter) may have no Chinese
font at all.  There the chapter's set-up cell calls :func:`allow_missing_cjk_font`:
figures are then drawn with matplotlib's default font (boxes for Chinese labels) after
one clear warning saying how to install a font, instead of stopping.  The lab itself
needs no font (it is HTML).

``python -m attention_lab.fonts`` prints the font found, or the instructions (exit 1);
``scripts/_setup.sh`` asks it, so the set-up checks fonts exactly as the figures do.
"""

from __future__ import annotations

import sys
import warnings
from functools import lru_cache

from .strings import strings

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
) + strings()["fonts"]["missing"]


FALLBACK_NOTE = (
    "Figures use matplotlib's default font, so their Chinese labels show as boxes; "
    "the numbers are right.  "
) + strings()["fonts"]["fallback"]


class MissingCJKFontError(RuntimeError):
    """No font with Chinese glyphs is installed."""


class MissingCJKFontWarning(UserWarning):
    """No Chinese font, and figures were allowed to fall back to the default font."""


_allow_missing = False


def allow_missing_cjk_font(allow: bool = True) -> None:
    """Let figures fall back to the default font (with one warning) when no CJK font exists.

    For notebooks outside the book build.  The build keeps the default (stop with
    :class:`MissingCJKFontError`), so the website never ships boxes.
    """
    global _allow_missing
    _allow_missing = bool(allow)


@lru_cache(maxsize=1)
def find_cjk_font() -> str:
    """Name of the first installed CJK font from the candidate list."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONT_CANDIDATES:
        if name in installed:
            return name
    raise MissingCJKFontError(INSTALL_HINT.format(tried=", ".join(CJK_FONT_CANDIDATES)))


def use_cjk_font() -> str | None:
    """Make the CJK font matplotlib's default sans-serif font; return its name.

    Without a CJK font: raise :class:`MissingCJKFontError`, or, after
    :func:`allow_missing_cjk_font`, warn once (:class:`MissingCJKFontWarning`) and return None.
    """
    import matplotlib as mpl

    try:
        name = find_cjk_font()
    except MissingCJKFontError as exc:
        if not _allow_missing:
            raise
        _warn_once(f"{exc}\n{FALLBACK_NOTE}")
        return None
    families = list(mpl.rcParams["font.sans-serif"])
    if not families or families[0] != name:
        mpl.rcParams["font.sans-serif"] = [name] + [f for f in families if f != name]
    mpl.rcParams["font.family"] = "sans-serif"
    # The CJK font's minus sign is fine, but keep matplotlib's Unicode minus consistent.
    mpl.rcParams["axes.unicode_minus"] = True
    return name


@lru_cache(maxsize=1)
def _warn_once(message: str) -> None:
    warnings.warn(message, MissingCJKFontWarning, stacklevel=3)


def clear_font_cache() -> None:
    """Forget matplotlib's list of installed fonts (a font installed later becomes visible)."""
    import glob
    import os

    import matplotlib as mpl

    loaded = "matplotlib.font_manager" in sys.modules
    for path in glob.glob(os.path.join(mpl.get_cachedir(), "fontlist-*.json")):
        os.remove(path)
    if loaded:  # already read in this process: rescan now (importing it later rescans itself)
        from matplotlib import font_manager

        font_manager.fontManager = font_manager._load_fontmanager(try_read_cache=False)
        font_manager.findfont = font_manager.fontManager.findfont
        font_manager.get_font_names = font_manager.fontManager.get_font_names
    find_cjk_font.cache_clear()


def main(argv: list[str] | None = None) -> int:
    """``python -m attention_lab.fonts [--rescan]``: print the CJK font, or how to install one."""
    argv = sys.argv[1:] if argv is None else argv
    if "--rescan" in argv:
        clear_font_cache()
    try:
        print(find_cjk_font())
    except MissingCJKFontError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

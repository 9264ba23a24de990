"""Make book/_static/f11-math.woff: the small maths font the site's MathML uses.

The website renders formulas to MathML when the book is built (no MathJax
script).  Chromium draws MathML with an OpenType MATH font: it needs one to
stretch brackets, draw radicals and space fractions.  Readers' machines may
have none, so the site ships its own, cut down to the characters a formula in
this book can use (about 20 KB instead of 700 KB for the whole font).

Source: Latin Modern Math (GUST Font License), from Debian's ``fonts-lmodern``
(``apt-get install fonts-lmodern``).  The subset is renamed "F11 Math" as the
licence asks of modified versions.  Run again after adding a symbol the subset
lacks (the site test reports any character of a formula the font cannot draw):

    .venv/bin/python scripts/make_math_font.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path("/usr/share/texmf/fonts/opentype/public/lm-math/latinmodern-math.otf")
TARGET = ROOT / "book" / "_static" / "f11-math.woff"
FAMILY = "F11 Math"


def characters() -> str:
    """Every character the subset keeps."""
    ascii_ = "".join(chr(c) for c in range(0x20, 0x7F))
    greek = "".join(chr(c) for c in range(0x3B1, 0x3CA))
    # Mathematical italic and bold letters: MathML Core draws a one-letter <mi> as
    # U+1D434.. (italic); U+210E is the italic h.
    italic = "".join(chr(c) for c in range(0x1D434, 0x1D468)) + "\u210e"
    symbols = "−×÷·⋅…′″∞≈≠≤≥±√∑∏∈→←⇒⊤ᵀ∘∗⟨⟩‖∣ℝ∂"
    return ascii_ + greek + italic + symbols


def main() -> int:
    if not SOURCE.exists():
        print(f"{SOURCE} is missing: apt-get install fonts-lmodern", file=sys.stderr)
        return 1
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features = ["ssty"]  # script-size glyphs for sub- and superscripts
    options.flavor = "woff"  # zlib, so no brotli dependency
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = TTFont(SOURCE)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters())
    subsetter.subset(font)  # keeps the MATH table and the size variants it points to
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = FAMILY
        elif record.nameID == 6:
            record.string = FAMILY.replace(" ", "")
    font.flavor = "woff"
    font.save(TARGET)
    print(f"{TARGET.relative_to(ROOT)}: {TARGET.stat().st_size / 1000:.1f} KB, MATH table: {'MATH' in font}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

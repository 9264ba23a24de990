"""How the book writes a number: the one Python formatter for the worked text and the tables.

The worked arithmetic (:func:`attention_lab.worked.fmt`, 10 decimals) and the cells and
colour bars of the figures (:func:`attention_lab.plotting.format_value`, 3 decimals, as the
lab's tables) both call :func:`format_number`; only the number of decimals differs.  The
JavaScript twin is one function too, ``formatValue`` in ``static/attention-lab/attention.js``
(its worked text's ``fmt`` is ``formatValue(x, 10)``), and the node and browser tests compare
the two texts.

Pure text: no numpy needed, nothing imported from the rest of the package.
"""

from __future__ import annotations

import math

__all__ = ["CELL_DIGITS", "WORKED_DIGITS", "format_number"]

#: Decimals of the worked text (the chapter's hand computation and the lab's).
WORKED_DIGITS = 10
#: Decimals of a table cell (the chapter's figures, the lab's S, A, O tables, colour bars).
CELL_DIGITS = 3


def format_number(x: float, digits: int = WORKED_DIGITS) -> str:
    """``x`` rounded to ``digits`` decimals, trailing zeros dropped, in the chapter's signs.

    ``-inf`` -> ``"−∞"`` (U+2212), ``+inf`` -> ``"+∞"``, NaN -> ``"NaN"``; otherwise
    Python's ``f"{x:.{digits}f}"`` (JavaScript ``toFixed``: the two agree except on exact
    ties), then trailing ``0`` and a trailing ``.`` go (only after a decimal point: 10 stays
    10), ``"-0"`` becomes ``"0"`` and a negative number is written with ``−`` (U+2212), the
    chapter's one minus sign.

    >>> format_number(1 / 3), format_number(1 / 3, CELL_DIGITS), format_number(-0.5)
    ('0.3333333333', '0.333', '−0.5')
    >>> format_number(20.0, 0), format_number(-1e-12), format_number(float("-inf"))
    ('20', '0', '−∞')
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    if not isinstance(digits, int) or isinstance(digits, bool) or not 0 <= digits <= 20:
        raise ValueError(f"digits must be a whole number from 0 to 20, not {digits!r}")
    text = f"{x:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text == "-0":
        return "0"
    return "−" + text[1:] if text.startswith("-") else text

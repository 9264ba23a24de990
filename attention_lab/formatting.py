"""How the book writes a number: the one Python formatter for the worked text and the tables.

The worked arithmetic (:func:`attention_lab.worked.fmt`, 10 decimals) and the cells and
colour bars of the figures (:func:`attention_lab.plotting.format_value`, 3 decimals, as the
lab's tables) both call :func:`format_number`; only the number of decimals differs.  The
JavaScript twin is one function too, ``formatValue`` in ``static/attention-lab/attention.js``
(its worked text's ``fmt`` is ``formatValue(x, 10)``), and the node and browser tests compare
the two texts.

A share of ``A`` (or an exponential of the softmax) is never 0 while its position may be read,
and never 1 while another one may be read too: ``exp`` is always positive.  Where rounding would
write one as ``0`` or ``1``, the book says so instead: the worked text writes its size as a power
of ten (:func:`format_power`, ``3.2×10⁻¹⁰⁰``; ``1 − 3.2×10⁻¹⁰⁰`` near 1), a table cell writes a
bound (:func:`format_share`, ``<0.001``, ``>0.999``).  A masked share is exactly 0 and stays ``0``.
JavaScript: ``formatPower``, ``formatShare`` in ``attention.js``.

Pure text: no numpy needed, nothing imported from the rest of the package.
"""

from __future__ import annotations

import math

__all__ = ["CELL_DIGITS", "WORKED_DIGITS", "format_number", "format_power", "format_share", "power_value"]

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



_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_FROM_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
#: Multiplied by a power of ten: "3.2×10⁻¹⁰⁰" (two significant digits, the exponent in superscripts).
POWER_SIGN = "×10"


def format_power(log10: float) -> str:
    """A positive number given by its base-10 logarithm, as ``a×10ⁿ`` with two significant digits.

    From the logarithm, so a number below the smallest float (``exp(−1000)`` is 0.0 in floats)
    is still written as what it is; the mantissa is :func:`format_number` at 1 decimal.

    >>> format_power(-99.498), format_power(-563.0), format_power(-10.0001)
    ('3.2×10⁻¹⁰⁰', '1×10⁻⁵⁶³', '1×10⁻¹⁰')
    """
    log10 = float(log10)
    if not math.isfinite(log10):
        raise ValueError(f"format_power needs a finite logarithm, not {log10!r}")
    exponent = math.floor(log10)
    mantissa = format_number(10 ** (log10 - exponent), 1)
    if mantissa == "10":  # 9.96 rounds up to the next power
        exponent, mantissa = exponent + 1, "1"
    return mantissa + POWER_SIGN + str(exponent).translate(_SUPERSCRIPTS)


def power_value(text: str):
    """The exact value (a :class:`fractions.Fraction`) of a number as the book writes it: a decimal
    (``−0.5``), a power (``3.2×10⁻¹⁰⁰``), or one minus or plus a power (``1 − 3.2×10⁻¹⁰⁰``).

    >>> power_value("1 − 2×10⁻³"), power_value("−0.25")
    (Fraction(499, 500), Fraction(-1, 4))
    """
    from fractions import Fraction

    text = text.strip()
    if text.startswith(("1 − ", "1 + ")):  # a share near 1, a sum of exponentials near 1
        return 1 - power_value(text[4:]) if text[2] == "−" else 1 + power_value(text[4:])
    if POWER_SIGN in text:
        mantissa, exponent = text.split(POWER_SIGN)
        return Fraction(mantissa) * Fraction(10) ** int(exponent.translate(_FROM_SUPERSCRIPTS))
    return Fraction(text.replace("−", "-"))


def format_share(shares, scores, j: int, digits: int = CELL_DIGITS) -> str:
    """Share ``j`` of one row of ``A`` as a table cell writes it (``scores``: that row of ``S``).

    :func:`format_number`, except where that would write a readable share as ``0`` or, with another
    readable position in the row, as ``1``: then the bound it lies within, ``<0.001`` / ``>0.999``
    (at 3 decimals).  A masked share (its score −∞) is exactly 0 and stays ``"0"``; a row's only
    readable share is exactly 1 and stays ``"1"``.

    >>> format_share([1.0, 3.2e-100], [229.1, 0.0], 1), format_share([1.0, 3.2e-100], [229.1, 0.0], 0)
    ('<0.001', '>0.999')
    >>> format_share([1.0, 0.0], [0.0, float("-inf")], 1), format_share([1.0, 0.0], [0.0, float("-inf")], 0)
    ('0', '1')
    """
    text = format_number(shares[j], digits)
    if math.isinf(scores[j]):
        return text
    readable = sum(1 for s in scores if not math.isinf(s))
    unit = "0." + "0" * (digits - 1) + "1" if digits > 0 else "1"
    if text == "0":
        return "<" + unit
    if text == "1" and readable > 1:
        return ">" + format_number(1 - 10.0 ** -digits, digits)
    return text

"""The lab's parameters: names, ranges and conversion to and from tables.

Pure Python/numpy, shared by the kernel lab (``lab.py``), the static twin's
configuration (``web.py``) and the tests.  A parameter name is what a control
is called everywhere: ``"X[0,1]"``, ``"Wq[1,0]"``, ``"d_k"``, ``"causal"``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .core import baseline
from .strings import text as _say  # the catalog's notes (strings_zh.json "coerce")

TABLES = ("X", "Wq", "Wk", "Wv")


@dataclass(frozen=True)
class Range:
    """A numeric control's range.  The baseline value is a multiple of ``step``."""

    min: float
    max: float
    step: float

    def clamp(self, value: float) -> float:
        return min(self.max, max(self.min, value))


#: Ranges wide enough that softmax saturates (one share near 1), fine enough
#: that every baseline value is exactly reachable.
RANGES = {
    "X": Range(-3.0, 3.0, 0.1),
    "Wq": Range(-3.0, 3.0, 0.05),
    "Wk": Range(-3.0, 3.0, 0.05),
    "Wv": Range(-20.0, 20.0, 0.5),
    "d_k": Range(1.0, 64.0, 1.0),
}

#: The d_k slider's stops, on the site and in Jupyter (any integer 1..64 can be typed).
D_K_POWERS = (1, 2, 4, 8, 16, 32, 64)

#: Every control name, in display order.
PARAM_NAMES = tuple(
    f"{t}[{i},{j}]" for t in TABLES for i in range(2) for j in range(2)
) + ("d_k", "causal")


def table_of(name: str) -> str:
    """``"Wq[1,0]"`` -> ``"Wq"``; ``"d_k"`` -> ``"d_k"``."""
    return name.split("[", 1)[0]


def range_of(name: str) -> Range:
    return RANGES[table_of(name)]


def default_params(contrast: str | None = None) -> dict:
    """The chapter's baseline (or one contrast) as a flat ``{name: value}`` dict."""
    tables = baseline(contrast)
    params = {}
    for t in TABLES:
        for i in range(2):
            for j in range(2):
                params[f"{t}[{i},{j}]"] = float(tables[t][i, j])
    params["d_k"] = 2.0
    params["causal"] = True
    return params


def tables_from_params(params: dict) -> dict:
    """Flat params -> ``{"X":, "Wq":, "Wk":, "Wv":, "d_k":, "causal":}`` ready for ``attention``.

    Values are passed on as they are (no ``float()``/``bool()``): the core refuses what is not a
    number or a boolean, the same way attention.js does; coerce typed text first (:func:`coerce`).
    """
    out = {}
    for t in TABLES:
        out[t] = np.array([[params[f"{t}[{i},{j}]"] for j in range(2)] for i in range(2)])
    out["d_k"] = params["d_k"]
    out["causal"] = params["causal"]
    return out


#: Typed characters read as their ASCII twins: full-width digits, "．", the minus sign the
#: tables show ("−", U+2212), full-width "－", "＋", "，" and the ideographic space.
_TYPED = {**{chr(0xFF10 + d): str(d) for d in range(10)},
          "\uFF0E": ".", "\u2212": "-", "\uFF0D": "-", "\uFF0B": "+", "\uFF0C": ",", "\u3000": " "}
_TYPED_TABLE = str.maketrans(_TYPED)
#: Plain decimal text (as attention.js's NUMBER_RE): no hex, no "inf"/"nan", no empty text.
_NUMBER_RE = re.compile(r"^\s*[+-]?(\d+(_\d+)*\.?(\d+(_\d+)*)?|\.\d+(_\d+)*)([eE][+-]?\d+)?\s*$", re.ASCII)


def normalize_number_text(text: str) -> str:
    """Typed text -> ASCII number text: ``"−０．５"`` -> ``"-0.5"``, ``"1,5"`` -> ``"1.5"``.

    One comma and no point is a decimal comma; anything else is left for the grammar to refuse.
    """
    text = text.translate(_TYPED_TABLE).strip()
    if text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    return text


def parse_number(raw) -> float:
    """A typed value as a float, or NaN when it is not plain decimal text (as attention.js parseNumber).

    >>> parse_number("−0.5"), parse_number("１．５"), parse_number("1,5"), parse_number(" 2e1 ")
    (-0.5, 1.5, 1.5, 20.0)
    >>> [math.isnan(parse_number(t)) for t in ("0x10", "", "inf", "1,2,3", "1.5.2", None)]
    [True, True, True, True, True, True]
    """
    if isinstance(raw, bool):
        return math.nan
    if isinstance(raw, (int, np.integer)):
        try:
            return float(raw)
        except OverflowError:  # 10**400: beyond any float, so past either end of every range
            return math.inf if raw > 0 else -math.inf
        except Exception:  # an int subclass whose __float__ raises
            return math.nan
    if isinstance(raw, (float, np.floating)):
        try:
            return float(raw)
        except Exception:  # a float subclass whose __float__ raises: no number to read
            return math.nan
    if not isinstance(raw, str) or len(raw) > 64:
        return math.nan
    text = normalize_number_text(raw)
    if not _NUMBER_RE.match(text):
        return math.nan
    return float(text.replace("_", ""))


def _is_nonfinite_word(raw) -> bool:
    return isinstance(raw, str) and re.fullmatch(r"[+-]?(inf|infinity|nan)", normalize_number_text(raw).lower()) is not None


def refused(name: str, raw) -> bool:
    """True when :func:`coerce` would refuse ``raw`` (keep the old value) rather than take or clamp it.

    >>> refused("d_k", "1,5"), refused("d_k", "0x10"), refused("causal", "maybe"), refused("X[0,0]", 99)
    (False, True, True, False)
    """
    if name == "causal":
        return not isinstance(raw, (bool, np.bool_)) and _text(raw).strip().lower() not in (
            "1", "true", "on", "yes", "0", "false", "off", "no")
    if isinstance(raw, (int, np.integer)) and not isinstance(raw, (bool, np.bool_)):
        # Every integer is a number: a huge one is clamped (see coerce); only one whose own
        # __float__ raises has no number to give.
        return math.isnan(parse_number(raw))
    return not math.isfinite(parse_number(raw))


def coerce(name: str, raw, current=None) -> tuple[float | bool, str | None]:
    """Turn a typed value into a valid one for control ``name``.

    Returns ``(value, note)``: ``note`` is ``None`` when ``raw`` was accepted as
    is, otherwise a short Chinese explanation of what was done: clamped to the
    range, d_k rounded to an integer (halves to even, as Python's ``round`` and
    the site's twin), or refused.  A refused value leaves the control as it was
    (``current``); with no ``current`` it falls back to the baseline.

    >>> coerce("X[0,0]", 3.05)
    (3.0, 'X[0,0] 的范围是 −3 到 3，3.05 已改为 3')
    >>> coerce("d_k", 3.9)
    (4.0, 'd_k 取整数，3.9 已改为 4')
    >>> coerce("Wq[0,0]", "0x10", current=0.5)
    (0.5, 'Wq[0,0] 需要一个数，“0x10”没有采用，仍为 0.5')
    """
    if name not in PARAM_NAMES:
        raise ValueError(f"unknown parameter {name!r}; expected one of {', '.join(PARAM_NAMES)}")
    if name == "causal":
        if isinstance(raw, (bool, np.bool_)):
            return bool(raw), None
        text = _text(raw).strip().lower()
        if text in ("1", "true", "on", "yes"):
            return True, None
        if text in ("0", "false", "off", "no"):
            return False, None
        keep = True if current is None else bool(current)
        return keep, _say("coerce.causal", name=name, state=_say("coerce.on" if keep else "coerce.off"), raw=_short(raw))
    r = range_of(name)
    keep = default_params()[name] if current is None else float(current)
    value = parse_number(raw)
    if math.isinf(value) and isinstance(raw, (int, np.integer)) and not isinstance(raw, (bool, np.bool_)):
        clamped = r.max if value > 0 else r.min  # an integer too big for a float: clamped, as 99 is
        return clamped, _say("coerce.range", name=name, min=_g(r.min), max=_g(r.max), clamped=_g(clamped), value=_short(raw))
    if not math.isfinite(value):
        # "数" for text that is no number at all; "有限的数" for NaN, inf, "inf", "1e999".
        nonfinite = not math.isnan(value) or _is_nonfinite_word(raw) or (
            isinstance(raw, (float, np.floating)) and math.isnan(raw))
        what = _say("coerce.a_finite_number" if nonfinite else "coerce.a_number")
        return keep, _say("coerce.not_number", name=name, what=what, keep=_g(keep), raw=_short(raw))
    note = None
    if value < r.min or value > r.max:
        clamped = r.clamp(value)
        note = _say("coerce.range", name=name, min=_g(r.min), max=_g(r.max), value=_g(value), clamped=_g(clamped))
        value = clamped
    if name == "d_k":
        rounded = float(round(value))  # halves to even, as attention.js roundHalfEven
        if rounded != value:
            note = note or _say("coerce.d_k_integer", value=_g(value), rounded=_g(rounded))
            value = rounded
        value = r.clamp(value)
    return value, note


def _g(x: float) -> str:
    """A number in a note: ``f"{x:g}"`` with the chapter's minus sign (U+2212), as the tables show it."""
    return f"{x:g}".replace("-", "\u2212")


def _text(raw) -> str:
    """``str(raw)``, or ``"<type name>"`` when the object's ``__str__`` raises (or returns no text):
    a value given to a control is quoted in its note, never allowed to raise out of it."""
    try:
        text = str(raw)
    except Exception:
        text = None
    return text if isinstance(text, str) else f"<{type(raw).__name__}>"


def _short(raw) -> str:
    """A refused value as a note quotes it: at most 24 characters (as attention.js shortText)."""
    if isinstance(raw, (int, np.integer)) and not isinstance(raw, (bool, np.bool_)) and abs(raw) >= 10**24:
        digits = str(abs(int(raw)))  # too big for f"{:g}" (a float): written as it would be
        mantissa = (digits[0] + "." + digits[1:4]).rstrip("0").rstrip(".")
        return f"{'−' if raw < 0 else ''}{mantissa}e+{len(digits) - 1}"
    try:
        text = raw if isinstance(raw, str) else (f"{raw:g}" if isinstance(raw, float) else _text(raw))
    except Exception:  # a float subclass whose __format__ raises
        text = _text(raw)
    return text if len(text) <= 24 else text[:24] + "…"

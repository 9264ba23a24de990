"""The lab's parameters: names, ranges and conversion to and from tables.

Pure Python/numpy, shared by the kernel lab (``lab.py``), the static twin's
configuration (``web.py``) and the tests.  A parameter name is what a control
is called everywhere: ``"X[0,1]"``, ``"Wq[1,0]"``, ``"d_k"``, ``"causal"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .core import baseline

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
    """Flat params -> ``{"X":, "Wq":, "Wk":, "Wv":, "d_k":, "causal":}`` ready for ``attention``."""
    out = {}
    for t in TABLES:
        out[t] = np.array(
            [[float(params[f"{t}[{i},{j}]"]) for j in range(2)] for i in range(2)]
        )
    out["d_k"] = float(params["d_k"])
    out["causal"] = bool(params["causal"])
    return out


def coerce(name: str, raw) -> tuple[float | bool, str | None]:
    """Turn a typed value into a valid one for control ``name``.

    Returns ``(value, note)``: ``note`` is ``None`` when ``raw`` was accepted as
    is, otherwise a short Chinese explanation of what was done (clamped to the
    range, snapped to the step, or refused and replaced by the baseline).
    """
    if name not in PARAM_NAMES:
        raise ValueError(f"unknown parameter {name!r}")
    if name == "causal":
        if isinstance(raw, bool):
            return raw, None
        text = str(raw).strip().lower()
        if text in ("1", "true", "on", "yes"):
            return True, None
        if text in ("0", "false", "off", "no"):
            return False, None
        return True, f"{name} 只能是开或关，已恢复为开"
    r = range_of(name)
    base = default_params()[name]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return base, f"{name} 需要一个数，已恢复为基准值 {base:g}"
    if not math.isfinite(value):
        return base, f"{name} 需要一个有限的数，已恢复为基准值 {base:g}"
    note = None
    if value < r.min or value > r.max:
        clamped = r.clamp(value)
        note = f"{name} 的范围是 {r.min:g} 到 {r.max:g}，{value:g} 已改为 {clamped:g}"
        value = clamped
    if name == "d_k":
        rounded = float(round(value))
        if rounded != value:
            note = note or f"d_k 取整数，{value:g} 已改为 {rounded:g}"
            value = rounded
        value = r.clamp(value)
    return value, note

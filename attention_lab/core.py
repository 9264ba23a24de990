"""Single-head scaled dot-product attention in pure numpy.

This is the one place where the chapter's mathematics lives.  No widgets, no
plotting, no globals that change.  The chapter, the kernel lab, the scripts and
the tests all call these functions.

Conventions (the chapter's, and the original paper's):

* Row vectors, weights multiplied on the right: ``Q = X @ Wq`` with
  ``X: (n, d_model)`` and ``Wq: (d_model, d_k)``.  (PyTorch's ``nn.Linear``
  stores ``(out, in)`` and transposes; both describe the same map.)
* ``S = Q @ K.T / sqrt(d_k) + M`` where ``M`` is an additive mask holding
  ``0`` where a query may read a key and ``-inf`` where it may not.
* ``A = softmax(S)`` row by row, ``O = A @ V``.

Size limits (every public helper): a table given to or made by the core has at most
:data:`MAX_POSITIONS` = 1024 rows and :data:`MAX_WIDTH` = 1024 columns (n, m, d_model, d_k, d_v,
h·d_k...), and the score tables of all heads together at most :data:`MAX_CELLS` = 2**20 cells
(h·n·m; softmax: its whole input).  These functions are written to show each step on small
examples; beyond the limits they raise :class:`AttentionInputError` of kind ``"size"`` at once,
its message Chinese first (a reader meets it in a notebook), instead of running for seconds and
taking gigabytes (n = 10000 took 9.7 s).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "MAX_CELLS",
    "MAX_POSITIONS",
    "MAX_WIDTH",
    "AttentionInputError",
    "AttentionResult",
    "BASELINE",
    "CONTRASTS",
    "TOKENS",
    "as_matrix",
    "attention",
    "baseline",
    "causal_mask",
    "general_attention",
    "MultiHeadResult",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "SoftmaxSteps",
    "softmax_steps",
    "softmax",
]

#: The most rows (positions n, m; d_model for a W) a table may have: see the module's docstring.
MAX_POSITIONS = 1024
#: The most columns (features d_model, d_k, d_v; h·d_k for a multi-head W) a table may have.
MAX_WIDTH = 1024
#: The most cells of the score tables of all heads together (h·n·m), and of softmax's input.
MAX_CELLS = 2**20


def _size_error(what: str, name: str, got, limit, english: str, template: str = "size") -> "AttentionInputError":
    """An ``AttentionInputError("size", ...)`` whose message is Chinese first (strings_zh.json
    "errors" size + the "api" template, ``what`` a key of its "what"), then the English detail
    for programmers."""
    from .strings import fill, strings

    table = strings()
    detail = fill(table["api"][template], what=fill(table["api"]["what"][what], name=name), got=got, limit=limit)
    return AttentionInputError("size", fill(table["api"]["size_message"], size=table["errors"]["size"],
                                            detail=detail, english=english))


def _check_table_size(shape, name: str) -> None:
    """A table of ``shape`` (rows, columns) within MAX_POSITIONS x MAX_WIDTH, else a "size" refusal."""
    rows, cols = shape
    if rows > MAX_POSITIONS:
        raise _size_error("rows", name, rows, MAX_POSITIONS,
                          f"{name} has {rows} rows; at most {MAX_POSITIONS} (attention_lab.core.MAX_POSITIONS)")
    if cols > MAX_WIDTH:
        raise _size_error("cols", name, cols, MAX_WIDTH,
                          f"{name} has {cols} columns; at most {MAX_WIDTH} (attention_lab.core.MAX_WIDTH)")


def _check_cells(cells: int, what: str, name: str, english: str) -> None:
    if cells > MAX_CELLS:
        raise _size_error(what, name, cells, MAX_CELLS, f"{english} has {cells} cells; at most {MAX_CELLS} "
                          "(attention_lab.core.MAX_CELLS)")


def _check_count(value, name: str, limit: int) -> int:
    """A count such as n, m (a mask's shape): a whole number from 1 to ``limit`` ("shape" when it is
    no whole number from 1 up, "size" past ``limit``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise AttentionInputError("shape", f"{name} must be a whole number from 1 to {limit}; got {_describe(value)}")
    if value > limit:
        raise _size_error("count", name, int(value), limit,
                          f"{name} must be a whole number from 1 to {limit}; got {int(value)} "
                          "(attention_lab.core.MAX_POSITIONS)", "size_int")
    return int(value)


def _precheck_length(value, name: str) -> None:
    """Refuse a nested list past the limits before numpy lays it out (10**4 x 10**4 objects is slow)."""
    if isinstance(value, (list, tuple)) and len(value) > MAX_POSITIONS:
        _check_table_size((len(value), 0), name)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)) and len(value[0]) > MAX_WIDTH:
        _check_table_size((0, len(value[0])), name)


#: The two teaching tokens, in sequence order (row 0, row 1).
TOKENS = ("我", "爱")

#: The chapter's baseline: one input table and three coefficient tables.
BASELINE = {
    "X": ((1.0, 1.0), (1.0, -1.0)),
    "Wq": ((0.5, 0.5), (-0.5, 0.5)),
    "Wk": ((0.5, 0.5), (0.5, -0.5)),
    "Wv": ((5.0, 10.0), (5.0, -10.0)),
}

#: The chapter's two contrasts.  Each starts from the baseline and replaces
#: exactly one coefficient table.
#:
#: * ``only_wv``: Wv becomes the identity, so V = X ("mix X itself").  Q, K, S
#:   and A stay as in the baseline; V and O change.
#: * ``only_wq``: Wq becomes a copy of Wk (allowed: "three sets" does not mean
#:   "must differ").  Q, S, A and O change; K and V stay.
CONTRASTS = {
    "only_wv": {"Wv": ((1.0, 0.0), (0.0, 1.0))},
    "only_wq": {"Wq": ((0.5, 0.5), (0.5, -0.5))},
}


def baseline(contrast: str | None = None) -> dict[str, np.ndarray]:
    """Fresh copies of the baseline tables, optionally with one contrast applied.

    >>> sorted(baseline())
    ['Wk', 'Wq', 'Wv', 'X']
    """
    tables = {name: np.array(value, dtype=float) for name, value in BASELINE.items()}
    if contrast is not None:
        if contrast not in CONTRASTS:
            raise ValueError(
                f"unknown contrast {contrast!r}; expected one of {sorted(CONTRASTS)}"
            )
        for name, value in CONTRASTS[contrast].items():
            tables[name] = np.array(value, dtype=float)
    return tables


@dataclass(frozen=True)
class AttentionResult:
    """Every intermediate table of one attention computation.

    Shapes, for n queries, m keys:
    ``Q (n, d_k)``, ``K (m, d_k)``, ``V (m, d_v)``, ``M (n, m)``,
    ``S (n, m)`` (``-inf`` where masked), ``A (n, m)``, ``O (n, d_v)``.
    ``d_k`` is the number under the square root; ``scale = sqrt(d_k)``.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    M: np.ndarray
    S: np.ndarray
    A: np.ndarray
    O: np.ndarray
    d_k: float
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", float(np.sqrt(self.d_k)))

    @property
    def raw_scores(self) -> np.ndarray:
        """``Q @ K.T`` before scaling and masking, shape (n, m)."""
        return self.Q @ self.K.T


class AttentionInputError(ValueError):
    """Input the computation refuses, with a clear message.

    ``kind`` names the reason:
    ``"type"`` (not a number: text, None, True/False, objects), ``"complex"``,
    ``"nonfinite"`` (NaN or inf given), ``"shape"``, ``"d_k"``, ``"causal"``
    (not True/False), ``"mask"``, ``"all_masked"`` (a row may read nothing),
    ``"overflow"`` (finite inputs whose products exceed the largest float, or a whole number
    too large to be a float at all, such as ``10**400``), ``"size"`` (beyond the size limits,
    :data:`MAX_POSITIONS`, :data:`MAX_WIDTH`, :data:`MAX_CELLS`), ``"masked"`` (a ``numpy.ma`` array with
    masked entries: refused, see :func:`as_matrix`).  tests/bad_inputs.json lists a case of each.
    The JavaScript twin (``attention.js``) does not check its input: the labs give it only
    numbers that its ``coerce`` has put in range.  Where the shapes lab's core refuses the
    same case (``"all_masked"``, ``"mask"`` for a pad, ``"shape"`` for Xs), it uses these words.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _describe(value) -> str:
    text = repr(value)
    return f"{text[:40]}{'…' if len(text) > 40 else ''} ({type(value).__name__})"


def _refuse_masked(value, name: str) -> None:
    """A ``numpy.ma`` array with masked entries is refused, not read.

    ``np.asarray`` would silently take the hidden values underneath, and no guess is right:
    in X or a W a masked entry is a missing number (attention has no value for it), and as
    the attention mask the ``numpy.ma`` mask would mean "hidden data", not "may not read".
    A masked array with nothing masked is just its numbers and is accepted.
    """
    if isinstance(value, np.ma.MaskedArray) and np.ma.count_masked(value):
        hint = ("give an additive mask instead: np.where(m.mask, -np.inf, 0.0)" if name == "mask"
                else f"fill the missing values first, e.g. {name}.filled(0.0)")
        raise AttentionInputError(
            "masked", f"{name} is a numpy masked array with {np.ma.count_masked(value)} masked "
            f"entr{'y' if np.ma.count_masked(value) == 1 else 'ies'}; a masked entry has no number to "
            f"compute with, so it is refused rather than read as its hidden value: {hint}")


def _as_array(value, name: str) -> np.ndarray:
    """``value`` as an array: lists entry by entry (numpy would turn True into 1 and "1" into 1.0)."""
    _refuse_masked(value, name)
    if isinstance(value, np.ndarray):
        return np.asarray(value)
    try:
        return np.asarray(value, dtype=object)
    except ValueError:  # nested lists numpy cannot lay out as a table
        raise AttentionInputError("shape", f"{name} must be a rectangular table (rows of equal length)") from None


def as_matrix(value, name: str) -> np.ndarray:
    """Convert ``value`` to a finite 2-D float array or raise :class:`AttentionInputError`.

    Accepts nested lists/tuples of real numbers and real numeric arrays.  Refuses text
    (even ``"1"``), ``None``, booleans, complex numbers (their imaginary part would be
    lost), ragged rows, NaN and inf, whole numbers too large for a float (``10**400``), and
    ``numpy.ma`` arrays with masked entries (their hidden values are not the reader's numbers),
    and tables past :data:`MAX_POSITIONS` rows or :data:`MAX_WIDTH` columns (kind ``"size"``).
    """
    _precheck_length(value, name)
    raw = _as_array(value, name)
    if raw.dtype.kind == "O":
        raw = _object_table(raw, name)
    kind = raw.dtype.kind
    if kind == "c":
        raise AttentionInputError(
            "complex", f"{name} must hold real numbers; got complex values (the imaginary part would be lost)")
    if kind == "b":
        raise AttentionInputError("type", f"{name} must hold numbers, not True/False")
    if kind not in "iuf":
        raise AttentionInputError("type", f"{name} must be a table of numbers; got {_kind_name(raw)}")
    if raw.ndim != 2:
        raise AttentionInputError("shape", f"{name} must be 2-D (rows, columns); got shape {raw.shape}")
    if raw.shape[0] == 0 or raw.shape[1] == 0:
        raise AttentionInputError("shape", f"{name} must not be empty; got shape {raw.shape}")
    _check_table_size(raw.shape, name)
    array = raw.astype(float)
    if not np.all(np.isfinite(array)):
        raise AttentionInputError("nonfinite", f"{name} must hold finite numbers (no NaN or inf)")
    return array


def _kind_name(array: np.ndarray) -> str:
    if array.dtype.kind in "US":
        return f"text such as {str(array.flat[0])!r}" if array.size else "text"
    return f"{array.dtype.name} values"


def _object_table(raw: np.ndarray, name: str) -> np.ndarray:
    """A table of Python objects: every entry must be a real number (not bool, not text)."""
    if raw.ndim == 1 and raw.size and all(isinstance(r, (list, tuple, np.ndarray)) for r in raw):
        raise AttentionInputError("shape", f"{name} must be rectangular: its rows have different lengths "
                                  f"{[len(r) for r in raw]}")
    if raw.ndim == 2:
        _check_table_size(raw.shape, name)
    elif raw.size > MAX_CELLS:
        _check_cells(raw.size, "cells", name, name)
    for index, item in np.ndenumerate(raw):
        where = f"{name}[{', '.join(map(str, index))}]"
        if isinstance(item, (bool, np.bool_)):
            raise AttentionInputError("type", f"{name} must hold numbers, not True/False: {where} is {item!r}")
        if isinstance(item, (complex, np.complexfloating)):
            raise AttentionInputError("complex", f"{name} must hold real numbers; {where} is complex {item!r}")
        if not isinstance(item, (int, float, np.integer, np.floating)):
            raise AttentionInputError("type", f"{name} must be a table of numbers; {where} is {_describe(item)}")
        _check_int_fits(item, where)
    return raw.astype(float)


def _check_int_fits(item, where: str) -> None:
    """A Python int beyond the largest float (10**400) is refused by name (float() would raise OverflowError)."""
    if isinstance(item, int) and abs(item) > _INT_FLOAT_MAX:
        raise AttentionInputError(
            "overflow", f"{where} is too large for a float: about {_int_size(item)}, beyond the largest "
            "float 1.8e+308; use smaller inputs")


#: The largest float as an int: ints beyond it cannot be converted.
_INT_FLOAT_MAX = int(np.finfo(float).max)


def _int_size(item: int) -> str:
    """``10**400`` -> ``"1e+400"`` (from its digits: it has no float)."""
    digits = str(abs(item))
    return f"{'-' if item < 0 else ''}{digits[0]}e+{len(digits) - 1}"


def causal_mask(n: int, m: int | None = None, diagonal: int = 0) -> np.ndarray:
    """Additive causal mask ``M`` of shape (n, m): 0 on and below the diagonal, -inf above.

    Query i may read keys 0..i+diagonal ("itself and the positions before it"), as
    ``torch.tril(ones(n, m), diagonal)``.  ``diagonal=m - n`` aligns it bottom-right, as a KV
    cache needs when the n newest queries read all m keys (see :func:`general_attention`).

    ``n``, ``m``: whole numbers from 1 to :data:`MAX_POSITIONS`; ``diagonal`` a whole number.

    >>> causal_mask(1, 3, diagonal=2).tolist()
    [[0.0, 0.0, 0.0]]
    """
    n = _check_count(n, "n", MAX_POSITIONS)
    m = n if m is None else _check_count(m, "m", MAX_POSITIONS)
    if isinstance(diagonal, (bool, np.bool_)) or not isinstance(diagonal, (int, np.integer)):
        raise AttentionInputError("mask", f"diagonal must be a whole number; got {_describe(diagonal)}")
    allowed = np.tril(np.ones((n, m), dtype=bool), k=diagonal)
    return np.where(allowed, 0.0, -np.inf)


def padding_mask(n: int, m: int, pad: int) -> np.ndarray:
    """Additive padding mask (n, m): the last ``pad`` keys are -inf for every query.

    As PyTorch's ``key_padding_mask`` (True = padded) for one sequence whose last ``pad``
    positions are filler.  ``0 <= pad < m``: at least one key stays readable.

    >>> padding_mask(2, 3, 1).tolist()
    [[0.0, 0.0, -inf], [0.0, 0.0, -inf]]
    """
    n, m = _check_count(n, "n", MAX_POSITIONS), _check_count(m, "m", MAX_POSITIONS)
    if isinstance(pad, (bool, np.bool_)) or not isinstance(pad, (int, np.integer)) or not 0 <= pad < m:
        raise AttentionInputError("mask", f"pad must be a whole number from 0 to {m - 1} (m = {m}); got {_describe(pad)}")
    M = np.zeros((n, m))
    M[:, m - int(pad):] = -np.inf if pad else 0.0
    return M


def softmax(scores, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracts each row's maximum before exponentiating, so scores of +-1e6 give
    no overflow.  ``-inf`` entries get exactly 0.  A row whose entries are all
    ``-inf`` (nothing may be read) raises ``ValueError`` instead of giving NaN.
    At most :data:`MAX_CELLS` scores (kind ``"size"`` beyond).
    """
    scores = _check_scores(scores)
    if scores.ndim == 0 or scores.size == 0:
        raise AttentionInputError(
            "shape", f"softmax: scores must be a non-empty table (a row or rows of numbers); got shape {scores.shape}")
    try:
        row_max = np.max(scores, axis=axis, keepdims=True)
    except np.exceptions.AxisError:
        raise AttentionInputError(
            "shape", f"softmax: axis {axis!r} does not exist for scores of shape {scores.shape}") from None
    if np.isneginf(row_max).any():
        raise AttentionInputError(
            "all_masked", "softmax: a row has every position masked (-inf), so there is nothing to read"
        )
    exps = np.exp(scores - row_max)
    return exps / np.sum(exps, axis=axis, keepdims=True)


@dataclass(frozen=True, eq=False)  # eq would compare arrays (ambiguous truth)
class SoftmaxSteps:
    """The softmax of one row of scores, step by step (fields in the chapter's order).

    ``scores`` the row itself; ``shifted`` the row minus its maximum; ``exps`` the
    exponentials (0 where a score is ``-inf``); ``total`` their sum; ``shares``
    ``exps / total``.
    """

    scores: np.ndarray
    shifted: np.ndarray
    exps: np.ndarray
    total: float
    shares: np.ndarray


def softmax_steps(scores) -> SoftmaxSteps:
    """Spell out softmax on a 1-D row of scores, as the chapter does by hand.

    >>> steps = softmax_steps([0.0, 0.0])
    >>> steps.shares.tolist()
    [0.5, 0.5]
    """
    if isinstance(scores, (list, tuple)) and len(scores) > MAX_CELLS:
        _check_cells(len(scores), "cells", "scores", "softmax_steps: scores")
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1:
        raise AttentionInputError("shape", f"softmax_steps takes one row of scores; got shape {scores.shape}")
    shares = softmax(scores)  # refuses NaN, +inf and a row with nothing to read
    shifted = scores - np.max(scores)
    exps = np.exp(shifted)
    return SoftmaxSteps(scores=scores, shifted=shifted, exps=exps, total=float(np.sum(exps)), shares=shares)


def _check_scores(scores) -> np.ndarray:
    """Scores as a float array: real numbers or -inf (masked); no NaN, no +inf."""
    _refuse_masked(scores, "scores")
    if isinstance(scores, (list, tuple)) and len(scores) > MAX_CELLS:
        _check_cells(len(scores), "cells", "scores", "softmax: scores")
    try:
        array = np.asarray(scores)
    except ValueError:  # ragged rows
        raise AttentionInputError("shape", "softmax: scores must be a rectangular table (rows of equal length)") from None
    _check_cells(array.size, "cells", "scores", "softmax: scores")
    if array.dtype.kind == "O" and array.size:
        array = _object_table(array, "scores")
    if array.dtype.kind == "c":
        raise AttentionInputError("complex", "softmax: scores must be real numbers; got complex values")
    if array.dtype.kind not in "iuf":
        raise AttentionInputError("type", f"softmax: scores must be numbers; got {_kind_name(array)}")
    array = array.astype(float)
    if np.isnan(array).any():
        raise AttentionInputError("nonfinite", "softmax received NaN scores")
    if np.isposinf(array).any():
        raise AttentionInputError("overflow", "scores overflow: softmax received +inf scores")
    return array


def _check_d_k(d_k, width: int) -> float:
    if d_k is None:
        return float(width)
    if isinstance(d_k, (bool, np.bool_)) or not isinstance(d_k, (int, float, np.integer, np.floating)):
        raise AttentionInputError("d_k", f"d_k must be a positive number; got {_describe(d_k)}")
    if isinstance(d_k, int) and abs(d_k) > _INT_FLOAT_MAX:
        raise AttentionInputError(
            "d_k", f"d_k must be a positive number no larger than the largest float 1.8e+308; got about {_int_size(d_k)}")
    d_k = float(d_k)
    if not np.isfinite(d_k) or d_k <= 0:
        raise AttentionInputError("d_k", f"d_k must be a positive number; got {d_k!r}")
    return d_k


def _check_causal(causal) -> bool:
    if not isinstance(causal, (bool, np.bool_)):
        raise AttentionInputError(
            "causal", f"causal must be True or False; got {_describe(causal)}")
    return bool(causal)


def _check_mask(mask, n: int, m: int, Q, K) -> np.ndarray:
    """A user's additive mask: numbers, 0 where a query may read a key, -inf where not.

    Boolean masks are refused: PyTorch reads them two opposite ways
    (``F.scaled_dot_product_attention``: True = may attend;
    ``nn.MultiheadAttention``: True = masked), so a guess would be wrong half the time.
    Convert one explicitly, e.g. ``np.where(allowed, 0.0, -np.inf)``.
    """
    user = _as_array(mask, "mask")
    if user.dtype.kind == "O" and user.ndim == 1 and user.size and all(
            isinstance(r, (list, tuple, np.ndarray)) for r in user):
        raise AttentionInputError("shape", f"mask must have shape ({n}, {m}) for Q {Q.shape} and K {K.shape}; "
                                  f"its rows have different lengths {[len(r) for r in user]}")
    if user.dtype.kind == "O" and all(isinstance(v, (bool, np.bool_)) for v in user.flat) and user.size:
        user = user.astype(bool)
    if user.dtype.kind == "b":
        raise AttentionInputError(
            "mask", "mask is boolean; PyTorch reads True as 'may attend' in scaled_dot_product_attention "
            "but as 'masked' in nn.MultiheadAttention, so give an additive mask instead: "
            "np.where(allowed, 0.0, -np.inf)")
    if user.dtype.kind == "O":
        try:
            user = _object_table(user, "mask") if user.ndim == 2 else user.astype(float)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, AttentionInputError):
                raise AttentionInputError("mask", str(exc)) from None
            raise AttentionInputError("mask", f"mask must be a table of numbers: {exc}") from None
    if user.dtype.kind not in "iuf":
        raise AttentionInputError("mask", f"mask must be a table of numbers (0 or -inf); got {_kind_name(user)}")
    if user.shape != (n, m):
        raise AttentionInputError(
            "shape", f"mask must have shape ({n}, {m}) for Q {Q.shape} and K {K.shape}; got {user.shape}")
    user = user.astype(float)
    if np.isnan(user).any() or np.isposinf(user).any():
        raise AttentionInputError("mask", "mask may hold only finite numbers or -inf")
    return user


def _check_overflow(table: np.ndarray, what: str, left: np.ndarray, right: np.ndarray,
                    allowed: np.ndarray | None = None, scale: float = 1.0) -> None:
    """Raise "overflow" if ``table`` (= left @ right / scale) left the floats where it should not.

    The message names the size the values would have had: about 10**e, where e is the
    largest log10 |left[i, c] * right[c, j]| / scale (computed in logs, so it never overflows).
    """
    bad = ~np.isfinite(table) if allowed is None else (~np.isfinite(table) & allowed)
    if not bad.any():
        return
    with np.errstate(divide="ignore"):
        # max over i, c, j of log|left[i, c]| + log|right[c, j]|, column by column: no (n, d, m) table.
        logs = np.max(np.log10(np.abs(left)), axis=0) + np.max(np.log10(np.abs(right)), axis=1)
    exponent = float(np.max(logs)) - float(np.log10(scale))
    size = f"about 1e+{int(np.floor(exponent))}" if np.isfinite(exponent) and exponent >= 300 else "beyond ±1.8e+308"
    raise AttentionInputError(
        "overflow", f"{what} would reach {size}, beyond the largest float 1.8e+308; use smaller inputs")


def _mix(A: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``O = A @ V``, kept finite where the exact answer is finite.

    Each row of A is ≥ 0 and sums to 1, so each O[i, c] is a weighted average of column c
    of V: it lies between that column's smallest and largest entry and can never exceed
    the largest float.  Only rounding can carry a sum of huge products past it (V full of
    1.79e+308 gave inf).  Then the product is taken on V scaled by a power of two (exact)
    and brought back into the column's range, which only undoes rounding.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        O = A @ V
    if np.all(np.isfinite(O)):
        return O
    exponent = int(np.frexp(np.max(np.abs(V)))[1])  # max |V| < 2**exponent
    with np.errstate(over="ignore", invalid="ignore"):
        O = np.clip(np.ldexp(A @ np.ldexp(V, -exponent), exponent), V.min(axis=0), V.max(axis=0))
    if not np.all(np.isfinite(O)):  # cannot happen for a finite V (kept as a guard: never return inf)
        raise AttentionInputError("overflow", "O overflows: O = A·V left the float range; use smaller inputs")
    return O


def scaled_dot_product_attention(Q, K, V, d_k=None, mask=None, causal: bool = False) -> AttentionResult:
    """The general single-head form on already projected tables.

    ``Q: (n, d_k)``, ``K: (m, d_k)``, ``V: (m, d_v)``; ``d_v`` need not equal
    ``d_k`` and ``n`` need not equal ``m`` (cross-attention).  ``mask`` is an
    optional additive ``(n, m)`` table of 0 / -inf (a boolean mask is refused:
    PyTorch reads True two opposite ways); ``causal=True`` adds
    :func:`causal_mask`.  ``d_k=None`` means the width of Q.  Bad input raises
    :class:`AttentionInputError`, e.g. "scores overflow" with the size.
    """
    Q = as_matrix(Q, "Q")
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    n, width = Q.shape
    m = K.shape[0]
    if K.shape[1] != width:
        raise AttentionInputError(
            "shape", f"Q and K must have the same width to take dot products: "
            f"Q is {Q.shape}, K is {K.shape}"
        )
    if V.shape[0] != m:
        raise AttentionInputError(
            "shape", f"K and V must have one row per readable position: K is {K.shape}, V is {V.shape}"
        )
    d_k = _check_d_k(d_k, width)
    _check_cells(n * m, "scores", "S", f"S ({n}, {m})")
    M = np.zeros((n, m))
    if mask is not None:
        M = M + _check_mask(mask, n, m, Q, K)
    if _check_causal(causal):
        M = M + causal_mask(n, m)
    with np.errstate(over="ignore", invalid="ignore"):
        S = Q @ K.T / np.sqrt(d_k) + M
    _check_overflow(S, "scores overflow: S = Q·Kᵀ/√d_k", Q, K.T, np.isfinite(M), np.sqrt(d_k))
    A = softmax(S, axis=-1)
    O = _mix(A, V)
    return AttentionResult(Q=Q, K=K, V=V, M=M, S=S, A=A, O=O, d_k=d_k)


def attention(X, Wq, Wk, Wv, d_k=None, causal: bool = True) -> AttentionResult:
    """Self-attention of one head: project X three ways, score, share, mix.

    ``X: (n, d_model)``, ``Wq, Wk: (d_model, d_k)``, ``Wv: (d_model, d_v)``.
    Returns an :class:`AttentionResult` with ``Q, K, V, S, A, O``.
    ``causal=True`` (the chapter's reading rule) lets position i read 0..i.

    >>> r = attention(**baseline())
    >>> r.O[1].round(4).tolist()
    [6.6976, 6.6048]
    """
    X = as_matrix(X, "X")
    Wq = as_matrix(Wq, "Wq")
    Wk = as_matrix(Wk, "Wk")
    Wv = as_matrix(Wv, "Wv")
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != d_model:
            raise AttentionInputError(
                "shape", f"{name} must have one row per feature of X: X is {X.shape}, {name} is {W.shape}"
            )
    if Wq.shape[1] != Wk.shape[1]:
        raise AttentionInputError(
            "shape", f"Wq and Wk must give Query and Key the same width: Wq is {Wq.shape}, Wk is {Wk.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        Q, K, V = X @ Wq, X @ Wk, X @ Wv
    for name, W, table in (("Q", Wq, Q), ("K", Wk, K), ("V", Wv, V)):
        _check_overflow(table, f"{name} overflows: {name} = X·W{name.lower()}", X, W)
    return scaled_dot_product_attention(Q, K, V, d_k=d_k, causal=_check_causal(causal))


def general_attention(X, Wq, Wk, Wv, source=None, causal: bool = False, pad: int = 0) -> AttentionResult:
    """One head, self or cross, with the shapes lab's masks.

    ``X: (n, d_model)`` gives the queries ``Q = X @ Wq``; the keys and values come from
    ``source: (m, d_model)`` (cross-attention: ``K = source @ Wk``, ``V = source @ Wv``), or
    from X itself when ``source`` is None (self-attention, m = n).  ``Wq, Wk: (d_model, d_k)``,
    ``Wv: (d_model, d_v)``; the scores are divided by √d_k of the real width.  ``causal``
    aligns bottom-right (``diagonal = m - n``: the last query reads every key, as with a KV
    cache; for m = n the usual triangle); ``pad`` masks the last ``pad`` keys for every query.

    >>> r = general_attention(np.ones((3, 2)), np.eye(2), np.eye(2), np.ones((2, 3)), source=np.ones((4, 2)), pad=1)
    >>> r.A.shape, r.O.shape, r.A[0].round(4).tolist()
    ((3, 4), (3, 3), [0.3333, 0.3333, 0.3333, 0.0])
    """
    X = as_matrix(X, "X")
    source = X if source is None else as_matrix(source, "Xs")
    Wq, Wk, Wv = as_matrix(Wq, "Wq"), as_matrix(Wk, "Wk"), as_matrix(Wv, "Wv")
    if source.shape[1] != X.shape[1]:
        raise AttentionInputError(
            "shape", f"Xs must have as many features as X: X is {X.shape}, Xs is {source.shape}")
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != X.shape[1]:
            raise AttentionInputError(
                "shape", f"{name} must have one row per feature of X: X is {X.shape}, {name} is {W.shape}")
    n, m = X.shape[0], source.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        Q, K, V = X @ Wq, source @ Wk, source @ Wv
    for name, left, W, table in (("Q", X, Wq, Q), ("K", source, Wk, K), ("V", source, Wv, V)):
        _check_overflow(table, f"{name} overflows: {name} = X·W{name.lower()}", left, W)
    mask = padding_mask(n, m, pad)
    if _check_causal(causal):
        mask = mask + causal_mask(n, m, diagonal=m - n)
    return scaled_dot_product_attention(Q, K, V, mask=mask)


@dataclass(frozen=True, eq=False)  # eq would compare arrays (ambiguous truth)
class MultiHeadResult:
    """Every table of one multi-head computation (:func:`multi_head_attention`).

    Shapes, for n queries, m keys, h heads of widths d_k (queries, keys) and d_v (values):
    ``Q (n, h·d_k)``, ``K (m, h·d_k)``, ``V (m, h·d_v)``: the projected tables, the heads' columns
    side by side (head t: columns t·d_k … (t+1)·d_k − 1, t·d_v … for V);
    ``heads``: one :class:`AttentionResult` per head, on its slices (its own ``Q, K, V, M, S, A, O``);
    ``O (n, h·d_v)``: the heads' outputs concatenated; ``Y (n, d_model) = O @ Wo``, or None
    without ``Wo``.  ``S`` and ``A`` stack the heads' tables, ``(h, n, m)``, as PyTorch's
    ``nn.MultiheadAttention(..., average_attn_weights=False)`` returns its weights.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    heads: tuple
    O: np.ndarray
    Y: np.ndarray | None
    Wo: np.ndarray | None

    @property
    def h(self) -> int:
        return len(self.heads)

    @property
    def d_k(self) -> float:
        return self.heads[0].d_k

    @property
    def M(self) -> np.ndarray:
        """The mask, the same for every head, (n, m)."""
        return self.heads[0].M

    @property
    def S(self) -> np.ndarray:
        return np.stack([r.S for r in self.heads])

    @property
    def A(self) -> np.ndarray:
        return np.stack([r.A for r in self.heads])


def multi_head_attention(X, Wq, Wk, Wv, Wo=None, h: int = 1, source=None, causal: bool = False,
                         pad: int = 0) -> MultiHeadResult:
    """h heads side by side, joined by ``Wo``: PyTorch's ``nn.MultiheadAttention`` convention.

    ``X: (n, d_model)``; ``Wq, Wk: (d_model, h·d_k)``, ``Wv: (d_model, h·d_v)``, ``Wo: (h·d_v,
    d_model)`` (or None: no projection, ``Y`` is None).  Head t is :func:`general_attention` on
    columns t·d_k … (t+1)·d_k − 1 of Wq and Wk and t·d_v … of Wv, so
    ``O_t = softmax(Q_t K_tᵀ / √d_k + M) V_t``, with the same ``source`` (cross), ``causal`` and
    ``pad`` for every head; ``O = concat(O_0 … O_{h−1})`` and ``Y = O @ Wo``.  Unlike PyTorch,
    h·d_k need not equal d_model: only the heads' widths must divide the tables' widths.

    >>> r = multi_head_attention(np.eye(2), np.zeros((2, 2)), np.zeros((2, 2)), np.eye(2), Wo=np.eye(2), h=2)
    >>> r.A.shape, r.O.shape, r.Y.tolist()
    ((2, 2, 2), (2, 2), [[0.5, 0.5], [0.5, 0.5]])
    """
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)) or h < 1:
        raise AttentionInputError("shape", f"h (the number of heads) must be a whole number from 1 up; got {_describe(h)}")
    h = int(h)
    if h > MAX_WIDTH:
        raise _size_error("count", "h", h, MAX_WIDTH, f"h = {h} heads; at most {MAX_WIDTH} (attention_lab.core.MAX_WIDTH)")
    X = as_matrix(X, "X")
    Wq, Wk, Wv = as_matrix(Wq, "Wq"), as_matrix(Wk, "Wk"), as_matrix(Wv, "Wv")
    if Wq.shape[1] != Wk.shape[1]:
        raise AttentionInputError(
            "shape", f"Wq and Wk must give Query and Key the same width: Wq is {Wq.shape}, Wk is {Wk.shape}")
    for name, W, width in (("Wq", Wq, "d_k"), ("Wv", Wv, "d_v")):
        if W.shape[1] % h:
            raise AttentionInputError(
                "shape", f"{name} must have h·{width} columns (h = {h} heads of equal width): {name} is {W.shape}")
    d_k, d_v = Wq.shape[1] // h, Wv.shape[1] // h
    m = X.shape[0] if source is None else as_matrix(source, "Xs").shape[0]
    _check_cells(h * X.shape[0] * m, "heads_cells", "S", f"the {h} heads' S ({h}, {X.shape[0]}, {m})")
    heads = tuple(general_attention(X, Wq[:, t * d_k:(t + 1) * d_k], Wk[:, t * d_k:(t + 1) * d_k],
                                    Wv[:, t * d_v:(t + 1) * d_v], source=source, causal=causal, pad=pad)
                  for t in range(h))
    Q, K, V, O = (np.concatenate([getattr(r, name) for r in heads], axis=1) for name in "QKVO")
    Y = None
    if Wo is not None:
        Wo = as_matrix(Wo, "Wo")
        if Wo.shape != (h * d_v, X.shape[1]):
            raise AttentionInputError(
                "shape", f"Wo must be (h·d_v, d_model) = ({h * d_v}, {X.shape[1]}) to bring the {h} heads' "
                f"outputs back to X's width; got {Wo.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            Y = O @ Wo
        _check_overflow(Y, "Y overflows: Y = O·Wo", O, Wo)
    return MultiHeadResult(Q=Q, K=K, V=V, heads=heads, O=O, Y=Y, Wo=Wo)

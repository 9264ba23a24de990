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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "AttentionResult",
    "BASELINE",
    "CONTRASTS",
    "TOKENS",
    "as_matrix",
    "attention",
    "baseline",
    "causal_mask",
    "scaled_dot_product_attention",
    "softmax",
]

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


def as_matrix(value, name: str) -> np.ndarray:
    """Convert ``value`` to a finite 2-D float array or raise ``ValueError``."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a table of numbers: {exc}") from None
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows, columns); got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must not be empty; got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must hold finite numbers (no NaN or inf)")
    return array


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Additive causal mask ``M`` of shape (n, m): 0 on and below the diagonal, -inf above.

    Query i may read keys 0..i ("itself and the positions before it").
    """
    m = n if m is None else m
    if n < 1 or m < 1:
        raise ValueError(f"mask shape must be positive; got ({n}, {m})")
    allowed = np.tril(np.ones((n, m), dtype=bool))
    return np.where(allowed, 0.0, -np.inf)


def softmax(scores, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracts each row's maximum before exponentiating, so scores of +-1e6 give
    no overflow.  ``-inf`` entries get exactly 0.  A row whose entries are all
    ``-inf`` (nothing may be read) raises ``ValueError`` instead of giving NaN.
    """
    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        raise ValueError("softmax received NaN scores")
    if np.isposinf(scores).any():
        raise ValueError("softmax received +inf scores")
    row_max = np.max(scores, axis=axis, keepdims=True)
    if np.isneginf(row_max).any():
        raise ValueError(
            "softmax: a row has every position masked (-inf), so there is nothing to read"
        )
    exps = np.exp(scores - row_max)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def _check_d_k(d_k, width: int) -> float:
    if d_k is None:
        return float(width)
    try:
        d_k = float(d_k)
    except (TypeError, ValueError):
        raise ValueError(f"d_k must be a positive number; got {d_k!r}") from None
    if not np.isfinite(d_k) or d_k <= 0:
        raise ValueError(f"d_k must be a positive number; got {d_k!r}")
    return d_k


def scaled_dot_product_attention(Q, K, V, d_k=None, mask=None, causal: bool = False) -> AttentionResult:
    """The general single-head form on already projected tables.

    ``Q: (n, d_k)``, ``K: (m, d_k)``, ``V: (m, d_v)``; ``d_v`` need not equal
    ``d_k`` and ``n`` need not equal ``m`` (cross-attention).  ``mask`` is an
    optional additive ``(n, m)`` table of 0 / -inf; ``causal=True`` adds
    :func:`causal_mask`.  ``d_k=None`` means the width of Q.
    """
    Q = as_matrix(Q, "Q")
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    n, width = Q.shape
    m = K.shape[0]
    if K.shape[1] != width:
        raise ValueError(
            f"Q and K must have the same width to take dot products: "
            f"Q is {Q.shape}, K is {K.shape}"
        )
    if V.shape[0] != m:
        raise ValueError(
            f"K and V must have one row per readable position: K is {K.shape}, V is {V.shape}"
        )
    d_k = _check_d_k(d_k, width)
    M = np.zeros((n, m))
    if mask is not None:
        user = np.asarray(mask, dtype=float)
        if user.shape != (n, m):
            raise ValueError(f"mask must have shape ({n}, {m}) for Q {Q.shape} and K {K.shape}; got {user.shape}")
        if np.isnan(user).any() or np.isposinf(user).any():
            raise ValueError("mask may hold only finite numbers or -inf")
        M = M + user
    if causal:
        M = M + causal_mask(n, m)
    S = Q @ K.T / np.sqrt(d_k) + M
    A = softmax(S, axis=-1)
    O = A @ V
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
            raise ValueError(
                f"{name} must have one row per feature of X: X is {X.shape}, {name} is {W.shape}"
            )
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError(
            f"Wq and Wk must give Query and Key the same width: Wq is {Wq.shape}, Wk is {Wk.shape}"
        )
    return scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, d_k=d_k, causal=causal)

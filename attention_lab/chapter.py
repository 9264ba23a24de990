"""Small helpers that chapter F11 shows, and that ``scripts/verify_concepts.py`` re-uses.

Pure numpy on top of :mod:`attention_lab.core` (which holds the mathematics);
nothing here draws or keeps state.  The chapter calls these functions in its
executed cells, so the examples on the page and the numbers the checker
recomputes come from the same definitions.
"""

from __future__ import annotations

import numpy as np

from .core import AttentionResult, attention, baseline, scaled_dot_product_attention

__all__ = [
    "CROSS_EXAMPLE",
    "SoftmaxSteps",
    "compare_tables",
    "cross_attention_example",
    "softmax_steps",
]

#: The chapter's cross-attention example: 3 queries (from another sequence, e.g. a
#: target side being generated) read 2 positions whose Key and Value come from the
#: source sequence.  ``Q: (n=3, d_k=2)``, ``K: (m=2, d_k=2)``, ``V: (m=2, d_v=3)``.
#: K is the chapter's baseline K, so the keys are the familiar 我/爱 rows.
CROSS_EXAMPLE = {
    "Q": ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0)),
    "K": ((1.0, 0.0), (0.0, 1.0)),
    "V": ((10.0, 0.0, 1.0), (0.0, 20.0, 1.0)),
}


def cross_attention_example() -> AttentionResult:
    """Run :data:`CROSS_EXAMPLE` through the general form (no mask, n != m, d_v != d_k)."""
    tables = {name: np.array(value, dtype=float) for name, value in CROSS_EXAMPLE.items()}
    return scaled_dot_product_attention(tables["Q"], tables["K"], tables["V"])


class SoftmaxSteps(dict):
    """The softmax of one row of scores, step by step (keys in the chapter's order).

    ``scores`` the row itself; ``shifted`` the row minus its maximum; ``exps`` the
    exponentials (0 where a score is ``-inf``); ``total`` their sum; ``shares``
    ``exps / total``.
    """

    __getattr__ = dict.__getitem__


def softmax_steps(scores) -> SoftmaxSteps:
    """Spell out softmax on a 1-D row of scores, as the chapter does by hand.

    >>> steps = softmax_steps([0.0, 0.0])
    >>> steps.shares.tolist()
    [0.5, 0.5]
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1:
        raise ValueError(f"softmax_steps takes one row of scores; got shape {scores.shape}")
    shifted = scores - np.max(scores)
    exps = np.exp(shifted)
    total = float(np.sum(exps))
    return SoftmaxSteps(scores=scores, shifted=shifted, exps=exps, total=total, shares=exps / total)


def compare_tables(before: AttentionResult, after: AttentionResult,
                   names=("Q", "K", "V", "S", "A", "O")) -> dict[str, bool]:
    """Which tables are unchanged (exactly equal, ``-inf`` included) between two runs.

    >>> r = attention(**baseline())
    >>> compare_tables(r, attention(**baseline("only_wv")))["A"]
    True
    """
    return {name: bool(np.array_equal(getattr(before, name), getattr(after, name))) for name in names}

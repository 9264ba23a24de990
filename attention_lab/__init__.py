"""attention_lab: the computation, figures and labs of chapter F11 (Attention 逐步计算).

``core`` is pure numpy; ``plotting`` draws; ``lab`` wires ipywidgets controls to
both.  Import the lab lazily so that ``import attention_lab`` needs no widgets.
"""

from .core import (
    BASELINE,
    CONTRASTS,
    TOKENS,
    AttentionInputError,
    AttentionResult,
    attention,
    baseline,
    causal_mask,
    scaled_dot_product_attention,
    softmax,
)

__all__ = [
    "AttentionInputError",
    "AttentionLab",
    "AttentionResult",
    "BASELINE",
    "CONTRASTS",
    "TOKENS",
    "attention",
    "baseline",
    "causal_mask",
    "scaled_dot_product_attention",
    "softmax",
]


def __getattr__(name):
    if name == "AttentionLab":
        from .lab import AttentionLab

        return AttentionLab
    raise AttributeError(f"module 'attention_lab' has no attribute {name!r}")

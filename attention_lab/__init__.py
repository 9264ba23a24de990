"""attention_lab: the computation, figures and labs of chapter F11 (Attention 逐步计算).

``core`` is pure numpy (the mathematics and its refusals); ``plotting`` and ``dataflow``
draw the figures (matplotlib); ``worked`` writes the hand computation's text; ``lab`` (and
``shapes_lab``) are the kernel labs: ipywidgets controls and, through ``widget``, the website's
own view (``static/attention-lab/``), which recomputes in the browser while the kernel keeps
``lab.result``.  The labs are imported lazily, so ``import attention_lab`` needs no widgets.
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

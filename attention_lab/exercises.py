"""Checks for the reader's own attention (``book/exercises.md``, 你来写).

Each ``check_*`` runs the reader's function on a few fixed cases and compares what it returns
with :func:`attention_lab.core.scaled_dot_product_attention`, head by head and sentence by
sentence.  It returns a :class:`Verdict`: ``ok``, the ``kinds`` of mistake found and one Chinese
sentence for each (``strings_zh.json``, section ``"exercises"``), shown as the check cell's output.

How a mistake is named: the cases are built so that the usual mistakes give different numbers
(n != m; d_k = 4 or 9, so that 1, √d_k, d_k and √d_model differ; masks that block a key and
leave one readable in every row and every column).  A wrong answer is compared with the core's
answer recomputed with known mistakes put in (:func:`answer_with`): no scaling, d_k instead of
√d_k, √d_model instead of the head's √d_k, ``scale=`` ignored or inverted, softmax along another
axis, no mask or its meaning reversed, heads split or merged by ``reshape`` alone, no heads at all.
The combination with the fewest mistakes that gives exactly what the reader's function gave is
named (a mistake may leave a row nothing to read: its NaN must then be where the reader's are).
Shapes are judged first (a transposed output, the shares ``A`` instead of ``O``, heads not merged
back), then the known mistakes, then NaN from anything else; one large-score case last catches a
softmax that does not subtract the row's maximum.

The torch checks need PyTorch 2.1 or newer (``scale=``); without it they say how to install it.
Nothing here needs a kernel, widgets or the book's build: the same checks run on the site's build,
in Binder and in a downloaded notebook.

>>> check_attention(lambda Q, K, V, M: None).kinds
('not_written',)
"""

from __future__ import annotations

import html
import itertools
import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

from .core import scaled_dot_product_attention
from .strings import fill, strings

__all__ = [
    "Verdict",
    "answer_with",
    "attention_cases",
    "check_attention",
    "check_multihead",
    "check_torch_attention",
    "check_torch_multihead",
    "multihead_cases",
    "torch_or_none",
]

#: Tolerance when comparing with the core (a float32 answer from torch still passes).
RTOL, ATOL = 1e-5, 1e-6


@dataclass(frozen=True, repr=False)
class Verdict:
    """What a check found: ``ok``, the kinds of mistake (``strings_zh.json`` keys) and the sentence.

    Its repr is the sentence itself, so a check cell shows it without quotes."""

    ok: bool
    kinds: tuple
    text: str

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's pretty printer
        p.text(self.text)

    def _repr_html_(self) -> str:
        """One paragraph, so a long sentence wraps (a text/plain output would not, on the site)."""
        state = "pass" if self.ok else "todo"
        return f'<p class="f11-check f11-check-{state}">{html.escape(self.text)}</p>'


@dataclass(frozen=True)
class Case:
    """One case a check runs: the reader's function gets ``Q, K, V, M`` (and ``h`` or ``d_k``)."""

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    M: np.ndarray
    h: int = 1          # heads (the multi-head checks)
    d_k: float | None = None  # the number under the root (the torch single-head check), else the head's width
    large: bool = False  # scores in the thousands: only a softmax that subtracts the maximum stays finite


# ------------------------------------------------------------------------------------ the cases

def _mask(rng, n: int, m: int) -> np.ndarray:
    """An additive (n, m) mask, 0 / -inf, with a readable and a blocked key in every row and column
    (so neither a softmax along the queries nor a reversed mask meets a row with nothing to read)."""
    while True:
        allowed = rng.random((n, m)) < 0.55
        if all(a.any() and not a.all() for a in (*allowed, *allowed.T)):
            return np.where(allowed, 0.0, -np.inf)


def attention_cases(d_k_under_root: bool = False) -> list[Case]:
    """The single-head cases: ``Q (n, d_k)``, ``K (m, d_k)``, ``V (m, d_v)``, ``M (n, m)``.

    n, m and d_v all differ (a transposed O, or A instead of O, has the wrong shape).  With
    ``d_k_under_root`` (the torch check) the second case's root is not Q's width, as with the
    lab's d_k slider; otherwise the last case has scores in the thousands.

    >>> [(c.Q.shape, c.K.shape, c.V.shape) for c in attention_cases()]
    [((3, 4), (4, 4), (4, 2)), ((2, 9), (5, 9), (5, 3)), ((2, 4), (3, 4), (3, 5))]
    """
    rng = np.random.default_rng(2811)
    cases = []
    for n, m, d_k, d_v in ((3, 4, 4, 2), (2, 5, 9, 3)):
        cases.append(Case(rng.normal(size=(n, d_k)), rng.normal(size=(m, d_k)), rng.normal(size=(m, d_v)),
                          _mask(rng, n, m)))
    if d_k_under_root:
        first, second = cases
        return [first, Case(second.Q, second.K, second.V, second.M, d_k=2.0)]
    # Scores in the thousands: exp overflows unless each row's maximum is subtracted first.
    n, m, d_k, d_v = 2, 3, 4, 5
    Q = 30 + rng.random((n, d_k)) * 10
    K = np.concatenate([30 + rng.random((m - 1, d_k)) * 10, rng.random((1, d_k))])
    cases.append(Case(Q, K, rng.normal(size=(m, d_v)), _mask(rng, n, m), large=True))
    return cases


def multihead_cases(unmasked: bool = True) -> list[Case]:
    """The multi-head cases: ``Q (batch, n, h·d_k)``, ``K (batch, m, h·d_k)``, ``V (batch, m, h·d_v)``,
    ``M (n, m)`` (the same mask for every sentence and head), and h.

    With ``unmasked``, a last case whose M blocks nothing: a key blocked in one head is blocked in
    all of them, so a softmax along the heads or the batch gives only NaN where M blocks something,
    and only this case tells those two mistakes apart.  (Not for the torch check: there a reversed
    mask would block every key of that case.)

    >>> [(c.Q.shape, c.K.shape, c.V.shape, c.h) for c in multihead_cases()]
    [((2, 3, 8), (2, 4, 8), (2, 4, 6), 2), ((3, 4, 8), (3, 5, 8), (3, 5, 4), 4), ((2, 2, 8), (2, 3, 8), (2, 3, 4), 2)]
    """
    rng = np.random.default_rng(2812)
    cases = []
    for batch, n, m, h, d_k, d_v in ((2, 3, 4, 2, 4, 3), (3, 4, 5, 4, 2, 1), (2, 2, 3, 2, 4, 2)):
        cases.append(Case(rng.normal(size=(batch, n, h * d_k)), rng.normal(size=(batch, m, h * d_k)),
                          rng.normal(size=(batch, m, h * d_v)), _mask(rng, n, m), h=h))
    last = cases.pop()
    if unmasked:
        cases.append(Case(last.Q, last.K, last.V, np.zeros_like(last.M), h=last.h))
    return cases


# ------------------------------------------------------------------ the right answer, and wrong ones

def core_answer(case: Case) -> np.ndarray:
    """The right output, from the core, one sentence and one head at a time (columns i·d_k ... of Q
    and K, i·d_v ... of V belong to head i), heads side by side: (n, d_v) or (batch, n, h·d_v)."""
    if case.Q.ndim == 2:
        return scaled_dot_product_attention(case.Q, case.K, case.V, d_k=case.d_k, mask=case.M).O
    h = case.h
    w, w_v = case.Q.shape[-1] // h, case.V.shape[-1] // h
    return np.stack([
        np.concatenate([scaled_dot_product_attention(
            Q[:, i * w:(i + 1) * w], K[:, i * w:(i + 1) * w], V[:, i * w_v:(i + 1) * w_v],
            d_k=case.d_k, mask=case.M).O for i in range(h)], axis=1)
        for Q, K, V in zip(case.Q, case.K, case.V)])


#: No mistake: what :func:`answer_with` computes then equals :func:`core_answer`.
RIGHT = {"scale": "right", "axis": "keys", "mask": "add", "split": "right", "merge": "right"}
#: softmax along: the keys (right), the queries, the heads, the sentences of the batch.
AXES = {"keys": -1, "queries": -2, "heads": 1, "batch": 0}


def answer_with(case: Case, scale="right", axis="keys", mask="add", split="right", merge="right") -> np.ndarray:
    """The output of attention computed with the given mistakes (``RIGHT``: none; then it equals the
    core's answer, which the tests check).

    ``scale``: ``"right"`` (÷√d_k), ``"none"``, ``"d_k"`` (÷d_k), ``"model"`` (÷√ of the full width),
    ``"width"`` (÷√ of the head's width: torch's default, wrong when d_k is not the width),
    ``"times"`` (×√d_k: ``scale=math.sqrt(d_k)``).  ``axis``: a key of :data:`AXES`.  ``mask``:
    ``"add"``, ``"none"``, ``"inverted"`` (blocked and readable swapped).  ``split``: ``"right"``
    (reshape to (batch, n, h, d) then swap n and h), ``"reshape"`` (straight to (batch, h, n, d)),
    ``"none"`` (one head over the full width).  ``merge``: ``"right"`` or ``"reshape"`` (no swap back).
    A softmax along the heads or the batch meets keys blocked in all of them: NaN there, as the
    reader's function gives.
    """
    single = case.Q.ndim == 2
    Q, K, V = (t[None] if single else t for t in (case.Q, case.K, case.V))
    batch, n, width = Q.shape
    heads = 1 if split == "none" else case.h
    d_k = case.d_k if case.d_k is not None else width / case.h

    def heads_of(T):  # (batch, rows, heads·d) -> (batch, heads, rows, d)
        b, rows, w = T.shape
        if split == "reshape":
            return T.reshape(b, heads, rows, w // heads)
        return T.reshape(b, rows, heads, w // heads).transpose(0, 2, 1, 3)

    q, k, v = heads_of(Q), heads_of(K), heads_of(V)
    root = {"right": math.sqrt(d_k), "none": 1.0, "d_k": d_k, "model": math.sqrt(width),
            "width": math.sqrt(q.shape[-1]), "times": 1.0 / math.sqrt(d_k)}[scale]
    S = q @ k.swapaxes(-1, -2) / root
    if mask == "add":
        S = S + case.M
    elif mask == "inverted":
        S = S + np.where(case.M == 0, -np.inf, 0.0)
    with np.errstate(invalid="ignore"):
        A = np.exp(S - S.max(axis=AXES[axis], keepdims=True))
        A = A / A.sum(axis=AXES[axis], keepdims=True)
        O = A @ v  # (batch, heads, n, d_v)
    if merge == "right":
        O = O.transpose(0, 2, 1, 3)
    O = O.reshape(batch, n, -1)
    return O[0] if single else O


#: The mistakes each check looks for (the first value of each is the right one).
SPACES = {
    "attention": {"scale": ("right", "none", "d_k"), "axis": ("keys", "queries"), "mask": ("add", "none")},
    "multihead": {"scale": ("right", "none", "d_k", "model"), "axis": ("keys", "queries", "heads", "batch"),
                  "mask": ("add", "none"), "split": ("right", "reshape", "none"), "merge": ("right", "reshape")},
    "torch_attention": {"scale": ("right", "width", "times", "none", "d_k"), "mask": ("add", "none", "inverted")},
    "torch_multihead": {"scale": ("right", "model", "times", "none"), "mask": ("add", "none", "inverted"),
                        "split": ("right", "reshape", "none"), "merge": ("right", "reshape")},
}

#: A mistake's kind (strings_zh.json "exercises" key) by (part, value).
FAULT_KINDS = {("scale", "none"): "no_scaling", ("scale", "d_k"): "scaled_by_d_k",
               ("scale", "model"): "scaled_by_d_model", ("scale", "width"): "scale_not_given",
               ("scale", "times"): "scale_inverted", ("axis", "queries"): "softmax_axis",
               ("axis", "heads"): "softmax_axis", ("axis", "batch"): "softmax_axis",
               ("mask", "none"): "no_mask", ("mask", "inverted"): "mask_inverted",
               ("split", "reshape"): "split_by_reshape", ("split", "none"): "no_heads",
               ("merge", "reshape"): "merge_by_reshape"}


def _combinations(space: dict):
    """Every combination of mistakes in ``space``, fewest mistakes first (the right one first)."""
    parts = list(space)
    combos = [dict(zip(parts, values)) for values in itertools.product(*(space[p] for p in parts))]
    # Without heads there is no merging, and no heads axis to take a softmax along.
    combos = [c for c in combos if not (c.get("split") == "none" and (c.get("merge", "right") != "right"
                                                                      or c.get("axis") == "heads"))]
    return sorted(combos, key=lambda c: sum(c[p] != space[p][0] for p in parts))


def _faults(combo: dict) -> list[tuple[str, str]]:
    """The (part, value) mistakes of a combination; without heads, dividing by the full width's root
    (or the head's) is part of the same mistake, not another one."""
    out = [(p, v) for p, v in combo.items() if v != RIGHT[p]]
    if combo.get("split") == "none":
        out = [(p, v) for p, v in out if not (p == "scale" and v == "model")]
    return out


# ----------------------------------------------------------------------------------- the sentences

_fill = fill  # the catalog's one filler (attention_lab.strings.fill)


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _number(x: float) -> str:
    if not np.isfinite(x):
        return str(x)
    return f"{x:.6g}"


#: Code the sentences quote, by library (not Chinese, so not in strings_zh.json).
CODE = {
    "numpy": {"split": "T.reshape(batch, n, h, -1).transpose(0, 2, 1, 3)",
              "merge": "O.transpose(0, 2, 1, 3).reshape(batch, n, -1)",
              "swap": "K.swapaxes(-1, -2)", "transpose_all": "K.T"},
    "torch": {"split": "T.view(batch, n, h, -1).transpose(1, 2)",
              "merge": "O.transpose(1, 2).reshape(batch, n, -1)",
              "swap": "K.transpose(-2, -1)", "transpose_all": "K.T"},
}


class _Talk:
    """The sentences of one exercise (``"attention"``, ``"multihead"``, ``"torch_attention"``,
    ``"torch_multihead"``) about the reader's function ``name``."""

    def __init__(self, name: str, exercise: str):
        self.s = strings()["exercises"]
        self.name = name
        self.library = "torch" if exercise.startswith("torch") else "numpy"
        self.words = {**CODE[self.library], **self.s["words"][exercise]}

    def say(self, key: str, **values) -> str:
        return _fill(self.s[key], name=self.name, **self.words, **values)

    def verdict(self, ok: bool, kinds, text: str) -> Verdict:
        return Verdict(ok, tuple(kinds), text)

    def fault(self, part: str, value: str) -> str:
        kind = FAULT_KINDS[(part, value)]
        if kind == "softmax_axis":
            return self.say(kind, axis=_fill(self.s["axes"][value], **self.words))
        return self.say(kind)

    def faults(self, found) -> Verdict:
        kinds = [FAULT_KINDS[f] for f in found]
        sentences = [self.fault(*f) for f in found]
        if len(sentences) == 1:
            return self.verdict(False, kinds, self.say("one", sentence=sentences[0]))
        listed = "".join(_fill(self.s["item"], k=k, sentence=s) for k, s in enumerate(sentences, 1))
        return self.verdict(False, kinds, self.say("several", count=len(sentences), list=listed))


def _describe_case(case: Case, k: int) -> str:
    s = strings()["exercises"]
    shapes = fill(s["case_shapes"], Q=_shape(case.Q.shape), K=_shape(case.K.shape), V=_shape(case.V.shape),
                  M=_shape(case.M.shape))
    if case.Q.ndim == 3:
        shapes += fill(s["case_heads"], h=case.h)
    if case.d_k is not None:
        shapes += fill(s["case_d_k"], d_k=_number(case.d_k))
    return fill(s["case"], k=k, shapes=shapes)


def _as_numbers(result):
    """The reader's result as a float array, or None if it is not a table of numbers."""
    if hasattr(result, "detach") and hasattr(result, "numpy"):  # a torch tensor
        result = result.detach().cpu().double().numpy()
    try:
        array = np.asarray(result, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if array.ndim >= 1 else None


def _shape_verdict(talk: _Talk, got: tuple, case: Case, want: tuple) -> Verdict:
    multi = case.Q.ndim == 3
    if got[:-2] + got[-2:][::-1] == want:
        return talk.verdict(False, ["shape_transposed"], talk.say("shape_transposed", got=_shape(got), want=_shape(want)))
    scores = want[:-1] + (case.K.shape[-2],)
    if multi:
        batch, n, _ = want
        unmerged = (batch, case.h, n, case.V.shape[-1] // case.h)
        if got == unmerged:
            return talk.verdict(False, ["shape_unmerged"], talk.say("shape_unmerged", got=_shape(got), want=_shape(want)))
        scores = (batch, case.h, n, case.K.shape[-2])
    if got == scores:
        return talk.verdict(False, ["shape_shares"], talk.say("shape_shares", got=_shape(got)))
    meaning = talk.s["meaning_multihead" if multi else "meaning_attention"]
    return talk.verdict(False, ["shape"], talk.say("shape", got=_shape(got), want=_shape(want), meaning=meaning))


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal within RTOL/ATOL, NaN where the other has NaN (a mistake that leaves a row nothing to read)."""
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True))


def _judge(fn, cases: list[Case], space: dict, talk: _Talk, call) -> Verdict:
    """Run ``fn`` on every case (``call(fn, case)``) and name what is wrong, if anything."""
    if not callable(fn):
        return talk.verdict(False, ["not_callable"], talk.say("not_callable", type=type(fn).__name__))
    results = []
    for k, case in enumerate(cases, 1):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the check says what went wrong, in one sentence
                result = call(fn, case)
        except Exception as exc:  # noqa: BLE001 - whatever the reader's code raises is reported
            message = (str(exc).strip().splitlines() or [""])[0][:200]
            text = talk.say("error", case=_describe_case(case, k), type=type(exc).__name__, message=message)
            if case.Q.ndim == 3 and re.search(r"matmul|mismatch|size of tensor", str(exc)) and talk.library == "numpy":
                text += talk.say("error_hint_transpose")
            return talk.verdict(False, ["error"], text)
        if result is None:
            return talk.verdict(False, ["not_written"], talk.say("not_written"))
        got = _as_numbers(result)
        if got is None:
            return talk.verdict(False, ["not_array"], talk.say("not_array", type=type(result).__name__))
        want = core_answer(case)
        if got.shape != want.shape:
            return _shape_verdict(talk, got.shape, case, want.shape)
        results.append(got)
    plain = [(case, got) for case, got in zip(cases, results) if not case.large]
    for combo in _combinations(space):  # a softmax along the heads meets a mask that blocks all of them: NaN too
        if all(_close(got, answer_with(case, **combo)) for case, got in plain):
            found = _faults({**RIGHT, **combo})
            if found:
                return talk.faults(found)
            break
    else:  # no known mistake (nor the right answer) gives these numbers
        for k, (case, got) in enumerate(zip(cases, results), 1):
            if not case.large and not np.all(np.isfinite(got)):
                return talk.verdict(False, ["nan"], talk.say("nan", case=_describe_case(case, k)))
        return _wrong_values(talk, cases, results)
    for k, (case, got) in enumerate(zip(cases, results), 1):
        if case.large:
            if not np.all(np.isfinite(got)):
                top = float(np.max(case.Q @ case.K.T) / math.sqrt(case.Q.shape[-1]))
                return talk.verdict(False, ["overflow"], talk.say("overflow", case=_describe_case(case, k),
                                                                  top=f"{top:.0f}"))
            if not _close(got, core_answer(case)):
                return _wrong_values(talk, cases, results)
    diff = max(float(np.max(np.abs(got - core_answer(case)))) for case, got in zip(cases, results))
    return talk.verdict(True, [], talk.say("pass", cases=len(cases), diff=f"{diff:.0e}" if diff else "0"))


def _wrong_values(talk: _Talk, cases, results) -> Verdict:
    for k, (case, got) in enumerate(zip(cases, results), 1):
        want = core_answer(case)
        bad = ~np.isclose(got, want, rtol=RTOL, atol=ATOL)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            cell = "O[" + ", ".join(map(str, index)) + "]"
            return talk.verdict(False, ["wrong_values"], talk.say(
                "wrong_values", case=_describe_case(case, k), cell=cell, want=_number(want[index]),
                got=_number(got[index])))
    raise AssertionError("no difference found")  # pragma: no cover - only called on a difference


# ------------------------------------------------------------------------------------- the checks

def check_attention(fn) -> Verdict:
    """Check the reader's ``fn(Q, K, V, M) -> O``: single-head scaled dot-product attention in numpy.

    ``Q (n, d_k)``, ``K (m, d_k)``, ``V (m, d_v)``, ``M (n, m)`` additive (0 = may read, -inf =
    blocked); ``O (n, d_v)``; the scores are divided by √d_k, d_k the width of Q.
    """
    talk = _Talk(getattr(fn, "__name__", "my_attention"), "attention")
    return _judge(fn, attention_cases(), SPACES["attention"], talk,
                  lambda f, c: f(c.Q.copy(), c.K.copy(), c.V.copy(), c.M.copy()))


def check_multihead(fn) -> Verdict:
    """Check the reader's ``fn(Q, K, V, M, h) -> O``: a batch of sentences, h heads, in numpy.

    ``Q (batch, n, h·d_k)``, ``K (batch, m, h·d_k)``, ``V (batch, m, h·d_v)``: the projections of
    all heads side by side (columns i·d_k ... (i+1)·d_k belong to head i); ``M (n, m)`` for every
    sentence and head; ``O (batch, n, h·d_v)``: the heads' outputs side by side, before W_o.
    """
    talk = _Talk(getattr(fn, "__name__", "my_multihead"), "multihead")
    return _judge(fn, multihead_cases(), SPACES["multihead"], talk,
                  lambda f, c: f(c.Q.copy(), c.K.copy(), c.V.copy(), c.M.copy(), c.h))


def torch_or_none():
    """``(torch, torch.nn.functional)``, or ``(None, None)`` where PyTorch is not installed."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None, None
    return torch, F


def _torch_missing(talk: _Talk):
    """A Verdict saying how to install PyTorch (2.1 or newer: ``scale=``), or None when it is there."""
    torch, _ = torch_or_none()
    if torch is None:
        return talk.verdict(False, ["no_torch"], talk.say("no_torch"))
    version = tuple(int(p) for p in re.findall(r"\d+", torch.__version__.split("+")[0])[:2])
    if version < (2, 1):
        return talk.verdict(False, ["old_torch"], talk.say("old_torch", version=torch.__version__))
    return None


def _tensors(c: Case):
    import torch

    return [torch.tensor(a, dtype=torch.float64) for a in (c.Q, c.K, c.V, c.M)]


def check_torch_attention(fn) -> Verdict:
    """Check the reader's ``fn(Q, K, V, M, d_k) -> O`` written with ``F.scaled_dot_product_attention``.

    As :func:`check_attention`, with torch tensors (float64), and ``d_k`` the number under the
    root, which need not be the width of Q (the lab's d_k slider): ``scale=`` is its business.
    """
    talk = _Talk(getattr(fn, "__name__", "torch_attention"), "torch_attention")
    return _torch_missing(talk) or _judge(fn, attention_cases(d_k_under_root=True), SPACES["torch_attention"], talk,
                                          lambda f, c: f(*_tensors(c), c.d_k if c.d_k is not None else
                                                            float(c.Q.shape[-1])))


def check_torch_multihead(fn) -> Verdict:
    """Check the reader's ``fn(Q, K, V, M, h) -> O``: :func:`check_multihead` with torch tensors and
    ``F.scaled_dot_product_attention`` on the heads, shaped (N, h, L, E) as it expects."""
    talk = _Talk(getattr(fn, "__name__", "torch_multihead"), "torch_multihead")
    return _torch_missing(talk) or _judge(fn, multihead_cases(unmasked=False), SPACES["torch_multihead"], talk,
                                          lambda f, c: f(*_tensors(c), c.h))

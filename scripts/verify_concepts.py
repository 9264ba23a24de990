#!/usr/bin/env python3
"""Recompute every number chapter F11 states, and fail naming any mismatch.

The step-by-step computation of the 爱 row is not typed: hidden cells print it with
``attention_lab.worked`` (``tests/test_chapter_worked.py`` holds the built page to that), so
nothing here reads it.  The chapter's other hand computations are typed in plain
``text`` code blocks, the way a reader would on paper::

    q₀ = x₀Wq = [1×0.5+1×(-0.5), 1×0.5+1×0.5] = [0,1]
    除以总和： [0.6697615493, 0.3302384507]

This script reads the chapter source and checks, against
``attention_lab.attention(**baseline())`` (the same code the chapter executes):

1. **Hand computations.**  Every statement in a ``text`` block is split at ``=``
   and ``≈``.  Each part that is plain arithmetic (digits, ``× + - / √ ∞``,
   brackets for rows and tables) is evaluated and must equal the stated result
   (the last such part) at the precision it is printed with.  When the statement
   names a quantity (``q₀``, ``q₁·k₀``, ``缩放分数``, ``S`` ...: see ``LABELS``),
   the stated result must also equal that quantity as computed by
   ``attention_lab``.  A rounded decimal inside an expression stands for the
   unrounded value it displays, as the chapter says ("以上数值使用未舍入结果继续计算").
2. **Every decimal.**  Each number with three or more decimals written anywhere
   in the chapter (text, tables, admonitions, code; glue roles excluded, since
   their values come from execution) must equal, at its printed precision, some
   quantity the chapter computes: the baseline, the two contrasts, the
   cross-attention example, the unscaled variant, and their softmax steps.
3. **Coverage.**  Each required quantity (q/k/v rows, raw and scaled scores,
   exponentials and their sum, shares, o₁, the Q/K/V/QKᵀ/M/S/A/O tables) is
   stated and checked at least once, and the seven ten-decimal values appear.
4. **Glue.**  Every ``{eval}`name_4d``` (or ``{glue:text}`name```) the prose uses is glued by a cell (or by the
   loop over ``attention_lab.chapter.chapter_numbers()``).
5. **Prose.**  Every number in the running text of ``book/*.md`` (the chapter, notation.md,
   index.md, lab.md; directive bodies such as dropdowns and tables included, code cells
   excluded) must be glued, or captured by a registered claim (``build_claims``: a pattern
   whose numbers are compared with values computed by attention_lab: ``$d_k=2$``,
   ``$x_0=[1, 1]$``, ``份额是 1``, shapes such as ``[3, 2]``, the identity table, "W_q 里的 0.5",
   the slider ranges of the lab ...), or be a year next to its citation, a self-check
   question number, or not a quantity (an ordinal such as 第 0 行, a list marker, a version).
   Anything else fails as "unchecked number", naming file and line.
6. **"=" and "≈".**  In hand computations "=" stands only where it is true as written:
   the printed numbers on its left give the printed result exactly (fractions, no
   floats), and a written-out value after it is not a rounding; otherwise the chapter
   writes "≈" (the rule of its rounding note and of the lab's worked text).

Usage::

    python scripts/verify_concepts.py [--chapter PATH] [--book DIR]

Prints what was checked and ``OK``; otherwise lists each mismatch with its line
number and exits with status 1.  It verifies the teaching arithmetic and its
premises, not that any real model has learned Chinese.
"""

from __future__ import annotations

import argparse
import ast
import math
import re
import sys
from fractions import Fraction
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from attention_lab import attention, baseline, softmax  # noqa: E402
from attention_lab.chapter import cross_attention_example, softmax_steps  # noqa: E402

DEFAULT_CHAPTER = ROOT / "book" / "f11-attention.md"
#: The chapter's role name: claims scoped to "f11-attention.md" apply to the chapter checked.
CHAPTER_NAME = "f11-attention.md"

#: The row the chapter computes by hand: position 1, "爱".
ROW = 1

#: The draft's ten-decimal values that stay typed (in the S, A, O tables).  The other two
#: (0.4930686914, 1.4930686914) are written by attention_lab.worked in the softmax stage.
TEN_DECIMALS = (
    "0.7071067812",
    "0.6697615493",
    "0.3302384507",
    "6.6976154933",
    "6.6047690135",
)


def _labels(r, tables) -> dict:
    """Name written in the chapter -> the baseline quantity it must equal."""
    X = tables["X"]
    labels = {
        "X": X, "x₀": X[0], "x₁": X[1],
        "Wq": tables["Wq"], "Wk": tables["Wk"], "Wv": tables["Wv"],
        "Q": r.Q, "K": r.K, "V": r.V, "M": r.M, "S": r.S, "A": r.A, "O": r.O,
        "QKᵀ": r.raw_scores,
        "份额": r.A[ROW],
        "√2": np.sqrt(2.0),
        "√d_k": np.float64(r.scale),
    }
    sub = "₀₁₂₃₄₅₆₇₈₉"
    for i in range(X.shape[0]):
        for name, table in (("q", r.Q), ("k", r.K), ("v", r.V), ("o", r.O)):
            labels[f"{name}{sub[i]}"] = table[i]
        for j in range(r.K.shape[0]):
            labels[f"q{sub[i]}·k{sub[j]}"] = r.raw_scores[i, j]
    return {name: np.asarray(value, dtype=float) for name, value in labels.items()}


#: Quantities that must be stated and checked in a typed hand-computation block (the 爱 row's
#: q·k, scaled scores, softmax steps and o₁ are written by attention_lab.worked instead).
REQUIRED_LABELS = (
    "q₀", "k₀", "v₀", "q₁", "k₁", "v₁",
    "Q", "K", "V", "QKᵀ", "M", "S", "A", "O",
)


def computed_cases() -> dict:
    """Every attention run the chapter shows (name -> AttentionResult)."""
    return {
        "基准": attention(**baseline()),
        "对照一 only_wv": attention(**baseline("only_wv")),
        "对照二 only_wq": attention(**baseline("only_wq")),
        "不缩放 d_k=1": attention(**baseline(), d_k=1),
        "交叉注意力": cross_attention_example(),
    }


def known_quantities(cases) -> list[tuple[float, str]]:
    """(absolute value, where it comes from) for every number the chapter computes."""
    known: list[tuple[float, str]] = []

    def add(values, where):
        for index, v in np.ndenumerate(np.asarray(values, dtype=float)):
            if np.isfinite(v):
                known.append((abs(float(v)), f"{where}{list(index) if index else ''}"))

    for name, value in baseline().items():
        add(value, f"基准 {name}")
    for case, r in cases.items():
        for t in ("Q", "K", "V", "S", "A", "O"):
            add(getattr(r, t), f"{case} {t}")
        add(r.raw_scores, f"{case} QKᵀ")
        add(r.scale, f"{case} √d_k")
        add(1.0 / r.scale, f"{case} 1/√d_k")
        for i in range(r.S.shape[0]):
            steps = softmax_steps(r.S[i])
            add(steps.shifted, f"{case} 第{i}行减最大值")
            add(steps.exps, f"{case} 第{i}行指数")
            add(steps.total, f"{case} 第{i}行指数之和")
    return known


# --------------------------------------------------------------------------- parsing

NUMBER = re.compile(r"(?<![\w.])(\d+\.\d{3,})(?!\d)")  # a decimal with >= 3 decimals
#: A number the prose takes from execution: ``{eval}`a10_4d``` (attention_lab.notebook.glue
#: publishes a10 formatted under a10, a10_4d, ...), or the older ``{glue:text}`a10:.4f```.
GLUE_ROLE = re.compile(r"\{(?:glue(?::\w+)?|eval)\}`[^`]*`")
#: The glued name inside such a role (the {eval} format suffix _<N>d dropped).
EVAL_ROLE = re.compile(r"\{eval\}`(\w+)`")
#: A comment in a hand block: two or more spaces, then something that is not arithmetic.
COMMENT = re.compile(r"\s{2,}(?=[^\s\d\[\](){}+\-−×*/.,√∞=≈]).*$")


@dataclass
class Statement:
    line: int
    text: str


@dataclass
class Report:
    mismatches: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=lambda: {"statements": 0, "equalities": 0,
                                                  "named": 0, "decimals": 0, "prose": 0})
    checked_labels: set = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)

    def fail(self, line: int | None, message: str) -> None:
        where = f"line {line}: " if line else ""
        self.mismatches.append(where + message)


def split_front_matter(lines: list[str]) -> int:
    """Index of the first line after a ``---`` YAML header (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return i + 1
    return 0


#: Block structure only (fences, lists): the inline rules are not needed and cost most of the parse.
_MARKDOWN = MarkdownIt("commonmark").disable("inline")
#: Fenced directives whose body is code, not Markdown (the others, ```{note} ..., hold prose).
CODE_DIRECTIVES = ("{code-cell}", "{literalinclude}", "{code-block}", "{code}")
#: Fence languages of code that is not a hand computation.
CODE_LANGUAGES = ("python", "bash", "console", "sh", "shell", "json", "javascript", "js", "html", "yaml")


@dataclass
class Fence:
    """A fenced block: ``info``; ``lines``: its opening and closing fence lines (0-based indices);
    ``body``: ``[(line number, raw text), ...]`` (1-based numbers, as the messages print them)."""
    info: str
    lines: tuple
    body: list


def fences(lines: list[str], start: int = 0) -> list[Fence]:
    return list(_fences("\n".join(lines), start))


@lru_cache(maxsize=64)
def _fences(text: str, start: int) -> tuple:
    """Every fenced block, from markdown-it's token stream of ``lines[start:]`` (front matter
    skipped).  A backtick directive (```{dropdown} ... ```) holds Markdown: the fences inside it
    are found too, by parsing its body in turn."""
    found: list[Fence] = []

    def walk(chunk: list[str], offset: int) -> None:
        for tok in _block_tokens("\n".join(chunk)):
            if tok.type != "fence" or tok.map is None:
                continue
            a, b = tok.map  # chunk[a] is the opening fence; b is one past the block
            last = chunk[b - 1].strip() if b - 1 > a else ""
            closed = bool(last) and last.startswith(tok.markup) and set(last) <= {tok.markup[0]}
            inner = chunk[a + 1:b - 1] if closed else chunk[a + 1:b]
            info = tok.info.strip()
            found.append(Fence(info, (offset + a, offset + b - 1 if closed else None),
                               [(offset + a + 2 + k, text) for k, text in enumerate(inner)]))
            if info.startswith("{") and not info.startswith(CODE_DIRECTIVES):
                walk(inner, offset + a + 1)

    lines = text.split("\n")
    walk(lines[start:], start)
    return tuple(sorted(found, key=lambda f: f.lines[0]))


@lru_cache(maxsize=64)
def _block_tokens(text: str) -> tuple:
    """markdown-it's block tokens of ``text``, parsed once (the fences and the list numbering read the
    same parse: a mutated page of the test harness is parsed once, not three times)."""
    return tuple(_MARKDOWN.parse(text))


def blocks(lines: list[str], start: int):
    """Yield (kind, info, [(line_no, text), ...]) for fenced blocks; kind 'hand' or 'code'."""
    for fence in fences(lines, start):
        yield ("hand" if fence.info in ("", "text", "none") else "code"), fence.info, fence.body


def statements(body) -> list[Statement]:
    """Join continuation lines (open brackets, or a line starting with = / ≈), split at ，；."""
    joined: list[Statement] = []
    for line_no, raw in body:
        text = COMMENT.sub("", raw.rstrip())
        stripped = text.strip()
        if not stripped:
            continue
        if joined and (stripped[0] in "=≈" or joined[-1].text.count("[") > joined[-1].text.count("]")):
            joined[-1].text += " " + stripped
        else:
            joined.append(Statement(line_no, stripped))
    out = []
    for st in joined:
        for piece in re.split(r"[，；]", st.text):
            if piece.strip():
                out.append(Statement(st.line, piece.strip()))
    return out


# ------------------------------------------------------------------------ arithmetic

def _decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def tolerance(decimals: int) -> float:
    """Half a unit in the last printed place; integers must be exact."""
    return 0.5 * 10.0 ** -decimals + 1e-12 if decimals else 1e-9


def unrounded(token: str, known) -> float | None:
    """The computed value that a printed decimal displays, if any."""
    value, tol = float(token), tolerance(_decimals(token))
    best = min(known, key=lambda k: abs(k[0] - value), default=None)
    if best is not None and abs(best[0] - value) <= tol:
        return best[0]
    return None


class _Evaluator(ast.NodeVisitor):
    def __init__(self, names):
        self.names = names

    def visit_Expression(self, node):
        return self.visit(node.body)

    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return np.float64(node.value)
        raise ValueError("not a number")

    def visit_Name(self, node):
        if node.id in self.names:
            return np.float64(self.names[node.id])
        raise ValueError(f"unknown name {node.id}")

    def visit_List(self, node):
        return np.array([self.visit(e) for e in node.elts], dtype=float)

    def visit_UnaryOp(self, node):
        value = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        raise ValueError("operator")

    def visit_BinOp(self, node):
        a, b = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Mult):
            # A row times a table (the F07 example) is a matrix product.
            if np.ndim(a) >= 1 and np.ndim(b) >= 1:
                return a @ b
            return a * b
        raise ValueError("operator")

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
            return np.sqrt(self.visit(node.args[0]))
        raise ValueError("call")

    def generic_visit(self, node):
        raise ValueError(f"not arithmetic: {type(node).__name__}")


def evaluate(segment: str, known):
    """Evaluate written arithmetic, or return None when the segment is not arithmetic."""
    text = (segment.replace("×", "*").replace("−", "-").replace("∞", "inf")
            .replace("（", "(").replace("）", ")"))
    text = re.sub(r"√(\d+(?:\.\d+)?)", r"sqrt(\1)", text)
    names = {"inf": math.inf}

    def substitute(m):
        value = unrounded(m.group(1), known)
        if value is None:
            return m.group(1)  # an unknown decimal is reported by the decimal scan
        name = f"_u{len(names)}"
        names[name] = value
        return name

    text = NUMBER.sub(substitute, text)
    if not re.fullmatch(r"[\w\s.+\-*/()\[\],]*", text) or not re.search(r"\d|inf|_u", text):
        return None
    try:
        return _Evaluator(names).visit(ast.parse(text.strip(), mode="eval"))
    except (SyntaxError, ValueError, TypeError):
        return None


def stated_tolerance(segment: str, value) -> np.ndarray:
    """Per-element tolerance from how the stated result is printed."""
    tokens = re.findall(r"∞|\d+(?:\.\d+)?", segment)
    shape = np.shape(value)
    if len(tokens) == int(np.prod(shape, dtype=int)):
        return np.array([0.0 if t == "∞" else tolerance(_decimals(t)) for t in tokens]).reshape(shape)
    return np.full(shape, tolerance(max((_decimals(t) for t in tokens), default=0)))


def equal(a, b, tol) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if not np.array_equal(inf_a, inf_b) or not np.array_equal(a[inf_a], b[inf_b]):
        return False
    tol = np.broadcast_to(tol, a.shape)
    fin = ~inf_a
    return bool(np.all(np.abs(a[fin] - b[fin]) <= tol[fin]))


def show(value) -> str:
    value = np.asarray(value, dtype=float)
    if value.ndim == 0:
        return f"{float(value):.12g}"
    return np.array2string(value, precision=10, separator=",").replace("\n", "")


# ----------------------------------------------------------------------------- checks

def check_statement(st: Statement, labels, known, report: Report) -> None:
    segments = [s.strip() for s in re.split(r"[=≈]", st.text)]
    first = segments[0]
    colon = re.search(r"[：:]", first)
    if colon:
        desc, after = first[:colon.start()].strip(), first[colon.end():].strip()
        if evaluate(after, known) is not None:
            label_text, values = desc, [after] + segments[1:]
        else:
            label_text, values = after, segments[1:]
    elif evaluate(first, known) is not None:  # e.g. "[1,2] × [[3,4],[5,6]] = ..."
        label_text, values = "", segments
    else:
        label_text, values = first, segments[1:]
    label = label_text if label_text in labels else None
    if label is None and label_text.split():
        last = label_text.split()[-1]
        label = last if last in labels else None

    evaluated = [(seg, evaluate(seg, known)) for seg in values]
    evaluated = [(seg, v) for seg, v in evaluated if v is not None]
    if not evaluated:
        return
    report.counts["statements"] += 1
    stated_seg, stated = evaluated[-1]
    tol = stated_tolerance(stated_seg, stated)
    for seg, value in evaluated[:-1]:
        report.counts["equalities"] += 1
        if not equal(value, stated, tol):
            report.fail(st.line, f"{st.text!r}: {seg} = {show(value)}, but the text states {stated_seg}")
    if label is not None:
        report.counts["named"] += 1
        expected = labels[label]
        if equal(stated, expected, tol):
            report.checked_labels.add(label)
        else:
            report.fail(st.line, f"{label} is stated as {stated_seg}, but attention_lab computes {show(expected)}")


class NotExact(ValueError):
    """The written arithmetic has no exact decimal value (e.g. 1/√2)."""


class _ExactEvaluator(_Evaluator):
    """Written arithmetic on the SHOWN numbers, exactly (fractions): what a reader gets by hand."""

    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Fraction(repr(node.value)) if isinstance(node.value, float) else Fraction(node.value)
        raise ValueError("not a number")

    def visit_Name(self, node):
        if node.id == "inf":
            return math.inf
        raise ValueError(f"unknown name {node.id}")

    def visit_List(self, node):
        return [self.visit(e) for e in node.elts]

    def visit_UnaryOp(self, node):
        value = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return _map(lambda v: -v, value)
        if isinstance(node.op, ast.UAdd):
            return value
        raise ValueError("operator")

    def visit_BinOp(self, node):
        a, b = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Mult) and isinstance(a, list) and isinstance(b, list):
            if not b or not isinstance(b[0], list):
                raise ValueError("a row times a row")
            return [sum((a[k] * b[k][j] for k in range(len(a))), Fraction(0)) for j in range(len(b[0]))]
        ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
               ast.Mult: lambda x, y: x * y, ast.Div: lambda x, y: x / y}
        for kind, op in ops.items():
            if isinstance(node.op, kind):
                return _zip(op, a, b)
        raise ValueError("operator")

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
            x = self.visit(node.args[0])
            root = Fraction(math.isqrt(x.numerator), math.isqrt(x.denominator))
            if root * root != x:
                raise NotExact(f"√{x} is not a terminating decimal")
            return root
        raise ValueError("call")


def _map(f, v):
    return [_map(f, e) for e in v] if isinstance(v, list) else f(v)


def _zip(op, a, b):
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise ValueError("shapes")
        return [_zip(op, x, y) for x, y in zip(a, b)]
    if isinstance(a, list):
        return [_zip(op, x, b) for x in a]
    if isinstance(b, list):
        return [_zip(op, a, y) for y in b]
    return op(a, b)


def evaluate_exact(segment: str):
    """The segment's value computed exactly from the decimals as written (raises NotExact/ValueError)."""
    text = (segment.replace("×", "*").replace("−", "-").replace("∞", "inf")
            .replace("（", "(").replace("）", ")"))
    text = re.sub(r"√(\d+(?:\.\d+)?)", r"sqrt(\1)", text).strip()
    try:
        return _ExactEvaluator({}).visit(ast.parse(text, mode="eval"))
    except SyntaxError as exc:
        raise ValueError("not arithmetic") from exc


def check_signs(st: Statement, known, report: Report) -> None:
    """The chapter's rule for "=" and "≈" in hand computations.

    "=" only where it is true as written: the shown numbers on its left give the shown result
    on its right exactly (hand arithmetic on the printed decimals), and every decimal on its
    right is the computed value itself (not a rounding of it).  Otherwise "≈".
    """
    parts = re.split(r"([=≈])", st.text)
    segments = [seg.strip() for seg in parts[0::2]]
    signs = parts[1::2]
    colon = re.search(r"[：:]", segments[0])
    if colon:
        segments[0] = segments[0][colon.end():].strip()
    for k, sign in enumerate(signs):
        if sign != "=":
            continue
        left, right = segments[k], segments[k + 1]
        if evaluate(right, known) is None:
            continue  # a name on the right ("q₀ = x₀Wq = ...")
        literal = re.fullmatch(r"[\s\[\],\d.−\-∞]*", right) is not None
        # Decimals of 3+ places display computed values (the decimal scan ties each to one);
        # shorter ones are checked by the exact arithmetic below.
        tokens = NUMBER.findall(right) if literal else []
        for token in tokens:
            value = unrounded(token, known)
            if value is not None and abs(value - float(token)) > 1e-12 * max(1.0, abs(value)):
                report.fail(st.line, f"'=' before the rounded {token} (the value is {value:.15g}): "
                                       f"write '≈' in {st.text!r}")
                break
        if evaluate(left, known) is None:
            continue  # a name or formula on the left: only the right side is checked
        try:
            holds = evaluate_exact(left) == evaluate_exact(right)
        except NotExact:
            holds = False
        except (ValueError, TypeError, ZeroDivisionError):
            continue
        if not holds:
            report.fail(st.line, f"'=' where the shown numbers do not give the shown result exactly: "
                                   f"write '≈' in {st.text!r}")


def check_decimals(lines, start, known, report: Report) -> None:
    for number, raw in enumerate(lines[start:], start=start + 1):
        text = GLUE_ROLE.sub("", raw)
        for m in NUMBER.finditer(text):
            report.counts["decimals"] += 1
            if unrounded(m.group(1), known) is None:
                nearest = min(known, key=lambda k: abs(k[0] - float(m.group(1))))
                report.fail(number, f"the decimal {m.group(1)} is not a number the chapter computes "
                                    f"(nearest: {nearest[0]:.12g} = {nearest[1]})")


#: What a trimmed excerpt of attention_lab's code must not show: the reader's code is the mathematics,
#: the input checks and English docstrings are one click away (the full function in a dropdown).
EXCERPT_NOISE = ("_check", "raise ", '"""', "AttentionInputError")


def check_excerpts(folder: Path, source: str, report: Report) -> None:
    """Each excerpt of attention_lab's code the chapter shows (``show_code(...)``) shows only code that teaches.

    A hidden cell displays ``show_code(function, start_at=..., end_at=..., leave_out=...)``
    (attention_lab/notebook.py), which cuts the function's current source when the cell runs.  An
    edit of the quoted function can move an input check or a docstring into that window without
    any error; this cuts the excerpt exactly as the cell does and fails if it now holds one.
    ``folder`` is unused (kept for the callers).
    """
    import ast

    from attention_lab import core
    from attention_lab.notebook import source_excerpt

    for m in re.finditer(r"^```\{code-cell\}[^\n]*\n(.*?)^```", source, re.M | re.S):
        if "show_code(" not in m.group(1):
            continue
        code = re.sub(r"\A---\n.*?^---\n", "", m.group(1), flags=re.M | re.S)
        line = source.count("\n", 0, m.start()) + 1
        for call in ast.walk(ast.parse(code)):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "show_code"):
                continue
            name = ast.unparse(call.args[0]) if call.args else "?"
            try:
                kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
                args = [ast.literal_eval(a) for a in call.args[1:]]
                text = source_excerpt(getattr(core, name), *args, **kwargs)
            except (AttributeError, ValueError, TypeError) as exc:
                report.fail(line, f"the excerpt of core.{name} cannot be cut: {exc}")
                continue
            noisy = [t.strip() for t in text.splitlines() if any(word in t for word in EXCERPT_NOISE)]
            if noisy:
                report.fail(line, f"the trimmed excerpt of core.{name} now shows {noisy}: adjust its "
                                  f"start_at / end_at / leave_out to the code that changed")


# ============================================================================ meaning
#
# Claims tied to what the computation means rather than to a wording: the mask's infinity and
# its diagonal, which token a row index names and which tokens it may read, the axes' names,
# the self-check a reference points to, and the {eval} names (defined by the page's own cells,
# before they are read, and naming the number the words around them describe).

#: A row index bound to a token: 第 0 行“我”, 第 1 号位置“爱”, 第 0 行对应“我”.
BOUND_TOKEN = re.compile(r"第\s*(\d+)\s*(?:行|号)(?:位置|对应)?\s*“([^”]+)”")
#: A row index and what it may (not) read: 第 0 行只能读“我”, 第 0 号“我”不能读……“爱”.
READS = re.compile(r"第\s*(\d+)\s*(?:行|号)(?:位置)?(?:“[^”]+”)?[^，。；：“]*?(不能读|只能读|能读)([^，。；：]*)")
AXIS = re.compile(r"(行|列)(?:是|：|:)\s*(接收位置|被读取位置)(（(?:查询|键)）)?")
TRIANGLE = re.compile(r"torch\.(tril|triu)\(torch\.ones\((\w+),\s*(\w+)[^()]*\)(?:,\s*diagonal\s*=\s*([^()]+?))?\)")
REFERENCE = re.compile(r"课后自检第\s*(\d+)\s*题")
#: An {eval} name that is a table cell: <case>(a|o|s|raw|q)<row><column>, e.g. wq_a10 = only_wq's A[1, 0].
CELL_NAME = re.compile(r"^(?P<case>.*?)(?P<table>raw|a|o|s|q)(?P<i>\d)(?P<j>\d)$")
#: The word that says which table a number is from (the last one before it in its clause).
TABLE_WORDS = {"份额": "a", "输出": "o", "缩放分数": "s", "缩成": "s", "原始分数": "raw", "查询": "q"}


def clauses(text: str) -> list[str]:
    return re.split(r"[，。；：]", text)


def _base(name: str) -> str:
    """An {eval} name without its format suffix (attention_lab.notebook.FORMATS): a10_4d -> a10."""
    from attention_lab.notebook import FORMATS

    for suffix in sorted(FORMATS, key=len, reverse=True):
        if suffix and name.endswith(suffix):
            return name[: -len(suffix)]
    return name


@lru_cache(maxsize=None)
def notebook_values(cells: tuple) -> tuple[dict, dict, list]:
    """Run a page's code cells in order, as its kernel does: (name -> shown text, name -> line of the
    cell that defined it, [(line, error)]).  ``cells``: ((line, source), ...)."""
    import contextlib
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attention_lab import notebook

    namespace: dict = {}
    values, defined, errors = {}, {}, []

    def capture(name, variable, display=True, namespace_=None):
        texts = notebook.shown_texts(name, variable)
        values.update(texts)
        namespace.update(texts)  # as the kernel's glue does: a glued name shadows a variable of that name

    real, options = notebook.glue, np.get_printoptions()
    notebook.glue = capture
    try:
        for line, cell in cells:
            before = set(values)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(cell, f"cell at line {line}", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - any failure of a cell is reported
                errors.append((line, f"{type(exc).__name__}: {exc}"))
            defined.update({name: line for name in set(values) - before})
            plt.close("all")
    finally:
        notebook.glue = real
        np.set_printoptions(**options)
    return values, defined, errors


def code_cells(text: str) -> tuple:
    """((line of the cell's fence, source without its options), ...) of a page's code cells."""
    lines = text.splitlines()
    out = []
    for fence in fences(lines, split_front_matter(lines)):
        if not fence.info.startswith("{code-cell}"):
            continue
        body = [t for _, t in fence.body]
        if body and body[0].strip() == "---":  # YAML options
            body = body[body.index("---", 1) + 1:] if "---" in body[1:] else []
        while body and re.match(r"^:[\w-]+:", body[0]):
            body = body[1:]
        out.append((fence.lines[0] + 1, "\n".join(body)))
    return tuple(out)


def self_check_questions(pages: list[Page]) -> dict[int, str]:
    """The chapter's self-check questions: number -> its text and answer."""
    text = pages[0].text
    section = text[text.find("(f11-selfcheck)="):]
    section = re.split(r"\n\(f11-[\w-]+\)=\n", section[1:])[0] if section else ""
    parts = re.split(r"(?m)^\*\*(\d+)\.\*\*", section)
    return {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}


def _features(text: str) -> set:
    """Character pairs of Chinese words and whole Latin words: what a reference shares with its question."""
    text = normalise_prose(text)
    words = set(re.findall(r"[A-Za-z_][\w.]+", text))
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        words.update(run[k:k + 2] for k in range(len(run) - 1))
    return words


def check_meaning(page: Page, report: Report) -> None:
    report.mismatches.extend(_meaning(page.name, page.shown, page.text))


@lru_cache(maxsize=64)
def _meaning(name: str, shown: str, text: str) -> tuple:
    """The meaning checks' messages for one page (cached: a page checked twice is read once)."""
    page, report = Page(name, shown, text), Report()
    _check_meaning(page, report)
    return tuple(report.mismatches)


def _check_meaning(page: Page, report: Report) -> None:
    from attention_lab.core import TOKENS, causal_mask

    n = len(TOKENS)
    allowed = np.isfinite(causal_mask(n))
    mask_sign = "负无穷" if causal_mask(n).min() < 0 else "正无穷"
    wrong_sign = {"负无穷": ("正无穷", "+∞"), "正无穷": ("负无穷", "−∞")}[mask_sign]
    values, defined, errors = notebook_values(code_cells(page.text))
    for line, error in errors:
        report.fail(None, f"{page.shown}:{line}: the code cell raises {error}")
    questions = self_check_questions([page]) if page.name == CHAPTER_NAME else {}
    weight = {}
    if questions:
        features = {q: _features(text) for q, text in questions.items()}
        for words in features.values():
            for w in words:
                weight[w] = weight.get(w, 0) + 1
        weight = {w: 1.0 / k for w, k in weight.items()}

    lines = page.text.splitlines()
    start = split_front_matter(lines)
    check_numbering(page, questions, report)
    hand = [(no, raw, "hand", None) for fence in fences(lines, start) if fence.info in ("", "text", "none")
            for no, raw in fence.body]
    topic_of = (None, None)
    prose = list(prose_lines(page.name, page.text, hand_checked=page.name == CHAPTER_NAME))
    for line_no, raw, section, question in sorted(prose + hand if page.name == CHAPTER_NAME else prose):
        where = f"{page.shown}:{line_no}: "
        for m in EVAL_ROLE.finditer(raw):
            name = m.group(1)
            if name not in values:
                report.fail(None, where + f"{{eval}}`{name}` is not a name the page's cells define "
                                          f"(attention_lab.notebook.glue)")
            elif defined[name] > line_no:
                report.fail(None, where + f"{{eval}}`{name}` is read before the cell at line {defined[name]} "
                                          f"defines it (the kernel runs in page order)")
        shown = normalise_prose(EVAL_ROLE.sub(lambda m: values.get(m.group(1), "⟨?⟩"), raw))
        named = normalise_prose(EVAL_ROLE.sub(lambda m: f"⟨{_base(m.group(1))}⟩", raw))
        if section == "hand" and re.search(r"QKᵀ|·k|缩放|\bS\s*=", raw):  # a √k dividing scores is √d_k
            for m in re.finditer(r"√(\d+)", raw):  # (the prose's √k are claims: build_claims)
                if int(m.group(1)) != attention(**baseline()).d_k:
                    report.fail(None, where + f"√{m.group(1)}: d_k is {attention(**baseline()).d_k} in this computation")
        # The mask adds −∞ (attention_lab.core.causal_mask): never "正无穷" / +∞.
        for word in wrong_sign:
            if word in shown:
                report.fail(None, where + f"{word!r}: the causal mask adds {mask_sign} (attention_lab.core.causal_mask)")
        # torch.tril/triu snippets give the core's causal mask (True = allowed / True = blocked).
        for m in TRIANGLE.finditer(shown):
            kind, rows, cols, diagonal = m.groups()
            for n_, m_ in ((2, 2), (1, 3), (2, 3)) if rows != cols else ((2, 2), (3, 3)):
                size = {"n": n_, "m": m_}
                try:
                    shape = [size[rows] if rows in size else int(rows), size[cols] if cols in size else int(cols)]
                    k = int(_Evaluator(size).visit(ast.parse(diagonal or "0", mode="eval")))
                except (SyntaxError, ValueError, KeyError) as exc:
                    report.fail(None, where + f"cannot read {m.group()!r}: {exc}")
                    break
                core = np.isfinite(causal_mask(shape[0], shape[1], diagonal=shape[1] - shape[0]))
                ones = np.ones(shape, dtype=bool)
                got = np.tril(ones, k) if kind == "tril" else ~np.triu(ones, k)
                if not np.array_equal(got, core):
                    report.fail(None, where + f"{m.group()!r} is not attention_lab.core.causal_mask "
                                              f"(diagonal={shape[1] - shape[0]} for n={shape[0]}, m={shape[1]})")
                    break
        if re.search(r"diagonal\s*取\s*m\s*[-−]\s*n", shown) is None and re.search(r"diagonal\s*取", shown):
            report.fail(None, where + "torch.tril's diagonal for a KV cache is m − n (attention_lab.core)")
        # Row indices and tokens (attention_lab.core.TOKENS), and what each row may read (the mask).
        for clause in clauses(shown):
            for m in BOUND_TOKEN.finditer(clause):
                i, token = int(m.group(1)), m.group(2)
                if token in TOKENS and (i >= n or TOKENS[i] != token):
                    report.fail(None, where + f"row {i} is “{TOKENS[i] if i < n else '?'}”, not “{token}” "
                                              f"(TOKENS = {TOKENS}) in “{clause.strip()}”")
            for m in READS.finditer(clause):
                i, verb = int(m.group(1)), m.group(2)
                said = {TOKENS.index(t) for t in re.findall(r"“([^”]+)”", m.group(3)) if t in TOKENS}
                can = set(np.flatnonzero(allowed[i])) if i < n else set()
                if said and ((said & can) if verb == "不能读" else said != can):
                    report.fail(None, where + f"row {i} reads {[TOKENS[j] for j in sorted(can)]} under the causal "
                                              f"mask: “{clause.strip()}” says otherwise")
        # Rows are 接收位置 (查询), columns 被读取位置 (键).
        for m in AXIS.finditer(shown):
            axis, term, gloss = m.groups()
            want = ("接收位置", "（查询）") if axis == "行" else ("被读取位置", "（键）")
            if term != want[0] or (gloss and gloss != want[1]):
                report.fail(None, where + f"{axis} is {''.join(want)}, not {term}{gloss or ''}")
        # A reference to a self-check points to the question about the same thing.
        for m in REFERENCE.finditer(shown):
            if not questions:
                continue
            mine = _features(raw)
            score = {q: sum(weight.get(w, 0.0) for w in mine & words) for q, words in features.items()}
            best = max(score, key=score.get)
            if int(m.group(1)) != best:
                report.fail(None, where + f"self-check {m.group(1)} is referenced, but question {best} is the one "
                                          f"about this (shared words: {sorted(mine & features[best])[:8]})")
        if question and question != topic_of[0]:  # a question's “爱”读“我” is its answer's topic too
            pair = READER.search(named)
            topic_of = (question, (TOKENS.index(pair[1]), TOKENS.index(pair[2])) if pair else None)
        check_eval_context(named, where, report, topic_of[1] if question else None)
        check_batched_shapes(shown, where, report)
        if page.name == CHAPTER_NAME:
            check_growth(raw, where, report)
            check_heads(shown, where, report)
            check_refusal(shown, where, report)
    if page.name == CHAPTER_NAME:
        check_glued_course_numbers(page.shown, values, report)


# ------------------------------------------------ the strong-course points (issue 28, item 3)

#: A shape written as a tuple of letters: (N, h, L, E).
LETTERS = r"\(((?:[A-Za-z]\w*)(?:,\s*[A-Za-z]\w*)*)\)"
#: What the prose says F.scaled_dot_product_attention takes and gives, and what nn.MultiheadAttention's
#: weights are, in the (normalised) prose.
SDPA_SHAPES = re.compile(rf"query 是 {LETTERS}，key 是 {LETTERS}，value 是 {LETTERS}，输出是 {LETTERS}")
SCORE_SHAPE = re.compile(rf"分数表和份额表是 {LETTERS}")
MHA_WEIGHTS = {"average": re.compile(rf"按头取平均，形状 {LETTERS}"),
               "per_head": re.compile(rf"每个头各自的份额 {LETTERS}")}
#: PyTorch's letters (the SDPA documentation: query (N, ..., L, E), key (N, ..., S, E), value
#: (N, ..., S, Ev)), each given a distinct size so that a swapped letter shows; h: the heads.
TORCH_SIZES = {"N": 2, "h": 3, "L": 4, "S": 5, "E": 6, "Ev": 7}
TORCH_INPUTS = {"query": ("N", "h", "L", "E"), "key": ("N", "h", "S", "E"), "value": ("N", "h", "S", "Ev")}


def _letters(text: str) -> tuple:
    return tuple(t.strip() for t in text.split(","))


def _named(shape) -> tuple:
    return tuple(next((k for k, v in TORCH_SIZES.items() if v == d), "?") for d in shape)


def check_batched_shapes(shown: str, where: str, report: Report) -> None:
    """The batched shapes the prose gives (query (N, h, L, E) ...) are what the computation gives.

    numpy's batched ``softmax(q @ kᵀ / √E) @ v`` is run on arrays of the written input shapes (each
    letter a distinct size): it must work, and its output must have the written shape.  The score and
    share tables, and nn.MultiheadAttention's weights (per head, and their mean over the heads, as
    ``average_attn_weights=True`` returns them), are computed from SDPA's documented inputs.
    """
    def arrays(shapes):
        return [np.ones([TORCH_SIZES.get(x, 1) for x in shape]) for shape in shapes]

    m = SDPA_SHAPES.search(shown)
    if m:
        q, k, v, out = (_letters(g) for g in m.groups())
        unknown = sorted(set(q + k + v + out) - set(TORCH_SIZES))
        if unknown:
            report.fail(None, where + f"{unknown}: not PyTorch's letters {sorted(TORCH_SIZES)}")
            return
        try:
            Q, K, V = arrays((q, k, v))
            O = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])) @ V
        except ValueError as exc:
            report.fail(None, where + f"query {q}, key {k}, value {v} cannot be attended: {exc}")
            return
        if O.shape != tuple(TORCH_SIZES[x] for x in out):
            report.fail(None, where + f"the output of query {q}, key {k}, value {v} is {_named(O.shape)}, not {out}")
        if (q, k, v) != tuple(TORCH_INPUTS.values()):
            report.fail(None, where + f"F.scaled_dot_product_attention takes {TORCH_INPUTS}: the text says {q}, {k}, {v}")
    Q, K, _V = arrays(TORCH_INPUTS.values())
    per_head = Q @ np.swapaxes(K, -1, -2)  # (N, h, L, S): one table per sentence and head
    checks = [(SCORE_SHAPE, per_head.shape, "the score and share tables")]
    checks += [(MHA_WEIGHTS["average"], per_head.mean(axis=1).shape, "nn.MultiheadAttention's averaged weights"),
               (MHA_WEIGHTS["per_head"], per_head.shape, "nn.MultiheadAttention's per-head weights")]
    for pattern, want, what in checks:
        for w in pattern.finditer(shown):
            if tuple(TORCH_SIZES.get(x, -1) for x in _letters(w.group(1))) != want:
                report.fail(None, where + f"{what} are {_named(want)}, not ({w.group(1)})")


def _growth(count, base: int = 64) -> float:
    """The exponent of a count's growth: log2(count(2·base) / count(base))."""
    return math.log2(count(2 * base) / count(base))


def check_growth(raw: str, where: str, report: Report) -> None:
    """Every power of n (or m) the chapter writes for the cost is the growth the computation has.

    ``n^k`` with 格 (the table's cells) or 内存: the score table's size, ``np.empty((n, n)).size``;
    ``n^k d_k`` / ``n^k d_v`` / ``O(n^k d)`` with 乘法 or 时间: the multiplications of Q·Kᵀ and A·V
    counted from the products' shapes; ``O(m d)``: one new row against m cached keys.
    """
    d = 8

    def mults(n, m=None, dk=d, dv=d):  # multiplications of Q @ K.T and A @ V for n queries, m keys
        m = n if m is None else m
        return n * m * dk + n * m * dv

    table = _growth(lambda n: np.empty((n, n)).size)
    time_n = _growth(mults)
    time_d = math.log2(mults(64, dk=2 * d, dv=2 * d) / mults(64))
    powers = list(re.finditer(r"\$O\(n(?:\^(\d+))?(?:\s*(d(?:_[kv])?))?\)\$", raw))
    powers += re.finditer(r"\$n\^(\d+)(?:\s*(d_[kv]))?\$", raw)
    for m in powers:
        k, width = int(m.group(1) or 1), m.group(2)
        want = time_n if width else table
        if k != want:
            report.fail(None, where + f"{m.group()}: the {'multiplications grow' if width else 'table grows'} as "
                                      f"n^{want:g}")
    for m in re.finditer(r"\$O\(m\^?(\d*)\s*d\)\$", raw):
        k = int(m.group(1) or 1)
        new_row = _growth(lambda keys: mults(1, keys))
        if k != new_row:
            report.fail(None, where + f"{m.group()}: one new row against m keys grows as m^{new_row:g}")
    if re.search(r"\$O\(n\^\d+\s*d\)\$", raw) and time_d != 1:
        report.fail(None, where + "the time grows linearly in the width d")


#: “头 0 把 … 给了前面的“狗””, “头 1 几乎不读“狗””: which token a head's row reads most, and least.
HEAD_MOST = re.compile(r"头 (\d+)\s*(?:把|的)[^。；“]*?(?:给了|大部分读|几乎全读)[^“。；]*“([^”]+)”")
HEAD_LEAST = re.compile(r"头 (\d+)[^。；“]*?几乎不读“([^”]+)”")


def check_heads(shown: str, where: str, report: Report) -> None:
    """The two-heads example (attention_lab.shapes.EXAMPLES["two_heads"], computed): the token a head is
    said to read most holds the largest share of its row, the one it hardly reads the smallest."""
    if not (HEAD_MOST.search(shown) or HEAD_LEAST.search(shown)) or "猫" not in shown:
        return
    from attention_lab.shapes import EXAMPLES, compute

    state = EXAMPLES["two_heads"]
    result, row, tokens = compute(state), state["row"], state["tokens"]
    for pattern, pick in ((HEAD_MOST, np.max), (HEAD_LEAST, np.min)):
        for m in pattern.finditer(shown):
            head, token = int(m.group(1)), m.group(2)
            if head >= result.h or token not in tokens:
                report.fail(None, where + f"“{m.group()}”: the example has heads 0..{result.h - 1} and tokens {tokens}")
                continue
            shares = result.heads[head].A[row]
            mine = [shares[j] for j, t in enumerate(tokens) if t == token]
            if not np.isclose(max(mine), pick(shares)):
                report.fail(None, where + f"head {head}'s shares are {np.round(shares, 3).tolist()} over {tokens}: "
                                          f"“{token}” is not the one it reads {'most' if pick is np.max else 'least'}")


def check_refusal(shown: str, where: str, report: Report) -> None:
    """“attention_lab 遇到这样的一行直接报错”: the core's softmax refuses a row that may read nothing."""
    if "attention_lab 遇到这样的一行直接报错" not in shown:
        return
    from attention_lab.core import AttentionInputError

    try:
        softmax(np.array([[0.0, 0.0], [-np.inf, -np.inf]]))
    except AttentionInputError as exc:
        if exc.kind == "all_masked":
            return
    report.fail(None, where + "attention_lab's softmax does not refuse a fully masked row")


@lru_cache(maxsize=1)
def _slope_reference() -> tuple:
    """({t: (slope, share)} of 爱's row times each factor t, (largest slope, its share)), by finite
    differences of attention_lab's softmax (computed once: it does not depend on the page)."""
    from attention_lab.chapter import SATURATION_FACTORS

    row = attention(**baseline()).S[ROW]
    reference = {t: (_slope_fd(t * row), float(softmax(t * row)[0])) for t in SATURATION_FACTORS}
    grid = [(_slope_fd(np.array([s, 0.0])), float(softmax(np.array([s, 0.0]))[0])) for s in np.linspace(-4, 4, 801)]
    return reference, max(grid)


def check_glued_course_numbers(shown: str, values: dict, report: Report) -> None:
    """The numbers the chapter's own cells glue for the course points, recomputed another way.

    The score table's size (``np.empty((n, n), float32).nbytes``), its growth when n doubles, the
    softmax's slope for each factor t (finite differences of attention_lab's softmax, not A(1 − A)) and
    where the slope peaks; each glued name must exist (the cells define them).
    """
    from attention_lab.chapter import SATURATION_FACTORS

    def number(name):  # the glued value at its most precise shown format (attention_lab.notebook.FORMATS)
        for key in (name + "_10d", name):
            if key in values:
                return float(values[key])
        return None

    n, itemsize, mib = number("cost_n"), number("cost_itemsize"), number("cost_mib")
    if None in (n, itemsize, mib):
        report.fail(None, f"{shown}: the cost cell no longer glues cost_n, cost_itemsize and cost_mib")
    else:
        n = int(n)
        table = np.empty((n, n), dtype=np.float32)
        if itemsize != table.itemsize or not np.isclose(mib, table.nbytes / 2**20):
            report.fail(None, f"{shown}: a float32 table of {n}×{n} is {table.nbytes / 2**20:g} MiB "
                              f"({table.itemsize} bytes a cell), not {mib:g} MiB ({itemsize:g})")
        ratio = np.empty((2 * n, 2 * n), dtype=np.float32).nbytes / table.nbytes
        if number("cost_ratio") != ratio:
            report.fail(None, f"{shown}: doubling n makes the table {ratio:g} times as large, not {number('cost_ratio')}")
        heads, gib = number("cost_heads"), number("cost_heads_gib")
        if heads is None or gib is None or not np.isclose(gib, heads * table.nbytes / 2**30):
            report.fail(None, f"{shown}: {heads} heads' tables are {(heads or 0) * table.nbytes / 2**30:g} GiB, not {gib}")
    reference, best = _slope_reference()
    slopes = []
    for t, (fd, want_share) in reference.items():
        slope, share = number(f"slope_t{t}"), number(f"share_t{t}")
        if slope is None or share is None:
            report.fail(None, f"{shown}: the saturation cell glues no slope_t{t} / share_t{t} (t = {SATURATION_FACTORS})")
            continue
        if abs(slope - fd) > 1e-6 or abs(share - want_share) > 1e-9:
            report.fail(None, f"{shown}: for t = {t} the share is {want_share:.10f} and its slope "
                              f"{fd:.10f} (finite differences); the cell glues {share:.10f} and {slope:.10f}")
        slopes.append(fd)
    if any(b >= a for a, b in zip(slopes, slopes[1:])):
        report.fail(None, f"{shown}: the slopes {np.round(slopes, 4).tolist()} do not shrink as t grows")
    peak, peak_share = number("slope_peak"), number("slope_peak_share")
    if peak is None or peak_share is None or abs(peak - best[0]) > 1e-6 or abs(peak_share - best[1]) > 0.01:
        report.fail(None, f"{shown}: the slope peaks at {best[0]:.6f}, where the share is {best[1]:.3f}; "
                          f"the cell glues {peak} at {peak_share}")


def check_numbering(page: Page, questions: dict, report: Report) -> None:
    """Ordered lists count 1, 2, 3 ... (markdown-it's tokens; a list that starts elsewhere, or an item
    numbered out of turn, is a typo the reader sees, or an answer paired with the wrong question),
    and the self-check questions are **1.** ... **N.** in order."""
    lines = page.text.splitlines()
    start = split_front_matter(lines)
    for fence_text, offset in [("\n".join(lines[start:]), start)] + [("\n".join(t for _, t in f.body), f.body[0][0] - 1)
                                                  for f in fences(lines, start) if f.body
                                                  and f.info.startswith(("{dropdown}", "{note}", "{warning}",
                                                                         "{admonition}"))]:
        stack = []
        for tok in _block_tokens(fence_text):
            if tok.type == "ordered_list_open":
                stack.append(0)
            elif tok.type == "ordered_list_close":
                stack.pop()
            elif tok.type == "list_item_open" and stack and tok.info:
                stack[-1] += 1
                if int(tok.info) != stack[-1]:
                    line = offset + (tok.map[0] + 1 if tok.map else 0)
                    report.fail(None, f"{page.shown}:{line}: list item {tok.info}. where {stack[-1]}. comes")
    if questions:
        marks = [int(n) for n in re.findall(r"(?m)^\*\*(\d+)\.\*\*", page.text)]
        if marks != list(range(1, len(marks) + 1)):
            report.fail(None, f"{page.shown}: the self-check questions are numbered {marks}")


#: “爱”读“我”, “爱”对“我”, “爱”就从“我”: the reader's row and the read token's column.
READER = re.compile(r"“(我|爱)”(?:就|仍然)?(?:读|对|从)“(我|爱)”")


def check_eval_context(named: str, where: str, report: Report, topic=None) -> None:
    """An {eval} cell name (wq_a10 ...) agrees with the words around it: its table word (份额, 输出 ...),
    its place in a written row ([⟨a10⟩, ⟨a11⟩]: same case and row, columns in order) and
    “爱”读“我” (row 爱, column 我)."""
    from attention_lab.core import TOKENS

    def cell(name):
        return CELL_NAME.match(name)

    for m in re.finditer(r"\[([^\[\]]*⟨[^\[\]]*)\]", named):
        items = [t.strip() for t in m.group(1).split(",")]
        cells = [(k, cell(t[1:-1])) for k, t in enumerate(items) if re.fullmatch(r"⟨\w+⟩", t)]
        cells = [(k, c) for k, c in cells if c]
        for k, c in cells:
            if int(c["j"]) != k or (c["case"], c["table"], c["i"]) != (cells[0][1]["case"], cells[0][1]["table"],
                                                                      cells[0][1]["i"]):
                report.fail(None, where + f"{{eval}}`{c.group()}` is not entry {k} of the row "
                                          f"[{', '.join(items)}]")
                break
    subject, first = None, topic  # “爱” in “爱”对“我”……，对自己…… (the sentence's reader)
    for clause in [c for sentence in named.split("。") for c in ["。"] + clauses(sentence)]:
        if clause == "。":  # a sentence's “爱”读“我” holds for its clauses (or the question's, for its answer)
            topic = first
            continue
        pair, diagonal = topic, None
        for m in re.finditer(r"“([^”]+)”(?:就|仍然)?(?:读|对|从)“([^”]+)”|⟨(\w+)⟩|(非?对角)|(对自己)", clause):
            if m.group(1) and m.group(1) in TOKENS and m.group(2) in TOKENS:
                pair = topic = (TOKENS.index(m.group(1)), TOKENS.index(m.group(2)))
                subject = pair[0]
            elif m.group(4):
                diagonal = m.group(4) == "对角"
            elif m.group(5) and subject is not None:
                pair = (subject, subject)
            elif m.group(3):
                c = cell(m.group(3))
                before = clause[:m.start()]
                word = max(TABLE_WORDS, key=lambda w: before.rfind(w))
                if c and word in before and c["table"] != TABLE_WORDS[word]:
                    report.fail(None, where + f"{{eval}}`{m.group(3)}` is from table {c['table']}, but the text "
                                              f"calls it {word}")
                in_row = before.count("[") > before.count("]")  # a written row: checked above
                if c and pair and not in_row and c["table"] in ("a", "raw", "s") and (int(c["i"]), int(c["j"])) != pair:
                    report.fail(None, where + f"{{eval}}`{m.group(3)}` is row {c['i']}, column {c['j']}, but the "
                                              f"text says “{TOKENS[pair[0]]}” reads “{TOKENS[pair[1]]}”")
                if c and diagonal is not None and (c["i"] == c["j"]) != diagonal:
                    report.fail(None, where + f"{{eval}}`{m.group(3)}` is cell [{c['i']}, {c['j']}], but the text "
                                              f"says {'on' if diagonal else 'off'} the diagonal")
                pair = None


# ============================================================================ prose claims
#
# Every number written in the prose of book/*.md (outside code cells and hand-computation
# blocks, which are checked above) must be one of:
#
# * inside a glue role (its value comes from execution);
# * captured by a registered claim: a pattern whose numbers are compared with a value
#   computed from attention_lab (``CLAIMS`` below; a changed number no longer equals the
#   computed one, or no longer matches the pattern and is reported as unchecked);
# * a year next to a {cite} whose references.bib entry has that year;
# * a question number (``第 11 题``) that exists in 课后自检, or a count of those questions;
# * not a quantity: an ordinal (第 0 行, 第 1 号), a list or question marker, a sub- or
#   superscript index, a chapter name (F07, Q007), a software version or address.
#
# Anything else fails with "unchecked number", naming the file and line.

SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
#: A number in prose: not part of an identifier (F11, d2l, bahdanau2015, 3E, x_0).
PROSE_NUMBER = re.compile(r"(?<![A-Za-z_\d.\\])[-−]?\d+(?:\.\d+)?(?![\d])(?![A-Za-z_])")
GLUE_MARK = "⟨g⟩"


@dataclass(eq=False)  # hashed by identity: the cached page checks take the claims as a key
class Claim:
    """``pattern``'s capture groups, in order, must equal ``expected()`` (numbers, vectors, tables).

    ``expected``: a list (one entry per group), or a function of the match giving that list.
    ``where``: section labels (``f11-self``), ``"Q10"`` for a self-check question, or file names
    (empty = anywhere); ``exclude``: the same, where the claim does not apply.  ``member``: each
    captured number must be one of the entries of ``expected``.  Named groups are context only.
    """

    what: str
    pattern: str
    expected: object
    where: tuple = ()
    member: bool = False
    exclude: tuple = ()
    compiled: re.Pattern = field(init=False, repr=False)

    def __post_init__(self):
        self.compiled = re.compile(self.pattern)
        if isinstance(self.where, str):
            self.where = (self.where,)
        if isinstance(self.exclude, str):
            self.exclude = (self.exclude,)


@lru_cache(maxsize=None)  # pure: a mutated page re-normalises only its changed lines (the test harness: ~400 pages)
def _norm_math(text: str) -> str:
    """Inline LaTeX to the chapter's plain notation: x_0 -> x₀, \\sqrt{2} -> √2, x' -> x′."""
    t = text
    t = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", t)
    t = re.sub(r"\\sqrt\s*(\d)", r"√\1", t)
    t = re.sub(r"\s*\\cdot\b\s*", "·", t)
    t = re.sub(r"\s*\\times\b\s*", "×", t)
    t = re.sub(r"-\\infty", "−∞", t)
    t = re.sub(r"\\infty", "∞", t)
    t = re.sub(r"\^\\top", "ᵀ", t)
    t = re.sub(r"\\lVert\s*([a-z])_(\d)\s*\\rVert\^2",
               lambda m: f"‖{m.group(1)}{m.group(2).translate(SUBSCRIPT)}‖²", t)
    t = re.sub(r"\\text\{[^{}]*\}", "", t)
    t = re.sub(r"\\[A-Za-z]+", " ", t)
    t = re.sub(r"([A-Za-z])_\{?(\d+)\}?", lambda m: m.group(1) + m.group(2).translate(SUBSCRIPT), t)
    t = re.sub(r"\^\{?\(?(\d+)\)?\}?", lambda m: "⁽" + m.group(1).translate(SUBSCRIPT) + "⁾", t)
    return t.replace("'", "′")


#: A citation as the pages write it (book/_ext/f11_cite.py): its label, linked to the references.
CITE_LINK = re.compile(r"\[\[([^\[\]]+)\]\]\((?:f11-attention\.md)?#f11-references\)")


@lru_cache(maxsize=None)
def cite_key(label: str) -> str:
    """The references.bib key of a citation label (``VSP+17`` -> ``vaswani2017attention``), as the site labels it."""
    sys.path.insert(0, str(DEFAULT_CHAPTER.parent / "_ext"))
    from f11_cite import bib_labels

    return bib_labels([DEFAULT_CHAPTER.parent / "references.bib"]).get(label, f"no entry labelled {label}")


@lru_cache(maxsize=None)
def normalise_prose(line: str) -> str:
    """What the reader sees, in one plain notation: glue roles, references and markup removed."""
    t = GLUE_ROLE.sub(GLUE_MARK, line)
    t = re.sub(r"\{(?:ref|numref|doc)\}`([^`<]*)<[^`>]*>`", r"\1", t)
    t = re.sub(r"\{(?:ref|numref|doc|eq)\}`[^`]*`", "", t)
    t = re.sub(r"\{cite(?::\w+)?\}`([^`]*)`", r"⟦cite:\1⟧", t)
    t = CITE_LINK.sub(lambda m: f"⟦cite:{cite_key(m.group(1))}⟧", t)
    t = re.sub(r"<[^<>]*>", "", t)  # HTML tags
    t = re.sub(r"\]\([^)]*\)", "]", t)  # markdown link targets
    t = re.sub(r"https?://\S+", "", t)
    t = re.sub(r"\$([^$]*)\$", lambda m: _norm_math(m.group(1)), t)
    if "$" not in line and re.search(r"\\[A-Za-z]|[_^]\{", t):  # a line of a $$ display
        t = _norm_math(t)
    t = t.replace("`", "")
    return t


#: Spans that hold numbers that are not quantities.
NOT_QUANTITIES = [
    re.compile(r"^\s*(?:[-*]\s+)?\d+\.\s"),          # list item "1. "
    re.compile(r"\*\*\d+\.\*\*"),                     # question marker **7.**
    re.compile(r"_\{\s*[A-Za-z]\s*=\s*\d+\s*\}"),        # a sum's lower bound: _{l=1}
    re.compile(r"第\s*\d+\s*(?:行|列|号|格|个|位|层|节|步|章|条|项|次)"),  # ordinals
    re.compile(r"头\s*\d+"),                           # a head's name: 头 0 (the shapes lab counts from 0)
    re.compile(r"_\{h\s*[-−]\s*1\}"),                   # the last head's index: O_{h-1}
    re.compile(r"(?:Python|PyTorch)\s+\d+(?:\.\d+)*"),  # software versions
    re.compile(r"diagonal\s*=\s*\d+"),                 # an API argument: which diagonal tril/triu keep
    re.compile(r"\d+(?:\.\d+){3}(?::\d+)?"),          # addresses 127.0.0.1:8000
    re.compile(r"(?<!\d)\d{3,4}×\d{3,4}(?!\d)"),        # a screen size: 1024×768
    re.compile(r"放大到\s*\d{2,3}%"),                   # a browser zoom: 放大到 125%
    re.compile(r"http\.server\s+-d\s+\S+\s+\d+"),     # a port
]

QUESTION = re.compile(r"^\*\*(\d+)\.\*\*")


def _parse_value(text: str):
    """A captured group as a number or nested list (−, √ and ∞ allowed)."""
    t = text.replace("−", "-").replace("∞", "inf").replace("，", ",").strip()
    t = re.sub(r"√(\d+(?:\.\d+)?)", r"sqrt(\1)", t)
    if t in ("", None):
        raise ValueError("empty")
    try:
        return _Evaluator({"inf": math.inf}).visit(ast.parse(t, mode="eval"))
    except (SyntaxError, ValueError, TypeError) as exc:
        raise ValueError(f"cannot read {text!r} as a number or table") from exc


def _printed_tol(text: str, shape) -> np.ndarray:
    tokens = re.findall(r"\d+(?:\.\d+)?", text)
    decimals = max((_decimals(t) for t in tokens), default=0)
    return np.full(shape, tolerance(decimals))


def bib_years(text: str) -> dict[str, str]:
    years = {}
    for m in re.finditer(r"@\w+\{([^,]+),(.*?)\n\}", text, re.S):
        y = re.search(r"year\s*=\s*\{?(\d{4})", m.group(2))
        if y:
            years[m.group(1).strip()] = y.group(1)
    return years


@lru_cache(maxsize=64)
def prose_lines(name: str, text: str, hand_checked: bool = True) -> tuple:
    return tuple(_prose_lines(name, text, hand_checked))


def _prose_lines(name: str, text: str, hand_checked: bool):
    """(line number, raw line, section label, question) for the prose of one book page.

    Skips front matter, code cells, plain/``text`` hand-computation blocks when
    ``hand_checked`` (the chapter's: the arithmetic checker reads them; on other pages they
    are read as prose), directive options (``:name: ...``) and MyST targets (``(label)=``).
    Keeps the bodies of directives such as admonitions, dropdowns and list-tables: they are prose.
    """
    lines = text.splitlines()
    i = split_front_matter(lines)
    section, question = name, None
    skip: set[int] = set()  # 0-based indices of lines that are not prose
    for fence in fences(lines, i):
        skip.update(k for k in fence.lines if k is not None)  # the fence lines themselves
        hand = fence.info in ("", "text", "none")
        if (hand and hand_checked) or fence.info.startswith(CODE_DIRECTIVES) or fence.info in CODE_LANGUAGES:
            skip.update(number - 1 for number, _ in fence.body)
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if i in skip:
            i += 1
            continue
        i += 1
        target = re.match(r"^\((f11-[\w-]+)\)=$", stripped)
        if target:
            section = target.group(1)
            question = None
            continue
        if re.match(r"^:[\w-]+:", stripped) or stripped == "---":
            continue
        q = QUESTION.match(stripped)
        if q:
            question = f"Q{q.group(1)}"
        yield i, raw, section, question


def check_prose(pages: list[Page], claims, report: Report, years: dict) -> None:
    """The running text of every page against the claims (scoped by the page's role ``name``)."""
    questions = tuple(sorted(self_check_questions(pages)))
    for page in pages:
        messages, count = _prose_page(page.name, page.shown, page.text, questions, tuple(sorted(years.items())),
                                      tuple(claims))
        report.mismatches.extend(messages)
        report.counts["prose"] += count


@lru_cache(maxsize=64)
def _prose_page(name: str, shown: str, page_text: str, questions: tuple, years: tuple, claims: tuple) -> tuple:
    """(messages, numbers checked) for one page (cached: a page checked twice is read once)."""
    years, report = dict(years), Report()
    for line_no, raw, section, question in prose_lines(name, page_text, hand_checked=name == CHAPTER_NAME):
        text = normalise_prose(raw)
        numbers = [(m.start(), m.end(), m.group()) for m in PROSE_NUMBER.finditer(text)]
        if not numbers:
            continue
        covered = [False] * len(numbers)

        def cover(start, end):
            for k, (s, e, _) in enumerate(numbers):
                if s >= start and e <= end:
                    covered[k] = True

        for pattern in NOT_QUANTITIES:
            for m in pattern.finditer(text):
                cover(*m.span())
        # Years: next to a citation of a bib entry from that year.
        cited = {key.strip() for keys in re.findall(r"⟦cite:([^⟧]*)⟧", text) for key in keys.split(",")}
        for m in re.finditer(r"(?<!\d)(\d{4})\s*年", text):
            if m.group(1) in {years.get(k) for k in cited}:
                cover(*m.span(1))
                report.counts["prose"] += 1
            elif cited:
                report.fail(None, f"{shown}:{line_no}: year {m.group(1)} is not the year of the cited "
                                  f"{', '.join(sorted(cited))} in references.bib")
        # Question numbers in 课后自检 and references to them.
        for m in re.finditer(r"第\s*(\d+)\s*题", text):
            cover(*m.span(1))
            report.counts["prose"] += 1
            if int(m.group(1)) not in questions:
                report.fail(None, f"{shown}:{line_no}: there is no self-check question {m.group(1)}")
        # "前 9 题……接下来 3 题……最后 1 题": the parts must add up to the questions there are.
        if re.search(r"前\s*\d+\s*题", text):
            parts = list(re.finditer(r"(?:前|接下来|最后|后)\s*(\d+)\s*题", text))
            for m in parts:
                cover(*m.span(1))
            report.counts["prose"] += 1
            total = sum(int(m.group(1)) for m in parts)
            if questions and (max(questions) != total or len(questions) != total):
                report.fail(None, f"{shown}:{line_no}: {' + '.join(m.group(1) for m in parts)} questions, "
                                  f"but 课后自检 has {len(questions)}")
        scope = {name, section, question}
        for claim in claims:
            if (claim.where and not scope & set(claim.where)) or scope & set(claim.exclude):
                continue
            named = set(claim.compiled.groupindex.values())
            for m in claim.compiled.finditer(text):
                try:
                    expected = claim.expected(m) if callable(claim.expected) else claim.expected
                except ValueError as exc:
                    report.fail(None, f"{shown}:{line_no}: {claim.what}: {exc}")
                    continue
                groups = [(m.group(k), m.span(k)) for k in range(1, len(m.groups()) + 1)
                          if k not in named and m.group(k) is not None]
                for k, (group, span) in enumerate(groups):
                    cover(*span)
                    report.counts["prose"] += 1
                    try:
                        value = _parse_value(group)
                    except ValueError as exc:
                        report.fail(None, f"{shown}:{line_no}: {claim.what}: {exc}")
                        continue
                    if claim.member:
                        pool = np.asarray(expected, dtype=float).ravel()
                        if not any(equal(value, p, _printed_tol(group, ())) for p in pool):
                            report.fail(None, f"{shown}:{line_no}: {claim.what}: {group} is not one of "
                                              f"{show(np.unique(pool))}")
                        continue
                    want = np.asarray(expected[k], dtype=float)
                    if not equal(value, want, _printed_tol(group, np.shape(want))):
                        report.fail(None, f"{shown}:{line_no}: {claim.what}: the text says {group}, "
                                          f"attention_lab computes {show(want)}")
        for k, (s, e, token) in enumerate(numbers):
            if not covered[k]:
                report.fail(None, f"{shown}:{line_no}: unchecked number {token!r} in "
                                  f"“{text[max(0, s - 25):e + 25].strip()}” (glue it, or register a claim "
                                  f"in scripts/verify_concepts.py CLAIMS)")
    return tuple(report.mismatches), report.counts["prose"]


#: Numbers the chapter quotes from other chapters of the series (not on this site), so they cannot
#: be computed here; listed so that a change in the prose is still noticed.
QUOTED = {"F09 scores": (2.0, 1.0, 0.0),
          # the paper's footnote on √d_k: independent components of mean 0 and variance 1
          "the paper's assumption (mean, variance)": (0.0, 1.0)}


def build_claims() -> list[Claim]:
    """The prose's numeric claims, each tied to a value computed by attention_lab."""
    from attention_lab.chapter import (LAB_SATURATED, LAB_WQ, MATMUL_EXAMPLE, cross_attention_example, dot_product_spread,
                                       identity_qk_example, kv_cache_example, lab_experiments, multihead_example,
                                       self_check_cases)
    from attention_lab.params import RANGES

    t = baseline()
    r = attention(**t)
    rb = attention(**baseline("only_wv"))
    rq = attention(**baseline("only_wq"))
    rc = cross_attention_example()
    ri = identity_qk_example()
    sc = self_check_cases()
    unscaled = attention(**t, d_k=1)
    lab = lab_experiments()
    mh = multihead_example()
    kv = kv_cache_example()
    wq_factor = float(np.mean(np.asarray(LAB_WQ["wq6"]) / t["Wq"]))
    diff_factor = float((lab["wq6"].raw_scores[1, 0] - lab["wq6"].raw_scores[1, 1])
                        / (r.raw_scores[1, 0] - r.raw_scores[1, 1]))
    one = float(r.A.sum(axis=1).max())  # each row of A sums to 1
    saturated = softmax(np.array([[1e3, 0.0]]))[0]  # softmax far apart: [1, 0]
    from attention_lab.chapter import saturated_example
    from attention_lab.formatting import power_value
    from attention_lab.worked import fmt as worked_fmt, worked_steps

    sat = saturated_example()  # 爱 scores [324/√2, 0]: in floats its shares are [1, 3.2e-100]
    sat_line = next(s["text"] for s in worked_steps(sat, ROW) if s["key"] == "shares")
    sat_texts = re.search(r"\[(.*)\]", sat_line).group(1).split(", ")  # as the worked text writes them
    sat_values = [power_value(t) for t in sat_texts]  # exact values of the written shares
    sat_neither = min(sat_values) > 0 and max(sat_values) < 1  # in floats the large one is exactly 1
    V = r.V
    eye = np.asarray(baseline("only_wv")["Wv"], dtype=float)
    scaled_spread = sorted({round(scaled) for _raw, scaled in dot_product_spread().values()})
    c = Claim
    claims = [
        # --- the input and the parameter tables
        c("X's width (d_model)", r"表示宽度设为 (\d+)", [t["X"].shape[1]]),
        c("X's shape", r"形状为 \[(\d+), (\d+)\] = \[词元位置数", list(t["X"].shape)),
        c("X's entries", r"方括号里的 ([-−]?\d+) 和 ([-−]?\d+)", t["X"], member=True),
        c("the matrix-product example's table", r"表里的 (\d+)、(\d+)、(\d+)、(\d+)",
          np.ravel(MATMUL_EXAMPLE["table"]).tolist()),
        c("W's shape", r"\[(\d+), (\d+)\]，输出宽度", list(t["Wq"].shape)),
        c("Q/K/V's shape", r"每张表都是 (\d+) 行，每行 (\d+) 个数", list(r.Q.shape)),
        c("W's shape", r"(\d+) 行 (\d+) 列的(?:系数|参数)表", list(t["Wq"].shape)),
        c("Wq's entries", r"W_q 里的 ([-−]?\d+(?:\.\d+)?)", t["Wq"], member=True),
        c("the identity table of contrast 1", r"单位矩阵 (\[\[.*?\]\])", [baseline("only_wv")["Wv"]]),
        c("the identity's diagonal and the rest", r"对角线上是 (\d+)、其余是 (\d+) 的方阵",
          [float(np.diag(eye)[0]), float(eye[0, 1])] if np.array_equal(eye, np.eye(len(eye))) else [None]),
        c("the 爱 row's mask adds 0 where it may read", r"能读的位置加 (\d+)",
          [float(r.M[ROW][np.isfinite(r.M[ROW])][0])], where=("f11-attention.md",)),
        c("the 爱 row reads both: its mask row is all 0", r"这一行只加 (\d+)",
          [float(r.M[ROW, 0])] if np.all(r.M[ROW] == r.M[ROW, 0]) else [None], where=("f11-attention.md",)),
        c("no mask: M is all zeros", r"没有掩码时全是 ([-−]?\d+)",
          [float(rc.M.flat[0])] if np.all(rc.M == rc.M.flat[0]) else [None]),
        c("the spread of q·k/√d (the √d_k cell)", r"标准差都回到 (\d+) 附近",
          [scaled_spread[0]] if len(scaled_spread) == 1 else [None], where=("f11-attention.md",)),
        c("numpy's printed shape of X", r"X\.shape 打印出 \((\d+), (\d+)\)", list(t["X"].shape)),
        c("the paper's assumption (quoted)", r"均值都是 (\d+)、方差都是 (\d+)",
          list(QUOTED["the paper's assumption (mean, variance)"])),
        # --- step 1: dot products
        c("q₁·k₀", r"q₁ 和 k₀ 方向相同，得分 ([-−]?\d+)", [r.raw_scores[1, 0]]),
        c("q₁·k₁", r"q₁ 和 k₁ 互相垂直，得分 ([-−]?\d+)", [r.raw_scores[1, 1]]),
        c("k₀·k₁ (orthogonal)", r"互相垂直（正交），点积为 ([-−]?\d+)", [float(r.K[0] @ r.K[1])]),
        c("a key opposite to q₁", r"某个键是 (\[[^\]]*\])", [-r.Q[1]]),
        # --- d_k and the root
        c("d_k", r"d_k\s*=\s*(\d+(?:\.\d+)?)", [r.d_k], where=("f11-attention.md", "notation.md"),
          exclude=("Q12", "lab.md")),
        # every √k (in text, inline math and after a "/") is √d_k of the case in scope
        c("√d_k", r"√(\d+(?:\.\d+)?)", [r.d_k], where=("f11-attention.md",), exclude=("Q12",)),
        c("√d_k of self-check 12", r"√(\d+(?:\.\d+)?)", [self_check_cases()["dk8"].d_k], where="Q12"),
        c("unscaled: divide by √1 = 1", r"除以 (\d+)，而不是", [unscaled.scale]),
        # --- softmax facts, on the computed shares
        c("a row of shares sums to 1", r"和为 (\d+)", [one]),
        c("a row of shares sums to 1", r"加起来(?:等于|都是|是) (\d+)", [one]),
        c("shares are not negative", r"(?:不小于|大于等于) (\d+)", [float(min(r.A.min(), 0.0))]),
        c("the largest exponential after subtracting the max", r"最大的指数恰好是 (\d+)",
          [float(softmax_steps(r.S[ROW]).exps.max())]),
        c("a saturated share is near 1", r"份额接近 (\d+)", [saturated[0]]),
        # --- saturation (issue 28): a readable share rounds to 0 (or 1) at ten decimals, yet is not,
        # and the worked text writes it otherwise; only a masked share is exactly 0.
        c("a readable share is never 0, nor 1 beside another (the saturated example, exactly)",
          r"份额不会是 (\d+)；一行里还有别的能读的位置时，份额也不会是 (\d+)",
          [0.0, 1.0] if sat_neither else [None, None], where=("f11-attention.md",)),
        c("the saturated small share rounds to this at ten decimals", r"四舍五入到十位小数会只剩 (\d+)",
          [float(worked_fmt(float(sat.A[ROW].min())))], where=("f11-attention.md", "lab.md")),
        c("the saturated large share is written as 1 minus the small one", r"写成“(\d+) 减去它”",
          [1.0] if sat_texts[0].startswith("1 − ") else [None], where=("f11-attention.md",)),
        c("the worked text writes neither 0 nor 1 for them", r"而不写 (\d+)(?: 和 (\d+))?",
          [0.0, 1.0] if sat_neither and not {"0", "1"} & set(sat_texts) else [None, None],
          where=("f11-attention.md", "lab.md")),
        c("a masked share is exactly 0", r"份额才恰好是 (\d+)", [float(r.A[0, 1])] if np.isneginf(r.S[0, 1]) else [None],
          where=("f11-attention.md", "lab.md")),
        c("experiment 3 pushed further: X and Wk", r"X 和 Wk 也都改成 (\[\[.*?\]\])",
          [LAB_SATURATED["X"]] if LAB_SATURATED["X"] == LAB_SATURATED["Wk"] else [None], where="lab.md"),
        c("and the other near 0", r"另一个接近 (\d+)", [saturated[1]]),
        c("large d_k: scaled scores near 0", r"缩放分数越接近 (\d+)", [float(r.raw_scores[1, 0] / np.sqrt(np.inf))]),
        c("the lab's steps, numbered in order", r"(\d) 原始分数[^→]*→ (\d) 除以[^→]*→ (\d) 加上掩码[^→]*→ (\d) softmax"
          r"[^→]*→ (\d) 乘", [1, 2, 3, 4, 5]),
        # --- numbers quoted from chapters that are not on this site (cannot be computed here)
        c("F09's example scores (quoted)", r"F09 章把 softmax 用在词表候选的分数 \[(\d+), (\d+), (\d+)\]",
          list(QUOTED["F09 scores"])),
        # --- step 4: weighted average
        c("V's columns", r"第 0 格在 (\d+) 和 (\d+) 之间、偏向“我”的 (\d+)；第 1 格在 (\d+) 和 (\d+) 之间、"
          r"同样偏向“我”的 (\d+)",
          [V[:, 0].min(), V[:, 0].max(), V[0, 0], V[:, 1].min(), V[:, 1].max(), V[0, 1]]
          if r.A[1, 0] > r.A[1, 1] else [None]),
        # --- the mask
        c("M's allowed cells", r"允许(?:读)?的位置加 ([-−]?\d+)", [r.M[1, 0]]),
        c("exp(−∞) is taken as its limit", r"按极限取 ([-−]?\d+)", [float(np.exp(-np.inf))]),
        c("a masked cell's share", r"份额为 (\d+(?:\.\d+)?)", [r.A[0, 1]], where=("f11-matrix",)),
        c("M's allowed cells", r"([-−]?\d+) 表示允许", [r.M[1, 0]]),
        c("M's row for 爱 (every cell the same)", r"这一行的掩码只加 ([-−]?\d+)", [float(r.M[1, 0])]
          if np.all(r.M[1] == r.M[1, 0]) else [None]),
        c("row 0's share", r"份额是 (\d+(?:\.\d+)?)(?![\d,\]])", [r.A[0, 0]], where=("f11-matrix", "Q3")),
        c("every table's shape", r"形状恰好都是 \[(\d+), (\d+)\]", list(r.S.shape)),
        # --- cross-attention
        c("cross-attention n", r"目标一侧有 (\d+) 个位置", [rc.Q.shape[0]]),
        c("cross-attention d_v", r"每个值有 (\d+) 个数", [rc.V.shape[1]]),
        c("cross-attention d_v, d_k", r"d_v=(\d+)，而 d_k=(\d+)", [rc.V.shape[1], rc.d_k]),
        c("cross-attention shapes", r"份额表是 \[(\d+), (\d+)\]，输出表是 \[(\d+), (\d+)\]，都不是 \[(\d+), (\d+)\]",
          [*rc.A.shape, *rc.O.shape, *r.A.shape]),
        c("cross-attention's constant V column", r"在这一列都是 ([-−]?\d+(?:\.\d+)?)", rc.V[:, -1], member=True),
        c("cross-attention sizes (self-check 6)", r"n=(\d+)，m=(\d+)，d_k=(\d+)，d_v=(\d+)",
          [rc.Q.shape[0], rc.K.shape[0], rc.d_k, rc.V.shape[1]]),
        c("cross-attention shapes (self-check 6)", r"\[n, m\] = \[(\d+), (\d+)\]，O 是 \[n, d_v\] = \[(\d+), (\d+)\]",
          [*rc.A.shape, *rc.O.shape]),
        # --- the two contrasts and Wq = Wk = I
        c("contrast 2's scaled score", r"缩放分数变为 \[([-−]?\d+(?:\.\d+)?), ⟨g⟩\]", [rq.S[1, 0]]),
        c("Wq = Wk = I's scaled score", r"缩放分数是 \[([-−]?\d+(?:\.\d+)?), ⟨g⟩\]", [ri.S[1, 0]]),
        # --- self-check answers
        c("row 0's shares and output", r"份额是 (\[[^\]]*\])，输出恰好是 (\[[^\]]*\])", [r.A[0], r.O[0]]),
        c("row 0's output is 1×v₀", r"(\d+)×v₀ = (\[[^\]]*\])", [r.A[0, 0], r.O[0]]),
        c("raw scores of row 1 and their scaling", r"原始分数 (\[[^\]]*\]) 缩成 \[⟨g⟩, ([-−]?\d+)\]",
          [r.raw_scores[1], r.S[1, 1]]),
        c("x₁′ (self-check 10)", r"x₁′\s*=\s*(\[[^\]]*\])", [self_check_tables()["x1_20"]["X"][1]], where="Q10"),
        c("the sliders for x₁′", r"拖到 ([-−]?\d+) 和 ([-−]?\d+)", list(self_check_tables()["x1_20"]["X"][1]),
          where="Q10"),
        c("scaled scores of self-check 10", r"\[(\d+)/√(\d+), (\d+)/√(\d+)\]",
          [sc["x1_20"].raw_scores[1, 0], sc["x1_20"].d_k, sc["x1_20"].raw_scores[1, 1], sc["x1_20"].d_k],
          where="Q10"),
        c("the score difference", r"都是 (\d+)/√(\d+)",
          [abs(r.raw_scores[1, 0] - r.raw_scores[1, 1]), r.d_k], where="Q10"),
        c("V's column 0 in self-check 10", r"第 0 格的两个值都是 (\d+)", sc["x1_20"].V[:, 0], member=True,
          where="Q10"),
        c("o₁′[0] in self-check 10", r"加权平均还是 (\d+)", [sc["x1_20"].O[1, 0]], where="Q10"),
        c("scaled scores of self-check 11", r"\[([-−]?\d+), (\d+)/√(\d+)\]",
          [sc["nomask"].S[0, 0], sc["nomask"].raw_scores[0, 1], sc["nomask"].d_k], where="Q11"),
        c("d_k of self-check 12", r"d_k 换成 (\d+)", [sc["dk8"].d_k], where="Q12"),
        c("d_k slider of self-check 12", r"d_k 滑块拖到 (\d+)", [sc["dk8"].d_k], where="Q12"),
        c("Q's real width", r"实际宽度仍是 (\d+)", [sc["dk8"].Q.shape[1]], where="Q12"),
        c("scaled scores of self-check 12", r"\[(\d+)/√(\d+), ([-−]?\d+)\]",
          [sc["dk8"].raw_scores[1, 0], sc["dk8"].d_k, sc["dk8"].S[1, 1]], where="Q12"),
        c("scaled score of self-check 12", r"即 \[⟨g⟩, ([-−]?\d+)\]", [sc["dk8"].S[1, 1]], where="Q12"),
        # --- notation.md's table: the example's shapes
        c("a table's shape in notation", r"^\|\s*(?P<sym>[^|]+?)\s*\|.*\|\s*\[(\d+),\s*(\d+)\]",
          lambda m: list(_notation_shape(m.group("sym"), t, r)), where="notation.md"),
        # --- index.md
        c("d_model", r"(\d+) 维特征", [t["X"].shape[1]], where="index.md"),
        c("W's shape", r"(\d+)×(\d+) 的参数表", list(t["Wq"].shape), where="index.md"),
        c("d_model", r"(\d+)-dimensional", [t["X"].shape[1]], where="index.md"),
        # --- lab.md: the lab's ranges (attention_lab.params.RANGES)
        c("d_k's slider range", r"d_k 从 (\d+) 拖到 (\d+)", [RANGES["d_k"].min, RANGES["d_k"].max], where="lab.md"),
        c("d_k = 1 is no scaling", r"d_k\s*=\s*(\d+) 相当于不缩放", [lab["dk1"].d_k], where="lab.md"),
        c("d_k at the slider's end", r"d_k\s*=\s*(\d+) 时是", [lab["dk64"].d_k], where="lab.md"),
        c("experiment 3's sliders", r"依次拖到 ([-−]?\d+(?:\.\d+)?)、([-−]?\d+(?:\.\d+)?)、([-−]?\d+(?:\.\d+)?)、"
          r"([-−]?\d+(?:\.\d+)?)", np.ravel(LAB_WQ["wq6"]).tolist(), where="lab.md"),
        c("the baseline Wq", r"基准 Wq = (\[\[.*?\]\])", [t["Wq"]], where="lab.md"),
        c("experiment 3's counter-example Wq", r"反例 Wq = (\[\[.*?\]\])", [LAB_WQ["wq0"]], where="lab.md"),
        c("experiment 3's Wq", r"(?<!基准 )(?<!反例 )Wq = (\[\[.*?\]\])", [LAB_WQ["wq6"]], where="lab.md"),
        c("experiment 3's factor", r"基准 Wq 的 (\d+(?:\.\d+)?) 倍", [wq_factor], where="lab.md"),
        c("experiment 3's factor", r"Wq 放大 (\d+(?:\.\d+)?) 倍", [wq_factor], where="lab.md"),
        c("the score difference grows by the same factor", r"之差也放大 (\d+(?:\.\d+)?) 倍", [diff_factor],
          where="lab.md"),
        c("experiment 3's entries", r"往 ±(\d+(?:\.\d+)?)", np.abs(LAB_WQ["wq6"]), member=True, where="lab.md"),
        c("the counter-example's q₁", r"q₁ 成了 (\[[^\]]*\])", [lab["wq0"].Q[1]], where="lab.md"),
        c("x_i is one row of X", r"\[(\d+), d_model\]", [t["X"][:1].shape[0]], where="notation.md"),
        c("W_o's shape in the multi-head example", r"多头例子里是 \[(\d+), (\d+)\]", list(mh["Wo"].shape),
          where="notation.md"),
        c("a KV cache: one new query", r"一个查询，于是 n\s*=\s*(\d+)", [kv.Q.shape[0]], where="notation.md"),
        c("Q's width", r"实际宽度始终是 (\d+)", [r.Q.shape[1]], where="lab.md"),
        c("row 0's shares", r"不再是 (\[[^\]]*\])", [r.A[0]], where="lab.md"),
    ]
    claims += name_claims(r, t["X"], scope_out=("Q10", "Q11", "Q12"))
    claims += name_claims(sc["x1_20"], self_check_tables()["x1_20"]["X"], where=("Q10",))
    claims += name_claims(sc["nomask"], t["X"], where=("Q11",))
    claims += name_claims(sc["dk8"], t["X"], where=("Q12",))
    claims += shape_claims()
    claims += exercise_claims()
    claims += course_claims()
    return claims


def _slope_fd(scores: np.ndarray, j: int = 0, eps: float = 1e-6) -> float:
    """∂A_j/∂S_j of the core's softmax on one row, by a central difference (independent of A(1 − A))."""
    up, down = scores.copy(), scores.copy()
    up[j] += eps
    down[j] -= eps
    return float((softmax(up)[j] - softmax(down)[j]) / (2 * eps))


def _readable(M: np.ndarray) -> np.ndarray:
    return np.isfinite(M)


def course_claims() -> list[Claim]:
    """The chapter's strong-course points (issue 28, item 3): the softmax's slope, the factors of the
    saturation table, dropout, a fully masked row's 0/0 and padding with the causal mask, each held
    to what attention_lab computes."""
    from attention_lab.chapter import SATURATION_FACTORS, kv_cache_example
    from attention_lab.core import causal_mask, padding_mask

    c = Claim
    row = attention(**baseline()).S[ROW]
    # The constant in A(c − A): the finite-difference slope at several shares gives c = slope/A + A.
    consts = {round(_slope_fd(t * row) / softmax(t * row)[0] + softmax(t * row)[0], 6) for t in (0.5, 1, 3)}
    tails = [_slope_fd(np.array([s, 0.0])) for s in (-30.0, 30.0)]  # shares near 0 and near 1
    ends = [float(round(softmax(np.array([s, 0.0]))[0])) for s in (-30.0, 30.0)]
    flat = [0.0] if max(abs(v) for v in tails) < 1e-9 else [None]

    def dropout(A, p, seed=0):  # inverted dropout, as torch.dropout: drop with probability p, scale the rest
        keep = np.random.default_rng(seed).random(A.shape) >= p
        return np.where(keep, A / (1 - p), 0.0)

    shares = attention(**baseline()).A
    identity_p = [p for p in (0.0, 0.1, 0.5) if all(np.array_equal(dropout(shares, p, s), shares) for s in range(5))]
    exps = np.exp(np.array([-np.inf, -np.inf]))
    with np.errstate(invalid="ignore"):
        nan = bool(np.isnan(exps / exps.sum()).all())
    # Padding at the end with the causal mask: the columns every row can still read, over sizes.
    common = set.intersection(*[set(np.flatnonzero(_readable(causal_mask(n) + padding_mask(n, n, p)).all(axis=0)))
                                for n in range(2, 7) for p in range(1, n)])
    # Padding at the front with the causal mask: row 0 has nothing to read (its exps sum to 0).
    n, p = 3, 1
    front = np.zeros((n, n))
    front[:, :p] = -np.inf
    front = front + causal_mask(n)
    row0 = np.exp(front[0])
    front_blocked = [float(row0.max()), float(row0.sum())] if not _readable(front[0]).any() else [None, None]
    kv = kv_cache_example()
    here = ("f11-attention.md",)
    return [
        c("the softmax's slope in its own score is A(1 − A) (finite differences of the core's softmax)",
          r"A_\{ij\}\\?,?\s*\((\d+) [-−] A_\{ij\}\)", [consts.pop()] if len(consts) == 1 else [None], where=here),
        c("the slope goes to 0 as a share nears 0 or 1", r"份额越接近 (\d+) 或 (\d+)，斜率越接近 (\d+)",
          ends + flat, where=here),
        c("near 0 and 1 the adjustment is small", r"份额越接近 (\d+) 和 (\d+)，W_q", ends, where=here),
        c("the saturation table's factors", r"同乘 t = (\d+)、(\d+)、(\d+)、(\d+)", list(SATURATION_FACTORS), where=here),
        c("the saturation table's first and last factor", r"t 从 (\d+) 到 (\d+)",
          [min(SATURATION_FACTORS), max(SATURATION_FACTORS)], where=here),
        c("dropout leaves the shares as they are only for this p", r"dropout_p=(\d+(?:\.\d+)?)",
          identity_p if len(identity_p) == 1 else [None], where=here),
        c("a fully masked row: exp(−∞) = 0 above and below, 0/0 is NaN", r"分子和分母都是 (\d+)，得到 (\d+)/(\d+)",
          [float(exps.max()), float(exps.max()), float(exps.sum())] if nan else [None] * 3, where=here),
        c("padding at the front with the causal mask: the first row is 0/0", r"成了上面的 (\d+)/(\d+)", front_blocked,
          where=here),
        c("padding at the end with the causal mask: every row can still read this position",
          r"每一行至少还能读第 (\d+) 个位置", [float(min(common))] if len(common) == 1 else [None], where=here),
        c("a KV cache: the new token computes one row", r"只算自己那一行（n\s*=\s*(\d+)）", [kv.Q.shape[0]], where=here),
    ]


def shape_claims() -> list[Claim]:
    """shapes.md: the shapes lab's defaults and its walk-through (attention_lab.shapes.walkthrough)."""
    from attention_lab.shapes import compute, default_value, walkthrough

    c = Claim
    s1, s2, s3, s4 = walkthrough()
    r1, r2, r3, r4 = (compute(s) for s in (s1, s2, s3, s4))
    grown = sorted({default_value("X", i, j) for i in range(6) for j in range(4) if i >= 2 or j >= 2})
    return [
        c("the chapter's tables", r"(\d+)×(\d+)", [2, 2], where="shapes.md"),
        c("a caption's shape", r"例如 S 分数表 \[(\d+), (\d+)\]", list(r3.S.shape), where="shapes.md"),
        c("new X cells", r"X 格是 ([-−]?\d+)、([-−]?\d+)、([-−]?\d+) 中的一个", grown, where="shapes.md"),
        c("new W cells", r"对角线上是 (\d+)、其余是 (\d+)", [default_value("Wq", 3, 3), default_value("Wq", 3, 2)],
          where="shapes.md"),
        c("step 1", r"把 n 改成 (\d+)", [s1["n"]], where="shapes.md"),
        c("step 1's S", r"S 和 A 变成 \[(\d+), (\d+)\]", list(r1.S.shape), where="shapes.md"),
        c("step 2", r"把 d_v 改成 (\d+)", [s2["d_v"]], where="shapes.md"),
        c("step 2's O", r"V 和 O 变成 \[(\d+), (\d+)\]", list(r2.O.shape), where="shapes.md"),
        c("step 2's S", r"S、A 仍是 \[(\d+), (\d+)\]", list(r2.S.shape), where="shapes.md"),
        c("step 3", r"把 m 改成 (\d+)", [s3["m"]], where="shapes.md"),
        c("step 3's S", r"S 变成 \[(\d+), (\d+)\]", list(r3.S.shape), where="shapes.md"),
        c("step 3's keys", r"读 (\d+) 个源位置", [r3.S.shape[1]], where="shapes.md"),
        c("step 4", r"把填充 p 改成 (\d+)", [s4["pad"]], where="shapes.md"),
        c("step 4's column", r"份额全是 (\d+)", [float(r4.A[:, -1].max())], where="shapes.md"),
    ]


def exercise_claims() -> list[Claim]:
    """exercises.md: the axes, permutations and arguments its prose names, each tried on an array of
    the shape the text says (or on attention_lab.exercises' cases) and held to what it must do."""
    from attention_lab.exercises import AXES, attention_cases, core_answer

    c = Claim
    b, n, h, d = 2, 3, 4, 5  # distinct sizes: an axis or a permutation that is off gives another shape
    heads_last, heads_first = np.zeros((b, n, h, d)), (b, h, n, d)
    case = attention_cases()[0]
    S = case.Q @ case.K.T + case.M

    def rows_sum_to_one(axis: int) -> bool:  # a softmax along `axis` of an (n, m) table: each row sums to 1
        A = np.exp(S - S.max(axis=axis, keepdims=True))
        return bool(np.allclose((A / A.sum(axis=axis, keepdims=True)).sum(axis=-1), 1.0))

    def given(m, ok) -> list:
        """The captured numbers when ``ok(*numbers)`` holds (then they equal themselves), else None."""
        numbers = [int(g.replace("−", "-")) for g in m.groups()]
        return [float(x) for x in numbers] if ok(*numbers) else [None] * len(numbers)

    def scaled_by_factor_is_core(k: int) -> bool:  # softmax(QKᵀ·k/√d_k + M)V against the core (d_k ≠ width)
        t = attention_cases(d_k_under_root=True)[1]
        T = t.Q @ t.K.T * (k / np.sqrt(t.d_k)) + t.M
        A = np.exp(T - T.max(axis=-1, keepdims=True))
        return bool(np.allclose(A / A.sum(axis=-1, keepdims=True) @ t.V, core_answer(t)))

    keys_axis, wrong_axis = AXES["keys"], AXES["queries"] + S.ndim  # the queries' axis of a 2-D table
    return [
        c("softmax along the last axis: each query's row of shares sums to 1", r"axis=([-−]?\d+) 是最后一维",
          lambda m: given(m, lambda a: a == keys_axis and rows_sum_to_one(a)), where="exercises.md"),
        c("the wrong axis to try is the queries' (its rows do not sum to 1)",
          r"两处 axis=([-−]?\d+) 改成 axis=([-−]?\d+)",
          lambda m: given(m, lambda a, z: a == keys_axis and z == wrong_axis and not rows_sum_to_one(z)),
          where="exercises.md"),
        c("transpose(…) takes (batch, n, h, d) to (batch, h, n, d)", r"transpose\((\d+), (\d+), (\d+), (\d+)\)",
          lambda m: given(m, lambda *p: heads_last.transpose(p).shape == heads_first), where="exercises.md"),
        c("torch's transpose(i, j) swaps positions and heads", r"transpose\((\d+), (\d+)\)",
          lambda m: given(m, lambda i, j: heads_last.swapaxes(i, j).shape == heads_first), where="exercises.md"),
        c("swapaxes(…) swaps only the last two axes (keys and features)", r"swapaxes\(([-−]?\d+), ([-−]?\d+)\)",
          lambda m: given(m, lambda i, j: heads_last.swapaxes(i, j).shape == (b, n, d, h)), where="exercises.md"),
        c("shape[…] is the width (the last axis)", r"shape\[([-−]?\d+)\]",
          lambda m: given(m, lambda i: heads_last.shape[i] == d), where="exercises.md"),
        c("the size left for reshape/view to work out", r"(?:view\(batch, 位置数, h|reshape\(batch, n), ([-−]?\d+)\)",
          lambda m: given(m, lambda k: np.zeros((b, n, h * d)).reshape(b, n, k).shape == (b, n, h * d)),
          where="exercises.md"),
        c("the size left for reshape/view to work out", r"里的 ([-−]?\d+) 让",
          lambda m: given(m, lambda k: np.zeros((b, n, h * d)).reshape(b, n, k).shape == (b, n, h * d)),
          where="exercises.md"),
        c("scale= is the factor on QKᵀ: k / √d_k gives the core's answer only for k = 1",
          r"scale=(\d+) / math\.sqrt\(d_k\)", lambda m: given(m, scaled_by_factor_is_core),
          where=("exercises.md", "f11-attention.md")),
        c("M's allowed cells hold 0 (a boolean mask M == 0: True = may read)", r"M == (\d+)",
          lambda m: given(m, lambda k: bool(np.all(np.isfinite(case.M) == (case.M == k)))), where="exercises.md"),
    ]


def self_check_tables() -> dict:
    """The input tables of the self-check cases (for claims about what the reader types)."""
    t = baseline()
    return {"x1_20": {**t, "X": np.array([t["X"][0], [2.0, 0.0]])}}


def self_check_labels() -> dict:
    """Primed names of the computing self-checks (hand blocks): question 10 changes x₁ to [2, 0]."""
    from attention_lab.chapter import self_check_cases

    x = self_check_cases()["x1_20"]
    labels = {"x₁′": self_check_tables()["x1_20"]["X"][1], "q₁′": x.Q[1], "k₁′": x.K[1], "v₁′": x.V[1],
              "q₁′·k₀": x.raw_scores[1, 0], "q₁′·k₁′": x.raw_scores[1, 1], "o₁′": x.O[1]}
    return {name: np.asarray(value, dtype=float) for name, value in labels.items()}


def _notation_shape(sym: str, t, r):
    head = re.split(r"[=、]", sym.strip())[0].strip()
    table = {"X": t["X"], "W_q": t["Wq"], "W_k": t["Wk"], "W_v": t["Wv"], "Q": r.Q, "K": r.K, "V": r.V,
             "QKᵀ": r.raw_scores, "M": r.M, "S": r.S, "A": r.A, "O": r.O}
    if head not in table:
        raise ValueError(f"notation row {sym!r} names no table the chapter computes")
    return table[head].shape


def name_claims(res, X, where=(), scope_out=()) -> list[Claim]:
    """``x₀=[1, 1]``, ``q₁ = [1, 0]``, ``q₀·k₁ = 1`` ... written in prose, against ``res``.

    Primed names (``x₁′``) refer to the self-check case in scope: the same rows as ``res``.
    """
    sub = "₀₁₂₃₄₅₆₇₈₉"
    n = res.Q.shape[0]
    out = []
    value = r"\s*=\s*(\[[^\[\]]*\]|[-−]?\d+(?:\.\d+)?)"
    for i in range(n):
        for name, table in (("x", X), ("q", res.Q), ("k", res.K), ("v", res.V)):
            out.append(Claim(f"{name}{sub[i]}", rf"(?<![\w·]){name}{sub[i]}′?(?![·\w]){value}", [table[i]],
                             where=where, exclude=scope_out))
        for j in range(res.K.shape[0]):
            out.append(Claim(f"q{sub[i]}·k{sub[j]}", rf"q{sub[i]}′?·k{sub[j]}′?{value}", [res.raw_scores[i, j]],
                             where=where, exclude=scope_out))
    return out


@dataclass
class Page:
    """One page of the book: ``name`` is its role (``f11-attention.md`` for the chapter, whatever its
    file is called; otherwise the file name), ``shown`` the file name messages print."""
    name: str
    shown: str
    text: str


@lru_cache(maxsize=None)
def computed():
    """What every check compares with (computed once): known quantities, hand-block labels, claims."""
    cases = computed_cases()
    r = cases["基准"]
    labels = _labels(r, baseline())
    labels.update(self_check_labels())
    return known_quantities(cases), labels, build_claims()


def verify(chapter: Path, book: Path | None = None) -> Report:
    """Check ``chapter`` and every other page (``*.md``) of ``book`` (default: the chapter's folder)."""
    book = chapter.parent if book is None else book
    pages = [Page(CHAPTER_NAME, chapter.name, chapter.read_text(encoding="utf-8"))]
    for path in sorted(book.glob("*.md")):
        if path.resolve() != chapter.resolve() and path.name != CHAPTER_NAME:
            pages.append(Page(path.name, path.name, path.read_text(encoding="utf-8")))
    bib = book / "references.bib"
    bib = bib if bib.exists() else ROOT / "book" / "references.bib"
    return verify_pages(pages, bib.read_text(encoding="utf-8"), chapter.parent)


def verify_pages(pages: list[Page], bib: str, folder: Path = DEFAULT_CHAPTER.parent) -> Report:
    """The checks on the pages' texts (``pages[0]`` is the chapter; ``folder`` resolves its includes)."""
    known, labels, claims = computed()
    source = pages[0].text
    lines = source.splitlines()
    start = split_front_matter(lines)
    report = Report()

    for kind, _info, body in blocks(lines, start):
        if kind == "hand":
            for st in statements(body):
                check_statement(st, labels, known, report)
                check_signs(st, known, report)
    check_decimals(lines, start, known, report)
    check_excerpts(folder, source, report)
    check_prose(pages, claims, report, bib_years(bib))
    for page in pages:
        check_meaning(page, report)

    for label in REQUIRED_LABELS:
        if label not in report.checked_labels:
            report.fail(None, f"coverage: {label} is not stated (and checked) in any hand computation")
    text_without_glue = GLUE_ROLE.sub("", source)
    for value in TEN_DECIMALS:
        if value not in text_without_glue:
            report.fail(None, f"coverage: the ten-decimal value {value} does not appear in the chapter")
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", type=Path, default=DEFAULT_CHAPTER,
                        help="chapter source to check (default: book/f11-attention.md)")
    parser.add_argument("--book", type=Path, default=None,
                        help="folder with the other pages whose prose is checked "
                             "(notation.md, index.md, lab.md; default: the chapter's folder)")
    args = parser.parse_args(argv)
    if not args.chapter.exists():
        print(f"verify_concepts: no such chapter: {args.chapter}", file=sys.stderr)
        return 2
    report = verify(args.chapter, args.book)
    c = report.counts
    print(f"verify_concepts: {args.chapter}")
    print(f"  hand computations: {c['statements']} statements, {c['equalities']} written equalities, "
          f"{c['named']} named quantities compared with attention_lab")
    print(f"  decimals with >= 3 places: {c['decimals']} compared with the computed quantities")
    print(f"  prose: {c['prose']} numbers in running text compared with claims computed by attention_lab")
    print(f"  coverage: {len(report.checked_labels & set(REQUIRED_LABELS))}/{len(REQUIRED_LABELS)} "
          f"required quantities, {len(TEN_DECIMALS)} ten-decimal values")
    for message in report.warnings:
        print(f"  WARNING (to correct in the text): {message}")
    if report.mismatches:
        print(f"MISMATCH ({len(report.mismatches)}):")
        for message in report.mismatches:
            print(f"  {message}")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

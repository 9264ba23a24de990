#!/usr/bin/env python3
"""Recompute every number chapter F11 states, and fail naming any mismatch.

The chapter (``book/f11-attention.md``) writes its hand computations in plain
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
4. **Glue.**  Every ``{glue:text}`name``` the prose uses is glued by a cell.

Usage::

    python scripts/verify_concepts.py [--chapter PATH]

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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from attention_lab import attention, baseline  # noqa: E402
from attention_lab.chapter import cross_attention_example, softmax_steps  # noqa: E402

DEFAULT_CHAPTER = ROOT / "book" / "f11-attention.md"

#: The row the chapter computes by hand: position 1, "爱".
ROW = 1

#: The seven values the author's draft prints with ten decimals.
TEN_DECIMALS = (
    "0.7071067812",
    "0.4930686914",
    "1.4930686914",
    "0.6697615493",
    "0.3302384507",
    "6.6976154933",
    "6.6047690135",
)


def _labels(r, tables, steps) -> dict:
    """Name written in the chapter -> the baseline quantity it must equal."""
    X = tables["X"]
    labels = {
        "X": X, "x₀": X[0], "x₁": X[1],
        "Wq": tables["Wq"], "Wk": tables["Wk"], "Wv": tables["Wv"],
        "Q": r.Q, "K": r.K, "V": r.V, "M": r.M, "S": r.S, "A": r.A, "O": r.O,
        "QKᵀ": r.raw_scores,
        "原始分数": r.raw_scores[ROW],
        "缩放分数": r.S[ROW],
        "减最大值": steps.shifted,
        "取指数": steps.exps,
        "指数之和": np.float64(steps.total),
        "除以总和": steps.shares,
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
    for c in range(r.O.shape[1]):
        labels[f"输出第{c}格"] = r.O[ROW, c]
    return {name: np.asarray(value, dtype=float) for name, value in labels.items()}


#: Quantities that must be stated and checked in a hand-computation block.
REQUIRED_LABELS = (
    "q₀", "k₀", "v₀", "q₁", "k₁", "v₁",
    "q₁·k₀", "q₁·k₁", "原始分数", "缩放分数", "减最大值", "取指数", "指数之和", "除以总和",
    "输出第0格", "输出第1格", "o₁",
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
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
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
                                                  "named": 0, "decimals": 0})
    checked_labels: set = field(default_factory=set)

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


def blocks(lines: list[str], start: int):
    """Yield (kind, info, [(line_no, text), ...]) for fenced blocks; kind 'hand' or 'code'."""
    i = start
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        kind = "hand" if info in ("", "text", "none") else "code"
        yield kind, info, body


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


def check_decimals(lines, start, known, report: Report) -> None:
    for number, raw in enumerate(lines[start:], start=start + 1):
        text = GLUE_ROLE.sub("", raw)
        for m in NUMBER.finditer(text):
            report.counts["decimals"] += 1
            if unrounded(m.group(1), known) is None:
                nearest = min(known, key=lambda k: abs(k[0] - float(m.group(1))))
                report.fail(number, f"the decimal {m.group(1)} is not a number the chapter computes "
                                    f"(nearest: {nearest[0]:.12g} = {nearest[1]})")


def check_glue(source: str, report: Report) -> None:
    defined = set(re.findall(r"""\bglue\(\s*["'](\w+)["']""", source))
    for m in re.finditer(r"\{glue(?::\w+)?\}`(\w+)", source):
        if m.group(1) not in defined:
            line = source.count("\n", 0, m.start()) + 1
            report.fail(line, f"glue name {m.group(1)!r} is used but never glued")


def verify(chapter: Path) -> Report:
    source = chapter.read_text(encoding="utf-8")
    lines = source.splitlines()
    start = split_front_matter(lines)
    cases = computed_cases()
    known = known_quantities(cases)
    tables = baseline()
    r = cases["基准"]
    labels = _labels(r, tables, softmax_steps(r.S[ROW]))
    report = Report()

    for kind, _info, body in blocks(lines, start):
        if kind == "hand":
            for st in statements(body):
                check_statement(st, labels, known, report)
    check_decimals(lines, start, known, report)
    check_glue(source, report)

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
    args = parser.parse_args(argv)
    if not args.chapter.exists():
        print(f"verify_concepts: no such chapter: {args.chapter}", file=sys.stderr)
        return 2
    report = verify(args.chapter)
    c = report.counts
    print(f"verify_concepts: {args.chapter}")
    print(f"  hand computations: {c['statements']} statements, {c['equalities']} written equalities, "
          f"{c['named']} named quantities compared with attention_lab")
    print(f"  decimals with >= 3 places: {c['decimals']} compared with the computed quantities")
    print(f"  coverage: {len(report.checked_labels & set(REQUIRED_LABELS))}/{len(REQUIRED_LABELS)} "
          f"required quantities, {len(TEN_DECIMALS)} ten-decimal values")
    if report.mismatches:
        print(f"MISMATCH ({len(report.mismatches)}):")
        for message in report.mismatches:
            print(f"  {message}")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The worked arithmetic (attention_lab.worked): the five stages, in Chinese, from the core's numbers."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest

from attention_lab import attention, baseline
from attention_lab.formatting import power_value
from attention_lab.worked import STAGE, exact, factor, fmt, templates, vec, worked_stage, worked_steps, worked_text

# The draft's numbers for row 爱 (F11-draft.txt, "对“爱”这个位置，从打分一直算到新表示").
DRAFT_LINES_AI = [
    "接收位置 1：爱，q₁ = [1, 0]",
    "对“我”的原始分数：q₁·k₀ = 1×1+0×0 = 1",
    "对“爱”的原始分数：q₁·k₁ = 1×0+0×1 = 0",
    "缩放分数：[1/√2, 0/√2] ≈ [0.7071067812, 0]",
    "减最大值：[0, −0.7071067812]",
    "取指数：[1, 0.4930686914]",
    "指数之和：1.4930686914",
    "除以总和：[0.6697615493, 0.3302384507]",
    "输出第 0 格 = 0.6697615493×10 + 0.3302384507×0 ≈ 6.6976154933",
    "输出第 1 格 = 0.6697615493×0 + 0.3302384507×20 ≈ 6.6047690135",
    "“爱”位置的注意力输出 o₁ ≈ [6.6976154933, 6.6047690135]",
]


def numbers(text: str) -> list[float]:
    return [float(x.replace("−", "-")) for x in re.findall(r"[-−]?\d+(?:\.\d+)?", text)]


def shown_number(text: str) -> float:
    """A number as the worked text writes it (``−∞``, ``0.5``, ``3.2×10⁻¹⁰⁰``, ``1 − 3.2×10⁻¹⁰⁰``), as a float."""
    return -math.inf if text == "−∞" else float(power_value(text))


def shown_vector(text: str) -> list[float]:
    """The last ``[...]`` of a line, element by element (see :func:`shown_number`)."""
    return [shown_number(x) for x in re.findall(r"\[([^\[\]]*)\]", text)[-1].split(", ")]


def random_result(rng, causal=True):
    X = rng.uniform(-3, 3, (2, 2))
    Wq, Wk = rng.uniform(-3, 3, (2, 2)), rng.uniform(-3, 3, (2, 2))
    Wv = rng.uniform(-20, 20, (2, 2))
    return attention(X, Wq, Wk, Wv, d_k=int(rng.integers(1, 65)), causal=causal)


def test_fmt_trims_zeros_keeps_integers_and_writes_the_chapters_minus_sign():
    assert fmt(1.0) == "1"
    assert fmt(20.0) == "20"
    assert fmt(0.5) == "0.5"
    assert fmt(-0.5) == "−0.5"  # the chapter's minus sign, U+2212
    assert fmt(1 / math.sqrt(2)) == "0.7071067812"
    assert fmt(-1e-12) == "0"  # rounds to zero: no "-0"
    assert fmt(-math.inf) == "−∞"
    assert fmt(6.69761549330000) == "6.6976154933"


def test_worked_text_and_figure_cells_use_one_formatter_with_their_own_decimals():
    """worked.fmt (10 decimals) and plotting.format_value (3, the tables') are one function
    (formatting.format_number): the same text for the same digits, infinities and NaN too."""
    from attention_lab.formatting import CELL_DIGITS, WORKED_DIGITS, format_number
    from attention_lab.plotting import format_value

    rng = np.random.default_rng(19)
    values = [*rng.normal(0, 8, 200), *rng.uniform(-1e-9, 1e-9, 20), 0.0, -0.0, 10.0, -20.0,
              math.inf, -math.inf, math.nan, 2 / 3, -0.0004, 6.6976154933]
    for x in values:
        assert fmt(x) == format_number(x, WORKED_DIGITS) == format_value(x, WORKED_DIGITS), x
        assert format_value(x) == format_number(x, CELL_DIGITS) == format_number(x, 3), x
    assert [format_value(x) for x in (2 / 3, -0.0004, -13.30239, 1.0, -math.inf)] == [
        "0.667", "0", "−13.302", "1", "−∞"]
    # Without decimals a whole number keeps its zeros (the old cell formatter wrote 10 as "1").
    assert format_number(10.0, 0) == "10" and format_number(-20.4, 0) == "−20"


def test_a_bad_number_of_decimals_is_refused_with_a_clear_message():
    from attention_lab.formatting import format_number

    for digits in (-1, 2.5, "3", True, 21):
        with pytest.raises(ValueError, match="digits must be a whole number from 0 to 20"):
            format_number(1.5, digits)


def test_factor_puts_negative_numbers_in_parentheses():
    assert factor(-0.5) == "(−0.5)"
    assert factor(0.5) == "0.5"
    assert vec([1.0, -0.25]) == "[1, −0.25]"


def test_exact_means_the_shown_text_is_the_number():
    assert exact(0.5) and exact(10.0) and exact(-math.inf)
    assert not exact(1 / math.sqrt(2))


def test_row_ai_at_the_baseline_shows_the_drafts_values():
    lines = worked_text(attention(**baseline()), 1).splitlines()
    for expected in DRAFT_LINES_AI:
        assert expected in lines


# Row 我 at the baseline, whole: the masked 爱 is scored (q₀·k₁ = 1) and scaled (1/√2) like any
# key; the mask's −∞ first appears at stage 3, "+ M"; then softmax and × V (issue 16, item 1).
MASKED_ROW_WO = """\
接收位置 0：我，q₀ = [0, 1]
被读取位置 0：我，k₀ = [1, 0]，v₀ = [10, 0]
被读取位置 1：爱，k₁ = [0, 1]；它在“我”后面，因果掩码不许读它。
第一步：查询和每一个键打分。
对“我”的原始分数：q₀·k₀ = 0×1+1×0 = 0
对“爱”的原始分数：q₀·k₁ = 0×0+1×1 = 1
原始分数：[0, 1]，顺序仍是 [我, 爱]
第二步：把分数除以 √d_k（缩放），这里 d_k=2。
缩放分数：[0/√2, 1/√2] ≈ [0, 0.7071067812]
第三步：加上掩码 M，得到分数 S。
加上掩码：[0, 0.7071067812] + [0, −∞] = [0, −∞]
对“爱”：掩码在这一格加 −∞，缩放分数 0.7071067812 不再起作用，分数变成 −∞。
第四步：沿被读取位置做 softmax，得到读取份额。
减最大值：[0, −∞]
取指数：[1, 0]
指数之和：1
除以总和：[1, 0]
“爱”被挡住：分数 −∞，指数按极限取 0，份额恰好是 0。
第五步：用份额混合值的对应格子。
输出第 0 格 = 1×10 = 10
输出第 1 格 = 1×0 = 0
“我”位置的注意力输出 o₀ = [10, 0]"""


def test_masked_row_wo_shows_the_raw_score_before_the_mask_and_minus_infinity_from_stage_3():
    r = attention(**baseline())
    assert worked_text(r, 0) == MASKED_ROW_WO
    assert r.raw_scores[0, 1] == 1 and fmt(r.raw_scores[0, 1] / np.sqrt(2)) == "0.7071067812"  # the text's numbers
    steps = worked_steps(r, 0)
    assert all("−∞" not in s["text"] for s in steps if s["stage"] < 3)
    assert next(s for s in steps if "−∞" in s["text"])["key"] == "add_mask"


def test_without_the_mask_row_wo_reads_both_positions():
    text = worked_text(attention(**baseline(), causal=False), 0)
    assert "被读取位置 1：爱" in text
    assert "−∞" not in text
    assert templates()["mask_none"] in text


def test_d_k_one_says_no_scaling():
    text = worked_text(attention(**baseline(), d_k=1), 1)
    assert "缩放分数：[1/√1, 0/√1] = [1, 0]" in text
    assert templates()["no_scaling"] in text


def test_steps_come_in_the_step_throughs_five_stages_each_with_its_heading():
    for causal in (True, False):
        for row in (0, 1):
            steps = worked_steps(attention(**baseline(), causal=causal), row)
            heads = [s["text"] for s in steps if s["kind"] == "head"]
            assert [h[:3] for h in heads] == ["第一步", "第二步", "第三步", "第四步", "第五步"]
            assert [s["stage"] for s in steps if s["kind"] == "head"] == [1, 2, 3, 4, 5]
            assert [s["stage"] for s in steps] == sorted(s["stage"] for s in steps)
            assert all(s["stage"] == STAGE[s["key"]] for s in steps)
            assert {s["kind"] for s in steps} <= {"head", "line", "note"}
    # The headings name the step-through's stages (view.stages): q·k, √d_k, M, softmax, V.
    for head, word in zip((templates()[f"step{k}"] for k in range(1, 6)), ("打分", "√d_k", "掩码 M", "softmax", "值")):
        assert word in head


def stage_numbers(result, row: int, stage: int) -> list[float]:
    """The numbers of one stage's result line (its last vector; raw_scores: its first, before the order)."""
    key = {1: "raw_scores", 2: "scaled", 3: "add_mask", 4: "shares", 5: "output"}[stage]
    line = next(s["text"] for s in worked_steps(result, row) if s["key"] == key)
    vectors = re.findall(r"\[[^\[\]]*\]", line)
    shown_vec = vectors[0] if stage == 1 else vectors[-1]
    return [shown_number(x) for x in shown_vec.strip("[]").split(", ")]


@pytest.mark.parametrize("seed", range(6))
def test_each_stage_of_both_rows_shows_the_cores_table_at_that_stage(seed):
    rng = np.random.default_rng(100 + seed)
    result = attention(**baseline()) if seed == 0 else random_result(rng, causal=bool(seed % 2))
    raw, d_k = result.raw_scores, result.d_k
    want = {1: raw, 2: raw / np.sqrt(d_k), 3: result.S, 4: result.A, 5: result.O}
    for row in (0, 1):
        for stage, table in want.items():
            got = stage_numbers(result, row, stage)
            assert got == pytest.approx(table[row].tolist(), abs=1e-9), (row, stage)
        # The stage texts, in order, are the whole text.
        assert "\n".join(worked_stage(result, row, k, heads=True) for k in range(6)) == worked_text(result, row)
        # Stage 0 names every key, stage 1 scores every key: masked ones too.
        assert worked_stage(result, row, 1).count("的原始分数：") == 2
        assert worked_stage(result, row, 0).count(f"k{'₀₁'[0]}") == 1


def test_worked_stage_leaves_out_the_heading_and_refuses_a_stage_out_of_range():
    r = attention(**baseline())
    assert worked_stage(r, 1, 2) == "缩放分数：[1/√2, 0/√2] ≈ [0.7071067812, 0]"
    assert worked_stage(r, 1, 2, heads=True).startswith("第二步")
    with pytest.raises(ValueError, match="stage"):
        worked_stage(r, 1, 6)


@pytest.mark.parametrize("seed", range(8))
def test_numbers_in_the_text_equal_the_cores(seed):
    rng = np.random.default_rng(seed)
    result = random_result(rng, causal=bool(seed % 2))
    for row in (0, 1):
        lines = worked_text(result, row).splitlines()
        assert not any("{" in line or "NaN" in line for line in lines)
        shares = next(line for line in lines if line.startswith("除以总和"))
        assert shown_vector(shares) == pytest.approx(result.A[row].tolist(), abs=1e-9)
        output = lines[-1]
        assert numbers(output)[-2:] == pytest.approx(result.O[row].tolist(), abs=1e-9)
        total = next(line for line in lines if line.startswith("指数之和"))
        finite = result.S[row][np.isfinite(result.S[row])]
        assert shown_number(total.split("：")[1]) == pytest.approx(np.exp(finite - finite.max()).sum(), abs=1e-9)


def test_a_row_out_of_range_is_refused():
    with pytest.raises(ValueError, match="row"):
        worked_steps(attention(**baseline()), 2)


# ----------------------------------------------------------------- "=" only where the shown numbers give it

def _shown(text: str) -> Fraction:
    """A shown number, exactly: a decimal, ``(−0.5)``, ``(3.2×10⁻¹⁰⁰)``, ``(1 − 3.2×10⁻¹⁰⁰)``."""
    text = text.strip()
    return power_value(text[1:-1] if text.startswith("(") else text)


def _shown_arithmetic(expr: str) -> Fraction | None:
    """A worked expression ``a×b+c×d`` (or ``a×b + c×d``, factors perhaps in parentheses) evaluated
    exactly on the shown numbers."""
    if "×" not in expr:
        return None
    terms = re.split(r"\s*\+\s*(?![^()]*\))", expr)  # a "+" outside parentheses
    pairs = [re.fullmatch(r"(\([^()]*\)|[^×()]+)×(.+)", term).groups() for term in terms]
    return sum((_shown(a) * _shown(b) for a, b in pairs), Fraction(0))


def _quotients_hold(expr: str, value: str) -> bool:
    """``[r/√d, ...] = [s, ...]``: each shown r/√d is exactly the shown s (−∞ stays −∞)."""
    lefts = expr.strip()[1:-1].split(", ")
    rights = value.strip()[1:-1].split(", ")
    assert len(lefts) == len(rights)
    for left, right in zip(lefts, rights):
        if left == "−∞" or right == "−∞":
            if left != right:
                return False
            continue
        r, d = left.split("/√")
        r, d, s = _shown(r), _shown(d), _shown(right)
        if r * r != s * s * d or (r > 0) != (s > 0) or (r < 0) != (s < 0):
            return False
    return True


def scan_equals(text: str) -> tuple[int, int, list[str]]:
    """(number of "=" checked, number of "≈", lines whose "=" the shown numbers do not give)."""
    equals, approx, wrong = 0, 0, []
    cells_exact = True
    for line in text.splitlines():
        if line.startswith("缩放分数："):
            expr, eq, value = re.match(r"缩放分数：(\[.*?\]) ([=≈]) (\[.*\])$", line).groups()
            holds = _quotients_hold(expr, value)
        elif line.startswith("加上掩码："):
            scaled, mask, eq, value = re.match(r"加上掩码：(\[.*?\]) \+ (\[.*?\]) ([=≈]) (\[.*\])$", line).groups()
            holds = all(s == "−∞" if m == "−∞" else m == "0" and s == x or _shown(x) + _shown(m) == _shown(s)
                        for x, m, s in zip(*(v[1:-1].split(", ") for v in (scaled, mask, value))))
        elif "原始分数：" in line and "·" in line or line.startswith("输出第"):
            m = re.match(r".* = (?P<expr>.+?) (?P<eq>[=≈]) (?P<value>\S+)$", line)
            expr, eq, value = m.group("expr"), m.group("eq"), m.group("value")
            holds = _shown_arithmetic(expr) == _shown(value)
            if line.startswith("输出第"):
                cells_exact &= eq == "="
        elif "注意力输出" in line:
            eq = re.search(r" ([=≈]) \[", line).group(1)
            holds = cells_exact  # o_i is the vector of the cells above: "=" only if they all are
        else:
            continue
        if eq == "=":
            equals += 1
            if not holds:
                wrong.append(line)
        else:
            approx += 1
    return equals, approx, wrong


def lab_grid_result(rng):
    """Random values on the lab's slider grid (X step 0.1, Wq/Wk 0.05, Wv 0.5, integer d_k)."""
    X = rng.integers(-30, 31, (2, 2)) / 10
    Wq, Wk = rng.integers(-60, 61, (2, 2)) / 20, rng.integers(-60, 61, (2, 2)) / 20
    Wv = rng.integers(-40, 41, (2, 2)) / 2
    d_k = int(rng.choice([1, 2, 4, 9, 16, 25, int(rng.integers(1, 65))]))
    return attention(X, Wq, Wk, Wv, d_k=d_k, causal=bool(rng.integers(0, 2)))


def test_d_k_one_writes_approx_where_the_shown_shares_do_not_give_the_output():
    # The issue's example: 0.7310585786×10 + 0.2689414214×0 is 7.310585786, not 7.3105857863.
    text = worked_text(attention(**baseline(), d_k=1), 1)
    assert "输出第 0 格 = 0.7310585786×10 + 0.2689414214×0 ≈ 7.3105857863" in text
    assert "注意力输出 o₁ ≈ [7.3105857863, 5.3788284274]" in text
    assert "缩放分数：[1/√1, 0/√1] = [1, 0]" in text


def test_a_perfect_square_d_k_divides_exactly_and_writes_equals():
    text = worked_text(attention(**baseline(), d_k=4), 1)
    assert "缩放分数：[1/√4, 0/√4] = [0.5, 0]" in text


@pytest.mark.parametrize("kind", ["uniform", "lab_grid"])
def test_random_scan_equals_only_where_the_shown_numbers_give_the_shown_result(kind):
    rng = np.random.default_rng(2026 if kind == "uniform" else 7)
    equals = approx = 0
    for _ in range(150):
        result = random_result(rng, causal=bool(rng.integers(0, 2))) if kind == "uniform" else lab_grid_result(rng)
        for row in (0, 1):
            e, a, wrong = scan_equals(worked_text(result, row))
            assert wrong == [], f"'=' the shown numbers do not give: {wrong}"
            equals, approx = equals + e, approx + a
    # The scan saw both signs, so it checked something: the lab's grid gives many exact dot products
    # and quotients; uniform random numbers give mostly "≈" (and "=" where a row reads one position).
    assert approx > 100 and equals > (100 if kind == "lab_grid" else 20), (equals, approx)


def test_approx_is_written_only_where_equals_would_be_false():
    # The converse on the lab's grid: an "≈" line's shown arithmetic misses the shown result,
    # or the shown result is itself rounded.
    rng = np.random.default_rng(99)
    for _ in range(100):
        result = lab_grid_result(rng)
        for row in (0, 1):
            for line in worked_text(result, row).splitlines():
                if line.startswith("输出第") and " ≈ " in line:
                    expr, value = re.match(r".* = (.+?) ≈ (\S+)$", line).groups()
                    c = int(re.match(r"输出第 (\d+) 格", line).group(1))
                    assert _shown_arithmetic(expr) != _shown(value) or not exact(result.O[row, c]), line


def test_each_step_names_its_template_and_the_position_or_column_it_is_about():
    steps = worked_steps(attention(**baseline()), 0)
    assert all(s["key"] in templates() for s in steps)
    dots = [s for s in steps if s["key"] == "dot"]
    assert [s["j"] for s in dots] == [0, 1] and {s["kind"] for s in dots} == {"line"}  # the masked key too
    assert [s["j"] for s in steps if s["key"] == "mask_hides"] == [1]
    assert [s["c"] for s in steps if s["key"] == "out_cell"] == [0, 1]
    assert "j" not in next(s for s in steps if s["key"] == "scaled")


def test_no_ascii_hyphen_minus_in_the_worked_text():
    rng = np.random.default_rng(5)
    for _ in range(20):
        result = random_result(rng)
        for row in (0, 1):
            assert "-" not in worked_text(result, row)


# ----------------------------------------------------------------- saturation: never "0" or "1" where it is not (issue 28)

def issue28_result(d_k=2.0):
    """The issue's lab setting: X = 3,3,3,−3, Wq = 3,3,−3,3, Wk = 3,3,3,−3, causal off: row 爱 scores [229.1, 0]."""
    X = np.array([[3.0, 3.0], [3.0, -3.0]])
    Wq, Wk = np.array([[3.0, 3.0], [-3.0, 3.0]]), np.array([[3.0, 3.0], [3.0, -3.0]])
    return attention(X, Wq, Wk, baseline()["Wv"], d_k=d_k, causal=False)


def test_a_saturated_share_is_written_as_its_power_of_ten_not_as_0_or_1():
    r = issue28_result()
    assert r.A[1, 0] == 1.0 and 0 < r.A[1, 1] < 1e-99  # in floats one share is exactly 1
    lines = worked_text(r, 1).splitlines()
    assert "取指数：[1, 3.2×10⁻¹⁰⁰]" in lines
    assert "指数之和：1 + 3.2×10⁻¹⁰⁰" in lines
    assert "除以总和：[1 − 3.2×10⁻¹⁰⁰, 3.2×10⁻¹⁰⁰]" in lines
    # The output cells use those shares, so they are approximate: "≈ 30", not "= 30".
    assert "输出第 0 格 = (1 − 3.2×10⁻¹⁰⁰)×30 + (3.2×10⁻¹⁰⁰)×0 ≈ 30" in lines
    assert "“爱”位置的注意力输出 o₁ ≈ [30, 0]" in lines
    note = templates()["tiny_share"].replace("{tok}", "爱").replace("{value}", "3.2×10⁻¹⁰⁰")
    assert note in lines
    # The power is the share's size: exp(−324/√2) / (1 + exp(−324/√2)), to two significant digits.
    true = math.exp(-324 / math.sqrt(2))
    assert float(power_value("3.2×10⁻¹⁰⁰")) == pytest.approx(true, rel=0.02)


def test_an_exp_below_the_smallest_float_is_still_written_as_its_power_of_ten():
    # Scores 648 and −648 (d_k = 1): exp(−1296) is 0.0 in floats, and the share too.
    X = np.array([[3.0, 3.0], [-3.0, -3.0]])
    W = np.full((2, 2), 3.0)
    r = attention(X, W, W, baseline()["Wv"], d_k=1, causal=False)
    assert r.A[0, 1] == 0.0 and r.A[0, 0] == 1.0
    stage = worked_stage(r, 0, 4)
    power = -1296 / math.log(10)  # log10 exp(−1296) = −562.85...: 1.4 × 10^−563
    assert math.floor(power) == -563 and f"{10 ** (power + 563):.1f}" == "1.4"
    assert "取指数：[1, 1.4×10⁻⁵⁶³]" in stage and "除以总和：[1 − 1.4×10⁻⁵⁶³, 1.4×10⁻⁵⁶³]" in stage


def test_a_masked_share_is_exactly_0_and_says_so_a_tiny_one_says_it_is_not_0():
    masked = worked_steps(attention(**baseline()), 0)
    assert "除以总和：[1, 0]" in [s["text"] for s in masked]
    assert [s["key"] for s in masked if s["kind"] == "note" and s["stage"] == 4] == ["masked_share"]
    assert "恰好是 0" in templates()["masked_share"]
    tiny = worked_steps(issue28_result(), 1)
    assert [(s["key"], s["j"]) for s in tiny if s["kind"] == "note" and s["stage"] == 4] == [("tiny_share", 1)]
    assert "不是 0" in templates()["tiny_share"]


def test_a_row_whose_only_readable_share_is_1_still_writes_1():
    # One readable key: its share is exactly 1 and the sum exactly 1, with "=" in × V.
    text = worked_text(attention(**baseline()), 0)
    assert "指数之和：1\n" in text and "输出第 0 格 = 1×10 = 10" in text and "×10⁻" not in text


@pytest.mark.parametrize("seed", range(4))
def test_no_readable_exp_or_share_is_written_as_0_and_no_share_as_1_beside_another(seed):
    """Over lab-grid and wide random settings (saturation is common there): a readable key's
    exponential and share are never written "0", a share never "1" while another key is readable,
    the sum never "1" then; a masked key's are "0"."""
    rng = np.random.default_rng(500 + seed)
    saturated = 0
    for _ in range(120):
        result = lab_grid_result(rng) if seed % 2 else random_result(rng, causal=bool(rng.integers(0, 2)))
        for row in (0, 1):
            lines = {s["key"]: s["text"] for s in worked_steps(result, row)}
            exps = re.search(r"\[(.*)\]", lines["exp"]).group(1).split(", ")
            shares = re.search(r"\[(.*)\]", lines["shares"]).group(1).split(", ")
            total = lines["exp_sum"].split("：")[1]
            readable = np.isfinite(result.S[row])
            for j, ok in enumerate(readable):
                if not ok:
                    assert exps[j] == "0" and shares[j] == "0"
                    continue
                assert exps[j] != "0" and shares[j] != "0", (lines["exp"], lines["shares"])
                if readable.sum() > 1:
                    assert shares[j] != "1" and total != "1", lines["shares"]
                saturated += "×10" in shares[j]
    assert saturated > 0  # the settings reached saturation, so the rule was exercised

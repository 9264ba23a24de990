"""scripts/verify_concepts.py: passes on the real chapter, fails naming a changed number."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "verify_concepts.py"
CHAPTER = ROOT / "book" / "f11-attention.md"


def _load_script():
    spec = importlib.util.spec_from_file_location("verify_concepts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_concepts"] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


VERIFY = _load_script()


def run(chapter: Path) -> subprocess.CompletedProcess:
    """The script's main() on ``chapter``, in this process (its command line is tested separately)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = VERIFY.main(["--chapter", str(chapter)])
    return subprocess.CompletedProcess(["verify_concepts.py", "--chapter", str(chapter)], code, out.getvalue(), "")


def test_command_line_checks_the_given_chapter_and_exits_with_its_status(tmp_path):
    # (The real chapter's exit status 0 from the command line: test_default_path_is_the_chapter.)
    bad = subprocess.run([sys.executable, str(SCRIPT), "--chapter", str(mutated(tmp_path, "= [13, 16]", "= [13, 17]"))],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout
    missing = subprocess.run([sys.executable, str(SCRIPT), "--chapter", str(tmp_path / "none.md")],
                             capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 2 and "no such chapter" in missing.stderr


def mutated(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the chapter with exactly one occurrence of ``old`` replaced."""
    text = CHAPTER.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} is no longer in the chapter; update this test"
    path = tmp_path / "f11-mutated.md"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_real_chapter_passes():
    proc = run(CHAPTER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("OK")
    # It really checked something: the report counts are not zero.
    assert "14/14 required quantities" in proc.stdout


def test_default_path_is_the_chapter():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("OK"), proc.stdout + proc.stderr
    assert "f11-attention.md" in proc.stdout


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        # A share one unit off in the tenth decimal (the share table A).
        ("[0.6697615493, 0.3302384507]]", "[0.6697615494, 0.3302384507]]", "0.6697615494"),
        # A projected row whose written arithmetic no longer gives the stated result.
        ("1×0.5+1×0.5]    = [0, 1]", "1×0.5+1×0.5]    = [0, 2]", "q₀"),
        # An output cell of the table O mistyped.
        ("6.6047690135]]", "6.6047690136]]", "6.6047690136"),
        # The causal mask written without its −∞.
        ("M = [[0, −∞],", "M = [[0, 0],", "M is stated as"),
        # The F07 coefficient example.
        ("= [13, 16]", "= [13, 17]", "[13, 17]"),
    ],
)
def test_changed_number_fails_and_is_named(tmp_path, old, new, named):
    proc = run(mutated(tmp_path, old, new))
    assert proc.returncode == 1, proc.stdout
    assert "MISMATCH" in proc.stdout
    assert named in proc.stdout
    assert "line " in proc.stdout  # mismatches point at a line


def test_typed_decimal_in_prose_must_be_computed(tmp_path):
    path = mutated(tmp_path, "## 课后自检\n", "## 课后自检\n\n份额约为 0.6697615400。\n")
    proc = run(path)
    assert proc.returncode == 1
    assert "0.6697615400 is not a number the chapter computes" in proc.stdout


def test_missing_required_quantity_fails(tmp_path):
    path = mutated(tmp_path, "q₁ = x₁Wq = [1×0.5+(−1)×(−0.5), 1×0.5+(−1)×0.5]    = [1, 0]\n", "")
    proc = run(path)
    assert proc.returncode == 1
    assert "coverage: q₁ is not stated" in proc.stdout


def test_a_missing_ten_decimal_value_fails(tmp_path):
    path = mutated(tmp_path, "[0.6697615493, 0.3302384507]]", "[0.67, 0.33]]")
    proc = run(path)
    assert proc.returncode == 1
    assert "0.3302384507 does not appear" in proc.stdout


def test_the_generated_hand_computation_is_not_parsed_here():
    # The 爱 row's stages are cells printing attention_lab.worked: nothing typed to check, and the
    # chapter has no typed copy left (tests/test_chapter_worked.py checks the built page).
    source = CHAPTER.read_text(encoding="utf-8")
    assert source.count("worked_block(r, 1, ") == 6
    assert not re.search(r"(?m)^(缩放分数|减最大值|取指数|指数之和|除以总和)：", source)


def test_unknown_glue_name_fails(tmp_path):
    path = mutated(tmp_path, "{eval}`a10_10d`", "{eval}`no_such_value_10d`")
    proc = run(path)
    assert proc.returncode == 1
    assert "no_such_value" in proc.stdout


# ----------------------------------------------------------------------------- prose claims

BOOK = ROOT / "book"


def book_copy(tmp_path: Path, page: str, pattern: str, replacement: str) -> Path:
    """A copy of book/ (pages + references.bib) with the first match of ``pattern`` in ``page`` replaced.

    Returns the copied chapter, to pass as --chapter (the other pages are found next to it).
    """
    for source in list(BOOK.glob("*.md")) + [BOOK / "references.bib"]:
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    target = tmp_path / page
    text = target.read_text(encoding="utf-8")
    new, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, f"{pattern!r} is no longer in {page}; update this test to the text"
    target.write_text(new, encoding="utf-8")
    return tmp_path / "f11-attention.md"


def test_real_book_prose_is_checked_and_passes():
    proc = run(CHAPTER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counted = re.search(r"prose: (\d+) numbers", proc.stdout)
    assert counted and int(counted.group(1)) >= 100, proc.stdout


@pytest.mark.parametrize(
    ("page", "pattern", "replacement", "named"),
    [
        # A share stated in words ("份额是 1" -> 0.9).
        ("f11-attention.md", r"(?<=份额是 )1(?=。)", "0.9", "row 0's share"),
        # d_k in inline math.
        ("f11-attention.md", r"(?<=这里 \$d_k=)2(?=\$)", "3", "d_k"),
        # The cross-attention sizes n, m of self-check 6.
        ("f11-attention.md", r"(?<=\$n=)3(?=\$)", "4", "cross-attention sizes"),
        # ... and m.
        ("f11-attention.md", r"(?<=\$m=)2(?=\$，\$d_k)", "3", "cross-attention sizes"),
        # An input row written in prose.
        ("f11-attention.md", r"(?<=\$x_0=\[1, )1(?=\]\$)", "2", "x₀"),
        # The identity table of contrast 1.
        ("f11-attention.md", r"(?<=单位矩阵 `\[\[1, 0\], \[0, )1(?=\]\]`)", "2", "identity table"),
        # A parameter quoted in a question.
        ("f11-attention.md", r"(?<=\$W_q\$ 里的 )0\.5", "0.4", "Wq's entries"),
        # A shape.
        ("f11-attention.md", r"(?<=份额表是 `\[3, )2(?=\]`)", "4", "cross-attention shapes"),
        # A vector in a self-check answer.
        ("f11-attention.md", r"(?<=\$v_1=\[0, )20(?=\]\$)", "30", "v₁"),
        # A year next to its citation.
        ("f11-attention.md", r"2017(?= 年的论文 \[\[VSP\+17\]\]\(#f11-references\))", "2016", "year 2016"),
        # A reference to a self-check question that does not exist.
        ("f11-attention.md", r"(?<=课后自检第 )11(?= 题)", "19", "no self-check question 19"),
        # A shape in notation.md's table.
        ("notation.md", r"(?<=\| `\[n, m\]` \| `\[2, )2(?=\]` \|)", "3", "shape in notation"),
        # The KV-cache exception in notation.md (one new query).
        ("notation.md", r"(?<=于是 \$n=)1(?=\$)", "2", "KV cache"),
        # A parameter table of lab.md's experiment 3.
        ("lab.md", r"(?<=反例 Wq = \[\[3, 3\], \[3, )3", "2", "counter-example Wq"),
        # A slider range in lab.md.
        ("lab.md", r"(?<=从 1 拖到 )64", "100", "slider range"),
        # The spread cell's conclusion: scaled dot products have a standard deviation near 1.
        ("f11-attention.md", r"(?<=标准差都回到 )1(?= 附近)", "2", "spread of q·k/√d"),
        # Step 5 describes both output cells: the second leans to 我's 0 as well.
        ("f11-attention.md", r"(?<=同样偏向“我”的 )0", "20", "V's columns"),
        # numpy's printed shape.
        ("f11-attention.md", r"(?<=X\.shape` 打印出 `\(2, )2", "3", "numpy's printed shape"),
        # The identity matrix's gloss.
        ("f11-attention.md", r"(?<=对角线上是 )1(?=、其余是 0)", "2", "identity's diagonal"),
        # The paper's assumption, quoted.
        ("f11-attention.md", r"(?<=方差都是 )1", "2", "the paper's assumption"),
        # x_i is one row of X (notation.md).
        ("notation.md", r"(?<=`\[)1(?=, d_model\]`)", "2", "one row of X"),
    ],
)
def test_changed_number_in_the_prose_fails_and_names_file_and_line(tmp_path, page, pattern, replacement, named):
    proc = run(book_copy(tmp_path, page, pattern, replacement))
    assert proc.returncode == 1, proc.stdout
    assert named in proc.stdout, proc.stdout
    assert re.search(rf"{re.escape(page)}:\d+: ", proc.stdout), proc.stdout


def test_a_new_number_in_the_prose_must_be_glued_or_claimed(tmp_path):
    chapter = book_copy(tmp_path, "f11-attention.md", r"(?m)^## 课后自检\n", "## 课后自检\n\n本例一共有 7 个参数。\n")
    proc = run(chapter)
    assert proc.returncode == 1
    assert re.search(r"f11-attention\.md:\d+: unchecked number '7'", proc.stdout), proc.stdout


def test_ordinals_and_glued_numbers_need_no_claim(tmp_path):
    # 第 0 行 is an ordinal; a glue role's value comes from execution.
    chapter = book_copy(tmp_path, "f11-attention.md", r"(?m)^## 课后自检\n",
                        "## 课后自检\n\n第 0 行的份额是 {eval}`a10_4d`。\n")
    proc = run(chapter)
    assert proc.returncode == 0, proc.stdout


# ------------------------------------------------------------------ "=" versus "≈" in hand computations

@pytest.mark.parametrize(
    ("pattern", "replacement", "named"),
    [
        # The output table with its rounded cells written with "=".
        (r"(?<=O = AV) ≈", " =", "'=' before the rounded 6.6976154933"),
        # The score table with its rounded 0.7071067812 (once only a warning, now a failure).
        (r"(?<=S = QKᵀ/√2 \+ M) ≈", " =", "'=' before the rounded 0.7071067812"),
    ],
)
def test_equals_where_the_shown_numbers_do_not_give_the_result_fails(tmp_path, pattern, replacement, named):
    proc = run(book_copy(tmp_path, "f11-attention.md", pattern, replacement))
    assert proc.returncode == 1, proc.stdout
    assert named in proc.stdout, proc.stdout


@pytest.mark.parametrize(("pattern", "replacement"), [
    (r"(?<=最后 )1(?= 题)", "2"),            # one part of the count off
    (r"(?<=接下来 )3(?= 题)", "2"),
])
def test_the_self_check_count_adds_up_every_part(tmp_path, pattern, replacement):
    proc = run(book_copy(tmp_path, "f11-attention.md", pattern, replacement))
    assert proc.returncode == 1, proc.stdout
    assert "but 课后自检 has" in proc.stdout, proc.stdout


def test_a_trimmed_code_excerpt_that_shifts_onto_an_input_check_fails(tmp_path):
    # Without leave_out the start_at/end_at window of scaled_dot_product_attention holds the overflow check.
    proc = run(book_copy(tmp_path, "f11-attention.md", r'leave_out=\("_check_overflow",\)', "leave_out=()"))
    assert proc.returncode == 1, proc.stdout
    assert "trimmed excerpt" in proc.stdout and "_check_overflow" in proc.stdout, proc.stdout


def test_equals_is_accepted_where_hand_arithmetic_on_the_shown_numbers_is_exact(tmp_path):
    # 2/√4 = 1 and 0.5×3 = 1.5 are exact; the block sits in the chapter's first hand computation.
    block = "```text\n[1, 2] × [[3, 4], [5, 6]] = [13, 16]\n[2/√4, 0.5×3] = [1, 1.5]\n```\n"
    chapter = book_copy(tmp_path, "f11-attention.md", r"(?m)^## 课后自检\n", "## 课后自检\n\n" + block)
    proc = run(chapter)
    assert proc.returncode == 0, proc.stdout


# ------------------------------------------------------------------ the Markdown token stream (markdown-it)

def test_fences_come_from_the_markdown_token_stream_nested_ones_included():
    lines = ["---", "title: x", "---", "text", "", "````{dropdown} 答案", ":open:", "", "```text",
             "q₀ = [0, 2]", "```", "````", "", "1. a list item", "", "   ```text", "   M = [[0, 0]]", "   ```",
             "", "```{code-cell} ipython3", "x = 1", "```"]
    found = VERIFY.fences(lines, VERIFY.split_front_matter(lines))
    assert [(f.info, f.lines) for f in found] == [("{dropdown} 答案", (5, 11)), ("text", (8, 10)),
                                                   ("text", (15, 17)), ("{code-cell} ipython3", (19, 21))]
    assert found[1].body == [(10, "q₀ = [0, 2]")]  # 1-based line numbers, as messages print them
    kinds = [(kind, [t for _, t in body]) for kind, _info, body in VERIFY.blocks(lines, 3)]
    assert ("hand", ["q₀ = [0, 2]"]) in kinds and ("hand", ["   M = [[0, 0]]"]) in kinds


def test_a_wrong_hand_computation_inside_a_dropdown_is_caught(tmp_path):
    block = "````{dropdown} 算一算\n```text\nq₀ = [0, 2]\n```\n````\n"
    chapter = book_copy(tmp_path, "f11-attention.md", r"(?m)^## 课后自检\n", "## 课后自检\n\n" + block)
    proc = run(chapter)
    assert proc.returncode == 1 and "q₀ is stated as" in proc.stdout, proc.stdout


# ------------------------------------------------------------------ mutation harness (issue 16)
#
# Single edits of the book's text, each of which makes a statement false; the checker must catch
# them.  In-process: each mutant is one verify_pages() call on texts (no files, no subprocess).
#
# Kinds (each must be caught every time):
#   sqrt      a √k in text, inline math or a hand block (√2, \sqrt{2}, \sqrt2, 1/\sqrt8) -> √(k+1)
#   infinity  负无穷 -> 正无穷, and −∞ / -\infty -> +∞ / +\infty
#   diagonal  a `diagonal=` value written in the prose (inline code): 1 -> 0, m - n -> 0, ...
#   token     “我” <-> “爱” where a row index names it or says what it reads: 第 0 行“我”,
#             第 0 行对应“我”, 第 0 行只能读“我”, 第 0 号“我”不能读……“爱”
#   row label the index of such a claim (第 0 行 -> 第 1 行), and 行：接收位置 <-> 行：被读取位置
#   self-check  课后自检第 N 题 -> another question number (four, seeded)
#   eval name an {eval} name: a cell index flipped (a10 -> a11 / a00) or a name no cell defines;
#             a mutant that shows the same text (same value) is not a change and is skipped
# Counted in the overall rate only (not yet caught every time, see test_eval_case_swaps_...):
#   eval case an {eval} cell name moved to another computed case: wq_a10 -> wv_a10, a10 -> sc_x_a10
# and, overall (>= 90 %), random single-digit changes in the prose, where "prose" is what
# verify_concepts.prose_lines yields plus the chapter's hand-computation blocks, minus:
#   code (code cells, fenced code, `inline code`), roles and their targets ({eval}`…`, {ref}`…`,
#   {cite}`…`, {doc}`…`), URLs, link targets and HTML tags, ports and addresses, headings
#   (their numbers are names: "F11"), digits inside identifiers (F09, Q007, d2l: a letter before
#   them), software versions (Python 3.11, PyTorch 2.13), screen sizes (1024×768) and a year
#   followed by 年 on a line that cites ({cite}: checked against references.bib, but a year is
#   the reference's identity, not the book's claim).

import random

HARNESS_SEED = 16
DIGIT_SAMPLES = 80
EVAL_SAMPLES = 60  # of each of the two {eval} kinds (the harness's run time: ~2 s per 25 mutants)
NAMED_KINDS = ("sqrt", "infinity", "diagonal", "token", "row label", "self-check", "eval name")


def book_pages():
    pages = [VERIFY.Page("f11-attention.md", "f11-attention.md", CHAPTER.read_text(encoding="utf-8"))]
    pages += [VERIFY.Page(p.name, p.name, p.read_text(encoding="utf-8"))
              for p in sorted(BOOK.glob("*.md")) if p.name != "f11-attention.md"]
    return pages, (BOOK / "references.bib").read_text(encoding="utf-8")


def _prose_spans(page):
    """(line index, start, end) of the text a digit mutation may touch, per the exclusions above."""
    lines = page.text.splitlines()
    rows = [(no - 1, raw) for no, raw, _s, _q in VERIFY.prose_lines(page.name, page.text)]
    if page.name == "f11-attention.md":
        rows += [(no - 1, raw) for f in VERIFY.fences(lines, VERIFY.split_front_matter(lines))
                 if f.info in ("", "text", "none") for no, raw in f.body]
    excluded = re.compile(r"`[^`]*`|\{[\w:-]+\}`[^`]*`|https?://\S+|\]\([^)]*\)|<[^<>]*>|[A-Za-z_]\d+|"
                          r"(?:Python|PyTorch)\s+\d+(?:\.\d+)*|\d{3,4}×\d{3,4}|\d+(?:\.\d+){3}(?::\d+)?|"
                          r"\$\$|^#.*")
    for index, raw in rows:
        if raw.lstrip().startswith("#"):
            continue
        blocked = [m.span() for m in excluded.finditer(raw)]
        if "{cite}" in raw:
            blocked += [m.span() for m in re.finditer(r"\d{4}(?= ?年)", raw)]
        for m in re.finditer(r"\d", raw):
            if not any(a <= m.start() < b for a, b in blocked):
                yield index, m.start()


def _replace_line(page, index, new_line):
    lines = page.text.split("\n")
    lines[index] = new_line
    return VERIFY.Page(page.name, page.shown, "\n".join(lines))


def _sub_each(page, pattern, repl, kind):
    """One mutant per match of ``pattern`` outside code cells (hand blocks and prose)."""
    code = set()
    lines = page.text.split("\n")
    for f in VERIFY.fences(lines, VERIFY.split_front_matter(lines)):
        if f.info.startswith(("{code-cell}",)) or f.info in VERIFY.CODE_LANGUAGES:
            code.update(range(f.lines[0], (f.lines[1] or len(lines)) + 1))
    for index, line in enumerate(lines):
        if index in code:
            continue
        for m in re.finditer(pattern, line):
            new = repl(m) if callable(repl) else m.expand(repl)
            if new is not None and new != m.group():
                yield kind, _replace_line(page, index, line[:m.start()] + new + line[m.end():]), \
                    f"{page.shown}:{index + 1}: {m.group()!r} -> {new!r}"


def mutants(pages, seed=HARNESS_SEED):
    rng = random.Random(seed)
    out = []
    for k, page in enumerate(pages):
        def add(kind, pattern, repl):
            out.extend((kind, k, p, what) for kind, p, what in _sub_each(page, pattern, repl, kind))

        add("sqrt", r"(√|\\sqrt\{|\\sqrt\s?)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 1))
        add("infinity", r"负无穷", "正无穷")
        add("infinity", r"(−|-\\)(∞|infty)", lambda m: "+" + ("∞" if m.group(2) == "∞" else "\\infty"))
        add("diagonal", r"diagonal\s*=\s*([^,)`]+)", lambda m: "diagonal=" + ("0" if m.group(1).strip() != "0" else "1"))
        swap = {"我": "爱", "爱": "我"}
        claim = r"第\s*(\d)\s*(?:行|号)(?:位置|对应)?"
        add("token", claim + r"“(我|爱)”", lambda m: m.group().replace(f"“{m.group(2)}”", f"“{swap[m.group(2)]}”"))
        add("token", claim + r"(?:“[^”]+”)?[^，。；：“]*?能读[^，。；：“]*“(我|爱)”",
            lambda m: m.group()[:m.start(2) - m.start()] + swap[m.group(2)] + m.group()[m.end(2) - m.start():])
        add("row label", r"第\s*(\d)\s*(?=(?:行|号)(?:位置|对应)?(?:“|只能读|能读))",
            lambda m: m.group().replace(m.group(1), str(1 - int(m.group(1)))))
        add("row label", r"(行|列)(：|是)(接收位置|被读取位置)",
            lambda m: m.group(1) + m.group(2) + {"接收位置": "被读取位置", "被读取位置": "接收位置"}[m.group(3)])
        questions = sorted(VERIFY.self_check_questions([page])) if page.name == "f11-attention.md" else []
        for q in rng.sample(questions, min(4, len(questions))):  # four other questions per reference, seeded
            add("self-check", r"(?<=课后自检第 )\d+(?= 题)", lambda m, q=q: str(q) if str(q) != m.group() else None)
        values, _defined, _errors = VERIFY.notebook_values(VERIFY.code_cells(page.text))
        bases = {VERIFY._base(n) for n in values}
        cases = sorted({c["case"] for c in map(VERIFY.CELL_NAME.match, bases) if c})

        def rename(m, other_case=False):
            name = m.group(1)
            base, suffix = VERIFY._base(name), name[len(VERIFY._base(name)):]
            c = VERIFY.CELL_NAME.match(base)
            if other_case:
                options = [case + base[len(c["case"]):] for case in cases
                           if case != c["case"] and case + base[len(c["case"]):] in bases] if c else []
            else:
                flip = {"0": "1"}
                options = [base + "x"] + ([c["case"] + c["table"] + flip.get(c["i"], "0") + c["j"],
                                           c["case"] + c["table"] + c["i"] + flip.get(c["j"], "0")] if c else [])
            if not options:
                return None
            new = rng.choice(options) + suffix
            if values.get(new) == values.get(name):
                return None  # the same text on the page: not a change
            return "{eval}`" + new + "`"
        add("eval name", r"\{eval\}`(\w+)`", rename)
        add("eval case", r"\{eval\}`(\w+)`", lambda m: rename(m, other_case=True))
        for index, col in _prose_spans(page):
            line = page.text.split("\n")[index]
            digit = line[col]
            new = rng.choice([d for d in "0123456789" if d != digit])
            out.append(("digit", k, _replace_line(page, index, line[:col] + new + line[col + 1:]),
                        f"{page.shown}:{index + 1}: {line[max(0, col - 12):col + 8]!r} {digit}->{new}"))
    digits = [m for m in out if m[0] == "digit"]
    keep = set(map(id, rng.sample(digits, min(DIGIT_SAMPLES, len(digits)))))
    # The {eval} renames are the most numerous (260 of 410): a seeded sample of each kind, drawn with
    # its own generator so that adding prose elsewhere does not reshuffle the other kinds' choices.
    pick = random.Random(seed + 1)
    for kind in ("eval name", "eval case"):
        these = [m for m in out if m[0] == kind]
        keep |= set(map(id, pick.sample(these, min(EVAL_SAMPLES, len(these)))))
    return [m for m in out if m[0] not in ("digit", "eval name", "eval case") or id(m) in keep]


def catch_rates(verify_pages, pages, bib, kinds=None, shard=None):
    """kind -> (caught, total, [descriptions of the missed]); ``kinds``: only these kinds;
    ``shard`` (0 or 1): every other mutant of each kind, so two workers share the harness."""
    rates, seen = {}, {}
    for kind, k, page, what in mutants(pages):
        if kinds and kind not in kinds:
            continue
        seen[kind] = seen.get(kind, -1) + 1
        if shard is not None and seen[kind] % 2 != shard:
            continue
        mutated = pages[:k] + [page] + pages[k + 1:]
        caught = bool(verify_pages(mutated, bib).mismatches)
        got = rates.setdefault(kind, [0, 0, []])
        got[0] += caught
        got[1] += 1
        if not caught:
            got[2].append(what)
    return rates


def assert_catches(rates, named=NAMED_KINDS):
    total = sum(r[1] for r in rates.values())
    caught = sum(r[0] for r in rates.values())
    summary = {kind: f"{r[0]}/{r[1]}" for kind, r in rates.items()}
    for kind in named:
        assert kind in rates and rates[kind][1] > 0, f"no {kind} mutant: the harness no longer finds its sites"
        assert rates[kind][0] == rates[kind][1], f"{kind}: {summary}; missed {rates[kind][2]}"
    assert caught / total >= 0.9, f"{caught}/{total} caught: {summary}; missed {[m for r in rates.values() for m in r[2]]}"


def test_the_real_book_passes_the_in_process_check():
    pages, bib = book_pages()
    assert VERIFY.verify_pages(pages, bib).mismatches == []


@pytest.mark.parametrize("shard", [0, 1])
def test_single_edits_of_the_book_are_caught(shard):
    """Every mutant of each named kind, and 90 % of all, is caught (half of each kind per shard)."""
    pages, bib = book_pages()
    assert_catches(catch_rates(VERIFY.verify_pages, pages, bib, shard=shard))


@pytest.mark.parametrize("kind", ["sqrt", "infinity", "diagonal", "token", "row label"])
def test_the_harness_fails_a_checker_that_ignores_meaning(monkeypatch, kind):
    # Without the meaning checks (as before issue 16) these edits slip through, and the harness says so.
    pages, bib = book_pages()
    monkeypatch.setattr(VERIFY, "check_meaning", lambda page, report: None)
    rates = catch_rates(VERIFY.verify_pages, pages, bib, kinds=(kind,))
    with pytest.raises(AssertionError, match=kind):
        assert_catches(rates, named=(kind,))


# ------------------------------------------------------- the strong-course points (issue 28, item 3)

def _edited_book(page_name: str, old: str, new: str):
    pages, bib = book_pages()
    k = next(i for i, p in enumerate(pages) if p.name == page_name)
    assert pages[k].text.count(old) == 1, f"{old!r} is no longer in {page_name}; update this test to the text"
    edited = VERIFY.Page(pages[k].name, pages[k].shown, pages[k].text.replace(old, new))
    return pages[:k] + [edited] + pages[k + 1:], bib


@pytest.mark.parametrize(("page", "old", "new", "named"), [
    # SDPA's batched shapes, run as numpy arrays of the written shapes.
    ("f11-attention.md", "输出是 `(N, h, L, Ev)`", "输出是 `(N, h, L, E)`", "the output of query"),
    ("f11-attention.md", "key 是 `(N, h, S, E)`", "key 是 `(N, h, L, E)`", "cannot be attended"),
    ("notation.md", "输出是 `(N, h, L, Ev)`", "输出是 `(N, h, S, Ev)`", "the output of query"),
    ("f11-attention.md", "分数表和份额表是 `(N, h, L, S)`", "分数表和份额表是 `(N, h, S, L)`", "score and share tables"),
    ("f11-attention.md", "按头取平均，形状 `(N, L, S)`", "按头取平均，形状 `(N, h, L, S)`", "averaged weights"),
    # The two heads: which token each reads most and least (attention_lab.shapes computes them).
    ("f11-attention.md", "头 0 把 {eval}`heads_t0_j1_3d` 的份额给了前面的“狗”",
     "头 1 把 {eval}`heads_t0_j1_3d` 的份额给了前面的“狗”", "is not the one it reads most"),
    ("f11-attention.md", "头 1 几乎不读“狗”", "头 1 几乎不读“猫”", "is not the one it reads least"),
    # The cost's powers of n, against the table's size and the products' multiplications.
    ("f11-attention.md", "计算时间按 $O(n^2 d)$ 增长", "计算时间按 $O(n^3 d)$ 增长", "multiplications grow"),
    ("f11-attention.md", "要 $O(n^2)$ 的内存", "要 $O(n)$ 的内存", "table grows"),
    ("f11-attention.md", "只按 $O(m d)$ 增长", "只按 $O(m^2 d)$ 增长", "one new row"),
    # The glued cost, recomputed from np.empty((n, n), float32).nbytes.
    ("f11-attention.md", "mib[n] = cells * itemsize / 2**20", "mib[n] = cells * itemsize / 2**10", "MiB"),
    ("f11-attention.md", "cells = n * n  ", "cells = n * 2  ", "MiB"),
    # The softmax's slope: the formula's constant and the glued slopes, by finite differences.
    ("f11-attention.md", "A_{ij}\\,(1 - A_{ij})", "A_{ij}\\,(2 - A_{ij})", "A(1 − A)"),
    ("f11-attention.md", "slopes[t] = A[0] * (1 - A[0])", "slopes[t] = A[0] * A[0]", "finite differences"),
    ("f11-attention.md", "同乘 $t$ = 1、2、4、8", "同乘 $t$ = 1、2、4、6", "saturation table's factors"),
    # scale=, dropout, the fully masked row and padding with the causal mask.
    ("f11-attention.md", "写作 `scale=1 / math.sqrt(d_k)`", "写作 `scale=2 / math.sqrt(d_k)`", "scale= is the factor"),
    ("f11-attention.md", "传 `dropout_p=0`", "传 `dropout_p=1`", "dropout leaves the shares"),
    ("f11-attention.md", "得到 0/0，在浮点数里是 NaN", "得到 0/1，在浮点数里是 NaN", "fully masked row"),
    ("f11-attention.md", "每一行至少还能读第 0 个位置", "每一行至少还能读第 1 个位置", "padding at the end"),
])
def test_a_false_course_point_fails_naming_what_the_computation_says(page, old, new, named):
    pages, bib = _edited_book(page, old, new)
    mismatches = VERIFY.verify_pages(pages, bib).mismatches
    assert any(named in m for m in mismatches), mismatches


def test_the_refusal_of_a_fully_masked_row_is_checked_against_the_core(monkeypatch):
    # A core whose softmax gives NaN for a row with nothing to read (as torch.softmax does) contradicts
    # the chapter's "attention_lab 遇到这样的一行直接报错".
    pages, bib = book_pages()
    with np.errstate(invalid="ignore"):
        monkeypatch.setattr(VERIFY, "softmax", lambda s, axis=-1: np.exp(s) / np.exp(s).sum(axis=axis, keepdims=True))
        VERIFY._meaning.cache_clear()
        try:
            mismatches = VERIFY.verify_pages(pages, bib).mismatches
        finally:
            VERIFY._meaning.cache_clear()
    assert any("does not refuse a fully masked row" in m for m in mismatches), mismatches

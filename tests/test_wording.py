"""The book's exact wording where an expert found slips (issue 28), so that none comes back.

Read from the sources (``book/*.md``, ``strings_zh.json``): no build needed.  Each test names the
behaviour of the text it protects; the numbers in these sentences are checked by
``scripts/verify_concepts.py``, not here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PAGES = {p.name: p.read_text(encoding="utf-8") for p in sorted(BOOK.glob("*.md"))}
CHAPTER = PAGES["f11-attention.md"]
STRINGS_TEXT = (ROOT / "attention_lab" / "strings_zh.json").read_text(encoding="utf-8")
STRINGS = json.loads(STRINGS_TEXT)


def paragraph_with(text: str, needle: str) -> str:
    """The blank-line-separated paragraph of ``text`` that holds ``needle`` (exactly one)."""
    found = [p for p in re.split(r"\n\s*\n", text) if needle in p]
    assert len(found) == 1, (needle, len(found))
    return found[0]


def test_rope_is_said_to_rotate_queries_and_keys_not_to_add_to_the_input():
    paragraph = paragraph_with(CHAPTER, "RoPE")
    assert "旋转" in paragraph and "查询 $q$" in paragraph and "键 $k$" in paragraph
    assert "不改 $X$" in paragraph
    assert "加进表示里" not in CHAPTER


def test_the_spread_after_scaling_is_tied_to_the_simulations_assumption():
    paragraph = paragraph_with(CHAPTER, "标准差都回到")
    assert "假设" in paragraph and "相互独立" in paragraph and "不一定" in paragraph
    assert "不论宽度多大" not in CHAPTER


def test_contrast_one_caption_says_v_changed_as_well_as_o():
    caption = re.search(r"caption: (对照一（只改 Wv）.*)", CHAPTER).group(1)
    assert "只有 O 变了" not in caption and "V 也变了" in caption


def test_cross_attention_usually_goes_without_a_causal_mask_everywhere():
    """The chapter says 通常不加; the shapes page and its lab say the same, and that the lab itself
    does not offer one; nowhere is it said that cross-attention never has one."""
    texts = {**PAGES, "strings_zh.json": STRINGS_TEXT}
    for name, text in texts.items():
        for m in re.finditer(r"交叉注意力[^。；]{0,12}不加因果掩码", text):
            around = text[max(0, m.start() - 12):m.end() + 12]
            assert "通常" in around or "这个实验台" in around, (name, around)
    assert "通常" in STRINGS["shapes"]["causal_cross"] and "通常" in STRINGS["shapes"]["link_causal_cross"]


def test_cross_attention_reads_a_source_with_token_names_of_its_own():
    """Issue 29: cross mode named the source rows with the query's own tokens (我, 爱, 读 reading
    我, 爱, 读), which made it look like self-attention.  The source has its own names, the keys'
    worked lines and the site's new source rows say them, and the shapes page says why."""
    from attention_lab.shapes import DEFAULT_SOURCE_TOKENS, DEFAULT_TOKENS, default_state, resized, shapes_config, worked

    assert not set(DEFAULT_SOURCE_TOKENS) & set(DEFAULT_TOKENS)
    state = resized(default_state(), mode="cross", m=4)
    assert state["source_tokens"] == list(DEFAULT_SOURCE_TOKENS[:4])
    assert shapes_config()["default_source_tokens"] == list(DEFAULT_SOURCE_TOKENS)  # the site's rows
    keys = [line["text"] for line in worked(state) if line.get("key") == "readable"]
    assert len(keys) == 4 and all(f"：{t}，" in k for t, k in zip(state["source_tokens"], keys)), keys
    assert not any(f"：{t}，" in k for t in state["tokens"] for k in keys), keys
    assert "自己的词元名" in paragraph_with(PAGES["shapes.md"], "**交叉注意力**")


def test_head_width_d_model_over_h_is_called_a_convention():
    paragraph = paragraph_with(CHAPTER, "d_\\text{model}/h")
    assert "约定" in paragraph and "不是数学上非如此不可" in paragraph


def test_the_apple_example_is_quoted_with_its_own_tokens():
    from attention_lab.shapes import EXAMPLES

    tokens = EXAMPLES["apple_tech"]["tokens"]
    for token in re.findall(r"“(发布[^”]*)”", CHAPTER + PAGES["shapes.md"]):
        assert token in tokens or token == "".join(tokens), token


def test_one_title_separator_and_one_name_for_the_causal_mask():
    assert re.search(r"(?m)^# F11 · Attention 逐步计算", CHAPTER)
    assert "F11｜" not in "".join(PAGES.values())
    assert "因果读取规则" not in "".join(PAGES.values())


def test_a_parameter_table_is_named_once_in_its_table():
    assert "$W_q$（Wq）" not in CHAPTER and "（Wk）" not in CHAPTER and "（Wv）" not in CHAPTER


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_space_after_a_bold_sentence_or_before_bold_quotes(name):
    """"**…数据**。同一张", not "**…数据。** 同一张" (CommonMark needs the space only because the bold
    ends on "。"; moving "。" out keeps the bold and drops the gap)."""
    text = PAGES[name]
    assert not re.search(r"。\*\* ", text), re.search(r".{20}。\*\* .{10}", text)
    assert not re.search(r"[\u4e00-\u9fff] \*\*“", text)


def test_printed_chinese_labels_take_the_full_width_colon():
    code = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", CHAPTER, re.S))
    code = re.sub(r"\{[^{}\n]*\}", "{}", code)  # f-string fields: "{d:3}" is a format spec
    assert not re.search(r"print\(f?[\"'][^\"']*[\u4e00-\u9fff][^\"']*:", code)
    assert not re.search(r"print\(f?[\"'][A-Za-z]+:[\"' ]", code)


def test_ordinal_cells_are_written_with_spaces_in_labels_and_strings():
    """"第 0 格", as the prose writes it: the lab's column headers (twin.cell), its control labels and
    the figures' column labels (plotting uses twin.cell) all take the spaces."""
    assert STRINGS["twin"]["cell"] == "第 {c} 格"
    assert not re.search(r"第\{[a-z]\}[格行列个]", STRINGS_TEXT)
    assert not re.search(r"第\d[格行列]", "".join(PAGES.values()))
    from attention_lab.plotting import _labels

    assert _labels("O", 2, 2, ["我", "爱"])[1] == ["第 0 格", "第 1 格"]


#: Terms an expert found used before they were explained; each must be explained where it first
#: appears: followed by its explanation in parentheses or after a colon (RoPE: named inside the
#: parentheses of 旋转位置编码, then said what it rotates).
FIRST_USE = {term: r"^\**[（：]" for term in ("推理", "偏置", "归一化", "残差连接", "均匀分布", "溢出", "饱和")}
FIRST_USE["RoPE"] = r"旋转一个角度"
FIRST_USE["梯度"] = r"^\**[（：]"
#: The book's own names for the two kinds of position, glossed where the W table first uses them.
FIRST_USE["接收位置"] = r"^\**是"
FIRST_USE["被读取位置"] = r"^\**是"


@pytest.mark.parametrize("term", sorted(FIRST_USE))
def test_a_term_is_explained_where_it_is_first_used(term):
    for name in ("f11-attention.md", "lab.md"):
        text = re.sub(r"```.*?```", "", PAGES[name], flags=re.S)  # prose, not code
        at = text.find(term)
        if at < 0:
            continue
        assert re.search(FIRST_USE[term], text[at + len(term):at + 120]), (name, text[at:at + 120])


def test_the_labs_refusals_are_chinese_sentences_for_every_kind_the_core_has():
    """Every kind of AttentionInputError has a Chinese sentence the labs show; the core's English
    messages carry no Chinese of their own (the one table of Chinese is strings_zh.json)."""
    import ast

    core = (ROOT / "attention_lab" / "core.py").read_text(encoding="utf-8")
    kinds = set(re.findall(r'AttentionInputError\(\s*"([a-z_]+)"', core))
    assert kinds and kinds <= set(STRINGS["errors"]), kinds - set(STRINGS["errors"])
    for kind, sentence in STRINGS["errors"].items():
        if not kind.startswith("_"):
            assert re.search(r"[\u4e00-\u9fff]", sentence), kind
    # The texts of every raise in core.py ("scores overflow (分数溢出)" mixed the two once).
    def refusal(node) -> bool:  # a raise, or a call handing _check_overflow its message
        return isinstance(node, ast.Raise) or (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_check_overflow")

    messages = [node.value for top in ast.walk(ast.parse(core)) if refusal(top)
                for node in ast.walk(top) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert len(messages) > 20
    assert [m for m in messages if re.search(r"[\u4e00-\u9fff]", m)] == []


def test_the_standard_names_stand_beside_the_books_own_terms():
    """份额 / 接收位置 / 被读取位置 are the book's words; where each is defined, the standard name
    (注意力权重, 查询位置, 键位置) stands beside it, and notation.md's table gives both."""
    positions = paragraph_with(CHAPTER, "本书把提供查询、接收信息的位置叫")
    assert "**查询位置**（query position）" in positions and "**键位置**（key position）" in positions
    shares = paragraph_with(CHAPTER, "softmax 的结果本书叫**份额**")
    assert "**注意力权重**（attention weight）" in shares
    notation = PAGES["notation.md"]
    assert "| 接收位置（查询位置） | query position |" in notation
    assert "| 被读取位置（键位置） | key position |" in notation
    assert "份额（注意力权重）" in notation


def test_version_specific_pytorch_detail_is_folded_in_the_advanced_box():
    """A behaviour checked on one PyTorch version (PyTorch 2.13, need_weights=False's silent zeros, the
    fully masked row's zeros) is told inside the folded 进阶 box, not in the running text."""
    box = re.search(r":::\{dropdown\} 进阶：PyTorch (\d+\.\d+)[^\n]*\n:class-container: f11-advanced\n(.*?)\n:::\n",
                    CHAPTER, re.S)
    assert box, "the chapter has no folded 进阶 box"
    outside = CHAPTER[:box.start()] + CHAPTER[box.end():]
    prose = re.sub(r"```.*?```", "", outside, flags=re.S)
    assert not re.search(r"PyTorch \d+\.\d+", prose), re.search(r".{30}PyTorch \d+\.\d+.{10}", prose)
    assert "need_weights=False` 时**走另一条计算路径" in box.group(2)
    assert "零向量" in box.group(2) and "is_causal=True` 不能和 `attn_mask` 同时传" in box.group(2)

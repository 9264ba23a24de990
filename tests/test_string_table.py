"""One string table: every Chinese sentence the reader sees lives in ``attention_lab/strings_zh.json``
(the lab's catalog) or, for Sphinx's own labels, ``locale/zh_CN/LC_MESSAGES/*.po``; Python code
reads it from there and fills its ``{name}`` placeholders with :func:`attention_lab.strings.fill`.

The walk reads the code the book runs (``attention_lab/`` and ``book/_ext/``) with :mod:`ast`:
a ``str`` constant holding a CJK character that is not a docstring is a literal a reader could meet
(comments never reach the AST).  The few allowed are listed below, each with why it is no sentence of
the book's or cannot come from the catalog.  ``scripts/`` is not walked: no text of it reaches a page
(``verify_concepts.py``'s Chinese literals are patterns that read the prose, ``make_shape_vectors.py``'s
test tokens)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from attention_lab.strings import fill, strings, text

ROOT = Path(__file__).resolve().parents[1]
#: The code walked: every Python file of the package and of the book's Sphinx extensions.
CODE = sorted([*(ROOT / "attention_lab").rglob("*.py"), *(ROOT / "book" / "_ext").glob("*.py")])
#: CJK ideographs, CJK punctuation (、。「」…) and the full-width forms (，：！（）).
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

#: (file, top-level name holding the literal): why it stays in code.
ALLOWED = {
    ("attention_lab/core.py", "TOKENS"):
        "the example's two tokens: data of the example, changed with BASELINE in core.py (README, 改动例子里的数字)",
    ("attention_lab/shapes.py", "DEFAULT_TOKENS"):
        "the shapes lab's tokens for new rows: example data, beside DEFAULT_SOURCE_TOKENS",
    ("attention_lab/shapes.py", "_two_heads"): "the two-heads example's tokens (猫 狗 猫): example data",
    ("attention_lab/shapes.py", "_heads_narrow"): "the narrow-heads example's tokens (苹果 发布了 电脑): example data",
    ("attention_lab/shapes.py", "EXAMPLES"): "the 苹果 examples' tokens: example data",
    ("attention_lab/params.py", "_TYPED"):
        "full-width characters a reader may type (１．－＋，and the ideographic space), read as ASCII: input, not text shown",
    ("book/_ext/f11_site.py", "INSTALL_CELL"):
        "the source of the notebooks' first code cell, which runs where attention_lab is not installed yet, "
        "so it cannot read the catalog; its Chinese comments and messages are that cell's code",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def _top_name(stmt: ast.stmt) -> str:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return f"line {stmt.lineno}"


def chinese_literals(path: Path, source: str | None = None) -> list[tuple[str, int, str]]:
    """(top-level name, line, text) of every non-docstring ``str`` constant with a CJK character in
    the Python file ``path`` (or in ``source``, read as that file)."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    docs = _docstrings(tree)
    found = []
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and CJK.search(node.value):
                found.append((_top_name(stmt), node.lineno, node.value))
    return found


def _outside_catalog() -> list[str]:
    out = []
    for path in CODE:
        rel = path.relative_to(ROOT).as_posix()
        for name, line, value in chinese_literals(path):
            if (rel, name) not in ALLOWED:
                out.append(f"{rel}:{line} ({name}): {value[:60]!r}")
    return out


def test_no_chinese_literal_in_python_code_outside_the_catalog():
    found = _outside_catalog()
    assert not found, ("Chinese text written in Python code: put it in attention_lab/strings_zh.json with named "
                       "placeholders and read it with attention_lab.strings.text / fill:\n  " + "\n  ".join(found))


def test_the_walk_finds_a_chinese_literal_added_to_code():
    # The walk itself can fail: a note in an f-string, a joiner, a constant are all found; a
    # docstring and a comment are not (they are for programmers, and never shown).
    source = ('"""模块说明。"""\n'
              'def note(name):\n'
              '    """函数说明。"""\n'
              '    # 注释\n'
              '    return f"{name} 已改为 1" + "、".join([name])\n'
              'LABEL = "仍为"\n')
    found = chinese_literals(ROOT / "attention_lab" / "lab.py", source)
    assert [(n, v) for n, _, v in found] == [("note", " 已改为 1"), ("note", "、"), ("LABEL", "仍为")]


def test_every_allowed_literal_is_still_there():
    # An entry of ALLOWED whose literal has gone (moved into the catalog, or the name renamed) is
    # taken out, so the list never allows more than it names.
    present = {(path.relative_to(ROOT).as_posix(), name) for path in CODE for name, _, _ in chinese_literals(path)}
    assert not set(ALLOWED) - present, sorted(set(ALLOWED) - present)


def test_placeholders_are_filled_by_name_in_the_order_given():
    # One filler for every template (render.js's fill does the same): literal, by name, in order, so a
    # typed value that looks like a placeholder ("{max}") is written as typed when it is filled last.
    assert fill("{name} 的范围是 {min} 到 {max}，{value} 已改为 {clamped}",
                name="d_k", min=1, max=64, clamped=64, value="{max}") == "d_k 的范围是 1 到 64，{max} 已改为 64"
    assert text("coerce.d_k_integer", value="3.9", rounded="4") == "d_k 取整数，3.9 已改为 4"
    with pytest.raises(KeyError):
        text("coerce.no_such_note")


def test_every_placeholder_the_python_code_fills_is_in_its_template():
    # The templates this session moved out of the code, with the names their code fills: a renamed
    # placeholder in the catalog would leave "{...}" in the sentence, so each name must be in it.
    table = strings()
    fills = {
        ("coerce", "causal"): {"name", "state", "raw"}, ("coerce", "range"): {"name", "min", "max", "value", "clamped"},
        ("coerce", "not_number"): {"name", "what", "keep", "raw"}, ("coerce", "d_k_integer"): {"value", "rounded"},
        ("dataflow", "example_self"): {"n", "d_model", "d_k", "d_v"},
        ("dataflow", "example_cross"): {"n", "m", "d_model", "d_k", "d_v"}, ("dataflow", "text"): {"arrows"},
        ("exercises", "case"): {"k", "shapes"}, ("exercises", "case_shapes"): {"Q", "K", "V", "M"},
        ("exercises", "case_heads"): {"h"}, ("exercises", "case_d_k"): {"d_k"},
        ("api", "size_message"): {"size", "detail", "english"}, ("api", "tables_missing"): {"names"},
        ("api", "resized_shape"): {"name", "lo", "hi", "value"}, ("api", "resized_mode"): {"value"},
        ("api", "resized_unknown"): {"name", "keys"}, ("site", "root_page"): {"link"},
    }
    for (section, key), names in fills.items():
        template = table[section][key]
        assert set(re.findall(r"\{(\w+)\}", template)) == names, (section, key, template)


def test_the_catalog_is_one_json_object_with_unique_keys():
    # json.loads keeps the last of two equal keys silently: a second "coerce" would hide the first.
    def no_twins(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    json.loads((ROOT / "attention_lab" / "strings_zh.json").read_text(encoding="utf-8"), object_pairs_hook=no_twins)

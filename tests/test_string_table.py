"""One string table: every Chinese sentence the reader sees lives in ``attention_lab/strings_zh.json``
(the lab's catalog) or, for Sphinx's own labels, ``locale/zh_CN/LC_MESSAGES/*.po``; Python code
reads it from there and fills its ``{name}`` placeholders with :func:`attention_lab.strings.fill`.

The walk reads the code the book runs (``attention_lab/`` and ``book/_ext/``) with :mod:`ast`:
a ``str`` constant holding a CJK character that is not a docstring is a literal a reader could meet
(comments never reach the AST).  The few allowed are listed below, each with why it is no sentence of
the book's or cannot come from the catalog.  ``scripts/`` is not walked: no text of it reaches a page
(``verify_concepts.py``'s Chinese literals are patterns that read the prose, ``make_shape_vectors.py``'s
test tokens).

The site's and Jupyter's shared JavaScript ``attention.js`` (the maths and the notes it writes) is walked
too, by a small lexer (:func:`js_string_literals`: string literals, not comments nor regular
expressions); its notes are filled from the ``strings`` part of the config the Python side writes."""

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


#: The JavaScript walked: the lab's shared computation and notes (attention_lab/static/attention-lab/).
ATTENTION_JS = ROOT / "attention_lab" / "static" / "attention-lab" / "attention.js"
#: Top-level name in attention.js holding the literal: why it stays in code.
ALLOWED_JS = {
    "TOKENS": "the example's two tokens (我 爱), as core.TOKENS: example data, not a sentence",
    "TYPED": "full-width characters a reader may type (．－＋，and the ideographic space), read as ASCII, "
             "as params._TYPED: input, not text shown",
}

_JS_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r\n|[\s\S])")
_JS_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "\n": "", "\r\n": ""}
#: A name, keyword or number (a "." joins them: it never starts a literal).
_JS_WORD = re.compile(r"[A-Za-z0-9_$.]+")
#: Words after which "/" starts a regular expression, not a division.
_JS_REGEX_AFTER = {"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw", "instanceof", "else", "do"}


def _js_unescape(body: str) -> str:
    def one(m):
        e = m.group(1)
        if e.startswith("u{"):
            return chr(int(e[2:-1], 16))
        if e[0] in "ux" and len(e) > 1:
            return chr(int(e[1:], 16))
        return _JS_SIMPLE.get(e, e)
    return _JS_ESCAPE.sub(one, body)


def js_string_literals(source: str) -> list[tuple[str, int, str]]:
    """(top-level name, line, value) of every string literal of the JavaScript ``source``: '…', "…" and
    the text of `…` (escapes decoded); comments and regular expressions are skipped (a regular
    expression matches what a reader types, it says nothing).  The name is the latest ``var`` or
    ``function`` declared at brace depth 0 or 1 (attention.js's factory body) before the literal."""
    out, i, n, line, depth, prev, name, declaring = [], 0, len(source), 1, 0, "", "(top)", False
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
        if c.isspace():
            i += 1
            continue
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
            continue
        if c in "'\"`":
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            body = source[i + 1:j]
            texts = re.split(r"\$\{[^}]*\}", body) if c == "`" else [body]
            out.extend((name, line, _js_unescape(t)) for t in texts if t)
            line += body.count("\n")
            i, prev = j + 1, "value"
            continue
        if c == "/":
            if prev in ("value", "word") or prev in ")]":
                i, prev = i + 1, "/"
                continue
            j, in_class = i + 1, False  # a regular expression: up to its closing "/", then its flags
            while j < n and (source[j] != "/" or in_class):
                if source[j] == "\\":
                    j += 1
                elif source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                j += 1
            j += 1
            while j < n and source[j].isalpha():
                j += 1
            i, prev = j, "value"
            continue
        m = _JS_WORD.match(source, i)
        if m:
            word = m.group()
            if declaring and depth <= 1 and re.fullmatch(r"[A-Za-z_$][\w$]*", word):
                name = word
            declaring = word in ("var", "let", "const", "function")
            prev = "op" if word in _JS_REGEX_AFTER else "word"
            i = m.end()
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        declaring, prev = False, c
        i += 1
    return out


def _js_outside_catalog(source: str | None = None) -> list[str]:
    source = ATTENTION_JS.read_text(encoding="utf-8") if source is None else source
    return [f"attention.js:{line} ({name}): {value[:60]!r}" for name, line, value in js_string_literals(source)
            if CJK.search(value) and name not in ALLOWED_JS]


def test_no_chinese_literal_in_attention_js_outside_the_catalog():
    found = _js_outside_catalog()
    assert not found, ("Chinese text written in attention.js: put it in attention_lab/strings_zh.json with named "
                       "placeholders and fill it with fill() from the strings the caller passes (config.strings):\n  "
                       + "\n  ".join(found))


def test_the_js_walk_finds_a_chinese_literal_added_to_attention_js():
    # The lexer itself can fail: a literal in either quotes, an escaped one and a template's text are
    # found; a comment, a regular expression (also after a division) and an ASCII literal are not.
    source = ('/* 说明 */ (function () {\n'
              '  var TOKENS = ["我"];\n'
              '  // 注释 "不算"\n'
              '  function note(name, a, b) {\n'
              "    var half = a / 2, re = /[一-龥'\"]/g, x = (a) / b / 2;\n"
              "    return name + ' 已改为 ' + \"\\u3000\" + `仍为 ${name}` + \"ok\";\n"
              '  }\n'
              '})();\n')
    found = [(n, line, v) for n, line, v in js_string_literals(source) if CJK.search(v)]
    assert found == [("TOKENS", 2, "我"), ("note", 6, " 已改为 "), ("note", 6, "\u3000"), ("note", 6, "仍为 ")], found
    # And in the real file: a note written back into coerce is caught.
    real = ATTENTION_JS.read_text(encoding="utf-8")
    at = real.index("function coerce(")
    mutated = real[:at] + real[at:].replace("note: fill(cs.causal,", 'note: name + " 只能是开或关" || fill(cs.causal,', 1)
    assert mutated != real
    assert [f for f in _js_outside_catalog(mutated) if "(coerce)" in f] and not _js_outside_catalog(real)


def test_every_allowed_js_literal_is_still_there():
    present = {name for name, _, value in js_string_literals(ATTENTION_JS.read_text(encoding="utf-8"))
               if CJK.search(value)}
    assert not set(ALLOWED_JS) - present, sorted(set(ALLOWED_JS) - present)


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

"""The Chinese UI strings (``strings_zh.json``): one table for the lab, the figures and the site."""

from __future__ import annotations

import functools
import json
from importlib import resources


@functools.lru_cache(maxsize=1)
def _table() -> str:
    return resources.files(__package__).joinpath("strings_zh.json").read_text("utf-8")


@functools.lru_cache(maxsize=1)
def _shared() -> dict:
    """One parsed table for :func:`text` (read only, never handed out)."""
    return json.loads(_table())


def strings() -> dict:
    """The Chinese UI strings table (``strings_zh.json``), a fresh dict each call."""
    return json.loads(_table())


def fill(template: str, **values) -> str:
    """The catalog's one filler: each ``{name}`` of ``template`` replaced by ``str(value)``, literally,
    one name after another in the order given (as render.js's ``fill``), so a value that could hold
    braces (typed text) goes last.  Every Python module fills ``strings_zh.json``'s templates with it.

    >>> fill("{name} 的范围是 {min} 到 {max}", name="d_k", min=1, max=64)
    'd_k 的范围是 1 到 64'
    """
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def text(path: str, **values) -> str:
    """The catalog's entry at the dotted ``path`` (``"coerce.range"``), filled by :func:`fill`.

    >>> text("dataflow.text", arrows="X → Q")
    '数据流：X → Q'
    """
    entry = _shared()
    for key in path.split("."):
        entry = entry[key]
    return fill(entry, **values)


def error_text(exc: BaseException, table: dict | None = None) -> str:
    """Why a computation was refused, in Chinese: ``strings_zh.json``'s ``"errors"`` entry for the
    refusal's ``kind`` (:class:`attention_lab.core.AttentionInputError`), else its ``"other"``
    sentence naming the exception's type.  The labs' notes put this in ``{message}``; the core's own
    message stays in English, for programmers.  ``table``: the strings table (default: a fresh one).

    >>> from attention_lab.core import AttentionInputError
    >>> error_text(AttentionInputError("overflow", "scores overflow: ...")).startswith("数太大")
    True
    >>> error_text(TypeError("x"))
    '计算没有完成（TypeError）'
    """
    errors = (strings() if table is None else table)["errors"]
    kind = getattr(exc, "kind", None)
    if isinstance(kind, str) and not kind.startswith("_") and kind in errors:
        return errors[kind]
    return errors["other"].replace("{type}", type(exc).__name__)

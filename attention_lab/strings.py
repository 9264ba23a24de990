"""The Chinese UI strings (``strings_zh.json``): one table for the lab, the figures and the site."""

from __future__ import annotations

import functools
import json
from importlib import resources


@functools.lru_cache(maxsize=1)
def _table() -> str:
    return resources.files(__package__).joinpath("strings_zh.json").read_text("utf-8")


def strings() -> dict:
    """The Chinese UI strings table (``strings_zh.json``), a fresh dict each call."""
    return json.loads(_table())


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

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

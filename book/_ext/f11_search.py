"""Chinese search that finds words: Sphinx's zh search language with a query splitter.

Sphinx's :class:`~sphinx.search.zh.SearchChinese` segments the pages with jieba when it
builds the index, but the browser splits a query only at non-letters.  Sphinx's documented
place for a language's query splitting is :attr:`SearchLanguage.js_splitter_code` (a
``splitQuery`` function written into ``_static/language_data.js``); this subclass sets it to
``f11_search_splitter.js`` and is registered for ``html_search_language: zh`` with
:meth:`~sphinx.application.Sphinx.add_search_language`.  The index is built exactly as before.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.search.zh import SearchChinese


class SearchChineseWords(SearchChinese):
    """zh: jieba for the index (as Sphinx), the index's own words for the query (f11_search_splitter.js)."""

    js_splitter_code = (Path(__file__).with_name("f11_search_splitter.js")).read_text("utf-8")


def setup(app):
    app.add_search_language(SearchChineseWords)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

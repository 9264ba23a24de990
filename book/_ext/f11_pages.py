"""The finished pages, made light, lab-first and Chinese (runs after every HTML build).

The theme (pydata-sphinx-theme via sphinx-book-theme) is good but heavy for this
one-chapter book, and some of its strings are English.  After Sphinx has written
the pages, this extension edits them in place:

* **Icons.** The theme draws about 15 Font Awesome icons with a 1.5 MB script
  that redraws what its CSS already draws from the icon fonts (another 1 MB as
  .woff2 and .ttf).  The script goes, each font is cut down to the icons the
  pages and the theme's CSS use (a few KB), and so are the CSS rules naming icons.
* **Lab first.** The lab's three scripts (``attention_lab.web.TWIN_JS``) are
  started by a tiny loader at the top of ``<head>``: dynamically inserted
  scripts with ``async = false`` run in order as soon as they arrive, blocked
  neither by stylesheets nor by other scripts.  Every other script is
  ``defer``-red, and the small inline scripts move before the stylesheets (an
  inline script after a pending stylesheet would hold up the parser), so the
  page is parsed, and the lab started, while theme files are still loading.
  The theme's "search as you type" files (off in this book) are not loaded on
  ordinary pages, nor the lab's files on pages without a lab, nor sphinx-design's
  on pages without its components.
* **Chinese search.** ``search.html`` also loads ``_static/f11-search.js``, which
  segments a query the way the index is and shows each hit's section prose.
* **Chinese names.** The theme's English button names and titles are replaced
  with Chinese ones (:data:`CHINESE`).
* **One light stylesheet.** The theme's seven stylesheets become one, cut to the
  rules the pages can use (``f11_css``: 480 KB -> about 125 KB).
* **Figures keep their room.** Each SVG figure gets its width and height, so nothing
  jumps while it loads (:func:`image_sizes`).
* **Root page.** ``index.html`` at the site root (a redirect to the first page)
  gets ``lang``, a title and a visible link.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

from f11_css import bundle_theme_css

logger = logging.getLogger(__name__)

#: English strings of the theme -> Chinese (aria-label, title, tooltip and text).
CHINESE = {
    "Color mode": "配色：浅色、深色或跟随系统",
    "System Settings": "跟随系统",
    "Light": "浅色",
    "Dark": "深色",
    "Toggle primary sidebar": "显示或隐藏全书目录",
    "Toggle secondary sidebar": "显示或隐藏本页目录",
    "Launch interactive content": "在线运行本页",
    "Launch on Binder": "在 Binder 中运行",
    "Link to this heading": "链接到本节",
    "Link to this image": "链接到本图",
    "Link to this table": "链接到本表",
    "Link to this code": "链接到本段代码",
    "Link to this equation": "链接到本公式",
    "Back to top": "回到顶部",
    "Skip to main content": "跳到正文",
    "Copy to clipboard": "复制到剪贴板",
    "Copied!": "已复制",
    "Main": "主导航",
    "Page": "本页",
    "Section Navigation": "本节导航",
    "Site navigation": "全书导航",
    "Contents": "目录",
    "列印成 PDF": "打印成 PDF",
    "Binder logo": "Binder",
}
_CJK = re.compile(r"[\u3400-\u9fff]")
# A header menu item: its tooltip (title) is Chinese, its visible text only ".md".
_MENU_ITEM = re.compile(r'(title="(?P<title>[^"]*)"(?:(?!</[ab]>|</button>|title=).)*?<span class="btn__text-container">)'
                        r'(?P<text>[^<]*)(</span>)', re.S)
_ATTRS = ("aria-label", "title", "data-bs-title", "data-tooltip", "data-content", "alt")

FA_SCRIPT = "_static/scripts/fontawesome.js"
FA_CSS = "_static/styles/pydata-sphinx-theme.css"
FA_FONTS = "_static/vendor/fontawesome/webfonts"
_FA_CLASS_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\([0-9a-f]+)"\}')
_PUA_CONTENT = re.compile(r'"\\((?:f|e)[0-9a-f]{3})"')


def used_icon_codepoints(outdir: Path, pages: list[str]) -> set[int]:
    """Code points of every Font Awesome icon the site can show.

    Icons named by class in the pages (``<i class="fa-solid fa-bars">``, resolved with
    the theme CSS's ``.fa-bars:before{content:"\\f0c9"}``) and icons the theme's CSS
    draws by itself (admonition titles, external links, ``--pst-icon-*``).
    """
    css_files = [outdir / FA_CSS, outdir / "_static" / "styles" / "sphinx-book-theme.css"]
    by_class: dict[str, int] = {}
    own: set[int] = set()
    for css_file in css_files:
        if not css_file.exists():
            continue
        css = css_file.read_text("utf-8")
        for m in _FA_CLASS_RULE.finditer(css):
            for cls in re.findall(r"\.(fa-[a-z0-9-]+):before", m.group(1)):
                by_class[cls] = int(m.group(2), 16)
        rest = _FA_CLASS_RULE.sub("", css)
        own |= {int(c, 16) for c in _PUA_CONTENT.findall(rest)}
        own |= {ord(c) for c in rest if 0xE000 <= ord(c) <= 0xF8FF}  # icons written as characters
    used = set(own)
    for cls in used_icon_classes(pages):
        if cls in by_class:
            used.add(by_class[cls])
    return used


def used_icon_classes(pages: list[str]) -> set[str]:
    return {c for page in pages for classes in re.findall(r'class="([^"]*\bfa-[^"]*)"', page)
            for c in classes.split() if c.startswith("fa-")}


def strip_unused_icon_rules(css: str, used_classes: set[str]) -> str:
    """Drop the theme CSS's ``.fa-x:before{content:…}`` rules for the ~1,800 icons no page uses (85 KB)."""
    def keep(m: re.Match) -> str:
        names = set(re.findall(r"\.(fa-[a-z0-9-]+):before", m.group(1)))
        return m.group(0) if names & used_classes else ""

    return _FA_CLASS_RULE.sub(keep, css)


def subset_icon_fonts(outdir: Path, codepoints: set[int], used_classes: set[str]) -> None:
    """Cut the theme's Font Awesome fonts down to ``codepoints``; drop the 1.5 MB icon script.

    The theme ships each font as .woff2 and .ttf (about 1 MB together) plus a script that
    redraws the same icons as SVG.  Its CSS already draws them from the font, so the
    script goes and each font becomes one small .woff with only the icons in use.
    """
    import logging as std_logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    # fontTools reports every glyph it keeps at INFO level ("Glyph names: …"); the build
    # log is read for missing-glyph warnings, so keep it quiet.
    std_logging.getLogger("fontTools").setLevel(std_logging.WARNING)
    fonts = outdir / FA_FONTS
    css_file = outdir / FA_CSS
    css = css_file.read_text("utf-8")
    for ttf in sorted(fonts.glob("*.ttf")):
        font = TTFont(ttf)
        keep = sorted(codepoints & set(font.getBestCmap()))
        options = subset.Options()
        options.flavor = "woff"  # zlib: no brotli needed
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=keep)
        subsetter.subset(font)
        font.flavor = "woff"
        font.save(fonts / f"{ttf.stem}.woff")
        css = re.sub(rf'src:url\(\.\./vendor/fontawesome/webfonts/{ttf.stem}\.woff2\) format\("woff2"\),'
                     rf'url\(\.\./vendor/fontawesome/webfonts/{ttf.stem}\.ttf\) format\("truetype"\)',
                     f'src:url(../vendor/fontawesome/webfonts/{ttf.stem}.woff) format("woff")', css)
        ttf.unlink()
        (fonts / f"{ttf.stem}.woff2").unlink(missing_ok=True)
    css_file.write_text(strip_unused_icon_rules(css, used_classes), "utf-8")
    for name in ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt"):
        (outdir / "_static" / "scripts" / name).unlink(missing_ok=True)


def chinese_names(page: str) -> str:
    for english, chinese in CHINESE.items():
        for attr in _ATTRS:
            page = page.replace(f'{attr}="{english}"', f'{attr}="{chinese}"')

    def menu_text(m: re.Match) -> str:
        title, text = m.group("title"), m.group("text").strip()
        if _CJK.search(text) or not _CJK.search(title):
            return m.group(0)
        # "下载源文件（.md）"; a name already in the title ("在 Binder 中运行") is not repeated.
        label = title if text.lstrip(".").lower() in title.lower() else f"{title}（{text}）"
        return m.group(1) + label + m.group(4)

    return _MENU_ITEM.sub(menu_text, page)


def accessible(page: str) -> str:
    """Fixes for what axe reports on the theme's and Sphinx's own markup."""
    # The search buttons show "搜索 Ctrl+K" but were named "搜索" only
    # (label-content-name-mismatch): their visible text is their name.
    page = re.sub(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"', r"\1", page)
    # Reference list: role doc-biblioentry is deprecated and not a listitem, so the
    # role="list" around it had no items (aria-required-children, critical).
    page = page.replace('role="doc-biblioentry"', 'role="listitem"')
    return page


def notebook_download(page: str, html_file: Path, outdir: Path) -> str:
    """The header's "download .ipynb" gives the notebook made for readers (``_notebooks/``:
    it installs attention_lab where missing, next to the package's wheel), not the
    build's own copy in ``_sources/``."""
    def swap(m: re.Match) -> str:
        stem = m.group(2)
        target = outdir / "_notebooks" / f"{stem}.ipynb"
        if not target.exists():
            return m.group(0)
        rel = Path(*([".."] * (len(html_file.relative_to(outdir).parts) - 1)), "_notebooks", f"{stem}.ipynb")
        return f'href="{rel.as_posix()}"'

    return re.sub(r'href="((?:\.\./)*_sources/(?:[^"/]+/)*)([^"/]+)\.ipynb"', swap, page)


_IMG_SVG = re.compile(r'<img\b(?P<attrs>[^>]*?\bsrc="(?P<src>[^"]+\.svg)"[^>]*?)\s*(?P<end>/?>)')
_SVG_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="(?P<w>[\d.]+)(?P<wu>pt|px)?"[^>]*?\bheight="(?P<h>[\d.]+)(?P<hu>pt|px)?"', re.S)


def image_sizes(page: str, html_file: Path) -> str:
    """Each figure (an SVG ``<img>`` without a size) gets the width and height it is drawn at, so
    the page keeps its room while it loads: on a slow phone the text no longer jumps as each
    figure arrives, and a link to a section lands on it.  (The theme's ``max-width: 100%;
    height: auto`` still scales it down to the column.)"""
    def sized(m: re.Match) -> str:
        attrs = m.group("attrs")
        if re.search(r"\b(width|height)=", attrs) or m.group("src").startswith(("http:", "https:", "data:")):
            return m.group(0)
        svg = (html_file.parent / m.group("src").split("?")[0]).resolve()
        if not svg.is_file():
            return m.group(0)
        size = _SVG_SIZE.search(svg.read_text("utf-8", "replace")[:4000])
        if not size:
            return m.group(0)
        px = {"pt": 4 / 3, "px": 1.0, None: 1.0}
        w, h = float(size["w"]) * px[size["wu"]], float(size["h"]) * px[size["hu"]]
        return f'<img{attrs} width="{round(w)}" height="{round(h)}" {m.group("end")}'

    return _IMG_SVG.sub(sized, page)


_SCRIPT = re.compile(r"<script\b(?P<attrs>[^>]*)>(?P<body>.*?)</script>\s*", re.S)
_STYLESHEET = re.compile(r'<link\b[^>]*rel="stylesheet"[^>]*>')


def _src(attrs: str) -> str | None:
    m = re.search(r'\bsrc="([^"]*)"', attrs)
    return m.group(1) if m else None


def _executable(attrs: str) -> bool:
    m = re.search(r'\btype="([^"]*)"', attrs)
    return m is None or m.group(1) in ("text/javascript", "application/javascript", "module")


def lab_first(page: str, outdir: Path, lab_files: tuple[str, ...], search_page: bool) -> str:
    head_end = page.find("</head>")
    if head_end < 0:
        return page
    head, rest = page[:head_end], page[head_end:]
    lab_srcs: list[str] = []
    inline: list[str] = []

    def rework(m: re.Match) -> str:
        attrs, body = m.group("attrs"), m.group("body")
        src = _src(attrs)
        if src is None:
            if _executable(attrs) and "data-cfasync" not in attrs:
                inline.append(m.group(0).strip())
                return ""
            return m.group(0)
        path = src.split("?")[0]
        if any(path.endswith("attention-lab/" + f) for f in lab_files):
            lab_srcs.append(src)
            return ""
        if path.endswith("documentation_options.js"):
            local = (outdir / "_static" / "documentation_options.js")
            inline.insert(0, "<script>" + local.read_text("utf-8").strip() + "</script>")
            return ""
        if not search_page and re.search(r"(searchtools|language_data)\.js$|(^|/)searchindex\.js$", path):
            return ""  # the theme's search-as-you-type, which this book does not switch on
        if " defer" not in attrs and " async" not in attrs:
            return m.group(0).replace("<script", "<script defer", 1)
        return m.group(0)

    head = _SCRIPT.sub(rework, head)
    # The Chinese catalogue (it needs doctools.js) right after doctools.js: sphinx_highlight.js
    # writes its "Hide Search Matches" link as soon as it runs (deferred scripts run in page
    # order, and the page is parsed by then), so the catalogue must be there before it.
    catalogue = re.search(r'\s*<script defer src="[^"]*translations\.js[^"]*"></script>', head)
    doctools = re.search(r'<script defer src="[^"]*doctools\.js[^"]*"></script>', head)
    if catalogue and doctools and doctools.start() < catalogue.start():
        head = head.replace(catalogue.group(0), "", 1)
        head = head.replace(doctools.group(0), doctools.group(0) + "\n    " + catalogue.group(0).strip(), 1)
    if "data-attention-lab" not in rest:
        # No lab on this page (index, notation, search): neither its scripts nor its styles.
        lab_srcs = []
        head = re.sub(r'\s*<link\b[^>]*href="[^"]*attention-lab/[^"]*\.css[^"]*"[^>]*>', "", head)
    if not re.search(r'class="[^"]*\bsd-', rest):
        # No sphinx-design component (dropdown, tab, card) on this page: not its 55 KB of CSS.
        head = re.sub(r'\s*<link\b[^>]*href="[^"]*sphinx-design\.min\.css[^"]*"[^>]*>', "", head)
        head = re.sub(r'\s*<script defer\b[^>]*src="[^"]*design-tabs\.js[^"]*"></script>', "", head)
    first_css = _STYLESHEET.search(head)
    cut = first_css.start() if first_css else len(head)
    loader = ""
    if lab_srcs:
        listed = ",".join(f'"{s}"' for s in lab_srcs)
        # fetchPriority "high": a script inserted this way would otherwise be fetched at low
        # priority, after the stylesheets, when the network is slow.
        loader = ("<script>/* the lab's own scripts first, in order, blocked by nothing else */"
                  f"[{listed}].forEach(function(s){{var e=document.createElement(\"script\");"
                  "e.src=s;e.async=false;e.fetchPriority=\"high\";document.head.appendChild(e);});</script>\n")
    head = head[:cut] + loader + "\n".join(inline) + ("\n" if inline else "") + head[cut:]
    # sphinx-thebe's global for a kernel name: thebe is off, nothing reads it.
    rest = re.sub(r"<script>kernelName = '[^']*'</script>\s*", "", rest)
    # Scripts in the body: the same rules (defer; inline ones stay, they are data or tiny).
    rest = _SCRIPT.sub(lambda m: m.group(0).replace("<script", "<script defer", 1)
                       if _src(m.group("attrs")) and " defer" not in m.group("attrs")
                       and " async" not in m.group("attrs") else m.group(0), rest)
    return head + rest


ROOT_PAGE = """<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Refresh" content="0; url={target}">
<link rel="canonical" href="{target}">
</head>
<body>
<p>正在打开本书……如果没有自动跳转，请点 <a href="{target}">{title}</a>。</p>
</body>
</html>
"""


def write_root_page(app, exc):
    if exc is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    (Path(app.outdir) / "index.html").write_text(
        ROOT_PAGE.format(title=app.config.html_title or app.config.project, target=f"{app.config.root_doc}.html"),
        "utf-8")


def finish_pages(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    from attention_lab.web import TWIN_JS

    outdir = Path(app.outdir)
    pages = {}
    for html_file in sorted(outdir.rglob("*.html")):
        if "_static" not in html_file.relative_to(outdir).parts:
            pages[html_file] = html_file.read_text("utf-8")
    for html_file, page in pages.items():
        new = re.sub(r'<script defer src="[^"]*fontawesome\.js[^"]*"></script>\s*', "", page)
        new = re.sub(r'<link rel="preload" as="script" href="[^"]*fontawesome\.js[^"]*" ?/?>\s*', "", new)
        new = accessible(chinese_names(new))
        new = notebook_download(new, html_file, outdir)
        new = image_sizes(new, html_file)
        search_page = html_file == outdir / "search.html"
        new = lab_first(new, outdir, tuple(TWIN_JS), search_page=search_page)
        if search_page:
            # Right after searchtools.js: Sphinx runs the query as soon as searchindex.js
            # arrives, so the Chinese segmentation must be in place before that.
            new = re.sub(r'(<script defer src="_static/searchtools\.js[^"]*"></script>)',
                         r'\1\n<script defer src="_static/f11-search.js"></script>', new, count=1)
        if new != page:
            html_file.write_text(new, "utf-8")
    if (outdir / FA_FONTS).is_dir():
        texts = list(pages.values())
        subset_icon_fonts(outdir, used_icon_codepoints(outdir, texts), used_icon_classes(texts))
    # The Jupyter driver of the lab view comes with the package's static folder; no page loads it.
    (outdir / "_static" / "attention-lab" / "widget.js").unlink(missing_ok=True)
    # Last: the pages' final markup decides which theme rules can match.
    bundle_theme_css(outdir)


def setup(app):
    # Before sphinx-external-toc's own handler (500), which writes a bare redirect
    # when index.html does not exist yet.
    app.connect("build-finished", write_root_page, priority=400)
    # After f11_site.write_ipynb (500), so the header can link the notebooks it writes.
    app.connect("build-finished", finish_pages, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

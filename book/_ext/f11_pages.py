"""The pages made light, lab-first and Chinese.

Where Sphinx offers a hook, this uses it; the rest edits the written pages after the build
(``build-finished``), and each such step says why no hook does it.

Through Sphinx's own mechanisms:

* **Chinese names.** ``locale/zh_CN/LC_MESSAGES/sphinx.po`` (``locale_dirs``: Sphinx's and
  pydata-sphinx-theme's strings) and ``booktheme.po`` (the book theme's buttons, put first by
  :func:`theme_catalog_first`); the theme's few hard-coded English labels go through the
  catalog in ``book/_templates/``.
* **Lab first, everything else deferred** (:func:`page_assets`, ``html-page-context``, with
  ``book/_templates/layout.html``): the lab's three scripts started by a tiny loader at the
  top of ``<head>``, the small inline scripts before the stylesheets, every script file
  deferred; a page loads the lab's and sphinx-design's files only if it uses them, and only
  ``search.html`` loads the search tools and index.
* **Description.** ``<meta name="description">`` from each page's first paragraph (:func:`describe_page`).
* **Chinese search** is ``f11_search.py`` (``SearchLanguage.js_splitter_code``) and
  ``_static/f11-search.js`` (the result summaries).

After the build, on the written files (no hook reaches them):

* **Icons.** The theme draws about 15 Font Awesome icons with a 1.5 MB script that redraws
  what its CSS already draws from the icon fonts (another 1 MB as .woff2 and .ttf).  Its
  webpack macros write that script into every page outside Sphinx's asset lists, and the fonts
  are the theme's files: the script goes, each font is cut down to the icons the pages and the
  theme's CSS use (a few KB), and so are the CSS rules naming icons.
* **Accessibility fixes** to the theme's and Sphinx's markup that axe reports (:func:`accessible`).
* **Notebook download** links to the reader's ``.ipynb`` (:func:`notebook_download`): the
  theme builds that link from ``_sources`` with no option to point it elsewhere.
* **Figures keep their room.** Each SVG figure gets its width and height, read from the SVG
  written by the notebook run (:func:`image_sizes`).
* **One light stylesheet.** The theme's seven stylesheets become one, cut to the rules the
  final pages can use (``f11_css``: 480 KB -> about 125 KB); it needs every page's final markup.
* **Root page.** ``index.html`` at the site root (a redirect to the first page) gets
  ``lang``, a title and a visible link.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

from f11_css import bundle_theme_css

logger = logging.getLogger(__name__)


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


def accessible(page: str) -> str:
    """Fixes for what axe reports on the theme's and Sphinx's own markup."""
    # The search buttons show "搜索 Ctrl+K" but were named "搜索" only
    # (label-content-name-mismatch): their visible text is their name.
    page = re.sub(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"', r"\1", page)
    # Reference list: role doc-biblioentry is deprecated and not a listitem, so the
    # role="list" around it had no items (aria-required-children, critical).
    page = page.replace('role="doc-biblioentry"', 'role="listitem"')
    # The Binder logo beside the words 在 Binder 中运行 is decoration: the theme's alt
    # ("<text> logo") would make screen readers say the name twice.
    page = re.sub(r'(<span class="btn__icon-container">\s*<img) alt="[^"]*"', r'\1 alt=""', page)
    # Icon-only buttons named by their title alone: Bootstrap's tooltip moves the title away when it
    # starts, and until it has set aria-label the name is the icon's glyph (U+F065, U+F0C9).
    page = _ICON_BUTTON.sub(_named_by_title, page)
    return page


_ICON_BUTTON = re.compile(r'<button\b(?P<attrs>[^>]*)>(?P<body>(?:(?!</button>).)*)</button>', re.S)


def _named_by_title(m: re.Match) -> str:
    attrs, body = m.group("attrs"), m.group("body")
    title = re.search(r'\btitle="([^"]*)"', attrs)
    if not title or "aria-label=" in attrs or re.sub(r"<[^>]*>", "", body).strip():
        return m.group(0)
    return f'<button{attrs} aria-label="{title.group(1)}">{body}</button>'


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


_SRC = re.compile(r'\bsrc="([^"]+)"')
#: Sphinx's search tools: loaded by search.html's own template only (see _templates/layout.html).
_SEARCH_ONLY = ("_static/searchtools.js", "_static/language_data.js")


def page_assets(app, pagename, templatename, context, doctree):
    """Which scripts and stylesheets a page loads, and in what order (``html-page-context``).

    Works on Sphinx's own asset lists (``script_files``, ``css_files``, rendered with its
    ``js_tag``) and hands the result to ``book/_templates/layout.html``:

    * **Lab first.** On a page with a lab, its three scripts (``attention_lab.web.TWIN_JS``)
      are started by a tiny loader at the top of ``<head>`` (``f11_first_scripts``):
      dynamically inserted scripts with ``async = false`` run in order as soon as they
      arrive, blocked neither by stylesheets nor by other scripts.  No ``html_js_files``
      attribute does that: ``async`` loses the order, ``defer`` waits for the stylesheets
      and the whole page.  Pages without a lab load none of its files.
    * **Small inline scripts first** (``documentation_options.js`` inlined, the extensions'
      one-line settings): after a pending stylesheet, an inline script would hold up the parser.
    * **Every other script deferred**, in Sphinx's priority order, the Chinese catalogue
      (``translations.js``) right after ``doctools.js``: ``sphinx_highlight.js`` writes its
      "hide search matches" link as soon as it runs.
    * sphinx-design's CSS and script only on pages using its components, the lab's CSS only on
      pages with a lab.  (``search.html`` adds its own scripts: ``_templates/search.html``.)
    """
    from attention_lab.shapes import SHAPES_JS
    from attention_lab.web import TWIN_JS

    body = context.get("body", "") or ""
    has_lab = "data-attention-lab" in body
    # The 2x2 lab (app.js) and the shapes lab (shapes.js) share attention.js and render.js;
    # a page loads the files of the labs it has.
    has_shapes = "data-shapes-lab-config" in body
    lab_js = set((TWIN_JS if "data-attention-lab-config" in body else ()) + (SHAPES_JS if has_shapes else ()))
    has_design = re.search(r'class="[^"]*\bsd-', body) is not None
    js_tag = context["js_tag"]
    files = sorted(context["script_files"], key=lambda js: js.priority)
    names = [str(getattr(js, "filename", "") or "") for js in files]
    if "_static/translations.js" in names and "_static/doctools.js" in names:
        files.insert(names.index("_static/doctools.js") + 1, files.pop(names.index("_static/translations.js")))
    first, later, lab = [], [], []
    for js in files:
        name = str(getattr(js, "filename", "") or "")
        tag = js_tag(js)
        if not name:
            first.append(tag)
        elif name == "_static/documentation_options.js":
            local = Path(app.outdir) / name
            first.insert(0, "<script>" + local.read_text("utf-8").strip() + "</script>")
        elif any(name == f"_static/attention-lab/{f}" for f in TWIN_JS + SHAPES_JS):
            if name.rsplit("/", 1)[-1] in lab_js:
                lab.append(_SRC.search(tag).group(1))
        elif name.endswith("design-tabs.js") and not has_design:
            continue
        else:
            later.append(tag if re.search(r"\s(defer|async)\b", tag) else tag.replace("<script ", "<script defer ", 1))
    if lab:
        listed = ",".join(f'"{s}"' for s in lab)
        # fetchPriority "high": a script inserted this way would otherwise be fetched at low
        # priority, after the stylesheets, when the network is slow.
        first.insert(0, "<script>/* the lab's own scripts first, in order, blocked by nothing else */"
                        f"[{listed}].forEach(function(s){{var e=document.createElement(\"script\");"
                        "e.src=s;e.async=false;e.fetchPriority=\"high\";document.head.appendChild(e);});</script>")
    context["f11_first_scripts"] = "\n" + "\n".join(first) + "\n"
    context["f11_scripts"] = "\n    " + "\n    ".join(later) + "\n"
    css = context.get("css_files")
    if css is not None:
        def wanted(c) -> bool:
            name = str(getattr(c, "filename", "") or "")
            return not ((name.startswith("_static/attention-lab/") and not has_lab)
                        or (name == "_static/attention-lab/shapes.css" and not has_shapes)
                        or (name.endswith("sphinx-design.min.css") and not has_design))
        context["css_files"] = [c for c in css if wanted(c)]


def describe_page(app, pagename, templatename, context, doctree):
    """``<meta name="description">`` on every page (search engines' snippet; Lighthouse's SEO audit).

    A page's description is its first paragraph of prose (at most 150 characters), so every
    page says what it holds in its own words; pages without one (search, index) use the
    book's ``f11_description`` (``_config.yml``).  A page that sets its own (MyST front
    matter ``html_meta``) keeps it.
    """
    import html

    if 'name="description"' in context.get("metatags", ""):
        return
    text = ""
    if doctree is not None:
        from docutils import nodes

        for para in doctree.findall(nodes.paragraph):
            if para.get("classes") or any(isinstance(a, (nodes.admonition, nodes.footnote, nodes.citation,
                                                          nodes.container, nodes.table))
                                          for a in _ancestors(para)):
                continue
            candidate = re.sub(r"\s+", " ", para.astext()).strip()
            if len(candidate) >= 20:
                text = candidate
                break
    text = text or app.config.f11_description
    if len(text) > 150:
        text = text[:149].rstrip() + "…"
    context["metatags"] = context.get("metatags", "") + f'\n<meta name="description" content="{html.escape(text)}" />'


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


ROOT_PAGE = """<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Refresh" content="0; url={target}">
<link rel="canonical" href="{target}">
<link rel="icon" href="_static/favicon.svg" type="image/svg+xml">
</head>
<body>
<p>{opening}</p>
</body>
</html>
"""


def root_page(title: str, target: str) -> str:
    """:data:`ROOT_PAGE` for ``title`` and ``target``, its sentence from strings_zh.json ("site")."""
    from attention_lab.strings import text

    return ROOT_PAGE.format(title=title, target=target,
                            opening=text("site.root_page", link=f'<a href="{target}">{title}</a>'))


def write_root_page(app, exc):
    if exc is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    (Path(app.outdir) / "index.html").write_text(
        root_page(app.config.html_title or app.config.project, f"{app.config.root_doc}.html"),
        "utf-8")


def finish_pages(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = {}
    for html_file in sorted(outdir.rglob("*.html")):
        if "_static" not in html_file.relative_to(outdir).parts:
            pages[html_file] = html_file.read_text("utf-8")
    for html_file, page in pages.items():
        new = re.sub(r'<script defer src="[^"]*fontawesome\.js[^"]*"></script>\s*', "", page)
        new = re.sub(r'<link rel="preload" as="script" href="[^"]*fontawesome\.js[^"]*" ?/?>\s*', "", new)
        new = accessible(new)
        new = notebook_download(new, html_file, outdir)
        new = image_sizes(new, html_file)
        # sphinx-thebe's global for a kernel name: thebe is off, nothing reads it.
        new = re.sub(r"<script>kernelName = '[^']*'</script>\s*", "", new)
        if new != page:
            html_file.write_text(new, "utf-8")
    if (outdir / FA_FONTS).is_dir():
        texts = list(pages.values())
        subset_icon_fonts(outdir, used_icon_codepoints(outdir, texts), used_icon_classes(texts))
    # The Jupyter drivers of the lab views come with the package's static folder; no page loads them.
    for name in ("jupyter_glue.js", "widget.js", "shapes_widget.js"):
        (outdir / "_static" / "attention-lab" / name).unlink(missing_ok=True)
    # Last: the pages' final markup decides which theme rules can match.
    bundle_theme_css(outdir)


LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"


def theme_catalog_first(app) -> None:
    """Put ``locale/<lang>/LC_MESSAGES/booktheme.po`` ahead of sphinx-book-theme's own catalog.

    Sphinx compiles and prefers the ``sphinx`` domain of ``locale_dirs`` by itself
    (``locale/zh_CN/LC_MESSAGES/sphinx.po``: Sphinx's and pydata-sphinx-theme's strings).
    The book theme has a domain of its own, ``booktheme``, registered with
    :meth:`~sphinx.application.Sphinx.add_message_catalog` when the theme is set up (before
    this extension), and :func:`sphinx.locale.init` lets the first catalog of a domain win.
    So this compiles ``booktheme.po`` with Babel (as Sphinx compiles ``sphinx.po``) and
    registers it as the domain's translator, the theme's catalog as its fallback: the
    strings listed there change, every other string keeps the theme's translation.
    """
    import gettext

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from sphinx import locale

    language = app.config.language
    folder = LOCALE_DIR / language / "LC_MESSAGES"
    po, mo = folder / "booktheme.po", folder / "booktheme.mo"
    if not po.is_file():
        return
    if not mo.is_file() or mo.stat().st_mtime < po.stat().st_mtime:
        with po.open("rb") as source:
            catalog = read_po(source, locale=language)
        with mo.open("wb") as target:
            write_mo(target, catalog)
    ours = gettext.translation("booktheme", str(LOCALE_DIR), [language])
    theirs = locale.translators.get(("general", "booktheme"))
    if theirs is not None:
        ours.add_fallback(theirs)
    locale.translators["general", "booktheme"] = ours


def label_anchors(app, doctree) -> None:
    """Make ``[文字](shapes.md#f11-shapes)`` reach a ``(label)=`` of another page, as ``{ref}`` does.

    The pages link to each other with relative Markdown links because JupyterLab opens those
    (jupyterlab-myst leaves a ``{ref}`` to another notebook unresolved).  myst-parser resolves the
    ``#anchor`` of such a link only among its heading slugs (``myst_slugs``, written for
    ``myst_heading_anchors``); this adds each of the page's explicit labels there, with the id
    and title the standard domain gave it, so a link to a label Sphinx does not know is still
    a warning (an error under ``-W``).
    """
    docname = app.env.docname
    labels = app.env.get_domain("std").labels
    slugs = app.env.metadata[docname].setdefault("myst_slugs", {})
    for name, (doc, labelid, title) in labels.items():
        if doc == docname and labelid:
            slugs.setdefault(name, (0, labelid, title))


def setup(app):
    theme_catalog_first(app)
    app.connect("doctree-read", label_anchors)
    # Before sphinx-external-toc's own handler (500), which writes a bare redirect
    # when index.html does not exist yet.
    app.connect("build-finished", write_root_page, priority=400)
    # After f11_site.write_ipynb (500), so the header can link the notebooks it writes.
    app.connect("build-finished", finish_pages, priority=600)
    # Late: after the themes have added their files to the page's lists.
    app.connect("html-page-context", page_assets, priority=900)
    app.add_config_value("f11_description", "", "html", types=[str])
    app.connect("html-page-context", describe_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

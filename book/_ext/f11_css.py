"""The theme's stylesheets, cut to the rules this site can use and sent as one file.

Every page of the book links seven stylesheets of the theme and its extensions before
its own (about 406 KB once f11_pages drops the unused icon rules, scripts/bench_css.py;
``pydata-sphinx-theme.css`` alone is 312 KB, mostly Bootstrap
components and utilities the book never shows).  Stylesheets in ``<head>`` hold up the
first paint, and on a slow phone they also take the bandwidth the lab's scripts need.
After the build (called from ``f11_pages.finish_pages``) this module:

* **keeps a rule only if it can match**: each selector's classes and ids must occur in
  the built pages, in the site's scripts (any word of their source: a class a script
  adds), or among the classes Bootstrap's script adds for the components the pages use
  (:data:`BOOTSTRAP_RUNTIME`).  Everything else is kept: element and attribute selectors,
  ``:not()``/``:is()``/``:has()`` arguments, custom properties, ``@font-face`` and
  ``@keyframes``, and ``@media``/``@supports`` blocks (print, dark mode and phone rules
  stay whenever their selectors can match);
* **joins** the stylesheets every page links in the same order (``@import`` inlined,
  ``url()`` rebased) into one file, :data:`BUNDLE`, and removes the parts from the site.

**Why by hand, not a library** (``scripts/bench_css.py``, 2026-12-01, the built pages, gzip;
phone: bench_site's slow phone, median of 3, load average 3-5):

========================  =============  =============  =============  =================
                          this module    no purge       lightningcss   PurgeCSS + lcss
========================  =============  =============  =============  =================
theme CSS, files          124.7 KB, 1    406.1 KB, 7    378.6 KB, 1    113.7 KB, 1
gzip                      22.8 KB        62.8 KB        56.2 KB        20.6 KB
chapter: phone FCP        940 ms         1080 ms        1052 ms        1052 ms
boxes styled otherwise    0              (reference)    0              0
made in                   0.2 s, Python  --             Node.js        0.4 s, Node.js
========================  =============  =============  =============  =================

Not purging sends 40 KB more of render-blocking CSS (gzip) in seven files; lightningcss
bundles and minifies but removes only the names it is told are unused (its ``unused_symbols``
would need the list this module makes) and does not rebase ``url()`` in the files it
inlines.  PurgeCSS does this module's job and cuts 2 KB more (gzip; about 10 ms at a slow
phone's 1.6 Mbit/s, less than the noise of the FCP row), but it is a Node.js program: the
build is Python only (Node comes with the tests), and it still needs this module's list of
classes Bootstrap's script adds (:data:`BOOTSTRAP_RUNTIME`, as its safelist), the scan for
the parts and the rewriting of every page's ``<link>``.  The test is the same whichever cuts
(the cut must style every element as the theme's files do); comparing computed styles it
takes 25-45 s here (load average 4-11), whole-page screenshots took 108-145 s.  Minifying this file
with lightningcss would save 1.3 KB (gzip).

The originals, the list of parts and the selectors left out are kept beside the site, in
``<outdir>/../css-reference/`` (not published), so ``tests/test_site_css.py`` can open every
page both ways in Chromium and require the same computed style of every element, and that no
selector left out matches anything in any state the pages reach.  The book's own stylesheets
(the lab's, ``f11-*.css``) are written for these pages and are neither cut nor joined.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shutil
from pathlib import Path

import tinycss2

BUNDLE = "_static/f11-theme.css"
REFERENCE = "css-reference"  # beside the html output folder
#: Classes Bootstrap's script puts on elements it creates or opens, per component
#: (``data-bs-toggle`` value).  The script itself is not scanned for words: it names
#: every Bootstrap component (modal, offcanvas, carousel, toast …), and would keep them all.
BOOTSTRAP_RUNTIME = {
    "tooltip": {"tooltip", "tooltip-arrow", "tooltip-inner", "bs-tooltip-auto", "bs-tooltip-top",
                "bs-tooltip-end", "bs-tooltip-bottom", "bs-tooltip-start", "fade", "show"},
    "dropdown": {"show", "dropdown", "dropup", "dropend", "dropstart", "dropup-center", "dropdown-center",
                 "dropdown-menu", "dropdown-menu-end", "dropdown-menu-start", "dropdown-item", "disabled",
                 "active", "navbar", "navbar-nav"},
    "collapse": {"collapse", "collapsing", "collapse-horizontal", "collapsed", "show"},
}
_OWN = re.compile(r"(^|/)(attention-lab/|f11-)")
_WORD = re.compile(r"[A-Za-z_][\w-]*")
_LINK = re.compile(r'\s*<link rel="stylesheet" type="text/css" href="(?P<href>[^"]+)" />|'
                   r'\s*<link href="(?P<href2>[^"]+)" rel="stylesheet" />')
_URL = re.compile(r"""url\(\s*(["']?)([^"')]+)\1\s*\)""")
_IMPORT = re.compile(r"""@import\s+(["'])([^"']+)\1\s*;?""")


def names_in_use(pages: list[str], scripts: list[str]) -> tuple[set[str], tuple[str, ...]]:
    """Class and id names that can be on an element of this site, and name prefixes
    (``"lab-"`` in ``"lab-" + kind``) a script may complete at run time."""
    names: set[str] = set()
    for page in pages:
        for classes in re.findall(r'\bclass="([^"]*)"', page):
            names.update(classes.split())
        names.update(re.findall(r'\bid="([^"]*)"', page))
        for body in re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S):
            names.update(_WORD.findall(body))
        for component in re.findall(r'data-bs-toggle="([^"]+)"', page):
            names |= BOOTSTRAP_RUNTIME.get(component, set())
    for script in scripts:
        names.update(_WORD.findall(script))
    prefixes = tuple(sorted(n for n in names if n.endswith("-") and len(n) >= 3))
    return names, prefixes


def _selectors(prelude):
    selector = []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            yield selector
            selector = []
        else:
            selector.append(token)
    yield selector


def _can_match(selector, names: set[str], prefixes: tuple[str, ...]) -> bool:
    def known(name: str) -> bool:
        return name in names or name.startswith(prefixes)

    previous = None
    for token in selector:  # top level only: :not(.x) and [class*=x] are not looked into
        if token.type == "hash" and not known(token.value):
            return False
        if (token.type == "ident" and previous is not None and previous.type == "literal"
                and previous.value == "." and not known(token.value)):
            return False
        previous = token
    return True


_BLOCKS = ("media", "supports", "layer", "container", "document")


def purge(css: str, names: set[str], prefixes: tuple[str, ...], dropped: list[str] | None = None) -> str:
    """``css`` without the rules whose every selector names a class or id nothing uses
    (each selector left out is added to ``dropped``, when given)."""
    def rules(items) -> list[str]:
        out = []
        for rule in items:
            if rule.type == "qualified-rule":
                selectors = list(_selectors(rule.prelude))
                kept = [s for s in selectors if _can_match(s, names, prefixes)]
                if dropped is not None:
                    dropped.extend(tinycss2.serialize(s).strip() for s in selectors
                                   if not _can_match(s, names, prefixes))
                if not kept:
                    continue
                prelude = ",".join(tinycss2.serialize(s).strip() for s in kept)
                out.append(prelude + "{" + tinycss2.serialize(rule.content).strip() + "}")
            elif rule.type == "at-rule" and rule.lower_at_keyword in _BLOCKS and rule.content is not None:
                inner = rules(tinycss2.parse_blocks_contents(rule.content, skip_comments=True,
                                                             skip_whitespace=True))
                if inner:
                    out.append(f"@{rule.at_keyword} {tinycss2.serialize(rule.prelude).strip()}{{{''.join(inner)}}}")
            elif rule.type == "at-rule":
                out.append(rule.serialize().strip())
            elif rule.type == "error":
                raise ValueError(f"CSS the purge cannot read: {rule.message}")
        return out

    return "\n".join(rules(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True))) + "\n"


def inline_imports(css: str, css_file: Path) -> str:
    """``@import "x.css";`` replaced by x.css itself, its url()s rebased to ``css_file``'s folder."""
    def one(m: re.Match) -> str:
        target = (css_file.parent / m.group(2)).resolve()
        text = inline_imports(target.read_text("utf-8"), target)
        return rebase_urls(text, target.parent, css_file.parent)

    return _IMPORT.sub(one, css)


def rebase_urls(css: str, from_dir: Path, to_dir: Path) -> str:
    def one(m: re.Match) -> str:
        ref = m.group(2)
        if re.match(r"^([a-z]+:|/|#)", ref):
            return m.group(0)
        target = posixpath.normpath(posixpath.join(from_dir.resolve().as_posix(), ref))
        return f'url("{posixpath.relpath(target, to_dir.resolve().as_posix())}")'

    return _URL.sub(one, css)


def _stylesheets(page: str) -> list[tuple[str, str]]:
    """(tag, href) of each stylesheet link in the page's ``<head>``, in order."""
    head = page[:page.find("</head>")]
    return [(m.group(0), m.group("href") or m.group("href2")) for m in _LINK.finditer(head)]


def _in_static(href: str) -> str:
    path = href.split("?")[0]
    return path[path.index("_static/"):] if "_static/" in path else path


def bundle_theme_css(outdir: Path) -> None:
    """Cut and join the theme's stylesheets for every page in ``outdir`` (see the module text)."""
    html_files = [p for p in sorted(outdir.rglob("*.html")) if "_static" not in p.relative_to(outdir).parts]
    pages = {p: p.read_text("utf-8") for p in html_files}
    reference = outdir.parent / REFERENCE
    # The parts: the longest run of theme stylesheets (not the book's own) that every page
    # with stylesheets links first, in the same order.
    lists = [[_in_static(href) for _, href in _stylesheets(text)] for text in pages.values()]
    lists = [lst for lst in lists if lst]
    parts: list[str] = []
    for column in zip(*lists):
        if len(set(column)) != 1 or _OWN.search(column[0]) or column[0] == BUNDLE:
            break
        parts.append(column[0])
    if not parts:
        return  # already joined (an incremental build that wrote no page), or nothing to join
    scripts = [p.read_text("utf-8", "replace") for p in sorted((outdir / "_static").rglob("*.js"))
               if p.name not in ("searchindex.js", "bootstrap.js")]
    names, prefixes = names_in_use(list(pages.values()), scripts)
    if reference.exists():
        shutil.rmtree(reference)
    texts, dropped = [], []
    for part in parts:
        source = outdir / part
        original = source.read_text("utf-8")
        (reference / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, reference / part)
        full = rebase_urls(inline_imports(original, source), source.parent, (outdir / BUNDLE).parent)
        texts.append(f"/* {part} */\n" + purge(full, names, prefixes, dropped))
        for m in _IMPORT.finditer(original):
            imported = (source.parent / m.group(2)).resolve().relative_to(outdir.resolve()).as_posix()
            (reference / imported).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(outdir / imported, reference / imported)
    bundle = "".join(texts)
    (outdir / BUNDLE).write_text(bundle, "utf-8")
    version = hashlib.sha1(bundle.encode("utf-8")).hexdigest()[:8]
    (reference / "bundle.json").write_text(json.dumps({"bundle": BUNDLE, "parts": parts,
                                                       "dropped": sorted(set(dropped))}, indent=1), "utf-8")
    for html_file, text in pages.items():
        links = _stylesheets(text)
        if not links:
            continue
        assert [_in_static(h) for _, h in links[:len(parts)]] == parts, html_file
        depth = len(html_file.relative_to(outdir).parts) - 1
        href = "../" * depth + f"{BUNDLE}?v={version}"
        first = links[0][0]
        new = text.replace(first, f'\n    <link rel="stylesheet" type="text/css" href="{href}" />', 1)
        for tag, _ in links[1:len(parts)]:
            new = new.replace(tag, "", 1)
        html_file.write_text(new, "utf-8")
    # The parts are in the bundle now; nothing links them (nor the file they @import).
    for part in parts:
        source = outdir / part
        for m in _IMPORT.finditer((reference / part).read_text("utf-8")):
            (source.parent / m.group(2)).resolve().unlink(missing_ok=True)
        source.unlink(missing_ok=True)
        Path(str(source) + ".map").unlink(missing_ok=True)

"""The whole website: builds with -W, Chinese throughout, self-contained, searchable."""

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.build

PAGES = ["book/index.html", "book/f11-attention.html", "book/lab.html"]


def test_build_log_has_no_warnings_and_no_missing_glyphs(build_log):
    assert build_log, "build log is empty"
    assert "build succeeded" in build_log
    assert not re.search(r"Glyph .* missing", build_log)
    assert "WARNING" not in build_log.replace("[IPKernelApp] WARNING", "")


@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_chinese_and_loads_scripts_only_from_the_site(built_site, page):
    html = (built_site / page).read_text("utf-8")
    assert '<html lang="zh-CN"' in html
    external = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="((?:https?:)?//[^"]+)"', html)
    assert external == [], f"{page} loads from outside the site: {external}"
    assert not re.search(r"<script[^>]+mathjax", html, re.I), f"{page} still loads MathJax"


def test_formulas_are_mathml_written_at_build_time_with_the_sites_maths_font(built_site):
    html = (built_site / "book" / "f11-attention.html").read_text("utf-8")
    # The chapter's summary formula, as MathML with its TeX kept as alttext.
    formula = re.search(r'<math alttext="O = \\mathrm\{softmax\}[^"]*"[^>]*display="block".*?</math>', html, re.S)
    assert formula, "the softmax formula is not MathML"
    assert "<msqrt>" in formula.group(0) and "<mfrac>" in formula.group(0)
    assert "<mi>softmax</mi>" in formula.group(0)  # one word, not seven letters
    assert "\\(" not in html and "\\[" not in html  # no TeX left for a client script
    css = (built_site / "_static" / "f11-math.css").read_text("utf-8")
    assert 'url("f11-math.woff")' in css
    from fontTools.ttLib import TTFont

    font = TTFont(built_site / "_static" / "f11-math.woff")
    assert "MATH" in font, "the maths font has no MATH table (brackets would not stretch)"
    cmap = font.getBestCmap()
    # Every character of every formula on the site (MathML Core draws a one-letter <mi>
    # as a mathematical italic letter) is in the font.
    import html as html_lib

    missing = set()
    for page in ("book/f11-attention.html", "book/notation.html", "book/index.html"):
        text = (built_site / page).read_text("utf-8")
        for body in re.findall(r"<math\b[^>]*>(.*?)</math>", text, re.S):
            for tag, chars in re.findall(r"<(mi|mn|mo|mtext)\b[^>]*>([^<]*)</\1>", body):
                chars = html_lib.unescape(chars)
                if tag == "mi" and len(chars) == 1 and chars.isascii() and chars.isalpha():
                    chars = _math_italic(chars)
                missing |= {c for c in chars if ord(c) not in cmap and not c.isspace()}
    assert not missing, f"the maths font lacks {sorted(missing)}: run scripts/make_math_font.py"


def _math_italic(letter: str) -> str:
    if letter == "h":
        return "\u210e"
    base = 0x1D434 if letter.isupper() else 0x1D44E
    return chr(base + ord(letter.upper() if letter.isupper() else letter) - (ord("A") if letter.isupper() else ord("a")))


def test_search_index_segments_chinese_words(built_site):
    text = (built_site / "searchindex.js").read_text("utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    for word in ("注意力", "份额"):
        assert word in index["terms"], f"{word} is not a search term"


@pytest.mark.browser
def test_search_page_finds_shares_in_the_chapter(site_url, new_page):
    rec = new_page()
    rec.page.goto(f"{site_url}/search.html?q=%E4%BB%BD%E9%A2%9D")  # 份额
    rec.page.wait_for_selector("#search-results li a", timeout=15000)
    links = rec.page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
    assert any("f11-attention" in href for href in links), links
    assert rec.external_requests() == []


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_pages_render_offline_with_no_console_errors(site_url, new_page, page):
    rec = new_page(fresh=True)  # an empty cache: every request seen
    rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
    assert rec.external_requests() == []
    assert rec.failed == []
    assert rec.console_errors == [] and rec.page_errors == []
    if page == "book/f11-attention.html":
        # The browser lays out the MathML itself: a display formula has a real size.
        box = rec.page.locator('.f11-display-math math[alttext^="O = "]').first.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 20


def test_ipynb_versions_are_generated_from_the_md_and_linked(built_site):
    import jupytext
    import nbformat

    index = (built_site / "book" / "index.html").read_text("utf-8")
    for stem in ("f11-attention", "lab"):
        assert f'href="../_notebooks/{stem}.ipynb"' in index
        notebook = nbformat.read(built_site / "_notebooks" / f"{stem}.ipynb", as_version=4)
        nbformat.validate(notebook)
        source = jupytext.read(ROOT / "book" / f"{stem}.md")
        # One extra first cell installs attention_lab where it is missing (Colab, a JupyterHub);
        # then exactly the .md's cells.
        assert "install-attention-lab" in notebook.cells[0].metadata.get("tags", [])
        # Its online fallback installs the commit the site was built from, never a moving branch.
        pinned = re.search(r"^REPOSITORY = 'attention-lab @ git\+https://\S+@([0-9a-f]{40})'$",
                           notebook.cells[0].source, re.M)
        assert pinned, notebook.cells[0].source[:2000]
        assert subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", pinned.group(1) + "^{commit}"]).returncode == 0
        # Then the .md's code cells, unchanged, in order (the Markdown is plain: see the test below), but
        # for the live notebook's figure captions (f11-jupyter-only): a Markdown caption cell instead.
        assert [c.source for c in notebook.cells[1:] if c.cell_type == "code"] == \
            [c.source for c in source.cells if c.cell_type == "code"
             and "f11-jupyter-only" not in c.metadata.get("tags", [])]
        assert not any("f11-jupyter-only" in c.metadata.get("tags", []) for c in notebook.cells)
        assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
        # The page header's "download .ipynb" gives this reader's notebook, not the build's copy.
        page = (built_site / "book" / f"{stem}.html").read_text("utf-8")
        assert f'href="../_notebooks/{stem}.ipynb"' in page and "_sources/book/" + stem + ".ipynb" not in page


#: MyST syntax a plain Jupyter (Colab, VS Code, nbconvert) would show as raw text.
MYST_LEFT = {
    "a role ({eval}, {cite}, {ref}...)": re.compile(r"\{[a-z][a-z0-9-]*\}`"),
    "a colon fence (:::)": re.compile(r"^\s*:::", re.M),
    "a directive (```{...})": re.compile(r"^\s*```\s*\{", re.M),
    "a target label ((label)=)": re.compile(r"^\s*\([A-Za-z0-9_.:-]+\)=\s*$", re.M),
    "a directive option (:name: ...)": re.compile(r"^:[a-z-]+:", re.M),
    "a link to a .md page": re.compile(r"\]\([^)\s]*\.md(#[^)]*)?\)"),
}


def _text(html: str) -> str:
    """The visible text of an HTML page, whitespace collapsed (scripts and styles dropped)."""
    import html as html_lib

    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.fixture(scope="module")
def plain_notebooks(built_site, tmp_path_factory):
    """The site's downloadable notebooks, each rendered by plain ``jupyter nbconvert --to html`` (no
    MyST, no Jupytext: what Colab or any Jupyter shows): ``{stem: (notebook, html text, html)}``."""
    import sys

    import nbformat

    folder = tmp_path_factory.mktemp("plain-notebooks")
    stems = sorted(p.stem for p in (built_site / "_notebooks").glob("*.ipynb"))
    for stem in stems:
        (folder / f"{stem}.ipynb").write_bytes((built_site / "_notebooks" / f"{stem}.ipynb").read_bytes())
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
                           *[f"{stem}.ipynb" for stem in stems]], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"nbconvert could not render the downloaded notebooks:\n{proc.stderr[-4000:]}"
    out = {}
    for stem in stems:
        html = (folder / f"{stem}.html").read_text("utf-8")
        out[stem] = (nbformat.read(folder / f"{stem}.ipynb", as_version=4), _text(html), html)
    return out


def test_downloaded_notebooks_are_plain_jupyter_without_myst_syntax(plain_notebooks):
    assert set(plain_notebooks) >= {"f11-attention", "lab", "shapes", "exercises"}
    for stem, (notebook, _, _) in plain_notebooks.items():
        assert "mystnb" not in notebook.metadata and "jupytext" not in notebook.metadata, stem
        for n, cell in enumerate(notebook.cells):
            if cell.cell_type != "markdown":
                assert "mystnb" not in cell.metadata, f"{stem} cell {n}: MyST-NB metadata"
                continue
            # Inline code and code blocks may quote MyST as an example; the prose may not use it.
            prose = re.sub(r"(?ms)^```[a-z]*\n.*?^```\s*$", "", cell.source)
            prose = re.sub(r"(?<![}`])`[^`\n]+`", "", prose)
            for what, pattern in MYST_LEFT.items():
                found = pattern.search(prose)
                assert not found, f"{stem}.ipynb cell {n} still has {what}: {found.group(0)!r}"


def test_downloaded_notebooks_show_the_sites_numbers_captions_and_references(built_site, plain_notebooks):
    """Rendered by plain nbconvert, each notebook's text has every number its site page shows for
    an {eval}, in the same order, and the site's figure and table labels with their captions
    (图 1 …, 表 1 …) and reference entries; every link inside a notebook or to a sibling lands."""
    for stem, (_, text, html) in plain_notebooks.items():
        page = (built_site / "book" / f"{stem}.html").read_text("utf-8")
        shown = [_text(x) for x in re.findall(r'<span class="output text_plain">(.*?)</span>', page, re.S)]
        evals = len(re.findall(r"\{eval\}`", (ROOT / "book" / f"{stem}.md").read_text("utf-8")))
        assert len(shown) == evals, f"{stem}: the site page shows {len(shown)} numbers for {evals} {{eval}} roles"
        at = 0
        for k, number in enumerate(shown):
            found = text.find(number, at)
            assert found >= 0, f"{stem}.ipynb: the site's number {k} ({number}) is missing after {text[at - 80:at]!r}"
            at = found + len(number)
        captions = re.findall(r'<span class="caption-number">(.*?)</span><span class="caption-text">(.*?)</span>',
                              page, re.S)
        for number, caption in captions:
            label = f"{_text(number)} {_text(caption)}"
            assert text.count(label) == 1, f"{stem}.ipynb shows the site's caption {label!r} {text.count(label)} times"
        entries = re.findall(r'<div class="citation"[^>]*>\s*<span class="label">(.*?)</span></span>.*?<p>(.*?)</p>',
                             page, re.S)
        if stem == "f11-attention":  # the chapter prints every work of references.bib; the others none
            works = re.findall(r"^@\w+\{", (ROOT / "book" / "references.bib").read_text("utf-8"), re.M)
            assert len(entries) == len(works) and len(captions) >= 7, (len(entries), len(captions))
        for key, entry in entries:
            key = _text(key).replace(" ", "")  # "[ VSP+17 ]" -> "[VSP+17]"
            assert f"{key} {_text(entry)[:40]}" in text, f"{stem}.ipynb lacks the reference {key}"
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        for href in re.findall(r'<a[^>]+href="([^"]+)"', html):
            if href.startswith("#"):
                assert href[1:] in ids, f"{stem}.ipynb links to {href}, which is not in it"
            elif not re.match(r"[a-z]+:", href):
                target, _, anchor = href.partition("#")
                assert target.endswith(".ipynb") and target[:-6] in plain_notebooks, f"{stem}.ipynb: {href}"
                other = plain_notebooks[target[:-6]][2]
                assert not anchor or f'id="{anchor}"' in other, f"{stem}.ipynb: {href} lands nowhere"
    chapter = plain_notebooks["f11-attention"][1]
    assert "图 5" in chapter and "表 2" in chapter  # the chapter's five figures and two tables are numbered


def test_the_captions_jupyter_shows_under_figures_are_the_sites(built_site, monkeypatch):
    """jupyterlab-myst draws no caption under a code cell's figure; the chapter's hidden figure_caption
    cells (removed on the site) show them in Jupyter: the same number and words as the site's, for
    every numbered figure, in order."""
    from attention_lab.notebook import figure_caption

    monkeypatch.chdir(ROOT / "book")
    page = (built_site / "book" / "f11-attention.html").read_text("utf-8")
    site = [f"{_text(n)} {_text(c)}" for n, c in re.findall(
        r'<figcaption>\s*<p><span class="caption-number">(.*?)</span><span class="caption-text">(.*?)</span>', page, re.S)]
    source = (ROOT / "book" / "f11-attention.md").read_text("utf-8")
    names = re.findall(r'^figure_caption\("([\w-]+)"\)', source, re.M)
    assert len(site) >= 5 and names == re.findall(r"^    name: (fig-[\w-]+)$", source, re.M), (site, names)
    shown = [" ".join(figure_caption(name).data.replace("**", "").split()) for name in names]
    assert shown == [" ".join(x.split()) for x in site]
    assert "f11-jupyter-only" not in page and "figure_caption" not in page  # removed on the site


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES + ["book/notation.html"])
def test_pages_do_not_scroll_sideways_on_a_phone(site_url, new_page, page):
    rec = new_page(width=375, height=800)
    rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
    width = rec.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 375, f"{page} is {width}px wide at a 375px screen"


@pytest.mark.browser
def test_with_the_network_cut_off_the_chapters_sliders_still_recompute(site_url, new_page):
    rec = new_page()
    # Everything that is not this site fails, as on a school network with no internet.
    rec.page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(site_url)
                   else route.abort("internetdisconnected"))
    rec.page.goto(f"{site_url}/book/f11-attention.html", wait_until="networkidle")
    cell = rec.page.locator('[data-attention-lab] td[data-matrix="A"][data-row="1"][data-col="0"]').first
    before = float(cell.get_attribute("data-value"))
    slider = rec.page.locator('[data-attention-lab] input[data-param="Wq[0,0]"]').first
    slider.focus()
    for _ in range(10):
        slider.press("ArrowRight")  # 0.5 -> 1.0 in steps of 0.05
    from attention_lab import attention, baseline

    tables = baseline()
    tables["Wq"][0, 0] = 1.0
    expected = attention(**tables).A[1, 0]
    after = float(cell.get_attribute("data-value"))
    assert after != before and after == pytest.approx(expected, abs=1e-9)
    assert rec.console_errors == [] and rec.page_errors == []

"""The website as readers meet it (issue 11): light pages, the lab first, Chinese search,
print, phone and accessibility.  Real build, real Chromium on 127.0.0.1."""

from __future__ import annotations

import io
import os
import re
import unicodedata
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "book/f11-attention.html"
LAB = "book/lab.html"
#: Cold-load budgets (bytes, decoded) from the issue.
BUDGETS = {CHAPTER: 1_500_000, LAB: 800_000}
CJK = re.compile(r"[\u3400-\u9fff]")

pytestmark = pytest.mark.build


# ---------------------------------------------------------------- a light page

class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self._style = False
        self._script = False
        self.styles: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        rel = set((a.get("rel") or "").split())
        if tag == "script" and a.get("src"):
            self.refs.append(a["src"])
        elif tag == "link" and a.get("href") and rel & {"stylesheet", "preload", "icon", "modulepreload"}:
            self.refs.append(a["href"])
        elif tag in ("img", "source", "video", "audio", "embed", "iframe"):
            if a.get("src"):
                self.refs.append(a["src"])
            self.refs += [part.split()[0] for part in (a.get("srcset") or "").split(",") if part.strip()]
        elif tag == "object" and a.get("data"):
            self.refs.append(a["data"])
        self._style = tag == "style"
        self._script = tag == "script" and not a.get("src") and a.get("type") in (None, "text/javascript")

    def handle_endtag(self, tag):
        if tag == "style":
            self._style = False
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._style:
            self.styles.append(data)
        if self._script:
            # Files an inline script loads (f11_pages' loader for the lab's scripts).
            self.refs += re.findall(r'"((?:\.\./)*_static/[^"]+\.js(?:\?[^"]*)?)"', data)


_CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)|@import\s+["']([^"']+)""")


def cold_load(built_site: Path, page: str) -> tuple[int, dict[str, int]]:
    """Bytes a first visit to ``page`` can fetch: the HTML and every same-site file it
    names (scripts, stylesheets, images, icons), and recursively every url() in that CSS
    (fonts count even if the browser would skip an unused one)."""
    root = built_site.resolve()
    files: dict[str, int] = {}
    pending: list[Path] = []

    def add(base: Path, ref: str):
        if ref.startswith(("data:", "#", "about:")):
            return
        assert not re.match(r"^(https?:)?//", ref), f"{page} refers to another site: {ref}"
        target = (base.parent / urllib.parse.unquote(ref.split("?")[0].split("#")[0])).resolve()
        assert target.is_file(), f"{page} refers to a missing file: {ref}"
        key = str(target.relative_to(root))
        if key not in files:
            files[key] = target.stat().st_size
            pending.append(target)

    html_file = root / page
    parser = _Refs()
    parser.feed(html_file.read_text("utf-8"))
    for ref in parser.refs:
        add(html_file, ref)
    for css in parser.styles:
        for a, b in _CSS_URL.findall(css):
            add(html_file, a or b)
    while pending:
        current = pending.pop()
        if current.suffix == ".css":
            for a, b in _CSS_URL.findall(current.read_text("utf-8", "replace")):
                add(current, a or b)
    return html_file.stat().st_size + sum(files.values()), files


def test_every_page_is_within_its_cold_load_budget(built_site, site_pages):
    lines = []
    totals = {}
    for page in site_pages:
        total, files = cold_load(built_site, page)
        totals[page] = total
        biggest = ", ".join(f"{k} {v / 1e3:.0f} KB" for k, v in sorted(files.items(), key=lambda kv: -kv[1])[:3])
        lines.append(f"{page:28s} {total / 1e6:6.3f} MB  {len(files) + 1:3d} files  (largest: {biggest})")
    print("\ncold load per page (decoded bytes of the built files):\n" + "\n".join(lines))
    for page, budget in BUDGETS.items():
        assert totals[page] <= budget, f"{page}: {totals[page]:,} bytes > budget {budget:,}"
    # No page carries MathJax or the Font Awesome script any more.
    for page in site_pages:
        _, files = cold_load(built_site, page)
        heavy = [f for f in files if "mathjax" in f or f.endswith("fontawesome.js")]
        assert heavy == [], f"{page} still loads {heavy}"


def test_site_publishes_no_stylesheet_or_lab_file_that_no_page_loads(built_site, site_pages):
    """The cut theme stylesheet replaces the originals, and the lab's Jupyter driver
    (widget.js) is not part of the site: every published .css and lab file is loaded."""
    loaded = set()
    for page in site_pages:
        loaded |= set(cold_load(built_site, page)[1])
    published = {str(p.relative_to(built_site.resolve())) for p in built_site.resolve().rglob("_static/**/*")
                 if p.is_file() and (p.suffix == ".css" or "attention-lab" in p.parts)}
    # sphinx-design's and thebe's stylesheets are loaded only by pages using them (none today).
    unused = sorted(published - loaded - {"_static/sphinx-design.min.css", "_static/sphinx-thebe.css"})
    assert unused == [], f"published but loaded by no page: {unused}"


# ---------------------------------------------------------------- lab first

READY_PROBE = """
(() => {
  const seen = () => {
    if (window.__labReadyAt === undefined && document.querySelector('[data-attention-lab][data-lab-ready="true"]'))
      window.__labReadyAt = performance.now();
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ["data-lab-ready"]});
})();
"""


def _lab_ready_with_others_held(new_page, url: str) -> tuple[float | None, int]:
    """Open ``url`` with every request except the page and the lab's own files held back
    for 3 s; return (ms from navigation to data-lab-ready, how many files were still held)."""
    rec = new_page(width=1024, height=768, fresh=True)  # a first visit: nothing cached
    held = []

    def route(r):
        path = urllib.parse.urlparse(r.request.url).path
        if r.request.url.split("#")[0] == url or "/_static/attention-lab/" in path:
            r.continue_()
        else:
            held.append(r)  # released 3 s after navigation (below)

    rec.page.route("**/*", route)
    rec.page.add_init_script(READY_PROBE)
    rec.page.goto(url, wait_until="commit")
    for _ in range(60):
        rec.page.wait_for_timeout(50)
    ready_at = rec.page.evaluate("window.__labReadyAt")
    still_held = len(held)
    for r in held:
        r.continue_()
    rec.page.wait_for_timeout(200)
    return ready_at, still_held


@pytest.mark.browser
@pytest.mark.parametrize("page", [LAB, CHAPTER])
def test_lab_is_ready_within_a_second_while_every_other_file_is_three_seconds_late(site_url, new_page, page):
    # The budget is the issue's acceptance criterion.  On a loaded 2-core machine one load
    # can be slow for reasons that have nothing to do with the page, so the best of up to
    # three loads counts; every load must show the lab ready before the held files arrive.
    times = []
    for _ in range(3):
        ready_at, still_held = _lab_ready_with_others_held(new_page, f"{site_url}/{page}")
        assert still_held >= 5, "the other files were not held back: the test measured nothing"
        assert ready_at is not None, "the lab waited for the theme's files (not ready after 3 s)"
        times.append(ready_at)
        if ready_at <= 1000:
            break
    print(f"\n{page}: lab ready {', '.join(f'{t:.0f}' for t in times)} ms after navigation "
          f"with {still_held} other files held back 3 s")
    assert min(times) <= 1000, f"lab ready only after {min(times):.0f} ms (best of {len(times)})"


# ---------------------------------------------------------------- Chinese search

#: Compound terms the chapter uses (each is checked to occur in the chapter's prose).
TERMS = ["因果掩码", "份额表", "交叉注意力", "查询表", "读取份额", "自注意力", "分数表", "输出表",
         "参数表", "多头注意力", "缩放点积", "加性掩码"]


@pytest.mark.browser
def test_search_finds_the_section_for_every_compound_term_with_prose_snippets(built_site, site_url, new_page):
    chapter_text = re.sub(r"<[^>]+>", "", (built_site / CHAPTER).read_text("utf-8"))
    rec = new_page()
    for term in TERMS:
        assert term in chapter_text, f"{term} is not in the chapter any more: update TERMS"
        rec.page.goto(f"{site_url}/search.html?q={urllib.parse.quote(term)}")
        rec.page.wait_for_selector("#search-results li p.context", timeout=15000)
        rec.page.wait_for_timeout(200)  # the section link is set right after the snippet
        hits = rec.page.eval_on_selector_all(
            "#search-results li",
            "els => els.map(e => [e.querySelector('a').href, (e.querySelector('p.context') || {}).textContent || ''])")
        chapter_hits = [(href, snippet) for href, snippet in hits if "f11-attention.html#" in href]
        assert chapter_hits, f"{term}: no result in the chapter: {hits}"
        href, snippet = chapter_hits[0]
        section = urllib.parse.unquote(href.split("#", 1)[1])
        section_text = rec.page.evaluate(
            """([html, id]) => { const d = new DOMParser().parseFromString(html, 'text/html');
                                 const s = d.getElementById(id); return s ? s.textContent : ''; }""",
            [(built_site / CHAPTER).read_text("utf-8"), section])
        assert term in section_text, f"{term}: result points to #{section}, which does not contain it"
        # A snippet of prose: no TeX source, no table of contents.
        assert not re.search(r"\\[a-z]+|\$", snippet), f"{term}: snippet shows TeX: {snippet}"
        assert "本页目录" not in snippet and "目录" != snippet.strip()[:2], f"{term}: snippet shows the TOC"
    assert rec.console_errors == [] and rec.page_errors == []


# ---------------------------------------------------------------- print

def _norm(text: str) -> str:
    # PDF text extraction gives Kangxi radicals (⼀) for some ideographs (一): NFKC maps them back.
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _printed(run: str, text: str) -> bool:
    # Radicals outside NFKC's reach (⻅ U+2EC5 for 见) may stand for any ideograph.
    pattern = "".join(f"(?:{re.escape(c)}|[\u2e80-\u2fdf])" if CJK.match(c) else re.escape(c) for c in run)
    return re.search(pattern, text) is not None


@pytest.mark.browser
def test_printed_chapter_is_a_handout_with_every_answer(site_url, new_page):
    from pypdf import PdfReader

    rec = new_page()
    rec.page.goto(f"{site_url}/{CHAPTER}", wait_until="networkidle")
    answers = rec.page.eval_on_selector_all(
        "details.sd-dropdown:not(.f11-full-code) .sd-summary-content",  # the answers (not the full code)
        """els => els.map(e => { const c = e.cloneNode(true);
                 c.querySelectorAll('button, .copybtn').forEach(x => x.remove());
                 c.querySelectorAll('math').forEach(x => x.replaceWith('|'));  // prose runs stop at formulas
                 c.querySelectorAll('li').forEach(x => x.prepend('|'));  // and at list items (paper numbers them)
                 return c.textContent; })""")
    assert len(answers) >= 9, f"expected the self-check answers, found {len(answers)} dropdowns"
    pdf = rec.page.pdf(format="A4", print_background=True)
    text = _norm("".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages))
    for answer in answers:
        runs = [r for r in re.findall(r"[\u4e00-\u9fff，。：；“”、（）]{6,}", _norm(answer))]
        assert runs, f"an answer without prose: {answer[:80]}"
        missing = [r for r in runs if not _printed(r, text)]
        assert not missing, f"answer not printed: {missing[:2]}"
    # No navigation chrome on paper.
    rec.page.emulate_media(media="print")
    shown = rec.page.evaluate("""() => ['.bd-header', '.bd-sidebar-primary', '.bd-sidebar-secondary',
        '.header-article-items', '.prev-next-area', '#pst-back-to-top']
        .filter(s => [...document.querySelectorAll(s)].some(e => getComputedStyle(e).display !== 'none'))""")
    assert shown == [], f"printed with navigation chrome: {shown}"


@pytest.mark.browser
def test_printed_lab_page_has_its_title_and_the_whole_snapshot_on_page_one(site_url, new_page):
    from pypdf import PdfReader

    rec = new_page()
    rec.page.goto(f"{site_url}/book/lab.html")
    rec.page.wait_for_selector("[data-attention-lab][data-lab-ready='true']")
    for paper in ("A4", "Letter"):  # Letter is the shorter page
        pages = PdfReader(io.BytesIO(rec.page.pdf(format=paper, print_background=True))).pages
        first = _norm(pages[0].extract_text())
        for shown in ("课堂实验台", "分数表", "份额表", "输出表", "逐步计算"):
            assert shown in first, f"page 1 of the lab page printed on {paper} lacks {shown!r}: {first[:200]}"
    # On paper every row of S, A and O keeps its label (on screen those labels are buttons).
    rec.page.emulate_media(media="print")
    labels = rec.page.evaluate("""() => [...document.querySelectorAll('[data-attention-lab] .al-sao tbody tr')].map(tr => {
        const th = tr.querySelector('th'); return th && th.offsetParent !== null ? th.innerText.trim() : ''; })""")
    assert labels == ["我", "爱"] * 3, labels


# ---------------------------------------------------------------- phone

PHONE_PROBE = """(strict) => {
  const vw = document.documentElement.clientWidth, out = [];
  const right = e => e.getBoundingClientRect().right;
  // The lab's own tables are its view's business (H1's phone layout, tests/test_twin_browser.py).
  for (const t of document.querySelectorAll('.bd-article table:not([data-attention-lab] table)')) {
    let box = t;  // the table itself, or the box it scrolls in
    for (let p = t.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') { box = p; break; }
    }
    if (right(box) > vw + 0.5) out.push('table box sticks out: ' + right(box));
    // The chapter's and the labs' tables fit the screen; the notation page's reference tables (five
    // columns) may scroll inside their own box.
    if (strict && box.scrollWidth > box.clientWidth + 1) out.push('table needs a sideways swipe: ' + box.scrollWidth + '/' + box.clientWidth);
    // Code in a cell may wrap where it has a space or a comma ("[n, d_k]"), never inside a word.
    for (const c of t.querySelectorAll('code')) {
      const words = c.textContent.split(/[\\s,，]+/).filter(Boolean).length;
      if (c.getClientRects().length > words) out.push('code breaks inside a word in a table: ' + c.textContent);
    }
  }
  for (const b of document.querySelectorAll('.bd-article pre, .bd-article .f11-display-math')) {
    if (b.offsetParent !== null && right(b) > vw + 0.5) out.push('block sticks out: ' + b.textContent.slice(0, 30));
  }
  const h1 = document.querySelector('.bd-article h1');
  if (h1) {
    const lh = parseFloat(getComputedStyle(h1).lineHeight);
    const lines = Math.round(h1.getBoundingClientRect().height / lh);
    if (lines > 3) out.push('title takes ' + lines + ' lines');
  }
  return {width: document.documentElement.scrollWidth, problems: out};
}"""


@pytest.mark.browser
def test_every_page_reads_on_a_375px_phone(built_site, site_url, new_page, site_pages):
    rec = new_page(width=375, height=812)
    for page in site_pages:
        rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
        result = rec.page.evaluate(PHONE_PROBE, "notation" not in page)
        assert result["width"] <= 375, f"{page} scrolls sideways: {result['width']} px"
        assert result["problems"] == [], f"{page}: {result['problems']}"


@pytest.mark.parametrize("width, height", [(1280, 900), (375, 812)])
def test_every_section_link_of_the_chapter_lands_on_its_heading(site_url, new_page, width, height):
    """Opening the chapter at #section (a link from another page, or the contents) shows that
    section's heading at the top of the screen, below the theme's header, on a desktop and a phone.

    What can move a heading after the browser has scrolled to it is a change in height of what
    lies above it (the lab mounting, fonts, figures): every such change above a heading is also
    above each later one, so the sections checked (each a fresh load of the whole chapter) are the
    first, the first two after the lab, one in the middle and the last: every other lies between."""
    rec = new_page(width=width, height=height)
    page = rec.page
    page.goto(f"{site_url}/book/f11-attention.html", wait_until="load")
    targets = page.evaluate("() => [...document.querySelectorAll('#pst-page-toc-nav a.nav-link[href^=\"#\"]')]"
                            ".map(a => decodeURIComponent(a.getAttribute('href').slice(1)))")
    assert len(targets) >= 10, targets
    after_lab = page.evaluate("""(ids) => { const lab = document.querySelector('[data-attention-lab]');
        return ids.findIndex(id => lab.compareDocumentPosition(document.getElementById(id)) & Node.DOCUMENT_POSITION_FOLLOWING); }""",
                              targets)
    assert 0 < after_lab < len(targets) - 1, (after_lab, targets)
    picked = sorted({0, after_lab, after_lab + 1, (after_lab + len(targets)) // 2, len(targets) - 1})
    for target in [targets[k] for k in picked]:
        page.goto("about:blank")  # a fresh load each time, as a link from elsewhere opens it
        page.goto(f"{site_url}/book/f11-attention.html#{target}", wait_until="load")
        # Everything that can still move the text has happened: the lab mounted, the fonts loaded,
        # and two frames drawn after that.
        try:
            page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]', state="attached")
        except Exception as error:  # a lab that never starts (rare, cause not found): say what the page holds
            state = page.evaluate(LAB_BOOT_STATE_JS)
            raise AssertionError(f"#{target}: the chapter's lab never became ready: {state}; page errors "
                                 f"{rec.page_errors}, console errors {rec.console_errors}") from error
        page.evaluate("""() => document.fonts.ready.then(() => new Promise(r =>
            requestAnimationFrame(() => requestAnimationFrame(r))))""")
        top = page.evaluate("(id) => document.getElementById(id).getBoundingClientRect().top", target)
        # The theme scrolls a heading to just under its 4rem header bar.
        assert 0 <= top <= 120, f"#{target} is at {top:.0f} px from the top of the screen"


#: What a chapter whose lab never became ready holds: where the boot stopped.
LAB_BOOT_STATE_JS = """() => {
  const root = document.querySelector('[data-attention-lab]');
  return { readyState: document.readyState, app: typeof window.AttentionLab, started: !!(root && root.__attentionLab),
           root: root ? root.outerHTML.slice(0, 200) : null,
           scripts: [...document.scripts].filter(s => /attention-lab/.test(s.src)).map(s => s.src.split('/').pop()),
           loaded: performance.getEntriesByType('resource').filter(e => /attention-lab/.test(e.name))
             .map(e => [e.name.split('/').pop(), Math.round(e.duration), e.transferSize]) };
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_figures_keep_their_room_while_loading_and_their_shape(site_url, new_page, site_pages, width):
    """Every figure states its size in the page (room kept before the file arrives: the text
    does not jump on a slow phone), and, drawn, has the shape of its picture."""
    rec = new_page(width=width, height=900)
    seen = 0
    for path in site_pages:
        rec.page.goto(f"{site_url}/{path}", wait_until="load")
        figures = rec.page.evaluate("""() => [...document.querySelectorAll('.bd-article img')].map(i => ({
            src: i.getAttribute('src'), w: +i.getAttribute('width'), h: +i.getAttribute('height'),
            shown: [i.getBoundingClientRect().width, i.getBoundingClientRect().height],
            natural: [i.naturalWidth, i.naturalHeight] }))""")
        for f in figures:
            seen += 1
            assert f["w"] > 0 and f["h"] > 0, f"{path}: {f['src']} has no width/height"
            (sw, sh), (nw, nh) = f["shown"], f["natural"]
            assert abs(sw / sh - nw / nh) < 0.01 and abs(f["w"] / f["h"] - nw / nh) < 0.01, (path, f)
    assert seen >= 5


def test_search_match_link_on_a_page_is_chinese(site_url, new_page):
    """Opening a search hit highlights the words and offers a link to hide them, in Chinese."""
    rec = new_page()
    rec.page.goto(f"{site_url}/book/f11-attention.html?highlight=" + urllib.parse.quote("份额"), wait_until="load")
    link = rec.page.locator(".highlight-link a")
    link.first.wait_for()
    assert link.first.inner_text().strip() == "隐藏搜索结果"
    assert rec.page.locator("span.highlighted").count() > 0


def test_every_header_button_shows_a_focus_ring_when_reached_with_tab(site_url, new_page):
    rec = new_page()
    page = rec.page
    page.goto(f"{site_url}/book/f11-attention.html", wait_until="load")
    rings = {}
    for _ in range(40):
        page.keyboard.press("Tab")
        info = page.evaluate("""() => { const e = document.activeElement;
            if (!e || !e.closest('.bd-header, .bd-header-article')) return null;
            const cs = getComputedStyle(e);
            return [e.getAttribute('aria-label') || e.getAttribute('title') || e.innerText.trim(),
                    cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2 || cs.boxShadow !== 'none'];
        }""")
        if info:
            rings[info[0]] = info[1]
    assert len(rings) >= 4, rings
    assert all(rings.values()), {name: ring for name, ring in rings.items() if not ring}


# ---------------------------------------------------------------- accessibility

def _axe_source() -> str:
    candidates = [os.environ.get("F11_AXE_JS", ""), str(ROOT / "node_modules" / "axe-core" / "axe.min.js")]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c).read_text("utf-8")
    pytest.fail("axe-core not found: run scripts/test.sh (it installs axe-core and sets F11_AXE_JS)")


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_critical_or_serious_axe_violation_on_any_page(built_site, site_url, new_page, scheme, site_pages):
    axe = _axe_source()
    rec = new_page(color_scheme=scheme)
    found = {}
    for page in site_pages:
        rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
        assert rec.page.evaluate("document.documentElement.dataset.theme") == scheme
        rec.page.add_script_tag(content=axe)
        violations = rec.page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']}))
            .violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
            .map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))""")
        if violations:
            found[page] = violations
    assert found == {}, f"axe ({scheme}): {found}"


@pytest.mark.browser
def test_every_button_has_a_chinese_name(built_site, site_url, new_page, site_pages):
    rec = new_page()
    cdp = rec.page.context.new_cdp_session(rec.page)
    english = {}
    for page in site_pages:
        rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
        tree = cdp.send("Accessibility.getFullAXTree")["nodes"]
        names = [n.get("name", {}).get("value", "") for n in tree
                 if not n.get("ignored") and n.get("role", {}).get("value") in ("button", "menuitem")]
        assert names, f"{page}: no buttons found"
        bad = sorted({n for n in names if not CJK.search(n)})
        if bad:
            english[page] = bad
    assert english == {}, f"buttons without a Chinese name: {english}"


def test_root_page_has_a_language_a_title_and_a_link(built_site):
    html = (built_site / "index.html").read_text("utf-8")
    assert re.search(r'<html[^>]*\blang="zh-CN"', html)
    title = re.search(r"<title>([^<]+)</title>", html)
    assert title and CJK.search(title.group(1))
    target = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', html).group(1)
    assert (built_site / target).is_file() and f'href="{target}"' in html


# ---------------------------------------------------------------- phone, print and chrome (issue 17)

@pytest.mark.browser
@pytest.mark.parametrize("width, height", [(360, 640), (375, 812)])
def test_chapter_worked_blocks_and_code_wrap_on_a_phone_instead_of_scrolling_sideways(site_url, new_page, width, height):
    rec = new_page(width=width, height=height, has_touch=True, is_mobile=True)
    rec.page.goto(f"{site_url}/{CHAPTER}", wait_until="networkidle")
    wide = rec.page.evaluate("""() => [...document.querySelectorAll('.bd-article pre')]
        .filter(p => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
        .map(p => p.textContent.trim().slice(0, 30) + ' ' + p.scrollWidth + '/' + p.clientWidth)""")
    assert wide == [], f"{len(wide)} blocks need a sideways swipe: {wide[:3]}"
    block = rec.page.locator("pre", has_text="q₁ = x₁Wq").first  # its result on screen, not past the edge
    assert "= [1, 0]" in block.inner_text() and block.bounding_box()["x"] + block.bounding_box()["width"] <= width
    tables = rec.page.evaluate(PHONE_PROBE, True)  # and no table of the chapter needs a swipe either
    assert tables["width"] <= width and tables["problems"] == [], tables


@pytest.mark.browser
def test_printed_chapter_wraps_source_listings_and_keeps_each_answer_whole(site_url, new_page):
    from pypdf import PdfReader

    rec = new_page()
    rec.page.goto(f"{site_url}/{CHAPTER}", wait_until="networkidle")
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(rec.page.pdf(format="A4"))).pages)
    flat = re.sub(r"\s+", " ", text)
    assert "causal: bool = False) -> AttentionResult:" in flat  # was cut at "Fal"
    rec.page.emulate_media(media="print")
    cut = rec.page.evaluate("""() => [...document.querySelectorAll('.bd-article pre')]
        .filter(p => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1).map(p => p.textContent.slice(0, 40))""")
    assert cut == [], cut
    splits = rec.page.evaluate("""() => [...document.querySelectorAll('details.sd-dropdown')]
        .filter(d => getComputedStyle(d).breakInside !== 'avoid').length""")
    assert splits == 0


BACK_TO_TOP = """() => {
  const b = document.querySelector('#pst-back-to-top');
  if (getComputedStyle(b).display === 'none') return null;
  const r = b.getBoundingClientRect(), under = [];
  for (const x of [r.left + 1, (r.left + r.right) / 2, r.right - 1])
    for (const y of [r.top + 1, r.bottom - 1]) {
      const e = document.elementsFromPoint(x, y).find(e => !b.contains(e));
      if (!e || !e.closest('.bd-header-article') || e.closest('button, a')) under.push(e ? e.className || e.tagName : 'none');
    }
  return under;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [360, 600, 800, 1024])
@pytest.mark.parametrize("page", [CHAPTER, LAB])
def test_back_to_top_pill_lies_in_the_empty_button_bar_never_over_the_lab_or_text(site_url, new_page, width, page):
    rec = new_page(width=width, height=700)
    rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
    rec.page.mouse.wheel(0, 2500)  # down, then a little up: the theme shows the pill
    rec.page.wait_for_timeout(300)
    rec.page.mouse.wheel(0, -200)
    rec.page.wait_for_timeout(500)
    if width < 1200:  # (a page too short to scroll shows it never; it would sit in the same place)
        rec.page.evaluate("() => { document.querySelector('#pst-back-to-top').style.display = 'block'; }")
    assert rec.page.evaluate(BACK_TO_TOP) == []


@pytest.mark.browser
def test_every_page_has_one_search_box_at_1024px(site_url, new_page, site_pages):
    rec = new_page(width=1024, height=768)
    for page in site_pages:
        if page == "search.html":  # the search page's own form is its content
            continue
        rec.page.goto(f"{site_url}/{page}", wait_until="load")
        boxes = rec.page.evaluate("""() => [...document.querySelectorAll('.search-button-field, form.bd-search')]
            .filter(e => !e.closest('dialog') && e.getBoundingClientRect().width > 0).length""")
        assert boxes <= 1, f"{page}: {boxes} search boxes"

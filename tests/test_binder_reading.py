"""The chapter reads in Binder's Jupyter as on the site: JupyterLab and Notebook 7, real browser.

The room is what a Binder reader gets (``binder_env`` fixture, scripts/binder_env.py): an env
from ``binder/requirements.txt`` alone, ``binder/postBuild`` run for a fresh user, and a PLAIN
``jupyter lab`` / ``jupyter notebook`` (no flags of the tests' own for news, update checks or
viewers).  Chromium at 1024×768, JupyterLab's default layout (file browser open).  The server
serves a temporary git copy of the working tree; each app opens both notebooks, runs all
cells, waits for jupyterlab-myst's ``{eval}`` numbers, reads what the markdown cells and the
Markdown outputs show, then saves and closes them as a reader would; JupyterLab also opens, saves
and closes every other Markdown file of the repository (README.md, CHANGELOG.md, book/index.md …
and the book's other notebooks: every .md opens as a notebook there) and follows one link between
pages.  Then ``git status`` of the copy must be clean.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention_lab import attention, baseline
from attention_lab.chapter import chapter_numbers, lab_experiments
from binder_env import CURRENT, KERNEL_READY, notebook_url  # scripts/ is on sys.path (tests/conftest.py)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("book/f11-attention.md", "book/lab.md")

#: Every markdown cell with {eval} roles has all of them evaluated (jupyterlab-myst stores the
#: results in the cell's user_expressions metadata), and the kernel is idle.
EVALUATED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.sessionContext.session.kernel.status === 'idle' && panel.content.widgets.every(c => {
    if (c.model.type !== 'markdown') return true;
    const n = (c.model.sharedModel.getSource().match(/\\{eval\\}`/g) || []).length;
    const done = c.model.getMetadata('user_expressions') || [];
    return done.length === n;
  });
}"""

#: Every drawn markdown cell shows its {eval} results, not the names (a10_4d) it shows before.
DRAWN = """() => ![...document.querySelectorAll('.jp-MarkdownCell .myst')]
  .some(e => /\\b[a-z]\\w*_\\d+d\\b/.test(e.textContent))"""

#: What the markdown cells show (jupyterlab-myst renders into .myst), and their dropdowns; the
#: Markdown outputs of code cells (the core's code, jupyterlab-myst's text/markdown renderer);
#: the links to other files; and, per code cell the site hides (remove-input), whether its code is folded.
READ = """() => {
  const md = [...document.querySelectorAll('.jp-MarkdownCell .myst')];
  const details = [...document.querySelectorAll('.jp-MarkdownCell .myst details')];
  const outputs = [...document.querySelectorAll('.jp-OutputArea .jp-RenderedMySTMarkdown')];
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  return {
    text: md.map(e => e.textContent).join('\\n'),
    boxes: [...document.querySelectorAll('.jp-MarkdownCell .myst-admonition-header-text')].map(e => e.textContent.trim()),
    dropdowns: details.map(d => ({summary: d.querySelector('summary')?.textContent.trim() || '',
                                  open: d.open,
                                  shown: [...d.children].some(c => c.tagName !== 'SUMMARY' && c.checkVisibility())})),
    toasts: [...document.querySelectorAll('.Toastify__toast')].map(t => t.textContent.trim()),
    outputs: outputs.map(e => ({text: e.textContent, code: [...e.querySelectorAll('pre')].map(p => p.textContent),
                                folded: [...e.querySelectorAll('details')].map(d => d.querySelector('summary')?.textContent.trim() || '')})),
    links: md.flatMap(e => [...e.querySelectorAll('a')].map(a => ({text: a.textContent.trim(), href: a.getAttribute('href') || ''})))
             .filter(a => /\\.md([?#]|$)/.test(a.href)),
    hidden: cells.filter(c => c.model.type === 'code' && (c.model.getMetadata('tags') || []).includes('remove-input'))
                 .map(c => ({start: c.model.sharedModel.getSource().slice(0, 60), hidden: c.inputHidden})),
  };
}"""

def _tracked_markdown() -> list[str]:
    return sorted(subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())


def _has_jupytext_header(path: str) -> bool:
    return "jupytext:" in (ROOT / path).read_text("utf-8").split("\n---", 1)[0]


#: Every Markdown file of the repository opens as a notebook in Binder (the default viewer for .md,
#: binder/postBuild); opening, saving and closing each must leave it unchanged.  Any other file
#: opens in the text editor, which writes nothing unless the reader edits.
#: Files a reader opens only to read (no Jupytext header: README.md, CHANGELOG.md, book/index.md …).
PLAIN_MARKDOWN = tuple(p for p in _tracked_markdown() if not _has_jupytext_header(p))
#: The book's other notebooks (not run here: the shapes lab's and the exercises' own tests run them).
OTHER_NOTEBOOKS = tuple(p for p in _tracked_markdown() if _has_jupytext_header(p) and p not in
                        ("book/f11-attention.md", "book/lab.md"))


def open_save_and_close(binder_env, page, base, token, path, app):
    """Open a plain Markdown file as a double-click does, save it, close it (its kernel shut down)."""
    page.goto(notebook_url(base, token, path, app))
    page.wait_for_function(f"p => {CURRENT} && {CURRENT}.context && "
                           f"{CURRENT}.context.path === p && {CURRENT}.context.isReady",
                           arg=path, timeout=60_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    # It has no kernelspec: JupyterLab asks for a kernel; the reader takes the one offered
    # (which puts a kernelspec into the notebook's metadata, the change autosave would write).
    page.locator(".jp-Dialog button", has_text=re.compile("^(Select|选择)$")).click(timeout=60_000)
    page.wait_for_function(KERNEL_READY, timeout=60_000)
    binder_env.save_and_close(page)


def click_link_opens(binder_env, page, text: str, path: str) -> bool:
    """Click the markdown link ``text`` in the current notebook; True if JupyterLab then shows ``path``."""
    page.locator(".jp-MarkdownCell .myst a", has_text=text).first.click(timeout=30_000)
    try:
        page.wait_for_function(f"p => {CURRENT} && {CURRENT}.context && {CURRENT}.context.path === p",
                               arg=path, timeout=30_000)
    except Exception:
        return False
    # Closed unsaved (nothing was changed in it; saving here can wait on its starting kernel).
    page.evaluate(f"async () => {{ const w = {CURRENT}; await w.sessionContext.shutdown(); w.dispose(); }}")
    return True


def tracked_copy(dest: Path) -> Path:
    """The working tree's tracked and new (not ignored) files in a fresh git repository at ``dest``."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "as checked out"], cwd=dest, check=True)
    return dest


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory) -> Path:
    return tracked_copy(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="module", params=["lab", "notebook"])
def room(request, binder_env, browser, repo_copy, tmp_path_factory) -> dict:
    """Open, run, read, save and close both notebooks in one app; returns what was seen."""
    app = request.param
    shots = tmp_path_factory.mktemp(f"shots-{app}")
    seen = {"app": app}
    with binder_env.jupyter(app, repo_copy) as (base, token):
        context = browser.new_context(viewport={"width": 1024, "height": 768})
        page = context.new_page()
        try:
            if app == "lab":  # Binder's interface (launch_buttons: jupyterlab); the same contents manager serves both
                for path in PLAIN_MARKDOWN:
                    open_save_and_close(binder_env, page, base, token, path, app)
                for path in OTHER_NOTEBOOKS:
                    page.goto(notebook_url(base, token, path, app))
                    page.wait_for_function(f"p => {CURRENT} && {CURRENT}.context && {CURRENT}.context.path === p "
                                           f"&& {CURRENT}.context.isReady", arg=path, timeout=60_000)
                    page.wait_for_function(KERNEL_READY, timeout=60_000)
                    binder_env.save_and_close(page)
            for number, path in enumerate(PAGES):
                binder_env.open_and_run(page, base, token, path, app)
                page.wait_for_function(EVALUATED, timeout=60_000)
                # jupyterlab-myst stores the results first and draws the cells after (under load, in the
                # full suite, some seconds later): wait until no drawn cell shows an {eval} name; if one
                # stays, test_markdown_shows_no_raw_myst names it.
                with contextlib.suppress(PlaywrightTimeout):
                    page.wait_for_function(DRAWN, timeout=30_000)
                if number == 0:
                    page.wait_for_timeout(1500)  # a late toast (the news question comes after start-up)
                seen[path] = page.evaluate(READ)
                page.screenshot(path=str(shots / (Path(path).stem + ".png")))
                if app == "lab" and path == "book/lab.md":  # Notebook 7 opens a link in a new browser tab
                    seen["link_opened"] = click_link_opens(binder_env, page, "正文", "book/f11-attention.md")
                    page.wait_for_function(f"() => {CURRENT} && {CURRENT}.context.path === 'book/lab.md'",
                                           timeout=30_000)
                binder_env.save_and_close(page)
        except Exception as error:
            page.screenshot(path=str(shots / "failure.png"))
            raise AssertionError(f"{app}: {error}\nscreenshots: {shots}\n{binder_env.log()[-3000:]}") from error
        finally:
            context.close()
    seen["status"] = subprocess.run(["git", "status", "--porcelain"], cwd=repo_copy, capture_output=True,
                                    text=True, check=True).stdout
    seen["diff"] = subprocess.run(["git", "diff"], cwd=repo_copy, capture_output=True, text=True).stdout
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo_copy)  # the next app starts from the same files
    return seen


@pytest.mark.parametrize("path", PAGES)
def test_markdown_shows_no_raw_myst(room, path):
    text = room[path]["text"]
    assert len(text) > 1000, f"{room['app']}: the markdown cells were not rendered"
    for raw in ("{glue", "{eval}", ":::{", "::::{", "{cite}", "{ref}", "{doc}", "{dropdown}"):
        assert raw not in text, f"{room['app']} {path}: raw MyST {raw!r} shown"
    assert not re.search(r"\(f11-[\w-]+\)=", text), f"{room['app']} {path}: a (label)= line is shown"
    # An {eval} name left unevaluated would show as the name (a10_4d) instead of the number.
    names = sorted(set(re.findall(r"\b[a-z]\w*_\d+d\b", text)))
    assert not names, f"{room['app']} {path}: numbers shown as their names: {names}"


@pytest.mark.parametrize("path", PAGES)
def test_boxes_carry_the_sites_chinese_titles(room, path):
    """A note or a warning box is titled 备注 / 警告 as on the site, not jupyterlab-myst's English
    Note / Warning (issue 27, item 1: the pages title their boxes themselves)."""
    boxes = room[path]["boxes"]
    english = {"Note", "Warning", "Tip", "Important", "Caution", "Hint", "See Also", "Attention", "Danger", "Error"}
    assert not english & set(boxes), f"{room['app']} {path}: {boxes}"
    if path == "book/f11-attention.md":
        assert {"备注", "警告"} <= set(boxes), f"{room['app']}: {boxes}"


def test_chapter_shows_the_numbers_the_core_computes(room):
    text = room["book/f11-attention.md"]["text"]
    r = attention(**baseline())
    numbers = chapter_numbers()
    for shown in (f"{r.A[1, 0]:.10f}", f"{r.A[1, 1]:.10f}", f"{r.scale:.6f}",  # 0.6697615493, √2 ≈ 1.414214
                  f"{attention(**baseline('only_wq')).O[1, 1]:.10f}",
                  f"{numbers['sc_dk8_a10']:.4f}", f"{numbers['cross_o00']:.10f}"):
        assert shown in text, f"{room['app']}: {shown} is not in the chapter's markdown"


def test_figures_carry_the_sites_captions(room, monkeypatch):
    """Under each figure the chapter's hidden figure_caption cell shows the site's caption (图 1 …), which
    jupyterlab-myst does not draw for a code cell's figure (tests/test_site.py compares them with the site)."""
    from attention_lab.notebook import figure_caption

    monkeypatch.chdir(ROOT / "book")
    names = re.findall(r'^figure_caption\("([\w-]+)"\)', (ROOT / PAGES[0]).read_text("utf-8"), re.M)
    shown = [" ".join(o["text"].split()) for o in room[PAGES[0]]["outputs"]]
    captions = [" ".join(figure_caption(name).data.replace("**", "").split()) for name in names]
    assert len(captions) >= 5 and [c for c in captions if c in shown] == captions, (
        f"{room['app']}: the captions shown are {[t for t in shown if t.startswith('图')]}")


def test_tables_and_figures_are_labelled_in_chinese_as_on_the_site(room):
    """jupyterlab-myst's own caption numbers read 表 1, 表 2 as the site's (binder/zh_captions.py, run by postBuild)."""
    text = room[PAGES[0]]["text"]
    english = sorted(set(re.findall(r"\b(?:Table|Figure|Fig\.)\s*\d+", text)))
    assert not english, f"{room['app']}: the chapter labels {english} where the site writes 表 / 图"
    tables = len(re.findall(r"^```\{list-table\}", (ROOT / PAGES[0]).read_text("utf-8"), re.M))
    assert tables >= 2 and all(re.search(rf"表\s*{k}(?!\d)", text) for k in range(1, tables + 1)), (
        f"{room['app']}: the chapter's {tables} tables are not all numbered 表 1 … 表 {tables}")


def test_lab_page_shows_the_experiments_numbers(room):
    text = room["book/lab.md"]["text"]
    cases = lab_experiments()
    for shown in (f"{cases['dk1'].A[1, 0]:.4f}", f"{cases['dk64'].A[1, 1]:.4f}",
                  f"{cases['nomask'].A[0, 1]:.4f}", f"{cases['wq6'].O[1, 0]:.4f}"):
        assert shown in text, f"{room['app']}: {shown} is not in lab.md's experiments"


def test_self_check_answers_are_folded(room):
    dropdowns = room["book/f11-attention.md"]["dropdowns"]
    answers = [d for d in dropdowns if d["summary"] == "答案"]
    assert len(answers) >= 12, f"{room['app']}: {len(answers)} answer dropdowns rendered: {dropdowns}"
    assert not [d for d in dropdowns if d["open"] or d["shown"]], f"{room['app']}: an answer is unfolded"


@pytest.mark.parametrize("path", PAGES)
def test_no_news_or_update_toast(room, path):
    assert room[path]["toasts"] == [], f"{room['app']}: toast shown: {room[path]['toasts']}"


def test_references_read_as_text(room):
    text = room["book/f11-attention.md"]["text"]
    assert "符号与形状速查" in text and "课堂实验台（投影页）" in text  # {doc} with its page's title
    assert "多头、缩放和库接口" in text  # {ref} to a heading shows the heading


def test_opening_running_saving_and_closing_leaves_git_status_clean(room):
    assert room["status"] == "", f"{room['app']} changed the checkout:\n{room['status']}\n{room['diff'][:3000]}"


def test_chapter_shows_the_cores_own_code(room):
    """The excerpts of attention_lab/core.py and the folded full functions show in Jupyter as on the site."""
    import inspect

    from attention_lab import core

    outputs = room["book/f11-attention.md"]["outputs"]
    code = "\n".join(c for o in outputs for c in o["code"])
    for line in ("exps = np.exp(scores - row_max)", "S = Q @ K.T / np.sqrt(d_k) + M", "O = _mix(A, V)"):
        assert line in inspect.getsource(core) and line in code, f"{room['app']}: {line!r} is not shown"
    excerpt = next(o for o in outputs if "S = Q @ K.T" in o["text"] and not o["folded"])
    assert "_check_overflow" not in excerpt["text"], f"{room['app']}: the excerpt shows the input check"
    folded = [o for o in outputs if o["folded"]]
    assert folded and folded[0]["folded"][0].startswith("完整的"), f"{room['app']}: no folded full code: {outputs}"
    shown = [line.strip() for block in folded[0]["code"] for line in block.splitlines() if line.strip()]
    for function in (core.softmax, core.scaled_dot_product_attention):  # every line, in order (indent aside)
        lines = [line.strip() for line in inspect.getsource(function).splitlines() if line.strip()]
        start = shown.index(lines[0]) if lines[0] in shown else -1
        assert start >= 0 and shown[start:start + len(lines)] == lines, f"{room['app']}: {function.__name__} " \
            f"is not shown whole: {[line for line in lines if line not in shown][:5]}"


@pytest.mark.parametrize("path", PAGES)
def test_no_unknown_directive_or_role(room, path):
    shown = room[path]["text"] + "\n".join(o["text"] for o in room[path]["outputs"])
    for error in ("Unknown Directive", "Unknown Role"):
        assert error not in shown, f"{room['app']} {path}: {error!r} shown"


def test_links_to_other_pages_name_files_and_labels_that_exist(room, repo_copy):
    links = [link for path in PAGES for link in room[path]["links"]]
    assert len(links) >= 5, f"{room['app']}: {links}"
    from urllib.parse import urlparse

    for link in links:  # JupyterLab writes them as its /files/ URLs: .../files/book/shapes.md?_xsrf=...#label
        url = urlparse(link["href"])
        name, label = Path(url.path).name, url.fragment
        page = repo_copy / "book" / name
        assert page.exists(), f"{room['app']}: {link} points to no page"
        if label:
            assert f"({label})=" in page.read_text("utf-8"), f"{room['app']}: {link}: no label {label} in {name}"


def test_a_link_to_another_page_opens_it_in_jupyterlab(room):
    if room["app"] != "lab":
        pytest.skip("Notebook 7 opens a link in a new browser tab")
    assert room["link_opened"], "clicking 正文 in lab.md did not open book/f11-attention.md"


@pytest.mark.parametrize("path", PAGES)
def test_code_the_site_hides_is_folded_in_jupyter(room, path):
    hidden = room[path]["hidden"]
    assert hidden, f"{room['app']} {path}: no remove-input cells found"
    shown = [c["start"] for c in hidden if not c["hidden"]]
    assert not shown, f"{room['app']} {path}: code the site hides is shown: {shown}"


def test_citations_show_the_sites_labels_not_unresolved_keys(room):
    """jupyterlab-myst reads no .bib: the chapter writes each citation as its label linked to 参考资料."""
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from f11_cite import bib_labels

    text = room["book/f11-attention.md"]["text"]
    labels = bib_labels([ROOT / "book" / "references.bib"])
    for label, key in labels.items():
        assert f"[{label}]" in text, f"{room['app']}: the citation [{label}] is not shown"
        assert key not in text, f"{room['app']}: the unresolved citation key {key} is shown"
    assert "Citation Not Found" not in text

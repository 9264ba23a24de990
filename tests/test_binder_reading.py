"""The chapter reads in Binder's Jupyter as on the site: JupyterLab and Notebook 7, real browser.

The room is what a Binder reader gets (``binder_env`` fixture, scripts/binder_env.py): an env
from ``binder/requirements.txt`` alone, ``binder/postBuild`` run for a fresh user, and a PLAIN
``jupyter lab`` / ``jupyter notebook`` (no flags of the tests' own for news, update checks or
viewers).  Chromium at 1024×768, JupyterLab's default layout (file browser open).  The server
serves a temporary git copy of the working tree; each app opens both notebooks, runs all
cells, waits for jupyterlab-myst's ``{eval}`` numbers, reads what the markdown cells show,
then saves and closes them as a reader would.  Then ``git status`` of the copy must be clean.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from attention_lab import attention, baseline
from attention_lab.chapter import chapter_numbers, lab_experiments

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

#: What the markdown cells show (jupyterlab-myst renders into .myst), and their dropdowns.
READ = """() => {
  const md = [...document.querySelectorAll('.jp-MarkdownCell .myst')];
  const details = [...document.querySelectorAll('.jp-MarkdownCell .myst details')];
  return {
    text: md.map(e => e.textContent).join('\\n'),
    dropdowns: details.map(d => ({summary: d.querySelector('summary')?.textContent.trim() || '',
                                  open: d.open,
                                  shown: [...d.children].some(c => c.tagName !== 'SUMMARY' && c.checkVisibility())})),
    toasts: [...document.querySelectorAll('.Toastify__toast')].map(t => t.textContent.trim()),
  };
}"""


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
            for path in PAGES:
                binder_env.open_and_run(page, base, token, path, app)
                page.wait_for_function(EVALUATED, timeout=60_000)
                page.wait_for_timeout(1500)  # a late toast (the news question comes after start-up)
                seen[path] = page.evaluate(READ)
                page.screenshot(path=str(shots / (Path(path).stem + ".png")))
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


def test_chapter_shows_the_numbers_the_core_computes(room):
    text = room["book/f11-attention.md"]["text"]
    r = attention(**baseline())
    numbers = chapter_numbers()
    for shown in (f"{r.A[1, 0]:.10f}", f"{r.A[1, 1]:.10f}", f"{r.scale:.6f}",  # 0.6697615493, √2 ≈ 1.414214
                  f"{attention(**baseline('only_wq')).O[1, 1]:.10f}",
                  f"{numbers['sc_dk8_a10']:.4f}", f"{numbers['cross_o00']:.10f}"):
        assert shown in text, f"{room['app']}: {shown} is not in the chapter's markdown"


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

"""Shared fixtures: the built site, a local HTTP server for it, and headless Chromium.

* ``built_site``: builds the book once per test session with warnings as errors
  (or uses ``$F11_SITE_DIR`` when set to an already built ``_build/html``).
* ``site_url``: that site served on 127.0.0.1 by a real HTTP server.
* ``browser``: Debian's Chromium (found by ``scripts/find_chromium.py``, as
  ``scripts/test.sh`` finds it) driven by Playwright (never a downloaded browser); use ``new_page`` to get a page that records every request
  and console error.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from find_chromium import find_chromium, missing_message  # noqa: E402  (one finder for scripts and tests)

#: The Chromium the browser tests drive: $CHROMIUM, else chromium on PATH, else /usr/bin/chromium.
CHROMIUM = find_chromium()
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def run_root(tmp_path_factory) -> Path:
    """A folder shared by the whole run: under pytest-xdist (scripts/test.sh runs two workers) every
    worker's temporary folder is ``<run>/popen-gwN``, so what is made once for the run goes in ``<run>``."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


#: Builds the book into argv[1] (warnings as errors); writes build.log, then build.status (the exit code).
_BUILD_SCRIPT = """
import subprocess, sys
from pathlib import Path
out, jb, root = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    proc = subprocess.run([jb, "build", root, "--path-output", str(out), "--all",
                           "--builder", "html", "-W", "-n", "--keep-going"], capture_output=True, text=True, cwd=root)
    (out / "build.log").write_text(proc.stdout + proc.stderr)
    code = proc.returncode
except BaseException as exc:
    (out / "build.log").write_text(f"the book build could not run: {exc!r}")
    code = 99
(out / "build.status.tmp").write_text(str(code))
(out / "build.status.tmp").rename(out / "build.status")
"""


def _start_site_build(out: Path) -> None:
    """Start building the book into ``out`` in the background, once per run (the first caller)."""
    with open(out.with_suffix(".lock"), "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if out.exists():
            return
        out.mkdir(parents=True)
        jb = Path(sys.executable).with_name("jupyter-book")
        proc = subprocess.Popen([sys.executable, "-c", _BUILD_SCRIPT, str(out), str(jb), str(ROOT)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (out / "build.pid").write_text(str(proc.pid))


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, finished but not yet collected, does not)."""
    if Path("/proc/self/stat").exists():
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def pytest_collection_finish(session):
    """When the selected tests need the built site, its build starts now, while the tests that do not
    need it run (it takes a minute or two)."""
    if os.environ.get("F11_SITE_DIR") or session.config.option.collectonly:
        return
    if any(set(getattr(item, "fixturenames", ())) & _BUILD_FIXTURES for item in session.items):
        _start_site_build(run_root(session.config._tmp_path_factory) / "site")
    if any("binder_env" in getattr(item, "fixturenames", ()) for item in session.items):
        _start_binder_env(run_root(session.config._tmp_path_factory) / "binder-env.log")


def _start_binder_env(log: Path) -> None:
    """Install the Binder env (scripts/binder_env.py, a few minutes in a fresh clone) in the background,
    once per run, while the tests that come first run.  The ``binder_env`` fixture calls the same
    ``ensure_env``, which waits for this one (a file lock) and then finds it made, or, if it failed,
    tries again itself and fails with pip's own last lines."""
    try:
        fd = os.open(log, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as out:
        subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import binder_env; "
                          "binder_env.ensure_env()", str(ROOT / "scripts")],
                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """Path of the built site's html folder (``.../_build/html``), built once for the whole run.

    The build started when the tests were collected (``pytest_collection_finish``); every worker
    waits for that one build and uses the same site, or fails with its log."""
    given = os.environ.get("F11_SITE_DIR")
    if given:
        return Path(given)
    out = run_root(tmp_path_factory) / "site"
    _start_site_build(out)  # already started, unless this test was not collected as needing it
    status = out / "build.status"
    pid = int((out / "build.pid").read_text())
    while not status.exists():
        if not _running(pid) and not status.exists():
            pytest.fail(f"the book build (process {pid}) stopped without a result; its log: {out / 'build.log'}")
        time.sleep(0.5)
    code = int(status.read_text())
    if code != 0:
        log = (out / "build.log").read_text()
        causes = [line for line in re.sub(r"\x1b\[[0-9;]*m", "", log).splitlines()
                  if re.search(r"(WARNING|ERROR|CRITICAL):|Traceback|Error\b", line)]
        pytest.fail(f"book build failed (exit {code}):\n{log[-4000:]}\n\nthe build's warnings and errors, "
                    f"first {min(len(causes), 12)} (full log: {out / 'build.log'}):\n" + "\n".join(causes[:12]))
    return out / "_build" / "html"


@pytest.fixture(scope="session")
def site_pages(built_site) -> list[str]:
    """Every reader-facing page, relative to the site (the root redirect is checked on its own)."""
    pages = sorted(str(p.relative_to(built_site)) for p in (built_site / "book").glob("*.html"))
    return pages + ["search.html", "genindex.html"]


@pytest.fixture(scope="session")
def build_log(built_site) -> str:
    log = built_site.parent.parent / "build.log"
    return log.read_text() if log.exists() else ""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def site_url(built_site) -> str:
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.fail(missing_message())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class PageRecorder:
    """A Playwright page plus every request URL and console error it produced."""

    def __init__(self, page):
        self.page = page
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.failed: list[str] = []  # "404 http://..." for every response >= 400
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))

    def external_requests(self) -> list[str]:
        local = ("http://127.0.0.1", "data:", "blob:", "about:")
        return [u for u in self.requests if not u.startswith(local)]


#: What a browser context may hold of a page's, cleared before a pooled context serves the next test.
_STORAGE = "cookies,local_storage,session_storage,indexeddb,cache_storage,service_workers,file_systems"


@pytest.fixture(scope="session")
def _context_pool(browser):
    """Browser contexts kept for the session, one per kind (colour scheme and context options): a test's
    page is a new page (tab) in one, its storage cleared, its HTTP cache warm (a new context per test
    fetched every stylesheet, script and font again: about half of a browser test's time)."""
    pool: dict = {}
    yield pool
    for ctx, _ in list(pool.values()):
        with contextlib.suppress(Exception):
            ctx.close()


@pytest.fixture
def new_page(browser, _context_pool):
    """Factory: ``new_page(width=1280, height=900, color_scheme="light", fresh=False, **context)`` -> PageRecorder.

    ``fresh=True``: a context of its own (an empty HTTP cache: every file fetched, every request seen)."""
    pages, own = [], []

    def make(width=1280, height=900, color_scheme="light", fresh=False, **context):
        """``context``: more Playwright context options (``has_touch=True, is_mobile=True`` ...)."""
        viewport = {"width": width, "height": height}
        if fresh:
            ctx = browser.new_context(viewport=viewport, color_scheme=color_scheme, **context)
            own.append(ctx)
            page = ctx.new_page()
        else:
            key = (color_scheme, repr(sorted(context.items())))
            if key not in _context_pool:
                ctx = browser.new_context(viewport=viewport, color_scheme=color_scheme, **context)
                ctx.on("close", lambda _ctx, key=key: _context_pool.pop(key, None))
                _context_pool[key] = (ctx, set())
            ctx, origins = _context_pool[key]
            page = ctx.new_page()
            if origins:  # what earlier tests' pages stored (the theme keeps its dark mode in localStorage)
                cdp = ctx.new_cdp_session(page)
                for origin in origins:
                    cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": _STORAGE})
                cdp.detach()
            page.on("request", lambda r, origins=origins: r.url.startswith("http") and origins.add(
                "/".join(r.url.split("/", 3)[:3])))
            page.set_viewport_size(viewport)
            pages.append(page)
        return PageRecorder(page)

    yield make
    for page in pages:
        with contextlib.suppress(Exception):
            page.close()
    for ctx in own:
        ctx.close()


# ---------------------------------------------------------------- test tiers
#: Files of the quick tier (``-m quick``): pure Python and Node, no build, no browser, no fresh venv.
QUICK_FILES = {
    "test_core.py", "test_lab_headless.py", "test_worked.py", "test_verify_concepts.py", "test_twin_node.py",
    "test_dataflow.py", "test_chapter_examples.py", "test_fonts.py", "test_plotting.py", "test_requirements.py",
    "test_wording.py",
    "test_exercises.py", "test_api_inputs.py", "test_workflow.py", "test_string_table.py", "test_binder_captions.py",
    "test_math_markup.py",
}
#: A test asking for one of these fixtures needs the built site / Chromium, whatever its file says.
_BUILD_FIXTURES = {"built_site", "site_pages", "build_log", "site_url"}
_BROWSER_FIXTURES = {"browser", "new_page"}


#: Files whose tests share nothing costly (no module fixture, no server): under pytest-xdist their
#: tests go to whichever worker is free; every other file's tests stay together on one worker,
#: so a module's Jupyter server or pages open once.
SPREAD_FILES = {"test_verify_concepts.py", "test_api_inputs.py", "test_core.py", "test_worked.py"}
#: Files that run one after the other on one worker, as one unit: the JupyterLab / Notebook 7 rooms
#: (each starts its own servers on the Binder env; two at once on two cores time out).
UNITS = {name: "jupyter" for name in ("test_binder_reading.py", "test_shapes_jupyter.py", "test_jupyter_browser.py")}
#: The order work starts in (longest first, so that the two workers end together): first what needs
#: no built book (it builds meanwhile), then the costliest files that read the site; files not named
#: here follow in their usual order, and the spread files' small tests fill the gaps at the end.
START_ORDER = [
    "test_setup_script.py", "test_verify_concepts.py", "test_build_strictness.py", "test_wheel_and_notebook.py",
    # one unit, after the above: the Binder env is installed in the background meanwhile (as the book is built)
    "test_binder_reading.py", "test_shapes_jupyter.py", "test_jupyter_browser.py",
    "test_site_reading.py", "test_shapes_browser.py", "test_site_css.py", "test_twin_browser.py",
    "test_lesson_browser.py", "test_presenter_browser.py", "test_plane_browser.py", "test_site_loading.py",
    "test_chapter_page.py", "test_deploy.py", "test_site_faults.py",
]


def _start_rank(item) -> int:
    name = Path(str(item.fspath)).name
    if name in START_ORDER:
        return START_ORDER.index(name)
    return len(START_ORDER) + (1 if name in SPREAD_FILES else 0)


def pytest_xdist_make_scheduler(config, log):
    """``-n 2 --dist loadgroup`` (scripts/test.sh): work units are whole files (or UNITS), but for
    SPREAD_FILES, whose tests are one unit each; handed out in the collection's order (START_ORDER).
    (pytest-xdist's own loadgroup cannot be used: it renames test ids, which pytest 9 ignores.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            name = file.rsplit("/", 1)[-1]
            return nodeid if name in SPREAD_FILES else UNITS.get(name, file)

    config.option.loadscopereorder = False
    return FileUnits(config, log)


def pytest_collection_modifyitems(config, items):
    """Put the tier marks on (registered in pyproject.toml): ``build`` and ``browser`` from the
    fixtures a test uses (so ``-m "not browser"`` never starts Chromium, even in a file that
    forgot its mark), ``quick`` on the quick files' tests and the package's doctests that
    need neither; and the files in the order their work starts (START_ORDER)."""
    items.sort(key=_start_rank)  # stable: a file's tests keep their order
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _BROWSER_FIXTURES and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        if fixtures & _BUILD_FIXTURES and not item.get_closest_marker("build"):
            item.add_marker(pytest.mark.build)
        path = Path(str(item.fspath))
        in_package = path.parent.name == "attention_lab"
        if (path.name in QUICK_FILES or in_package) and not any(
                item.get_closest_marker(m) for m in ("build", "browser", "slow")):
            item.add_marker(pytest.mark.quick)


def node_available() -> bool:
    return shutil.which("node") is not None


class BinderRoom:
    """The Binder env (``.venv-binder`` from binder/requirements.txt alone) and a user HOME after postBuild.

    ``with binder_env.jupyter("lab" | "notebook", root) as (base, token):`` starts a plain server
    (scripts/binder_env.py); ``binder_env.open_and_run(page, base, token, path, app)`` runs a notebook.
    """

    def __init__(self, env_dir: Path, home: Path):
        import binder_env as _be

        self.env_dir, self.home, self._be = env_dir, home, _be
        self.open_and_run = _be.open_and_run
        self.save_and_close = _be.save_and_close

    def jupyter(self, app: str, root: Path = ROOT):
        return self._be.running_jupyter(app, root, self.home, self.env_dir)

    def log(self) -> str:
        return self._be.server_log(self.home)


@pytest.fixture(scope="session")
def binder_env(tmp_path_factory) -> BinderRoom:
    """Session-wide Binder room: env made/reused by scripts/binder_env.py, postBuild run in a fresh HOME."""
    import binder_env as _be

    env_dir = _be.ensure_env()
    home = tmp_path_factory.mktemp("binder-home")
    _be.run_postbuild(env_dir, home)
    return BinderRoom(env_dir, home)

"""Shared fixtures: the built site, a local HTTP server for it, and headless Chromium.

* ``built_site``: builds the book once per test session with warnings as errors
  (or uses ``$F11_SITE_DIR`` when set to an already built ``_build/html``).
* ``site_url``: that site served on 127.0.0.1 by a real HTTP server.
* ``browser``: Debian's Chromium (found by ``scripts/find_chromium.py``, as
  ``scripts/test.sh`` finds it) driven by Playwright (never a downloaded browser); use ``new_page`` to get a page that records every request
  and console error.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """Path of the built site's html folder (``.../_build/html``)."""
    given = os.environ.get("F11_SITE_DIR")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("site")
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(ROOT), "--path-output", str(out), "--all",
           "--builder", "html", "-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    (out / "build.log").write_text(log)
    if proc.returncode != 0:
        pytest.fail(f"book build failed (exit {proc.returncode}):\n{log[-6000:]}")
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


@pytest.fixture
def new_page(browser):
    """Factory: ``new_page(width=1280, height=900, color_scheme="light", **context)`` -> PageRecorder."""
    contexts = []

    def make(width=1280, height=900, color_scheme="light", **context):
        """``context``: more Playwright context options (``has_touch=True, is_mobile=True`` ...)."""
        ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme,
                                  **context)
        contexts.append(ctx)
        return PageRecorder(ctx.new_page())

    yield make
    for ctx in contexts:
        ctx.close()


# ---------------------------------------------------------------- test tiers
#: Files of the quick tier (``-m quick``): pure Python and Node, no build, no browser, no fresh venv.
QUICK_FILES = {
    "test_core.py", "test_lab_headless.py", "test_worked.py", "test_verify_concepts.py", "test_twin_node.py",
    "test_dataflow.py", "test_chapter_examples.py", "test_fonts.py", "test_plotting.py", "test_requirements.py",
    "test_wording.py",
    "test_exercises.py",
}
#: A test asking for one of these fixtures needs the built site / Chromium, whatever its file says.
_BUILD_FIXTURES = {"built_site", "site_pages", "build_log", "site_url"}
_BROWSER_FIXTURES = {"browser", "new_page"}


def pytest_collection_modifyitems(config, items):
    """Put the tier marks on (registered in pyproject.toml): ``build`` and ``browser`` from the
    fixtures a test uses (so ``-m "not browser"`` never starts Chromium, even in a file that
    forgot its mark), ``quick`` on the quick files' tests and the package's doctests that
    need neither."""
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

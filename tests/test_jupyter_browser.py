"""The kernel lab in a real JupyterLab, driven by headless Chromium as a person would.

Starts ``jupyter lab`` from this venv on 127.0.0.1 (random free port, a token,
no browser) in a temporary copy of ``book/``, with Jupytext set as the default
viewer for ``.md`` the way ``binder/postBuild`` does it.  Opens ``lab.md`` as a
notebook, runs it, moves a slider with the keyboard and checks that the
heatmap picture and the numbers shown change to the core's values.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from attention_lab import attention
from attention_lab.params import default_params, tables_from_params
from attention_lab.worked import vec

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCREENSHOT = os.environ.get("F11_JUPYTER_SCREENSHOT")  # optional path: keep a 1024x768 picture


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory):
    """A running JupyterLab on a temporary copy of book/; yields (base_url, token)."""
    home = tmp_path_factory.mktemp("jupyter")
    root = home / "book"
    shutil.copytree(ROOT / "book", root, ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
    env = dict(os.environ)
    env.update({
        "JUPYTER_CONFIG_DIR": str(home / "config"),  # nothing from the user's ~/.jupyter
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
    })
    # What binder/postBuild does: .md opens as a notebook (Jupytext's default-viewer setting).
    subprocess.run([str(BIN / "jupytext-config"), "set-default-viewer", "markdown", "myst"],
                   env=env, check=True, capture_output=True)
    port, token = free_port(), secrets.token_hex(16)
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(
        [str(BIN / "jupyter-lab"), "--no-browser", "--allow-root",  # CI containers often run as root
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True",  # lets the test run "Run All Cells" as the menu does
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("jupyter lab did not start:\n" + (home / "server.log").read_text()[-3000:])
            time.sleep(0.3)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def image_digest(page, selector: str) -> str:
    """SHA-256 of the bytes behind an <img>'s src (ipywidgets uses blob: URLs)."""
    data = page.evaluate(
        """async (sel) => {
            const img = document.querySelector(sel);
            const buf = await (await fetch(img.src)).arrayBuffer();
            return Array.from(new Uint8Array(buf));
        }""", selector)
    return hashlib.sha256(bytes(data)).hexdigest()


def shown_line(page, prefix: str) -> str:
    return page.evaluate(
        """(prefix) => [...document.querySelectorAll('.f11-lab .f11-worked div')]
            .map(d => d.textContent).find(t => t.startsWith(prefix)) || ''""", prefix)


@pytest.mark.browser
def test_lab_md_opens_as_a_notebook_and_the_keyboard_moves_the_heatmaps(jupyter_lab, new_page):
    base, token = jupyter_lab
    rec = new_page(width=1024, height=768)
    page = rec.page
    page.set_default_timeout(60_000)
    page.goto(f"{base}/lab/tree/lab.md?token={token}")
    # Opened by Jupytext as a notebook (not the text editor), with its kernel.
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    heatmap = ".f11-lab img"
    page.wait_for_selector(heatmap)
    page.wait_for_function("(sel) => { const i = document.querySelector(sel); return i && i.src && i.naturalWidth > 0; }",
                           arg=heatmap)
    page.wait_for_function("() => [...document.querySelectorAll('.f11-lab .f11-worked div')].length > 10")
    params = default_params()
    base_shares = vec(attention(**tables_from_params(params)).A[1])
    assert shown_line(page, "除以总和：") == f"除以总和：{base_shares}"
    before = image_digest(page, heatmap)

    # Focus the Wq[0,0] slider's handle and press the arrow key, as a person would.
    handle = page.locator(".f11-param-Wq-0-0 .noUi-handle")
    handle.focus()
    page.keyboard.press("ArrowRight")
    params["Wq[0,0]"] = round(params["Wq[0,0]"] + 0.05, 10)
    expected = attention(**tables_from_params(params))
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('.f11-lab .f11-worked div')].some(d => d.textContent === want)",
        arg=f"除以总和：{vec(expected.A[1])}")
    assert shown_line(page, "“爱”位置的注意力输出") .endswith(vec(expected.O[1]))
    after = before
    deadline = time.monotonic() + 20
    while after == before and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        after = image_digest(page, heatmap)
    assert after != before, "the heatmap picture did not change"
    readout = page.locator(".f11-param-Wq-0-0 .widget-readout").inner_text()
    assert float(readout) == pytest.approx(params["Wq[0,0]"])

    if SCREENSHOT:  # what a class sees on a 1024x768 projector, file browser folded away
        page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
        page.wait_for_timeout(500)
        page.locator(".f11-lab").scroll_into_view_if_needed()
        page.evaluate("() => document.querySelector('.f11-lab').scrollIntoView()")
        page.wait_for_timeout(300)
        page.screenshot(path=SCREENSHOT)
        page.evaluate("() => document.querySelector('.f11-lab .f11-worked').scrollIntoView()")
        page.wait_for_timeout(300)
        page.screenshot(path=SCREENSHOT.replace(".png", "-2.png"))

    # And back: ArrowLeft returns to the chapter's numbers.
    handle.focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('.f11-lab .f11-worked div')].some(d => d.textContent === want)",
        arg=f"除以总和：{base_shares}")
    assert "0.6697615493" in shown_line(page, "除以总和：")
    assert not rec.page_errors

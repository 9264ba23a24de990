"""A real JupyterLab from this venv on 127.0.0.1, for tests/test_jupyter_browser.py and scripts/bench.py.

Random free port, a token, no browser, an empty temporary Jupyter home (nothing from
the user's ~/.jupyter), Jupytext as the default viewer for ``.md`` (as binder/postBuild
does it), and ``expose_app_in_browser`` so a driver can run "Run All Cells" as the menu does.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_env(home: Path) -> dict:
    env = dict(os.environ)
    env.update({
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
    })
    return env


@contextmanager
def running_jupyterlab(root: Path, home: Path, timeout: float = 90):
    """Start ``jupyter lab`` serving ``root``; yields ``(base_url, token)``; stops it afterwards.

    Raises ``RuntimeError`` with the end of the server log if it does not answer in time.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = jupyter_env(home)
    subprocess.run([str(BIN / "jupytext-config"), "set-default-viewer", "markdown", "myst"],
                   env=env, check=True, capture_output=True)
    port, token = free_port(), secrets.token_hex(16)
    log_path = home / "server.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [str(BIN / "jupyter-lab"), "--no-browser", "--allow-root",  # CI containers often run as root
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError("jupyter lab did not start:\n" + log_path.read_text()[-3000:])
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


def open_and_run(page, base: str, token: str, path: str) -> None:
    """Open ``path`` (relative to the server root) as a notebook and run all its cells."""
    page.goto(f"{base}/lab/tree/{path}?token={token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

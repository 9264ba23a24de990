"""The Binder room on this machine: an env from ``binder/requirements.txt`` alone, ``postBuild``, a plain server.

For tests (``binder_env`` fixture in tests/conftest.py) and scripts that must see what a Binder
reader sees, not what the project's own test venv happens to have:

* :func:`ensure_env` makes (or reuses) ``.venv-binder/`` from ``binder/requirements.txt`` ALONE,
  installed as repo2docker does (``pip install -r binder/requirements.txt`` from the repository
  root, so ``-e .`` is this repository), from public PyPI (this machine's pip configuration and
  local wheel folders are ignored).  It is rebuilt when the lock's sha256 changes.
* :func:`run_postbuild` runs ``binder/postBuild`` as Binder's user would: a fresh HOME (and no
  JUPYTER_*/XDG_* variables pointing elsewhere), the env's ``bin`` first on PATH, cwd = the repo.
* :func:`running_jupyter` starts a PLAIN ``jupyter lab`` / ``jupyter notebook`` from that env
  with that HOME: address, port, token, root dir, no browser, ``--allow-root`` (CI containers run
  as root) and ``expose_app_in_browser`` (so a driver can run commands as the menus do).  Nothing
  about news, update checks or viewers: those must come from postBuild, as on Binder.
* :func:`open_and_run` opens a notebook (``book/*.md`` through Jupytext) in JupyterLab or
  Notebook 7 and runs all its cells.

    python3 scripts/binder_env.py            # make/refresh the env, print its path
    python3 scripts/binder_env.py lab        # ... and serve the repository as a Binder would
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import venv
from pathlib import Path
from typing import Iterator, Literal

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "binder" / "requirements.txt"
POSTBUILD = ROOT / "binder" / "postBuild"
#: Where the env lives (gitignored); ``$F11_BINDER_VENV`` moves it.
DEFAULT_VENV = Path(os.environ.get("F11_BINDER_VENV", ROOT / ".venv-binder"))
INDEX = "https://pypi.org/simple"
STAMP = "f11-binder-lock.sha256"  # inside the env: the sha256 of the lock it was installed from

App = Literal["lab", "notebook"]


def lock_hash() -> str:
    return hashlib.sha256(LOCK.read_bytes()).hexdigest()


def clean_pip_env() -> dict[str, str]:
    """os.environ without pip settings (local wheel folders, extra indexes): public PyPI only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=INDEX, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def ensure_env(path: Path = DEFAULT_VENV, quiet: bool = True) -> Path:
    """The Binder env at ``path``, (re)installed from binder/requirements.txt if its lock hash changed.

    Safe to call from several processes at once (a file lock beside the env).  Returns ``path``.
    Raises ``RuntimeError`` with the end of pip's output if the install fails.
    """
    path = Path(path)
    want = lock_hash()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / (path.name + ".lock"), "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        stamp = path / STAMP
        if stamp.exists() and stamp.read_text().strip() == want and (path / "bin" / "jupyter-lab").exists():
            return path
        print(f"binder_env: installing binder/requirements.txt into {path} (a few minutes)", file=sys.stderr)
        if path.exists():
            shutil.rmtree(path)
        venv.create(path, with_pip=True, symlinks=True)
        cmd = [str(path / "bin" / "python"), "-m", "pip", "install", "--no-input",
               "-r", str(LOCK.relative_to(ROOT))]
        if quiet:
            cmd.append("-q")
        # From the repository root, as repo2docker runs it: "-e ." is this repository.
        done = subprocess.run(cmd, cwd=ROOT, env=clean_pip_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("pip install -r binder/requirements.txt failed:\n"
                               + (done.stdout + done.stderr)[-4000:])
        stamp.write_text(want + "\n")
    return path


def binder_user_env(env_dir: Path, home: Path) -> dict[str, str]:
    """The environment of Binder's user: HOME=home, the env's bin first, nothing redirecting Jupyter."""
    drop = ("JUPYTER", "JUPYTERLAB", "IPYTHON", "XDG_", "MPLCONFIGDIR", "PYTHONPATH", "VIRTUAL_ENV", "PIP_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(home), PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               VIRTUAL_ENV=str(env_dir))
    return env


def run_postbuild(env_dir: Path, home: Path) -> dict[str, str]:
    """Run binder/postBuild for a fresh user with HOME=``home``; returns that user's environment.

    Raises ``RuntimeError`` with postBuild's output if it fails.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = binder_user_env(env_dir, home)
    done = subprocess.run(["bash", str(POSTBUILD)], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"binder/postBuild failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_jupyter(app: App, root: Path, home: Path, env_dir: Path = DEFAULT_VENV,
                    timeout: float = 90) -> Iterator[tuple[str, str]]:
    """Start a plain ``jupyter lab`` or ``jupyter notebook`` from the Binder env; yields ``(base_url, token)``.

    ``home`` is the user's HOME, prepared by :func:`run_postbuild`.  The server serves ``root``.
    Raises ``RuntimeError`` with the end of the server log if it does not answer in time.
    """
    if app not in ("lab", "notebook"):
        raise ValueError(f"app must be 'lab' or 'notebook', not {app!r}")
    env = binder_user_env(env_dir, home)
    # Each Binder launch is a new container: no workspace of an earlier server's is restored (JupyterLab
    # would reopen, say, book/lab-slow.md from the last test file over the notebook a test opens).
    shutil.rmtree(home / ".jupyter" / "lab" / "workspaces", ignore_errors=True)
    port, token = free_port(), secrets.token_hex(16)
    expose = "--LabApp.expose_app_in_browser=True" if app == "lab" else "--JupyterNotebookApp.expose_app_in_browser=True"
    log_path = home / f"jupyter-{app}-{port}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(env_dir / "bin" / f"jupyter-{app}"), "--no-browser", "--allow-root",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", expose],
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
                    raise RuntimeError(f"jupyter {app} did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.3)
            yield base, token
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def server_log(home: Path) -> str:
    """Every server log written under ``home`` (for a failing test's message)."""
    return "\n".join(p.read_text()[-3000:] for p in sorted(home.glob("jupyter-*.log")))


#: The notebook panel the app shows: JupyterLab's current widget, or Notebook 7's only one.
CURRENT = "(window.jupyterapp && window.jupyterapp.shell.currentWidget)"
KERNEL_READY = (f"() => {CURRENT} && {CURRENT}.sessionContext && {CURRENT}.sessionContext.session"
                f" && {CURRENT}.sessionContext.session.kernel && {CURRENT}.context.isReady")


def notebook_url(base: str, token: str, path: str, app: App) -> str:
    """The URL that opens ``path`` (relative to the root) as a notebook: Lab's tree, Notebook 7's notebooks page.

    JupyterLab's URL resets the workspace, so notebooks closed earlier are not reopened with it.
    """
    if app == "lab":
        return f"{base}/lab/tree/{path}?reset&token={token}"
    return f"{base}/notebooks/{path}?token={token}"


def open_and_run(page, base: str, token: str, path: str, app: App = "lab", timeout: float = 120) -> None:
    """Open ``path`` as a notebook in JupyterLab or Notebook 7, run all cells, wait until they ran.

    ``page`` is a Playwright page; returns when "Run All" has finished and the kernel is idle.
    """
    ms = timeout * 1000
    page.goto(notebook_url(base, token, path, app))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=ms)
    page.wait_for_function(f"p => {CURRENT} && {CURRENT}.context && {CURRENT}.context.path === p", arg=path, timeout=ms)
    page.wait_for_function(KERNEL_READY, timeout=ms)
    page.wait_for_function(f"() => {CURRENT}.sessionContext.session.kernel.status === 'idle'", timeout=ms)
    # The command's promise settles when every cell has run (NotebookActions.runAll).
    ok = page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    if ok is False:
        raise RuntimeError(f"Run All stopped on an error in {path}")
    page.wait_for_function(f"() => {CURRENT}.sessionContext.session.kernel.status === 'idle'", timeout=ms)


def kernel_json(page, code: str):
    """Run ``code`` in the current notebook's kernel (as a cell would, off the record) and return
    the JSON it prints; an error in the kernel raises ``RuntimeError`` with its message."""
    import json

    out = page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({ code, silent: false, store_history: false });
        let text = '';
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === 'stream') text += msg.content.text;
            if (msg.header.msg_type === 'error') text += 'ERROR ' + msg.content.evalue;
        };
        await future.done;
        return text;
    }""", code)
    if out.startswith("ERROR"):
        raise RuntimeError(f"the kernel raised: {out[6:]}")
    return json.loads(out)


def save_and_close(page, timeout: float = 30) -> None:
    """Save the current notebook as the menu does (Jupytext writes the .md), shut its kernel down, close it.

    If closing asks about unsaved changes (something changed the notebook after the save), the
    answer is "Save", as a reader would click: the file on disk then shows that change too.
    """
    ms = timeout * 1000
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !{CURRENT}.context.model.dirty", timeout=ms)
    page.evaluate(f"async () => {{ window.__f11_closing = {CURRENT}; await window.__f11_closing.sessionContext.shutdown(); }}")
    page.evaluate("() => { window.__f11_closed = window.__f11_closing.close(); }")
    save = page.locator(".jp-Dialog button", has_text=re.compile("^(Save|保存)$"))
    deadline = time.monotonic() + timeout
    while not page.evaluate("() => window.__f11_closing.isDisposed"):
        if save.count():
            save.first.click()
        if time.monotonic() > deadline:
            raise RuntimeError("the notebook did not close")
        page.wait_for_timeout(200)
    page.wait_for_function("() => !document.querySelector('.jp-Dialog')", timeout=ms)


def main(argv: list[str]) -> int:
    env_dir = ensure_env(quiet=False)
    print(env_dir)
    if argv[1:2] in (["lab"], ["notebook"]):
        home = Path(tempfile.mkdtemp(prefix="f11-binder-home-"))
        run_postbuild(env_dir, home)
        with running_jupyter(argv[1], ROOT, home, env_dir) as (base, token):
            print(f"{base}/{'lab' if argv[1] == 'lab' else 'tree'}?token={token}  (Ctrl+C stops)")
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Small Sphinx extension for this book's website.

Jupyter Book 1.x always loads sphinx-thebe, which injects an inline script that
declares ``const THEBE_JS_URL = "https://unpkg.com/..."``.  In this build that
script is added twice, and the second copy throws "Identifier 'THEBE_JS_URL' has
already been declared" in every reader's console.  Thebe (live code via Binder
from a CDN) is switched off here (``launch_buttons.thebe: false``) because
readers behind a firewall cannot load it, so its scripts are dropped from every
page: nothing on the site then refers to a CDN.

myst-nb also embeds the widget state that the build's kernel recorded (for the
ipywidgets HTML manager, which this site does not load: ``nb_ipywidgets_js`` is
empty and the lab cells show the JavaScript twin instead).  That state is dead
weight, about 170 KB of PNGs per page, so it is dropped too.
"""

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NOTEBOOK_DIR = "_notebooks"


def _is_unused(script) -> bool:
    attributes = getattr(script, "attributes", {})
    body = attributes.get("body", "") or ""
    return (
        "THEBE_JS_URL" in body
        or "sphinx-thebe." in str(script)
        or attributes.get("type") == WIDGET_STATE
    )


def drop_unused_scripts(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [s for s in context[key] if not _is_unused(s)]


#: The pure-Python wheels attention_lab needs beyond a plain Jupyter with numpy, matplotlib and
#: ipywidgets (Colab, a JupyterHub): shipped beside the notebooks so the install works offline.
DEPENDENCY_WHEELS = ("anywidget", "psygnal")

#: First cell of every downloadable notebook: installs the book's package where it is missing.
#: ``{files}`` are the wheels the site ships beside the notebook; ``{repository}`` a pip requirement.
INSTALL_CELL = """\
# 本书的 Python 包 attention_lab 不在这个 Jupyter 里时（例如 Colab、JupyterHub），先安装它。
# 离线安装：把本书网站 _notebooks/ 文件夹里与本笔记本并列的这几个文件下载到本笔记本所在的文件夹：
#   {files_comment}
# 这些文件都在时不需要网络；缺的依赖会从 PyPI 下载；没有 attention_lab 的 wheel 时从本书的代码仓库安装
# 构建这个笔记本时的那个版本（REPOSITORY 里固定的提交，不是会变的分支）。
# 已经装好时，这个单元什么也不做。
# Installs the book's package when missing: offline from the wheels beside this notebook, else online.
import email.parser
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

WHEELS = {files!r}
REPOSITORY = {repository!r}
NEEDS = {needs!r}  # what attention_lab requires (its metadata); the wheels above hold only some


class InstallFailed(Exception):
    \"\"\"One sentence saying what to do (IPython shows it without a traceback).\"\"\"

    def _render_traceback_(self):
        return [str(self)]


def _requirement(text):
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pip's own copy (pip is here: it does the installing)
        from pip._vendor.packaging.requirements import Requirement
    return Requirement(text)


def _key(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_requires(path):
    with zipfile.ZipFile(path) as wheel:
        meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(wheel.read(meta).decode("utf-8")).get_all("Requires-Dist") or []


def missing_packages(here):
    \"\"\"What installing attention_lab here still needs: each requirement (of attention_lab, and of
    every wheel in ``here`` it would use) that is neither installed at a version it accepts nor a
    wheel in ``here``, as pip writes it ("numpy>=1.24"; "（已装 1.21）" when too old).\"\"\"
    wheels = {{_key(w.name.split("-")[0]): w for w in sorted(here.glob("*.whl"))}}
    todo = list(_wheel_requires(wheels["attention-lab"]) if "attention-lab" in wheels else NEEDS)
    seen, named, missing = set(), set(), []
    while todo:
        req = _requirement(todo.pop(0))
        if req.marker is not None and not req.marker.evaluate({{"extra": ""}}):
            continue
        if str(req) in seen:
            continue
        seen.add(str(req))
        try:
            have = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            have = None
        if have is not None and req.specifier.contains(have, prereleases=True):
            continue
        wheel = wheels.get(_key(req.name))
        if wheel is not None and req.specifier.contains(wheel.name.split("-")[1], prereleases=True):
            todo.extend(_wheel_requires(wheel))
            continue
        if _key(req.name) not in named:  # one name once (ipywidgets>=8.1, not also anywidget's >=7.6)
            named.add(_key(req.name))
            missing.append(str(req) + ("" if have is None else "（已装 " + have + "）"))
    return missing


def install_attention_lab(here=Path.cwd()):
    local = sorted(here.glob("attention_lab-*.whl"))
    if not local and not REPOSITORY:
        raise InstallFailed("没能安装 attention_lab：请从本书网站的 _notebooks/ 文件夹下载 " + (WHEELS or ["attention_lab 的 wheel"])[0]
                            + "，放到本笔记本所在的文件夹 " + str(here) + "，然后重新运行这个单元。")
    source = str(local[-1]) if local else REPOSITORY
    print("正在安装 attention_lab：", source)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # Offline first, from the wheels in this folder; then with the package index.
    tries = [pip + ["--no-index", "--find-links", str(here), source]] if local else []
    tries.append(pip + ["--find-links", str(here), source])
    for cmd in tries:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode == 0:
            importlib.invalidate_caches()
            print("安装好了。请刷新浏览器页面（F5，Mac 上 ⌘R），再点“运行全部”（Run All）：刚装好的控件要等页面"
                  "重新载入后才显示，不刷新时实验台会一直显示“实验台正在加载……”。")
            return
    missing = [name for name in WHEELS if not (here / name).exists()]
    print(done.stdout[-1500:] + done.stderr[-1500:], file=sys.stderr)  # pip's own report, for the curious
    # Installed neither here nor as a wheel beside the notebook: pip needs the package index for these
    # (but for the book's own wheels not downloaded yet, named first).
    fetch = {{_key(name.split("-")[0]) for name in missing}}
    absent = [a for a in missing_packages(here) if _key(_requirement(a.split("（")[0]).name) not in fetch]
    pip_line = "pip install " + " ".join('"' + a.split("（")[0] + '"' for a in absent)
    if missing:
        raise InstallFailed("没能安装 attention_lab：请从本书网站的 _notebooks/ 文件夹下载 " + "、".join(missing)
                            + "，放到本笔记本所在的文件夹 " + str(here) + "（或者连上网络）"
                            + ("；这个 Jupyter 里还缺 " + "、".join(absent) + "，要从 PyPI 下载（连上网络，或者先用 "
                               + pip_line + " 装好它们）" if absent else "") + "，然后重新运行这个单元。")
    if absent:
        raise InstallFailed("没能安装 attention_lab：还缺 " + "、".join(absent) + "（这个 Jupyter 里没有，" + str(here)
                            + " 里也没有它们的安装文件），要从 PyPI 下载：请连上网络，或者先用 " + pip_line
                            + " 装好它们，然后重新运行这个单元。")
    raise InstallFailed("没能安装 attention_lab：所需的文件都在 " + str(here)
                        + "，但 pip 仍然失败（原因见上面 pip 的输出），请连上网络或检查 pip 的设置后重新运行这个单元。")


if importlib.util.find_spec("attention_lab") is None:
    install_attention_lab()
"""


def repository_requirement(url: str, commit: str) -> str:
    """pip's requirement for the package at one commit of the book's repository:
    ``attention-lab @ git+URL@commit`` ("" without a URL or a commit: no online fallback).

    A commit, never a branch: a notebook downloaded today must install the code it was built
    with, not whatever ``main`` holds when the reader runs it."""
    url = url.rstrip("/")
    if not url or not commit:
        return ""
    if not url.startswith("git+"):
        url = "git+" + url
    return f"attention-lab @ {url}@{commit}"


def built_commit(root=None) -> str:
    """The commit the book is built from (``git rev-parse HEAD`` of the package's checkout), or ""
    when it is not a git checkout (a copy of the sources) or git is not there."""
    import subprocess

    root = root or package_root()
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = done.stdout.split()
    from pathlib import Path

    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != Path(root).resolve():
        return ""  # not this checkout's own repository (e.g. a copy inside another repository)
    return lines[1] if len(lines[1]) == 40 else ""


def package_requirements() -> list[str]:
    """attention_lab's requirements as its metadata states them (``numpy>=1.24``, ...; no extras)."""
    from importlib.metadata import requires

    return [req for req in requires("attention-lab") or [] if "extra ==" not in req]


def package_needs() -> list[str]:
    """The distributions attention_lab requires (its metadata's Requires-Dist names: numpy, ...)."""
    import re

    return [re.match(r"[A-Za-z0-9_.-]+", req).group(0) for req in package_requirements()]


def install_cell(repository: str, files, needs=None) -> str:
    """The source of the install cell (INSTALL_CELL) for these wheel file names and requirement."""
    files = list(files)
    return INSTALL_CELL.format(repository=repository, files=files, files_comment="\n#   ".join(files),
                               needs=list(package_requirements() if needs is None else needs))


#: Added to the install cell: the downloaded notebook's Jupyter reads plain Markdown, so the cells
#: that display Markdown (attention_lab.notebook.show_code_folded) write no MyST there.
PLAIN_MARKDOWN_LINE = ('\nimport os\n\nos.environ["F11_MARKDOWN"] = "plain"  '
                       '# this Jupyter may have no MyST: cells display plain Markdown\n')


def notebook_from_md(source, docname: str, repository: str, files=("attention_lab-0.1.0-py3-none-any.whl",),
                     plain=None):
    """The .ipynb readers download for a MyST notebook page (without outputs).

    The same code cells as the .md (less those tagged ``f11-jupyter-only``), after a first cell that
    installs ``attention_lab`` when it is missing: offline from ``files`` (wheel names the site ships beside the notebook), else
    online, with ``repository`` (a pip requirement) when the attention_lab wheel is not there.
    With ``plain`` (an ``f11_plain.Context``: what the build resolved for this page) the
    Markdown cells are plain Markdown, with the site's numbers, captions and references written
    out (``f11_plain.plain_notebook``); without it they stay MyST.
    """
    import jupytext
    import nbformat

    notebook = jupytext.read(source)
    # A plain .ipynb: no pairing with a .md that is not there, no Jupytext save filters (they only
    # say what Jupytext writes back into the .md), no myst-nb settings.
    notebook.metadata.pop("jupytext", None)
    notebook.metadata["f11"] = {
        "notice": f"Generated from {docname}.md when the book was built; edit the .md, not this file."}
    # A live notebook's stand-ins for what the site draws (figure_caption, tagged f11-jupyter-only) need
    # the book's .md beside them; a downloaded notebook has the captions written out instead (f11_plain).
    notebook.cells = [c for c in notebook.cells if "f11-jupyter-only" not in c.metadata.get("tags", [])]
    install = nbformat.v4.new_code_cell(install_cell(repository, files) + PLAIN_MARKDOWN_LINE)
    install.metadata["tags"] = ["install-attention-lab"]
    notebook.cells.insert(0, install)
    if plain is not None:
        import f11_plain

        notebook = f11_plain.plain_notebook(notebook, plain)
    return notebook


def package_root():
    """The folder with pyproject.toml and attention_lab/: this repository (or, for a copy of
    book/_ext used elsewhere, the folder the installed attention_lab was installed from)."""
    from pathlib import Path

    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").exists() and (here / "attention_lab").is_dir():
        return here
    import attention_lab

    return Path(attention_lab.__file__).resolve().parents[1]


def build_wheel(out_dir, root=None):
    """Build the attention_lab wheel into ``out_dir`` (from a clean copy of the sources); return its path.

    Uses setuptools' own build backend in a subprocess (no pip, no network), on a copy of
    pyproject.toml and attention_lab/, so the repository gets no build/ or egg-info folder.
    """
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(root) if root else package_root()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("attention_lab-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        shutil.copy(root / "pyproject.toml", src)
        shutil.copy(root / "LICENSE", src)  # pyproject's license-files: the wheel carries the MIT text
        shutil.copytree(root / "attention_lab", src / "attention_lab",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        code = "import sys, setuptools.build_meta as b; print(b.build_wheel(sys.argv[1]))"
        proc = subprocess.run([sys.executable, "-c", code, str(out_dir.resolve())], cwd=src,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building the attention_lab wheel failed:\n{proc.stderr[-3000:]}")
        return out_dir / proc.stdout.strip().splitlines()[-1]


def wheel_cache():
    """Where the first build keeps the shipped dependency wheels, so that later builds run offline:
    ``$F11_WHEEL_CACHE``, else ``$XDG_CACHE_HOME/f11-attention/wheels`` (``~/.cache/…``)."""
    import os
    from pathlib import Path

    given = os.environ.get("F11_WHEEL_CACHE")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "f11-attention" / "wheels"


def locked_wheel_hash(name, version, file):
    """The sha256 that ``uv.lock`` records for the wheel ``file`` of ``name==version`` (None: not locked)."""
    import tomllib

    lock = package_root() / "uv.lock"
    if not lock.exists():
        return None
    for package in tomllib.loads(lock.read_text("utf-8")).get("package", []):
        if package.get("name") == name and package.get("version") == version:
            for wheel in package.get("wheels", []):
                if wheel.get("url", "").rsplit("/", 1)[-1] == file:
                    return wheel.get("hash", "").removeprefix("sha256:") or None
    return None


def _sha256(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def dependency_wheels(out_dir, cache=None):
    """Put the pure-Python wheels of DEPENDENCY_WHEELS (the versions this build runs) into ``out_dir``.

    Each file must have the sha256 that ``uv.lock`` records for it.  Taken from ``out_dir`` or the
    cache (:func:`wheel_cache`) when there; otherwise downloaded once with pip as the user has it
    set up (their index, mirror, proxy or wheel folders: ``PIP_*``, pip.conf) and kept in the cache,
    so a second build needs no network.  Returns the file names.  Raises ``RuntimeError`` whose
    last line says which file is missing, why, and where to put it.
    """
    import os
    import shutil
    import subprocess
    import sys
    import tempfile
    from importlib.metadata import version
    from pathlib import Path

    out_dir = Path(out_dir)
    cache = Path(cache) if cache else wheel_cache()
    wanted = {name: f"{name}-{version(name)}-py3-none-any.whl" for name in DEPENDENCY_WHEELS}
    for old in out_dir.glob("*.whl"):
        if old.name not in wanted.values() and not old.name.startswith("attention_lab-"):
            old.unlink()
    hashes = {}
    for name, file in wanted.items():
        hashes[name] = locked_wheel_hash(name, version(name), file)
        if hashes[name] is None:
            raise RuntimeError(f"{file} is not in uv.lock (this build runs {name} {version(name)}, the lock has "
                               f"another version): install the lock's versions (bash scripts/build.sh), or lock again")
    good = lambda path, name: path.exists() and _sha256(path) == hashes[name]  # noqa: E731
    missing = []
    for name, file in wanted.items():
        if good(out_dir / file, name):
            continue
        if good(cache / file, name):
            shutil.copyfile(cache / file, out_dir / file)
        else:
            missing.append(name)
    if missing:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                   "--no-deps", "--only-binary=:all:", "--platform", "any", "--implementation", "py", "--dest", tmp]
            cmd += [f"{name}=={version(name)}" for name in missing]
            done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
            for name in missing:
                file, got = wanted[name], Path(tmp) / wanted[name]
                fetch = (f"pip download {name}=={version(name)} --no-deps --only-binary=:all: -d {cache}")
                if done.returncode != 0 or not got.exists():
                    why = (done.stderr.strip().splitlines() or ["pip gave no reason"])[-1]
                    raise RuntimeError(
                        f"pip could not download {file} (the downloadable notebooks install offline from it): "
                        f"{why}\n{file} is not in the cache {cache} either: on a machine with a connection run "
                        f"'{fetch}' (or copy the file there from a previous build's _build/html/{NOTEBOOK_DIR}/), "
                        f"then build again")
                if _sha256(got) != hashes[name]:
                    raise RuntimeError(f"{file} as downloaded does not have the sha256 uv.lock records for it "
                                       f"({hashes[name][:16]}…): the index or mirror gave another file; nothing was "
                                       f"shipped. Check the index pip uses (pip config list), then build again")
                try:
                    cache.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(got, cache / file)
                except OSError:
                    pass  # no cache where it cannot be written: the next build downloads again
                got.replace(out_dir / file)
    return list(wanted.values())


def write_ipynb(app, exc):
    """After a successful build: ``_notebooks/<page>.ipynb`` for every notebook page, and the wheel.

    For readers on Colab or a JupyterHub without Jupytext: the same cells as the
    ``.md`` page, generated from it on every build (never edited by hand), without
    outputs (the reader runs them), after a cell that installs ``attention_lab`` when
    missing: from ``attention_lab-*.whl`` and the wheels of its pure-Python dependencies
    (``DEPENDENCY_WHEELS``), written next to the notebooks (download them into one folder:
    works offline), else from the package index and the repository set in ``_config.yml``
    (``repository.url``) at the commit being built (:func:`built_commit`; none outside a git checkout).  The pages link to them.  A wheel that
    cannot be built or downloaded is a build warning (an error under ``-W``).
    """
    if exc is not None or app.builder.format != "html":
        return
    from pathlib import Path

    options = app.config.html_theme_options or {}
    # The fallback online install: the commit this site is built from (pages.yml builds pushed commits).
    repository = repository_requirement(options.get("repository_url", ""), built_commit())
    out_dir = Path(app.outdir) / NOTEBOOK_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    import jupytext
    from sphinx.util import logging

    # The package of this repository (next to book/_ext/), whatever book is being built.
    files = [build_wheel(out_dir).name]
    try:
        files += dependency_wheels(out_dir)
    except RuntimeError as error:
        logging.getLogger(__name__).warning(str(error))
    import f11_plain
    from attention_lab.shapes import SITE_SHAPES_PAGE

    def is_notebook(docname):
        source = Path(app.env.doc2path(docname))
        head = source.read_text("utf-8")[:600] if source.suffix == ".md" else ""
        return head.startswith("---") and "jupytext:" in head and "kernelspec:" in head

    notebooks = sorted(d for d in app.env.found_docs if is_notebook(d))
    site = SITE_SHAPES_PAGE.rsplit("book/shapes.html", 1)[0]  # the book's GitHub Pages root
    for docname in notebooks:
        source = Path(app.env.doc2path(docname))
        try:
            plain = f11_plain.context_from_sphinx(app, docname, notebooks, site)
            notebook = notebook_from_md(source, docname, repository, files, plain=plain)
        except f11_plain.PlainError as error:  # never ship raw MyST to a plain Jupyter
            logging.getLogger(__name__).warning(f"the downloaded {source.stem}.ipynb: {error}")
            continue
        jupytext.write(notebook, out_dir / f"{source.stem}.ipynb", fmt="ipynb")


def setup(app):
    app.connect("build-finished", write_ipynb)
    # After myst-nb's own html-page-context handler (priority 500) has added its scripts.
    app.connect("html-page-context", drop_unused_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

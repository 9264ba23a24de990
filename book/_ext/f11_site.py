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


#: First cell of every downloadable notebook: installs the book's package where it is missing.
INSTALL_CELL = """\
# 本书的 Python 包 attention_lab 不在这个 Jupyter 里时（例如 Colab、JupyterHub），先安装它：
# 优先用与本笔记本放在同一文件夹的 wheel 文件（网站上与 .ipynb 并列提供，离线也能装），
# 否则从本书的代码仓库安装。已经装好时，这个单元什么也不做。
# Installs the book's package when missing: from the wheel next to this notebook, else from the repository.
import importlib.util
import subprocess
import sys
from pathlib import Path

if importlib.util.find_spec("attention_lab") is None:
    wheels = sorted(Path.cwd().glob("attention_lab-*.whl"))
    source = str(wheels[-1]) if wheels else {repository!r}
    print("正在安装 attention_lab：", source)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", source], check=True)
    importlib.invalidate_caches()
"""


def repository_requirement(url: str, branch: str = "") -> str:
    """pip's name for the package in the book's repository: ``git+URL@branch``."""
    url = url.rstrip("/")
    if not url.startswith("git+"):
        url = "git+" + url
    return f"{url}@{branch}" if branch else url


def notebook_from_md(source, docname: str, repository: str):
    """The .ipynb readers download for a MyST notebook page (without outputs).

    The same cells as the .md, after a first cell that installs ``attention_lab`` when it is
    missing (from a wheel beside the notebook, else ``repository``, a pip requirement).
    """
    import jupytext
    import nbformat

    notebook = jupytext.read(source)
    # Opened as .ipynb, it must not ask to be paired with a .md that is not there.
    notebook.metadata.get("jupytext", {}).pop("text_representation", None)
    notebook.metadata.setdefault("jupytext", {})["notice"] = (
        f"Generated from {docname}.md when the book was built; edit the .md, not this file."
    )
    install = nbformat.v4.new_code_cell(INSTALL_CELL.format(repository=repository))
    install.metadata["tags"] = ["install-attention-lab"]
    notebook.cells.insert(0, install)
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


def write_ipynb(app, exc):
    """After a successful build: ``_notebooks/<page>.ipynb`` for every notebook page, and the wheel.

    For readers on Colab or a JupyterHub without Jupytext: the same cells as the
    ``.md`` page, generated from it on every build (never edited by hand), without
    outputs (the reader runs them), after a cell that installs ``attention_lab`` when
    missing: from ``attention_lab-*.whl``, which is written next to the notebooks
    (download both into one folder: works offline), else from the repository set in
    ``_config.yml`` (``repository.url``, ``repository.branch``).  The pages link to them.
    """
    if exc is not None or app.builder.format != "html":
        return
    from pathlib import Path

    options = app.config.html_theme_options or {}
    repository = repository_requirement(options.get("repository_url", ""), options.get("repository_branch", ""))
    out_dir = Path(app.outdir) / NOTEBOOK_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    import jupytext

    for docname in sorted(app.env.found_docs):
        source = Path(app.env.doc2path(docname))
        head = source.read_text("utf-8")[:600] if source.suffix == ".md" else ""
        if not (head.startswith("---") and "jupytext:" in head and "kernelspec:" in head):
            continue
        notebook = notebook_from_md(source, docname, repository)
        jupytext.write(notebook, out_dir / f"{source.stem}.ipynb", fmt="ipynb")
    # The package of this repository (next to book/_ext/), whatever book is being built.
    build_wheel(out_dir)


def setup(app):
    app.connect("build-finished", write_ipynb)
    # After myst-nb's own html-page-context handler (priority 500) has added its scripts.
    app.connect("html-page-context", drop_unused_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

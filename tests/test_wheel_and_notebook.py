"""Outside the repository: the wheel, and the notebooks the website offers for download.

* The wheel (``pip install .``) carries its data: strings_zh.json and the lab's JS/CSS.
* The chapter's .ipynb, as ``book/_ext/f11_site.py`` writes it for the site, runs alone
  in an empty folder next to the wheels the site ships beside it (attention_lab, anywidget,
  psygnal), in a fresh virtual environment that has only numpy, matplotlib, ipywidgets and
  ipykernel (a plain Jupyter: no attention_lab, no anywidget, no myst_nb, no jupytext), with
  the package index unreachable: its first cell installs attention_lab offline from the wheels.
* When a wheel the notebook names is not beside it, the install cell ends with one Chinese
  sentence naming the missing files (no traceback in IPython).
* Then ``AttentionLab()`` works in an empty folder from the installed wheel.

The venv is made once (module scope) with the build lock's versions; pip may use this
machine's own package settings (speed), but needs nothing beyond the package index.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

# Builds a wheel and a fresh venv with pip: the slow tier.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import f11_site  # noqa: E402

PACKAGES = ["numpy", "matplotlib", "ipywidgets", "ipykernel"]  # a plain Jupyter; anywidget comes from the wheels
REPOSITORY = "git+https://example.invalid/not-reachable"  # must not be needed: the wheel is beside


def offline_env(**extra) -> dict:
    """This environment with pip's package index unreachable (and no local wheel folders)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0",
               PIP_TIMEOUT="3", **extra)
    return env


@pytest.fixture(scope="module")
def shipped(wheel, tmp_path_factory) -> list[Path]:
    """What the site's _notebooks/ ships beside the notebooks: the attention_lab wheel and its dependencies'."""
    folder = wheel.parent
    return [wheel] + [folder / name for name in f11_site.dependency_wheels(folder)]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return f11_site.build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory) -> Path:
    """A new venv (no system site-packages) with only PACKAGES, at the build lock's versions."""
    home = tmp_path_factory.mktemp("fresh-venv")
    venv.create(home, with_pip=True, system_site_packages=False)
    python = home / "bin" / "python"
    pins = home / "pins.txt"
    # The lock's versions as constraints, without its hashes (a hash in a constraints file would put
    # pip in --require-hashes mode for the packages named here by name only).
    pins.write_text("".join(line.split(" \\")[0].rstrip() + "\n"
                            for line in (ROOT / "requirements.txt").read_text().splitlines()
                            if re.match(r"[A-Za-z0-9]", line) and "==" in line))
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(pins), *PACKAGES],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"pip could not make the fresh venv:\n{proc.stderr[-3000:]}"
    return python


def run_in(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(python), "-c", code], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


def test_wheel_carries_the_strings_and_the_lab_view(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "attention_lab/strings_zh.json" in names
    static = ROOT / "attention_lab" / "static" / "attention-lab"
    for f in static.iterdir():
        if f.is_file():
            assert f"attention_lab/static/attention-lab/{f.name}" in names, f"{f.name} is not in the wheel"


def test_downloaded_notebooks_install_offline_and_run_in_a_plain_jupyter_venv(wheel, shipped, fresh_python, tmp_path):
    for module in ("attention_lab", "anywidget"):
        assert run_in(fresh_python, f"import {module}", tmp_path).returncode != 0, f"the venv must start without {module}"
    folder = tmp_path / "downloads"
    folder.mkdir()
    for file in shipped:
        (folder / file.name).write_bytes(file.read_bytes())
    names = []
    for page in ("f11-attention", "lab", "exercises"):
        notebook = f11_site.notebook_from_md(ROOT / "book" / f"{page}.md", f"book/{page}", REPOSITORY,
                                             [f.name for f in shipped])
        (folder / f"{page}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        names.append(f"{page}.ipynb")
    # A kernel that runs in the fresh venv; the runner (nbconvert) is this test's own environment.
    kernels = tmp_path / "jupyter" / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(fresh_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh venv", "language": "python"}))
    env = offline_env(JUPYTER_PATH=str(tmp_path / "jupyter"))  # the kernel's pip cannot reach any index
    for name in names:  # the install cell of the first one installs the wheel; the second finds it
        proc = subprocess.run(
            [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
             "--ExecutePreprocessor.kernel_name=fresh", "--ExecutePreprocessor.timeout=600", name],
            cwd=folder, capture_output=True, text=True, env=env, timeout=900)
        assert proc.returncode == 0, f"{name} failed in a plain venv:\n{proc.stderr[-6000:]}"
    chapter = json.loads((folder / "f11-attention.ipynb").read_text(encoding="utf-8"))
    text = (out.get("text", "") for out in chapter["cells"][0].get("outputs", []))
    first = "".join("".join(t) if isinstance(t, list) else t for t in text)  # .ipynb may split text into lines
    assert "正在安装 attention_lab" in first and wheel.name in first
    images = [o for c in chapter["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})
              or "image/svg+xml" in o.get("data", {})]
    assert images, "the chapter's figures were not drawn"
    # What its cells display is plain Markdown too (a plain Jupyter has no MyST): the folded code box
    # is an HTML <details>, not a {dropdown}.
    shown = ["".join(o["data"]["text/markdown"]) for c in chapter["cells"] for o in c.get("outputs", [])
             if "text/markdown" in o.get("data", {})]
    assert shown and not [t for t in shown if re.search(r"^:::|\{[a-z-]+\}`", t, re.M)], shown
    assert any(t.startswith("<details>") for t in shown)
    where = run_in(fresh_python, "import attention_lab; print(attention_lab.__file__)", tmp_path)
    assert str(fresh_python.parents[1]) in where.stdout, f"attention_lab came from elsewhere: {where.stdout}"


def test_attention_lab_from_the_installed_wheel_works_in_an_empty_folder(wheel, fresh_python, tmp_path):
    installed = run_in(fresh_python, "import attention_lab", tmp_path).returncode == 0
    if not installed:
        proc = subprocess.run([str(fresh_python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    code = """
import attention_lab, pathlib
from attention_lab import AttentionLab
from attention_lab import web, widget
lab = AttentionLab()
assert "site-packages" in attention_lab.__file__, attention_lab.__file__
assert web.strings()["worked"], "strings_zh.json is empty"
static = pathlib.Path(attention_lab.__file__).parent / "static" / "attention-lab"
sizes = {name: (static / name).stat().st_size for name in web.TWIN_JS + web.TWIN_CSS}
assert "AttentionLabRender" in widget.esm_source() and widget.css_source()
print("ok", sizes)
"""
    proc = run_in(fresh_python, code, tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stderr[-3000:]


def test_the_online_fallback_is_pinned_to_the_built_commit_not_a_branch(tmp_path):
    from packaging.requirements import Requirement

    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert f11_site.built_commit(ROOT) == head
    url = "https://github.com/f11-attention/f11-attention-book"
    requirement = Requirement(f11_site.repository_requirement(url, head))  # pip's own syntax (PEP 508)
    assert requirement.name == "attention-lab" and requirement.url == f"git+{url}@{head}"
    # A copy of the sources (no git checkout of its own): no fallback rather than a moving branch.
    (tmp_path / "pyproject.toml").write_text("")
    assert f11_site.built_commit(tmp_path) == "" and f11_site.repository_requirement(url, "") == ""


def test_without_the_wheel_or_a_pinned_commit_the_install_names_the_wheel_to_download(tmp_path):
    names = ["attention_lab-0.1.0-py3-none-any.whl", "anywidget-0.11.0-py3-none-any.whl"]
    namespace = {}
    exec(f11_site.install_cell("", names).replace('if importlib.util.find_spec("attention_lab") is None:', "if False:"),
         namespace)
    with pytest.raises(namespace["InstallFailed"]) as failed:
        namespace["install_attention_lab"](tmp_path)  # raises before any pip: nothing to install from
    said = str(failed.value)
    assert said.startswith("没能安装 attention_lab：请从本书网站的 _notebooks/ 文件夹下载 " + names[0]), said
    assert str(tmp_path) in said


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """A venv with nothing but pip (the install cell needs no more)."""
    home = tmp_path_factory.mktemp("bare-venv")
    venv.create(home, with_pip=True, system_site_packages=False)
    return home / "bin" / "python"


@pytest.mark.parametrize("beside", [["attention_lab"], []], ids=["only-the-attention-lab-wheel", "no-wheel"])
def test_a_failed_install_says_in_one_chinese_sentence_which_files_to_put_beside(beside, wheel, shipped, bare_python,
                                                                                 tmp_path):
    names = [f.name for f in shipped]
    for file in shipped:
        if file.name.split("-")[0] in beside:
            (tmp_path / file.name).write_bytes(file.read_bytes())
    cell = f11_site.install_cell(REPOSITORY, names)
    proc = subprocess.run([str(bare_python), "-c", cell], cwd=tmp_path, capture_output=True, text=True,
                          env=offline_env(), timeout=300)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("InstallFailed: 没能安装 attention_lab：请从本书网站的 _notebooks/ 文件夹下载 "), last
    missing = [n for n in names if n.split("-")[0] not in beside]
    assert all(n in last for n in missing) and not any(n in last for n in names if n not in missing), last
    # What pip must download besides (the bare venv has none of them) is named in the same sentence.
    assert all(req in last for req in f11_site.package_requirements() if req.split(">")[0] not in f11_site.DEPENDENCY_WHEELS), last
    assert str(tmp_path) in last and last.endswith("然后重新运行这个单元。")
    # In IPython (a notebook) that sentence is all the error shows: no traceback.
    namespace = {}
    exec(cell.replace('if importlib.util.find_spec("attention_lab") is None:', "if False:"), namespace)
    assert namespace["InstallFailed"]("一句话。")._render_traceback_() == ["一句话。"]


def test_with_every_wheel_beside_it_offline_the_install_names_the_packages_pip_must_download(wheel, shipped,
                                                                                              bare_python, tmp_path):
    """The wheels beside the notebook are only attention_lab's pure-Python ones; numpy, matplotlib and
    ipywidgets (in every Jupyter that Colab or a JupyterHub gives) are named, not "pip failed"."""
    names = [f.name for f in shipped]
    for file in shipped:
        (tmp_path / file.name).write_bytes(file.read_bytes())
    proc = subprocess.run([str(bare_python), "-c", f11_site.install_cell(REPOSITORY, names)], cwd=tmp_path,
                          capture_output=True, text=True, env=offline_env(), timeout=300)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("InstallFailed: 没能安装 attention_lab：还缺 "), last
    named = last.split("还缺 ", 1)[1].split("（这个", 1)[0].split("、")
    # Exactly what is missing (issue 27, item 6): attention_lab's own requirements as its metadata
    # writes them, with what the wheels beside it need that the bare venv lacks; none of those wheels.
    for req in f11_site.package_requirements():
        assert (req in named) == (req.split(">")[0] not in f11_site.DEPENDENCY_WHEELS), (req, last)
    from packaging.requirements import Requirement

    beside = {Requirement(r).name for w in shipped for r in wheel_requires(w)} | set(f11_site.package_needs())
    assert {Requirement(r).name for r in named} <= beside - set(f11_site.DEPENDENCY_WHEELS), last
    assert 'pip install "numpy>=' in last and last.endswith("然后重新运行这个单元。"), last
    assert len({Requirement(r).name for r in named}) == len(named), last  # each package named once


def wheel_requires(path: Path) -> list[str]:
    import email.parser
    import zipfile

    with zipfile.ZipFile(path) as wheel:
        meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(wheel.read(meta).decode()).get_all("Requires-Dist") or []


def fake_wheel(folder: Path, name: str, version: str, requires: list[str]) -> Path:
    import zipfile

    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        meta = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n".format(name, version)
        wheel.writestr(f"{name}-{version}.dist-info/METADATA", meta + "".join(f"Requires-Dist: {r}\n" for r in requires))
    return path


def test_the_install_cell_names_exactly_what_is_missing_and_asks_for_a_reload_once_installed(tmp_path):
    """missing_packages walks attention_lab's requirements through the wheels beside the notebook:
    what is installed at an accepted version, or a wheel there, is not named; a marker that does not
    apply is skipped; an installed version too old is named with the version found.  A successful
    install says to reload the page (the new widget's front end loads only then)."""
    numpy = __import__("importlib.metadata").metadata.version("numpy")
    fake_wheel(tmp_path, "attention_lab", "0.1.0", ["numpy>=1.0", "f11-dep>=0.9", "f11-not-here-a>=1",
                                                    "f11-never-x; python_version < '3'"])
    fake_wheel(tmp_path, "f11_dep", "0.11.0", ["f11-sub>=0.8", "f11-not-here-b", "f11-never-y; extra == 'dev'", "numpy>=999"])
    fake_wheel(tmp_path, "f11_sub", "0.15.0", ["f11-not-here-a>=1"])
    namespace = {}
    cell = f11_site.install_cell("", [])
    exec(cell.replace('if importlib.util.find_spec("attention_lab") is None:', "if False:"), namespace)
    missing = namespace["missing_packages"]
    assert missing(tmp_path) == ["f11-not-here-a>=1", "f11-not-here-b", f"numpy>=999（已装 {numpy}）"]
    (tmp_path / "f11_dep-0.11.0-py3-none-any.whl").unlink()
    fake_wheel(tmp_path, "f11_dep", "0.8.0", [])  # too old for attention_lab: as if none were there
    assert missing(tmp_path) == ["f11-dep>=0.9", "f11-not-here-a>=1"]
    assert "请刷新浏览器页面" in cell and "实验台正在加载" in cell

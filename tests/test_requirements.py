"""One lock: uv.lock agrees with pyproject.toml, and every requirement file is its export.

What is needed is written once, in ``pyproject.toml`` (the package's dependencies and the
dependency groups docs / binder / test / torch); ``scripts/lock.py`` resolves it with uv into
``uv.lock`` and exports the files that pip installs (scripts/build.sh, scripts/test.sh, Binder).
These checks need no network: uv runs ``--offline`` / ``--frozen`` with an empty cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import lock  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCKED = {name: {p["version"] for p in pkgs} for name, pkgs in lock.locked_packages().items()}
#: what the book builder and the tests bring, none of which Binder needs (repo2docker installs it all)
NOT_FOR_BINDER = ("sphinx", "docutils", "jupyter-book", "myst-nb", "myst-parser", "pydata-sphinx-theme",
                  "jupyter-cache", "latex2mathml", "jieba", "playwright", "pytest", "pypdf", "torch", "uv")


@pytest.fixture(scope="module")
def uv(tmp_path_factory) -> tuple[str, dict]:
    """The test group's uv (the version pyproject.toml requires), offline with an empty cache."""
    try:
        binary = lock.find_uv()
    except SystemExit as missing:
        pytest.fail(f"{missing} (uv is part of requirements-test.txt)")
    env = {**lock.clean_env(), "UV_OFFLINE": "1", "UV_CACHE_DIR": str(tmp_path_factory.mktemp("uv-cache"))}
    return binary, env


def run_uv(uv, *args) -> subprocess.CompletedProcess:
    binary, env = uv
    return subprocess.run([binary, *args, "--python", sys.executable], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def pins(name: str) -> list[tuple[str, str, str]]:
    """(package, version, marker) of every requirement line of an exported file; '-e .' is ('-e', '.', '')."""
    out = []
    for line in (ROOT / name).read_text().replace("\\\n", " ").splitlines():  # a pin and its --hash lines are one
        line = line.split(" #", 1)[0].split(" --hash=", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-e "):
            out.append(("-e", line[3:].strip(), ""))
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{name}: {line} is not an exact pin"
        out.append((canonicalize_name(req.name), spec.version, str(req.marker or "")))
    return out


def names(name: str) -> set[str]:
    return {pkg for pkg, _, _ in pins(name) if pkg != "-e"}


def test_the_lock_agrees_with_pyproject(uv):
    run = run_uv(uv, "lock", "--check")
    assert run.returncode == 0, (
        f"uv.lock is out of date with pyproject.toml: run {lock.COMMAND}\n{run.stderr[-2000:]}")


@pytest.mark.parametrize("name", sorted(lock.EXPORTS))
def test_each_requirement_file_is_the_export_of_the_lock(uv, name):
    run = run_uv(uv, *lock.export_args(name))
    assert run.returncode == 0, run.stderr
    assert (ROOT / name).read_text() == lock.header(name) + run.stdout, (
        f"{name} is not what uv export gives from uv.lock: run {lock.COMMAND} (never edit it by hand)")


@pytest.mark.parametrize("name", sorted(lock.EXPORTS))
def test_every_pin_in_every_exported_file_matches_the_lock(name):
    for pkg, version, _ in pins(name):
        if pkg == "-e":
            continue
        assert version in LOCKED.get(pkg, ()), f"{name} pins {pkg}=={version}; uv.lock has {LOCKED.get(pkg)}"


def test_the_lock_holds_only_pypi_releases_and_this_checkout():
    for pkgs in lock.locked_packages().values():
        for pkg in pkgs:
            assert pkg.get("source") in ({"registry": lock.INDEX}, {"editable": "."}), (
                f"uv.lock takes {pkg['name']} from {pkg.get('source')}: only {lock.INDEX} (PyPI) and this checkout")
    for name in lock.EXPORTS:
        text = (ROOT / name).read_text()
        assert "file:" not in text and "--find-links" not in text and "--index-url" not in text, name


def hashes(name: str) -> dict[str, set[str]]:
    """{package==version: its --hash values} of a hash-checked exported file."""
    out = {}
    for entry in (ROOT / name).read_text().replace("\\\n", " ").splitlines():
        head = entry.split(" #", 1)[0].split(" --hash=", 1)[0].split(";", 1)[0].strip()
        if head and not head.startswith("#"):
            out[head] = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", entry))
    return out


@pytest.mark.parametrize("name", lock.HASHED)
def test_the_set_up_files_carry_the_locks_hashes_and_install_the_project_apart(name):
    """pip installs them in hash-checking mode: every pin carries exactly the sha256 values uv.lock
    records for that version (its wheels and sdist); the project, which cannot be hashed, is not
    in them, and the set-up installs it after them (ensure_venv ... project)."""
    locked = {}
    for pkgs in lock.locked_packages().values():
        for pkg in pkgs:
            files = pkg.get("wheels", []) + ([pkg["sdist"]] if "sdist" in pkg else [])
            locked[f"{pkg['name']}=={pkg.get('version')}"] = {f["hash"].removeprefix("sha256:") for f in files}
    got = hashes(name)
    assert got and all(got.values()), [k for k, v in got.items() if not v]
    for pin, values in got.items():
        assert values == locked[canonicalize_name(pin.split("==")[0]) + "==" + pin.split("==")[1]], pin
    assert not [p for p in pins(name) if p[0] in ("-e", "attention-lab")], f"{name} must not name the project"
    script = {"requirements.txt": "build.sh", "requirements-test.txt": "test.sh"}[name]
    assert f"ensure_venv {name} project\n" in (ROOT / "scripts" / script).read_text()


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-test.txt", "binder/requirements.txt"])
def test_the_package_and_its_groups_direct_requirements_are_installed(name):
    group = lock.EXPORTS[name][-1]
    exported = pins(name)
    if name not in lock.HASHED:  # the hashed files leave the project to the set-up (test above)
        assert ("-e", ".", "") in exported, f"{name} must install this repository's package (-e .)"
    wanted = [r for r in PYPROJECT["dependency-groups"][group] if isinstance(r, str)]
    wanted += [r for inc in PYPROJECT["dependency-groups"][group] if isinstance(inc, dict)
               for r in PYPROJECT["dependency-groups"][inc["include-group"]] if isinstance(r, str)]
    for req in map(Requirement, PYPROJECT["project"]["dependencies"] + wanted):
        versions = [v for pkg, v, _ in exported if pkg == canonicalize_name(req.name)]
        assert versions and all(req.specifier.contains(v, prereleases=True) for v in versions), (
            f"{name} needs {req} (pyproject.toml); it pins {versions}")


def test_binder_gets_the_notebooks_jupyter_and_not_the_book_builder_or_test_tools():
    binder = names("binder/requirements.txt")
    assert not binder & set(NOT_FOR_BINDER), f"Binder would install {sorted(binder & set(NOT_FOR_BINDER))}"
    assert not any(p.startswith("sphinx") for p in binder), sorted(p for p in binder if p.startswith("sphinx"))
    for needed in ("jupyterlab", "jupyterlab-myst", "notebook", "jupytext", "ipykernel", "ipywidgets", "anywidget"):
        assert needed in binder, f"Binder needs {needed}"


@pytest.mark.parametrize("name", ["requirements.txt", "binder/requirements.txt"])
def test_the_build_and_binder_install_what_the_tests_ran(name):
    # Markers may differ (the build needs cffi only on PyPy; the tests' Jupyter needs it everywhere), versions may not.
    test = {(p, v) for p, v, _ in pins("requirements-test.txt")}
    untested = sorted({(p, v) for p, v, _ in pins(name) if p != "-e"} - test)  # the project: test.sh installs it apart
    assert not untested, f"in {name} but not in requirements-test.txt at that version: {untested}"


def test_the_torch_file_is_the_cpu_part_only_and_torch_stays_out_of_the_other_files():
    torch = names("requirements-torch.txt")
    assert "torch" in torch and LOCKED["torch"] == {v for p, v, _ in pins("requirements-torch.txt") if p == "torch"}
    assert not [p for p in torch if lock.CUDA_ONLY.match(p)], "CUDA packages in the CPU-only torch file"
    assert [p for p in LOCKED if lock.CUDA_ONLY.match(p)], "the lock has torch's CUDA packages (the export drops them)"
    for name in ("requirements.txt", "requirements-test.txt", "binder/requirements.txt"):
        assert "torch" not in names(name), f"torch must stay out of {name}"


def test_the_uv_that_tests_and_relocks_is_the_one_pyproject_requires():
    assert LOCKED["uv"] == {lock.required_uv()}, f"uv.lock pins uv {LOCKED['uv']}, [tool.uv] requires {lock.required_uv()}"
    assert "uv" in names("requirements-test.txt")


def test_set_up_installs_the_exported_files():
    setup = (ROOT / "scripts" / "_setup.sh").read_text()
    assert "ensure_venv requirements-test.txt" in (ROOT / "scripts" / "test.sh").read_text()
    assert "ensure_venv requirements.txt" in (ROOT / "scripts" / "build.sh").read_text()
    assert "local lock=requirements-torch.txt" in setup
    assert (ROOT / "binder" / "requirements.txt").is_file()

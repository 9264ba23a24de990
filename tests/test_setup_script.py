"""scripts/_setup.sh recovers and tells the truth (run for real, in temporary folders).

* A venv without pip (uv venv, uv sync, python -m venv --without-pip) gets pip and keeps
  everything in it; one whose python is gone is repaired in place; a second run is fast and
  installs nothing.  A read-only checkout built with --path-output installs the project from a
  copy (not editable), leaving the checkout as it was.
* apt failures are reported as what they are (apt's own message), and a check that still
  fails after an install stops right there.
* It never deletes what it did not make (a folder with files but no pyvenv.cfg is left alone),
  checks what is really wrong before acting (a package gone from a stamped venv is reinstalled,
  not blamed on fonts; a VENV that is a file is said to be one, with no apt), and says the real
  cause on its last line (no network, a missing lock, a read-only checkout, a Python that is not one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

# Runs scripts/_setup.sh for real and makes venvs: the slow tier.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def setup_sh(script: str, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    """Run bash with scripts/_setup.sh sourced (as build.sh/test.sh do), then `script`."""
    full = {**os.environ, "PYTHON": sys.executable, **env}
    return subprocess.run(["bash", "-c", f'set -euo pipefail; source "{ROOT}/scripts/_setup.sh"; {script}'],
                          cwd=tmp_path, capture_output=True, text=True, env=full, timeout=600)


def test_a_venv_without_pip_gets_pip_keeps_its_files_and_a_second_run_is_fast(tmp_path):
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)  # python, but no pip: what uv venv, uv sync or --without-pip make
    assert not (home / "bin" / "pip").exists()
    site = next((home / "lib").glob("python3*/site-packages"))
    (site / "someones_module.py").write_text("X = 1\n")  # what the reader had put in it
    (home / "notes.txt").write_text("mine\n")
    lock = tmp_path / "empty-lock.txt"
    lock.write_text("# no packages: this test is about the venv itself\n")
    first = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    assert first.returncode == 0, first.stderr
    assert "has no pip" in first.stderr and "nothing in it is removed" in first.stderr, first.stderr
    assert (site / "someones_module.py").exists() and (home / "notes.txt").read_text() == "mine\n"
    pip = subprocess.run([str(home / "bin" / "python"), "-m", "pip", "--version"], capture_output=True, text=True)
    assert pip.returncode == 0, "the rebuilt venv has no pip"
    start = time.monotonic()
    second = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    took = time.monotonic() - start
    assert second.returncode == 0, second.stderr
    assert second.stderr == "", f"a second run should only check, but said: {second.stderr}"
    print(f"second run: {took:.1f} s")


def test_a_venv_whose_python_is_gone_is_rebuilt(tmp_path):
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)
    (home / "bin" / "python").unlink()  # e.g. the Python it pointed to was removed
    lock = tmp_path / "empty-lock.txt"
    lock.write_text("\n")
    (home / "notes.txt").write_text("mine\n")
    run = setup_sh(f'ensure_venv "{lock}"', tmp_path, VENV=str(home))
    assert run.returncode == 0, run.stderr
    assert "half-made" in run.stderr and "repairing it in place" in run.stderr and (home / "bin" / "python").exists()
    assert (home / "notes.txt").read_text() == "mine\n"  # repaired, not cleared


needs_root_apt = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None,
                                    reason="needs apt-get and root (as scripts/test.sh runs on CI)")


@needs_root_apt
def test_apt_failures_are_reported_as_apt_failures_not_as_missing_rights(tmp_path):
    run = setup_sh('ensure_apt f11-no-such-package-xyz false', tmp_path)
    assert run.returncode != 0
    assert "apt-get install f11-no-such-package-xyz failed" in run.stderr or "apt-get update failed" in run.stderr
    assert "not root" not in run.stderr
    assert "Unable to locate package" in run.stderr or "E:" in run.stderr, run.stderr


@needs_root_apt
def test_a_check_that_still_fails_after_installing_stops_there_with_the_check(tmp_path):
    # hostname is part of every Debian system: installing it succeeds at once, the check still fails.
    run = setup_sh('ensure_apt hostname "test -e /nonexistent-f11-check"', tmp_path)
    assert run.returncode != 0
    assert "installed hostname, but the check still fails (test -e /nonexistent-f11-check)" in run.stderr, run.stderr


def test_scripts_and_tests_find_the_same_chromium(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from find_chromium import find_chromium

    # tests/conftest.py's CHROMIUM is find_chromium(); scripts/test.sh runs the file.
    assert "CHROMIUM = find_chromium()" in (ROOT / "tests" / "conftest.py").read_text()
    assert "find_chromium.py" in (ROOT / "scripts" / "_setup.sh").read_text()
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "find_chromium.py")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == find_chromium()
    missing = subprocess.run([sys.executable, str(ROOT / "scripts" / "find_chromium.py")], capture_output=True,
                             text=True, env={**os.environ, "CHROMIUM": str(tmp_path / "no-such-chromium")})
    assert missing.returncode == 1 and "not an executable file" in missing.stderr


# --- never delete what it did not make; always the true cause on the last line ----------------------
# These run scripts/_setup.sh from a temporary copy of the checkout (its scripts, pyproject.toml and
# locks), so a case can remove or lock a file; each stops early or installs a hand-made wheel offline.

SETUP_FILES = ("scripts/_setup.sh", "scripts/build.sh", "scripts/test.sh", "scripts/find_chromium.py",
               "pyproject.toml", "requirements.txt", "requirements-test.txt", "requirements-torch.txt")


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A temporary checkout with what the set-up reads (a clone's files, as they are now)."""
    root = tmp_path / "checkout"
    for name in SETUP_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, root / name)
    return root


def offline_env(**more) -> dict:
    """pip with no configuration of this machine (mirrors, wheel folders), failing fast."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_RETRIES": "0",
            "PIP_TIMEOUT": "3", "PYTHON": sys.executable, **more}


def in_checkout(root: Path, script: str, timeout: float = 120, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHON": sys.executable, **env}
    return subprocess.run(["bash", "-c", f'set -euo pipefail; source "{root}/scripts/_setup.sh"; {script}'],
                          cwd=root, capture_output=True, text=True, env=full, timeout=timeout)


def last_line(run: subprocess.CompletedProcess) -> str:
    lines = run.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def test_a_folder_that_is_no_venv_is_left_as_it_is(checkout, tmp_path):
    home = tmp_path / "someones-folder"  # VENV=$HOME, or any folder with files in it
    (home / "notes").mkdir(parents=True)
    (home / "thesis.tex").write_text("years of work")
    (home / "notes" / "a.txt").write_text("keep")
    run = in_checkout(checkout, "ensure_venv requirements.txt", VENV=str(home))
    assert run.returncode != 0
    assert (home / "thesis.tex").read_text() == "years of work" and (home / "notes" / "a.txt").exists()
    assert sorted(p.name for p in home.iterdir()) == ["notes", "thesis.tex"]
    assert f"VENV={home} holds files but is no virtual environment" in last_line(run), run.stderr
    assert "rebuilding" not in run.stderr and "apt" not in run.stderr


@pytest.mark.parametrize("where", ["a file", "/dev/null"])
def test_a_venv_path_that_is_a_file_is_said_to_be_one_without_apt(checkout, tmp_path, where):
    path = tmp_path / "README.md" if where == "a file" else Path("/dev/null")
    if where == "a file":
        path.write_text("# a readme\n")
    run = in_checkout(checkout, "ensure_venv requirements.txt", VENV=str(path))
    assert run.returncode != 0
    assert f"VENV={path} is not a folder" in last_line(run), run.stderr
    assert "apt" not in run.stderr and "python3-venv" not in run.stderr
    if where == "a file":
        assert path.read_text() == "# a readme\n"


def test_a_venv_path_under_a_file_names_the_file(checkout, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("x")
    run = in_checkout(checkout, "ensure_venv requirements.txt", VENV=str(readme / "venv"))
    assert run.returncode != 0
    assert f"{readme} is a file, not a folder" in last_line(run), run.stderr
    assert "apt" not in run.stderr


def test_a_venv_path_that_cannot_be_made_gives_mkdirs_reason(checkout):
    run = in_checkout(checkout, "ensure_venv requirements.txt", VENV="/proc/f11-venv")
    assert run.returncode != 0
    line = last_line(run)
    assert line.startswith("[setup] cannot make the folder VENV=/proc/f11-venv: "), run.stderr
    assert "No such file or directory" in line or "Permission denied" in line
    assert "apt" not in run.stderr


@pytest.mark.parametrize("python", ["/bin/true", "/nonexistent/python3"])
def test_a_python_that_does_not_say_it_is_3_11_fails_the_version_check(checkout, tmp_path, python):
    run = in_checkout(checkout, "ensure_venv requirements.txt", VENV=str(tmp_path / "venv"), PYTHON=python)
    assert run.returncode != 0
    assert f"PYTHON={python}" in last_line(run) and "3.11" in last_line(run), run.stderr
    assert not (tmp_path / "venv").exists()


def test_a_missing_lock_file_is_named_not_a_traceback(checkout, tmp_path):
    (checkout / "requirements.txt").unlink()
    run = subprocess.run(["bash", str(checkout / "scripts" / "build.sh")], cwd=checkout, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHON": sys.executable,
                                                      "VENV": str(tmp_path / "venv")})
    assert run.returncode != 0
    assert f"requirements.txt is missing from the checkout {checkout}" in last_line(run), run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "venv").exists()


def test_a_read_only_checkout_is_said_before_anything_is_installed(tmp_path):
    import tempfile

    # Root may write anywhere: run the build as 'nobody' then, on a checkout it may only read.
    as_user = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot make a checkout read-only for the script")
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    base = Path(tempfile.mkdtemp(prefix="f11-ro-"))
    try:
        root = base / "checkout"
        for name in SETUP_FILES:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, root / name)
        for d in (base, root, root / "scripts"):
            d.chmod(0o555)
        run = subprocess.run([*as_user, "bash", str(root / "scripts" / "build.sh")], cwd=base,
                             capture_output=True, text=True, timeout=120,
                             env={"PATH": os.environ["PATH"], "HOME": str(base), "PYTHON": sys.executable})
        assert run.returncode != 0
        line = last_line(run)
        assert line.startswith(f"[setup] cannot write to {root} ("), run.stderr
        assert "--path-output" in line and "installing" not in run.stderr
    finally:
        for d in (base, base / "checkout", base / "checkout" / "scripts"):
            d.chmod(0o755)
        shutil.rmtree(base)


def test_a_read_only_checkout_installs_the_project_from_a_copy_and_stays_clean(tmp_path):
    """The fix build.sh itself suggests (--path-output) works: "-e ." cannot write its egg-info
    into a read-only checkout, so the set-up installs attention_lab from a copy, not editable."""
    import tempfile

    as_user = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot make a checkout read-only for the script")
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    # 'nobody' cannot enter root's home, where this venv's Python may live: the system's Python then.
    python = sys.executable if not as_user else shutil.which("python3", path="/usr/local/bin:/usr/bin")
    ok = python and subprocess.run([*as_user, python, "-c", "import sys, ensurepip; assert sys.version_info >= (3, 11)"],
                                   capture_output=True).returncode == 0
    if not ok:
        pytest.skip("no Python 3.11+ with ensurepip that the unprivileged user can run")
    base = Path(tempfile.mkdtemp(prefix="f11-ro-"))
    try:
        root = base / "checkout"
        (root / "scripts").mkdir(parents=True)
        shutil.copy2(ROOT / "scripts" / "_setup.sh", root / "scripts")
        shutil.copy2(ROOT / "pyproject.toml", root)
        shutil.copy2(ROOT / "LICENSE", root)
        shutil.copytree(ROOT / "attention_lab", root / "attention_lab", ignore=shutil.ignore_patterns("__pycache__"))
        # No dependencies (they are this test's venv's); the project is installed apart, as build.sh has it.
        (root / "requirements.txt").write_text("# hash-checked dependencies: none here\n")
        home = base / "venv"
        home.mkdir()
        os.chown(home, 65534, 65534) if as_user else None
        before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
            d.chmod(0o555)
        base.chmod(0o755)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHON": python, "VENV": str(home),
               **{k: v for k, v in os.environ.items() if k.startswith("PIP_")}}
        run = subprocess.run([*as_user, "bash", "-c", f'set -euo pipefail; source "{root}/scripts/_setup.sh"; '
                              f'ensure_venv requirements.txt project'], cwd=base, capture_output=True, text=True,
                             timeout=300, env=env)
        assert run.returncode == 0, run.stderr
        assert "read-only" in run.stderr and "from a copy" in run.stderr, run.stderr
        shown = subprocess.run([str(home / "bin" / "python"), "-c", "import importlib.util as u; print(u.find_spec('attention_lab').origin)"],
                               capture_output=True, text=True, cwd=base)
        assert shown.returncode == 0 and str(root) not in shown.stdout, shown  # installed, not the checkout's files
        assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before  # no egg-info, no build/
    finally:
        for d in [base, *[p for p in base.rglob("*") if p.is_dir()]]:
            d.chmod(0o755)
        shutil.rmtree(base)


@pytest.fixture(scope="module")
def pip_venv(tmp_path_factory) -> Path:
    """One venv with pip, shared by the install cases below: made by the set-up itself in an
    empty folder (nothing to lose there, so it is used, and marked as made by the set-up)."""
    home = tmp_path_factory.mktemp("pipvenv") / "venv"
    home.mkdir()
    lock = home.parent / "empty-lock.txt"
    lock.write_text("\n")
    run = setup_sh(f'ensure_venv "{lock}"', home.parent, **offline_env(VENV=str(home)))
    assert run.returncode == 0, run.stderr
    assert (home / "pyvenv.cfg").exists() and (home / ".f11-setup-venv").exists()
    return home


def test_no_network_says_cannot_reach_the_package_index_last(checkout, pip_venv, tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("f11-fake-pkg==1.0\n")
    run = in_checkout(checkout, f'ensure_venv "{lock}"',
                      **offline_env(VENV=str(pip_venv), PIP_INDEX_URL="http://127.0.0.1:9/simple"))
    assert run.returncode != 0
    assert last_line(run).startswith("[setup] cannot reach the package index (http://127.0.0.1:9/simple: "), run.stderr


def fake_wheel(folder: Path, name: str = "f11_fake_pkg", version: str = "1.0") -> Path:
    """A tiny pure-Python wheel written by hand (no build tools, no index)."""
    import base64
    import hashlib
    import zipfile

    files = {f"{name}/__init__.py": "VALUE = 1\n",
             f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
             f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{name}-{version}.dist-info/RECORD,,")
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{name}-{version}.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.mark.parametrize("damage", ["package folder deleted", "uninstalled"])
def test_a_package_gone_from_a_stamped_venv_is_reinstalled_from_the_lock_not_apt(checkout, pip_venv, tmp_path,
                                                                                 damage):
    wheels = tmp_path / "wheels"
    fake_wheel(wheels)
    lock = tmp_path / f"lock-{damage.split()[0]}.txt"
    lock.write_text("f11-fake-pkg==1.0\n")
    env = offline_env(VENV=str(pip_venv), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    py = str(pip_venv / "bin" / "python")
    first = in_checkout(checkout, f'ensure_venv "{lock}"', **env)
    assert first.returncode == 0, first.stderr
    if damage == "uninstalled":
        subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "f11-fake-pkg"], check=True, env=env)
    else:  # what `rm -rf .venv/lib/python3.*/site-packages/numpy` leaves: the metadata, no code
        where = subprocess.run([py, "-c", "import f11_fake_pkg, os; print(os.path.dirname(f11_fake_pkg.__file__))"],
                               capture_output=True, text=True, check=True).stdout.strip()
        shutil.rmtree(where)
    assert subprocess.run([py, "-c", "import f11_fake_pkg"], capture_output=True).returncode != 0
    second = in_checkout(checkout, f'ensure_venv "{lock}"', **env)
    assert second.returncode == 0, second.stderr
    assert "missing part of what" in second.stderr and "f11-fake-pkg==1.0" in second.stderr, second.stderr
    assert "apt" not in second.stderr
    assert subprocess.run([py, "-c", "import f11_fake_pkg"], capture_output=True).returncode == 0
    third = in_checkout(checkout, f'ensure_venv "{lock}"', **env)
    assert third.returncode == 0 and third.stderr == "", third.stderr


def test_a_hashed_lock_installs_its_file_and_refuses_one_with_another_sha256(checkout, pip_venv, tmp_path):
    """build.sh's and test.sh's locks carry uv.lock's sha256 for every file (scripts/lock.py HASHED):
    pip installs the file that has it, and refuses a file the index or mirror gives with another."""
    import hashlib

    wheels = tmp_path / "wheels"
    wheel = fake_wheel(wheels, name="f11_hashed_pkg")
    env = offline_env(VENV=str(pip_venv), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    wrong = tmp_path / "wrong-lock.txt"
    wrong.write_text("f11-hashed-pkg==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    run = in_checkout(checkout, f'ensure_venv "{wrong}"', **env)
    assert run.returncode != 0 and "HASHES" in run.stderr, run.stderr
    py = str(pip_venv / "bin" / "python")
    assert subprocess.run([py, "-c", "import f11_hashed_pkg"], capture_output=True).returncode != 0, "installed anyway"
    right = tmp_path / "lock.txt"
    right.write_text(f"f11-hashed-pkg==1.0 \\\n    --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}\n")
    run = in_checkout(checkout, f'ensure_venv "{right}"', **env)
    assert run.returncode == 0, run.stderr
    assert subprocess.run([py, "-c", "import f11_hashed_pkg"], capture_output=True).returncode == 0
    # A repair (the package gone from a stamped venv) takes the lock's hashes too: another file refused.
    subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "f11-hashed-pkg"], check=True, env=env)
    good = wheel.read_bytes()
    wheel.write_bytes(good + b"\n")  # the same name and version, another file (another sha256)
    run = in_checkout(checkout, f'ensure_venv "{right}"', **env)
    assert run.returncode != 0 and "missing part of what" in run.stderr and "HASHES" in run.stderr, run.stderr
    wheel.write_bytes(good)
    run = in_checkout(checkout, f'ensure_venv "{right}"', **env)
    assert run.returncode == 0, run.stderr
    assert subprocess.run([py, "-c", "import f11_hashed_pkg"], capture_output=True).returncode == 0


def test_a_font_check_that_cannot_import_is_a_broken_venv_not_a_missing_font(checkout, pip_venv):
    run = in_checkout(checkout, "ensure_cjk_font", **offline_env(VENV=str(pip_venv)))
    assert run.returncode != 0
    assert "cannot import matplotlib or attention_lab" in last_line(run), run.stderr
    assert "fonts-noto-cjk" not in run.stderr and "apt" not in run.stderr

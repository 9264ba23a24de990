"""The requirement locks agree with their .in files, with pyproject.toml and with each other.

Pins are set in one place, ``requirements*.in`` (and ``binder/requirements.in``, which names
packages without versions); ``scripts/compile_requirements.py`` compiles them with uv into
the locks the scripts install.  These checks need no network: each lock records the sha256
of the inputs it was compiled from, so an edited .in without a recompile fails here.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import compile_requirements  # noqa: E402

LOCKS = {lock: source for source, lock, _, _ in compile_requirements.LOCKS}


def read_lock(name: str) -> dict[tuple[str, str], str]:
    """{(package, marker): version} of a lock; the editable project is ("-e", "") -> path."""
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-e "):
            pins[("-e", "")] = line[3:].strip()
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{name}: {line} is not an exact pin"
        pins[(canonicalize_name(req.name), str(req.marker or ""))] = spec.version
    return pins


def read_in(name: str) -> list[Requirement]:
    """Direct requirements of a .in file, following -r includes; '-e .' is skipped."""
    out = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-e"):
            continue
        if line.startswith("-r"):
            out += read_in(str(Path(name).parent / line[2:].strip()))
            continue
        out.append(Requirement(line))
    return out


def versions(pins: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for (pkg, _), version in pins.items():
        if pkg != "-e":
            out.setdefault(pkg, []).append(version)
    return out


@pytest.mark.parametrize("source, lock, inputs, constrained", compile_requirements.LOCKS,
                         ids=[lock for _, lock, _, _ in compile_requirements.LOCKS])
def test_each_lock_was_compiled_from_the_current_inputs(source, lock, inputs, constrained):
    header = (ROOT / lock).read_text()
    recorded = dict(re.findall(r"^#   (\S+) sha256=([0-9a-f]{64})$", header, re.M))
    assert sorted(recorded) == sorted(inputs), f"{lock} records {sorted(recorded)}"
    for name in inputs:
        actual = hashlib.sha256((ROOT / name).read_bytes()).hexdigest()
        assert recorded[name] == actual, (
            f"{name} changed after {lock} was compiled: run python3 scripts/compile_requirements.py")


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_direct_requirement_is_pinned_in_its_lock_at_a_version_it_allows(lock):
    pinned = versions(read_lock(lock))
    for req in read_in(LOCKS[lock]):
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req} ({LOCKS[lock]}) is missing from {lock}"
        for version in pinned[name]:
            assert req.specifier.contains(version, prereleases=True), f"{lock} pins {name}=={version}, {LOCKS[lock]} asks {req}"


def test_a_package_has_the_same_version_in_every_lock():
    # Markers may differ (a lock may need a package on fewer platforms), versions may not.
    test_lock = versions(read_lock("requirements-test.txt"))
    for lock in LOCKS:
        for pkg, pinned in versions(read_lock(lock)).items():
            if pkg in test_lock:
                assert set(pinned) <= set(test_lock[pkg]), f"{pkg}: {lock} pins {pinned}, requirements-test.txt {test_lock[pkg]}"


@pytest.mark.parametrize("lock", ["requirements.txt", "binder/requirements.txt"])
def test_build_and_binder_locks_are_part_of_the_test_lock(lock):
    missing = sorted(set(versions(read_lock(lock))) - set(versions(read_lock("requirements-test.txt"))))
    assert not missing, f"in {lock} but not tested by requirements-test.txt: {missing}"


@pytest.mark.parametrize("lock", ["requirements.txt", "requirements-test.txt", "binder/requirements.txt"])
def test_the_project_and_its_declared_dependencies_are_in_the_lock(lock):
    import tomllib

    pins = read_lock(lock)
    assert pins.get(("-e", "")) == ".", f"{lock} must install this repository's package (-e .)"
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = versions(pins)
    for dep in map(Requirement, declared):
        name = canonicalize_name(dep.name)
        assert name in pinned and all(dep.specifier.contains(v) for v in pinned[name]), (
            f"pyproject.toml needs {dep}; {lock} pins {pinned.get(name)}")


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_locks_hold_only_public_releases(lock):
    for (pkg, _), version in read_lock(lock).items():
        if pkg == "-e":
            continue
        assert Version(version).local is None, f"{lock}: {pkg}=={version} has a local label PyPI does not have"
    text = (ROOT / lock).read_text()
    assert "file:" not in text and "--find-links" not in text and "--index-url" not in text


def test_torch_lock_is_the_cpu_part_only_and_pins_the_in_files_torch():
    pins = versions(read_lock("requirements-torch.txt"))
    (torch_req,) = read_in("requirements-torch.in")
    assert pins["torch"] == [str(next(iter(torch_req.specifier)).version)]
    cuda = [p for p in pins if compile_requirements.CUDA_ONLY.match(p)]
    assert not cuda, f"CUDA packages in the CPU-only torch lock: {cuda}"
    assert "torch" not in versions(read_lock("requirements-test.txt")), "torch must stay out of the test lock"


def test_set_up_installs_the_locks_not_the_in_files():
    setup = (ROOT / "scripts" / "_setup.sh").read_text()
    assert "ensure_venv requirements-test.txt" in (ROOT / "scripts" / "test.sh").read_text()
    assert "ensure_venv requirements.txt" in (ROOT / "scripts" / "build.sh").read_text()
    assert "local lock=requirements-torch.txt" in setup

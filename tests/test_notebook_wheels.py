"""The wheels shipped beside the downloadable notebooks (book/_ext/f11_site.dependency_wheels, issue 26).

A teacher who built once rebuilds offline (the wheels come from a cache the first build filled);
a school behind a mirror gets them from its own index (the user's pip configuration is honoured,
not replaced by PyPI); every file has the sha256 that uv.lock records, else nothing is shipped; a
build that cannot get a file says which file, why and where to put it, on its last line.
Offline is real: a network namespace (``unshare -n``) with no route anywhere.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import f11_site  # noqa: E402

RUN = """
import sys
sys.path.insert(0, {ext!r})
import f11_site
try:
    print("OK", " ".join(f11_site.dependency_wheels(sys.argv[1], cache=sys.argv[2])))
except RuntimeError as e:
    print("ERR", str(e).strip().splitlines()[-1])
"""


def no_pip_config(**more) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_RETRIES": "0",
            "PIP_TIMEOUT": "3", **more}


def run(out: Path, cache: Path, offline: bool, env: dict) -> str:
    cmd = [sys.executable, "-c", RUN.format(ext=str(ROOT / "book" / "_ext")), str(out), str(cache)]
    if offline:
        if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"]).returncode != 0:
            pytest.skip("cannot make a network namespace here (unshare -n)")
        cmd = ["unshare", "-n"] + cmd
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    """The two wheels as this machine's pip gets them (its own configuration), checked against uv.lock."""
    folder = tmp_path_factory.mktemp("wheels")
    (folder / "out").mkdir()
    names = f11_site.dependency_wheels(folder / "out", cache=folder / "cache")
    assert len(names) == len(f11_site.DEPENDENCY_WHEELS)
    return folder / "cache"


def test_a_second_build_gets_the_wheels_from_the_cache_with_no_network(wheels, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    line = run(out, wheels, offline=True, env=no_pip_config())
    assert line.startswith("OK ") and len(line.split()) == 1 + len(f11_site.DEPENDENCY_WHEELS), line
    for name in line.split()[1:]:
        assert (out / name).read_bytes() == (wheels / name).read_bytes()


def test_offline_with_an_empty_cache_names_the_file_and_where_to_put_it(tmp_path):
    out, cache = tmp_path / "out", tmp_path / "empty-cache"
    out.mkdir()
    line = run(out, cache, offline=True, env=no_pip_config())
    assert line.startswith("ERR ") and "-py3-none-any.whl is not in the cache" in line, line
    assert str(cache) in line and "pip download" in line and "build again" in line, line
    assert not list(out.glob("*.whl"))


class _Index(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path):
    handler = lambda *a, **k: _Index(*a, directory=str(folder), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def simple_index(root: Path, files: dict[str, bytes]) -> None:
    """A PEP 503 index: /simple/<project>/ lists its files (the folder listing is the page)."""
    for name, data in files.items():
        project = root / "simple" / name.split("-")[0].lower()
        project.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)


def test_a_mirror_index_on_the_machine_is_used_and_a_file_with_another_hash_is_refused(wheels, tmp_path):
    good = {p.name: p.read_bytes() for p in wheels.glob("*.whl")}
    mirror = tmp_path / "mirror"
    simple_index(mirror, good)
    server = serve(mirror)
    try:
        index = f"http://127.0.0.1:{server.server_address[1]}/simple"
        out = tmp_path / "out"
        out.mkdir()
        line = run(out, tmp_path / "cache-a", offline=False, env=no_pip_config(PIP_INDEX_URL=index))
        assert line.startswith("OK "), line
        assert (tmp_path / "cache-a" / line.split()[1]).exists()  # kept for the next, offline build
        # The mirror now serves another file under the same name: refused, nothing shipped.
        tampered = tmp_path / "tampered"
        simple_index(tampered, {name: data + b"\0" for name, data in good.items()})
        server.shutdown()
        server = serve(tampered)
        index = f"http://127.0.0.1:{server.server_address[1]}/simple"
        out2 = tmp_path / "out2"
        out2.mkdir()
        line = run(out2, tmp_path / "cache-b", offline=False, env=no_pip_config(PIP_INDEX_URL=index))
        assert line.startswith("ERR ") and "Check the index pip uses" in line, line
        assert not list(out2.glob("*.whl")) and not (tmp_path / "cache-b").exists()
    finally:
        server.shutdown()

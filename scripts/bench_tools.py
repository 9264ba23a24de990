"""The npm tools the benchmarks use (never the tests): Lighthouse, lightningcss, PurgeCSS.

They are pinned here and installed by the benchmark itself with ``npm install`` into a cache
folder outside the repository (``$F11_BENCH_CACHE``, default ``~/.cache/f11-bench``), so the
test dependencies (``package.json``: axe-core only) stay as they are.  Lighthouse is held at
12.2.3: 13 needs Node 22.

    .venv/bin/python scripts/bench_tools.py   # installs them (if missing) and prints where
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: npm package -> exact version.  lightningcss-cli brings its own binary as a platform package.
PINNED = {"lighthouse": "12.2.3", "lightningcss-cli": "1.33.0", "purgecss": "8.0.0"}
BINARIES = {"lighthouse": "lighthouse", "lightningcss-cli": "lightningcss", "purgecss": "purgecss"}


def cache_dir() -> Path:
    return Path(os.environ.get("F11_BENCH_CACHE", Path.home() / ".cache" / "f11-bench")) / "npm"


def _installed(folder: Path, package: str) -> str | None:
    meta = folder / "node_modules" / package / "package.json"
    return json.loads(meta.read_text("utf-8")).get("version") if meta.is_file() else None


def ensure(package: str) -> Path:
    """Path of ``package``'s command, installing the pinned tools into the cache on first use."""
    folder = cache_dir()
    if any(_installed(folder, p) != v for p, v in PINNED.items()):
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("the benchmarks need npm (Debian: apt-get install -y npm; scripts/test.sh installs it)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text(json.dumps(
            {"private": True, "description": "tools for F11's benchmarks (scripts/bench_tools.py)",
             "dependencies": PINNED}, indent=1), "utf-8")
        print(f"installing {', '.join(f'{p}@{v}' for p, v in PINNED.items())} into {folder} …", file=sys.stderr)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True)
    command = folder / "node_modules" / ".bin" / BINARIES[package]
    if not command.exists():
        raise SystemExit(f"npm installed {package} but {command} is missing")
    return command


if __name__ == "__main__":
    for name in PINNED:
        print(f"{name}@{PINNED[name]}: {ensure(name)}")

"""Lighthouse on the built site, as a host serves it: performance on a phone, layout shift.

Serves each given site folder on 127.0.0.1 gzip-compressed over kept-alive connections
(``bench_site._Handler``'s ``/gzip/``, as GitHub Pages and the like serve it) and runs
Lighthouse 12.2.3 (``scripts/bench_tools.py`` installs it into a cache folder; Debian's
Chromium as ``CHROME_PATH``) on the chapter, the lab page and the shapes page:

* **mobile** (Lighthouse's default: Moto G Power, simulated 4x CPU and slow 4G): the
  performance score, FCP, LCP, TBT, CLS, DOM elements, main-thread time in style and
  layout, and the render-blocking resources' estimated saving;
* **desktop** (``--preset=desktop``): CLS only, where the lab's mount shifted the page.

Each figure is the median of ``--runs`` loads (default 3), the sites taken in turn; the
machine's load average (``uptime``) is printed before and after, since Lighthouse's
simulated timings scale with the CPU time the page really took.  Given two or more folders
(``before=DIR after=DIR``), the figures are printed side by side.  Targets (issue 19; issue 31 for the shapes page): performance >= 90 on every page,
CLS <= 0.02.  Printed, never asserted.

    .venv/bin/python scripts/bench_lighthouse.py [LABEL=]SITE_DIR ... [--runs N] [--pages a.html,b.html]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_site import _Handler  # noqa: E402
from bench_tools import ensure  # noqa: E402
from find_chromium import find_chromium, missing_message  # noqa: E402

PAGES = ("book/f11-attention.html", "book/lab.html", "book/shapes.html")  # the shapes page: issue 31
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
TARGET_SCORE, TARGET_CLS = 90, 0.02

#: (label, how to read it from a Lighthouse report, format)
MOBILE = (
    ("performance", lambda r: r["categories"]["performance"]["score"] * 100, "{:.0f}"),
    ("FCP (ms)", lambda r: r["audits"]["first-contentful-paint"]["numericValue"], "{:.0f}"),
    ("LCP (ms)", lambda r: r["audits"]["largest-contentful-paint"]["numericValue"], "{:.0f}"),
    ("TBT (ms)", lambda r: r["audits"]["total-blocking-time"]["numericValue"], "{:.0f}"),
    ("CLS", lambda r: r["audits"]["cumulative-layout-shift"]["numericValue"], "{:.3f}"),
    ("speed index (ms)", lambda r: r["audits"]["speed-index"]["numericValue"], "{:.0f}"),
    ("DOM elements", lambda r: r["audits"]["dom-size"]["numericValue"], "{:.0f}"),
    ("style+layout (ms)", lambda r: _group(r, "styleLayout"), "{:.0f}"),
    ("script (ms)", lambda r: _group(r, "scriptEvaluation"), "{:.0f}"),
    ("main thread (ms)", lambda r: r["audits"]["mainthread-work-breakdown"]["numericValue"], "{:.0f}"),
    ("render-blocking saving (ms)",
     lambda r: (r["audits"]["render-blocking-resources"].get("details") or {}).get("overallSavingsMs", 0), "{:.0f}"),
)
DESKTOP = (("desktop CLS", lambda r: r["audits"]["cumulative-layout-shift"]["numericValue"], "{:.3f}"),)


def _group(report: dict, group: str) -> float:
    items = (report["audits"]["mainthread-work-breakdown"].get("details") or {}).get("items", [])
    return sum(i["duration"] for i in items if i.get("group") == group)


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/gzip/"


def lighthouse(url: str, desktop: bool, tries: int = 3) -> dict:
    """One Lighthouse report; a run that scored nothing (a metric it could not take, as on a
    machine busy with other work) is run again, up to ``tries`` times, and said so."""
    for attempt in range(1, tries + 1):
        report = _lighthouse_once(url, desktop)
        if report["categories"]["performance"]["score"] is not None:
            return report
        failed = [a["id"] for a in report["audits"].values() if a.get("scoreDisplayMode") == "error"]
        print(f"  (run {attempt} on {url} scored nothing: {', '.join(failed) or '?'}; again)", file=sys.stderr)
    raise RuntimeError(f"lighthouse scored nothing on {url} in {tries} runs")


def _lighthouse_once(url: str, desktop: bool) -> dict:
    command = [str(ensure("lighthouse")), url, "--quiet", "--only-categories=performance",
               "--output=json", f"--chrome-flags={CHROME_FLAGS}", "--max-wait-for-load=90000"]
    if desktop:
        command.append("--preset=desktop")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        env = dict(os.environ, CHROME_PATH=find_chromium() or "", TMPDIR=tmp)
        done = subprocess.run(command + [f"--output-path={out}"], env=env, capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0 or not out.is_file():
            raise RuntimeError(f"lighthouse failed on {url}:\n{done.stderr[-2000:]}")
        report = json.loads(out.read_text("utf-8"))
    if report.get("runtimeError"):
        raise RuntimeError(f"lighthouse on {url}: {report['runtimeError']}")
    return report


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def measure(sites: list[tuple[str, Path]], pages, runs: int) -> dict:
    """{label: {page: {metric: [values of each run]}}}: each run takes every site in turn (the
    machine's load changes while this runs; in turn, no site gets only the quiet minutes)."""
    servers = {label: serve(folder) for label, folder in sites}
    results: dict = {label: {page: {} for page in pages} for label, _ in sites}
    try:
        for page in pages:
            for desktop, metrics in ((False, MOBILE), (True, DESKTOP)):
                for _ in range(runs):
                    for label, (_server, base) in servers.items():
                        report = lighthouse(base + page, desktop)
                        for name, read, _fmt in metrics:
                            results[label][page].setdefault(name, []).append(read(report))
    finally:
        for server, _base in servers.values():
            server.shutdown()
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sites", nargs="*", help="[LABEL=]SITE_DIR (default: _build/html or $F11_SITE_DIR)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES))
    parser.add_argument("--json", help="also write the raw figures to this file")
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print(missing_message(), file=sys.stderr)
        return 1
    sites = []
    for given in args.sites or [os.environ.get("F11_SITE_DIR", str(ROOT / "_build" / "html"))]:
        label, _, folder = given.rpartition("=")
        folder = Path(folder)
        if not (folder / "book" / "lab.html").is_file():
            print(f"no built site at {folder}: run scripts/build.sh (or pass its _build/html folder)", file=sys.stderr)
            return 1
        sites.append((label or folder.parent.parent.name or str(folder), folder))
    pages = [p for p in args.pages.split(",") if p]
    ensure("lighthouse")
    print(f"Lighthouse 12.2.3, mobile (simulated: 4x CPU, slow 4G) and desktop, gzip over kept-alive "
          f"connections on 127.0.0.1; median of {args.runs} runs each")
    print(f"load average before: {load()}")
    results = measure(sites, pages, args.runs)
    print(f"load average after: {load()}")
    labels = [label for label, _ in sites]
    width = max(12, *(len(label) + 2 for label in labels))
    for page in pages:
        print(f"\n{page}")
        print(f"  {'':28s}" + "".join(f"{label:>{width}s}" for label in labels) + "   runs (last site)")
        for label, _read, fmt in MOBILE + DESKTOP:
            row = [statistics.median(results[s][page][label]) for s in labels]
            runs = ", ".join(fmt.format(v) for v in results[labels[-1]][page][label])
            print(f"  {label:28s}" + "".join(f"{fmt.format(v):>{width}s}" for v in row) + f"   {runs}")
        score = statistics.median(results[labels[-1]][page]["performance"])
        cls = max(statistics.median(results[labels[-1]][page][k]) for k in ("CLS", "desktop CLS"))
        print(f"  target performance >= {TARGET_SCORE}: {'met' if score >= TARGET_SCORE else 'NOT met'} ({score:.0f}); "
              f"CLS <= {TARGET_CLS}: {'met' if cls <= TARGET_CLS else 'NOT met'} ({cls:.3f})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

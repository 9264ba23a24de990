"""How soon the lab is usable on a slow phone: this site vs. Sphinx's default script order.

Serves a built site on 127.0.0.1, opens book/lab.html and the chapter in headless
Chromium with a slow phone emulated (CPU 4x slower, 4 Mbit/s down, 150 ms round trip,
empty cache) and prints, side by side, the time from navigation to the lab's
data-lab-ready="true" and the bytes transferred:

* "site": the pages as built (the lab's scripts first, everything else deferred);
* "naive": the same pages as Sphinx and the theme write them: every script blocking
  in <head>, the lab's after the theme's, and the theme's seven original stylesheets
  (from ``_build/css-reference/``) instead of the one cut file (as before issue 11);

once with the files sent as they are, once gzip-compressed as real hosts send them.
With ``--before OTHER_SITE_DIR`` (an earlier build), that site's pages are measured too and
printed beside "site".  The loads of each version are taken in turn (the machine's load
changes); the load average is printed.  Targets (issue 19, gzip): the lab answers within
1.0 s on the lab page and 1.5 s on the chapter.

Printed, never asserted (timings depend on the machine).

    .venv/bin/python scripts/bench_site.py [SITE_DIR] [--before OTHER_SITE_DIR]   # default: _build/html, or $F11_SITE_DIR
"""

from __future__ import annotations

import functools
import gzip
import json
import http.server
import os
import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("book/lab.html", "book/f11-attention.html")
TARGETS = {"book/lab.html": 1000, "book/f11-attention.html": 1500}  # ms, gzip
RUNS = 3
PHONE = {"offline": False, "latency": 150, "downloadThroughput": 4_000_000 / 8, "uploadThroughput": 1_000_000 / 8}
CPU_SLOWDOWN = 4
READY_PROBE = """
new MutationObserver(() => {
  if (window.__labReadyAt === undefined && document.querySelector('[data-attention-lab][data-lab-ready="true"]'))
    window.__labReadyAt = performance.now();
}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-lab-ready"]});
"""


def naive(html: str, reference: dict | None) -> str:
    """The page as Sphinx and the theme write it: blocking scripts (the lab's last) and the
    theme's seven original stylesheets instead of the one cut file."""
    loader = re.search(r"<script>/\* the lab's own scripts first.*?</script>\n?", html, re.S)
    if loader:
        lab = re.findall(r'"([^"]*attention-lab/[^"]+\.js[^"]*)"', loader.group(0))
        html = html.replace(loader.group(0), "")
        html = html.replace("<script defer ", "<script ")
        tags = "".join(f'<script src="{src}"></script>\n' for src in lab)
        html = html.replace("</head>", tags + "</head>", 1)
    if reference:
        bundle = re.search(r'<link rel="stylesheet" type="text/css" href="((?:\.\./)*)'
                           + re.escape(reference["bundle"]) + r'[^"]*" />', html)
        if bundle:
            links = "".join(f'<link rel="stylesheet" type="text/css" href="{bundle.group(1)}{part}" />\n'
                            for part in reference["parts"])
            html = html.replace(bundle.group(0), links, 1)
    return html


TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript",
         ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
         ".woff": "font/woff", ".woff2": "font/woff2"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The site, and under /naive/ and /gzip/ (either or both, in that order) its naive
    version and a gzip-compressing server, as hosts such as GitHub Pages serve it."""

    reference: dict | None = None
    reference_dir: Path | None = None
    protocol_version = "HTTP/1.1"  # every response has a Content-Length, so connections can stay open

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0]
        gzip_it = path.startswith("/gzip/")
        # A host keeps the connection open for the next file (HTTP/1.1 keep-alive; GitHub Pages
        # and the like even multiplex over HTTP/2); python -m http.server closes it each time.
        self.close_connection = not gzip_it
        path = path[len("/gzip"):] if gzip_it else path
        is_naive = path.startswith("/naive/")
        path = path[len("/naive"):] if is_naive else path
        local = path.lstrip("/")
        file = Path(self.directory) / local
        if is_naive and self.reference_dir is not None and (self.reference_dir / local).is_file():
            file = self.reference_dir / local
        if not file.is_file():
            self.send_error(404)
            return
        body = file.read_bytes()
        if is_naive and file.suffix == ".html":
            body = naive(body.decode("utf-8"), self.reference).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", TYPES.get(file.suffix, "application/octet-stream"))
        if gzip_it and file.suffix not in (".png", ".woff", ".woff2"):
            body = gzip.compress(body, 6)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


def slow_phone(browser, **options):
    """(context, page, cdp) of a 375x812 phone with a cold cache, PHONE's network and CPU_SLOWDOWN
    (scripts/bench_css.py measures paints on the same phone)."""
    context = browser.new_context(viewport={"width": 375, "height": 812}, **options)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", PHONE)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    return context, page, cdp


def measure(browser, url: str) -> tuple[float | None, int]:
    context, page, cdp = slow_phone(browser)
    received = []
    cdp.on("Network.loadingFinished", lambda e: received.append(e.get("encodedDataLength", 0)))
    page.add_init_script(READY_PROBE)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_function("window.__labReadyAt !== undefined", timeout=60_000)
    ready = page.evaluate("window.__labReadyAt")
    page.wait_for_timeout(300)
    context.close()
    return ready, sum(received)


def _serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler_class = type("Handler", (_Handler,), {})
    reference_dir = site.parent / "css-reference"
    if (reference_dir / "bundle.json").is_file():
        handler_class.reference_dir = reference_dir
        handler_class.reference = json.loads((reference_dir / "bundle.json").read_text("utf-8"))
    else:
        print(f"(no {reference_dir}: the naive pages keep the cut stylesheet)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler_class, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main(argv: list[str]) -> int:
    before = None
    if "--before" in argv:
        at = argv.index("--before")
        before = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    site = Path(argv[0] if argv else os.environ.get("F11_SITE_DIR", ROOT / "_build" / "html"))
    for folder in (site, before):
        if folder is not None and not (folder / "book" / "lab.html").exists():
            print(f"no built site at {folder}: run scripts/build.sh (or pass the _build/html folder)", file=sys.stderr)
            return 1
    server, base = _serve(site)
    other_server, other = _serve(before) if before else (None, None)
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    print(f"slow phone: CPU x{CPU_SLOWDOWN}, {PHONE['downloadThroughput'] * 8 / 1e6:.0f} Mbit/s, "
          f"{PHONE['latency']} ms RTT, cold cache; median of {RUNS} loads; "
          f"load average {Path('/proc/loadavg').read_text().split()[0]}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for served, prefix in (("files as they are (python -m http.server)", ""),
                               ("gzip over kept-alive connections, as hosts such as GitHub Pages serve them", "gzip/")):
            print(f"\n{served}:")
            print(f"{'page':26s} {'site: lab ready':>16s} " + (f"{'before':>9s} " if before else "")
                  + f"{'naive: lab ready':>17s} {'speed-up':>9s} {'site bytes':>11s} {'naive bytes':>12s}"
                  + ("   target" if prefix else ""))
            for page in PAGES:
                versions = {"site": f"{base}/{prefix}{page}", "naive": f"{base}/{prefix}naive/{page}"}
                if before:
                    versions["before"] = f"{other}/{prefix}{page}"
                runs = {k: [] for k in versions}
                for _ in range(RUNS):  # each version in turn
                    for k, url in versions.items():
                        runs[k].append(measure(browser, url))
                s, n = (statistics.median(t for t, _ in runs[k]) for k in ("site", "naive"))
                line = f"{page:26s} {s:13.0f} ms "
                if before:
                    line += f"{statistics.median(t for t, _ in runs['before']):6.0f} ms "
                line += (f"{n:14.0f} ms {n / s:8.1f}x "
                         f"{runs['site'][0][1] / 1e3:8.0f} KB {runs['naive'][0][1] / 1e3:9.0f} KB")
                if prefix:
                    line += f"   <= {TARGETS[page]} ms: {'met' if s <= TARGETS[page] else 'NOT met'}"
                print(line)
        browser.close()
    server.shutdown()
    if other_server:
        other_server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

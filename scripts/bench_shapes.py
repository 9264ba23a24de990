"""How long the site's shapes lab takes at its largest tables, beside the 2x2 lab (scripts/bench_twin.py).

Serves a page of its own (``attention_lab.shapes.shapes_html`` at n = m = 6, d_model = d_k = d_v = 4,
self-attention with the causal mask, plus ``attention_lab/static/attention-lab/``) on 127.0.0.1, so
no book build is needed, opens it in headless Chromium (scripts/find_chromium.py) and prints, on
the desktop and with the CPU slowed 4x (CDP ``Emulation.setCPUThrottlingRate``):

* update: a typed value (``change`` on one of the cells' text boxes, X/Wq/Wk/Wv in turn) and the
  synchronous recomputation and redraw it triggers (generalAttention, 6x6 S and A, 6x4 Q/K/V/O,
  the worked text, the address), timed with ``performance.now()``; layout and paint come later;
* shape change: n 6 -> 5 -> 6 and d_v 4 -> 3 -> 4 (``change`` on the shape boxes): every table
  whose shape changes is rebuilt (input tables and the view's), then the same redraw;
* shape change and the layout it needs: the same, then ``offsetHeight`` read inside the timed
  span, so the page's layout at the new shape and the strip's new cell size (shapes.js sizes the
  strip in the same task from sizes it keeps, reading nothing) is counted, as the browser must do
  it before it can draw; paint is not;
* the same with h = 4 heads (issue 31: Wq, Wk, Wv [4, 16], Wo [16, 4]; four S and A, O and Y),
  its shape changes also h 4 -> 3 -> 4;
* a shape or h change until the browser has drawn it (the change, the next frame's
  requestAnimationFrame and a task after it: style, layout and paint inside), h = 1 and h = 4;
* held arrow keys on a cell (keydown, as a held key repeats it): the address is written once the
  value settles; beside it the naive way, the address written inside every key (history.replaceState
  at once), with how many times each wrote it;
* beside them, the 2x2 lab's update (bench_twin.measure: a slider's ``input`` event).

    python scripts/bench_shapes.py
    python scripts/bench_shapes.py --n 300

Not a timed test: a benchmark that prints figures and whether issue 20's and 31's targets are met
(desktop: update median <= 2 ms, shape or h change median <= 16 ms, with its layout inside one frame
at h = 4, the address written only once held keys settle; at 4x CPU with h = 4: a cell change <= 8 ms,
a shape or h change to the next frame <= 50 ms), and the machine's load average before and after
(on a busy machine every figure is larger).  Lighthouse's phone figures: scripts/bench_lighthouse.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import bench_twin  # noqa: E402
from find_chromium import find_chromium, missing_message  # noqa: E402

TARGETS = {"update_median_ms": 2.0, "shape_median_ms": 16.0, "heads_update_4x_ms": 8.0, "heads_frame_4x_ms": 50.0}

UPDATE_JS = """async (n) => {
  const root = document.querySelector("[data-shapes-lab]");
  const boxes = [...root.querySelectorAll('input[data-param-text]')].filter(b => !b.closest('[hidden]'));
  const times = [];
  for (let k = 0; k < n; k++) {
    const b = boxes[(k * 7) % boxes.length];
    b.value = String(((k * 3) % 7) - 3);
    const t0 = performance.now();
    b.dispatchEvent(new Event("change", { bubbles: true }));
    times.push(performance.now() - t0);
    if (k % 50 === 49) await new Promise(requestAnimationFrame);
  }
  return { times, cells: root.querySelectorAll('td.al-cell[data-matrix="S"]').length, ok: !!root.__attentionLab.result };
}"""

SHAPE_JS = """async (n) => {
  const root = document.querySelector("[data-shapes-lab]");
  const box = (k) => root.querySelector('input[data-param="' + k + '"]');
  const moves = root.__attentionLab.state.h > 1 ? [["n", 5], ["n", 6], ["h", 3], ["h", 4]] : [["n", 5], ["n", 6], ["d_v", 3], ["d_v", 4]];
  const times = [];
  for (let k = 0; k < n; k++) {
    const [name, v] = moves[k % moves.length];
    const b = box(name);
    b.value = String(v);
    const t0 = performance.now();
    b.dispatchEvent(new Event("change", { bubbles: true }));
    times.push(performance.now() - t0);
    if (k % 20 === 19) await new Promise(requestAnimationFrame);
  }
  return { times, cells: root.querySelectorAll('td.al-cell[data-matrix="S"]').length, ok: !!root.__attentionLab.result };
}"""


#: Held arrow keys on a cell box (keydown, as the browser repeats it): each key recomputes and redraws;
#: the address is written once the value settles (shapes.js URL_WAIT after the last key).  `naive`
#: also writes it inside every key's span (history.replaceState at once: the way before 9c5705a).
KEYS_JS = """async ([n, naive]) => {
  const root = document.querySelector("[data-shapes-lab]"), lab = root.__attentionLab;
  const box = [...root.querySelectorAll('input[data-param-text^="Wq["]')].filter(b => !b.closest('[hidden]'))[0];
  const real = history.replaceState.bind(history);
  let writes = 0;
  history.replaceState = (...a) => { writes += 1; return real(...a); };
  const times = [];
  for (let k = 0; k < (n | 1); k++) {  // an odd count: the value ends one step up, so the address must change
    const key = k % 2 ? "ArrowDown" : "ArrowUp";
    const t0 = performance.now();
    box.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, repeat: k > 0 }));
    if (naive) lab.syncUrl();
    times.push(performance.now() - t0);
    if (k % 50 === 49) await new Promise(requestAnimationFrame);
  }
  const during = writes;
  await new Promise(r => setTimeout(r, 500));
  history.replaceState = real;
  return { times, during, after: writes - during, ok: !!lab.result };
}"""

#: A shape or h change until the browser has drawn it: the change, then the next frame's
#: requestAnimationFrame and a task after it (style, layout and paint of that frame are inside).
FRAME_JS = SHAPE_JS.replace(
    'b.dispatchEvent(new Event("change", { bubbles: true }));',
    'b.dispatchEvent(new Event("change", { bubbles: true })); '
    'await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));')
assert FRAME_JS != SHAPE_JS

SIZED_JS = SHAPE_JS.replace(
    'b.dispatchEvent(new Event("change", { bubbles: true }));',
    'b.dispatchEvent(new Event("change", { bubbles: true })); void document.body.offsetHeight;')
assert SIZED_JS != SHAPE_JS


def big_state(h: int = 1) -> dict:
    from attention_lab.shapes import default_state, resized

    return resized(default_state(), n=6, m=6, d_model=4, d_k=4, d_v=4, h=h)


def page_html(state: dict) -> str:
    from attention_lab.shapes import SHAPES_CSS, SHAPES_JS, shapes_html

    css = "".join(f'<link rel="stylesheet" href="attention-lab/{f}">' for f in SHAPES_CSS)
    js = "".join(f'<script src="attention-lab/{f}"></script>' for f in SHAPES_JS)
    return ('<!DOCTYPE html><html lang="zh-CN" data-theme="light"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>F11 shapes lab</title>{css}{js}'
            f'</head><body style="margin:0 auto;max-width:72rem;padding:0.5rem">{shapes_html(state)}</body></html>')


def measure(n: int = 500, shape_n: int = 200, warmup: int = 100, rates=(1, 4), h: int = 1, frame_n: int = 40) -> dict:
    """{rate: {"update", "shape", "sized", "frame", "keys", "naive": stats; "writes", "naive_writes":
    (address writes during the keys, after they settled)}} at 6x6, d = 4, h heads."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "attention-lab").symlink_to(bench_twin.STATIC.resolve(), target_is_directory=True)
        (folder / "index.html").write_text(page_html(big_state(h)), encoding="utf-8")
        server = bench_twin._serve(folder)
        try:
            chromium = find_chromium()
            if chromium is None:
                raise SystemExit(missing_message())
            out = {}
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
                for rate in rates:
                    context = browser.new_context(viewport={"width": 1280, "height": 900})
                    page = context.new_page()
                    errors = []
                    page.on("pageerror", lambda e: errors.append(str(e)))
                    context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
                    page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                    page.wait_for_selector("[data-lab-ready='true'] td.al-cell[data-matrix='S']")
                    page.evaluate(UPDATE_JS, warmup)
                    update = page.evaluate(UPDATE_JS, n)
                    page.evaluate(SHAPE_JS, min(warmup, shape_n))
                    shape = page.evaluate(SHAPE_JS, shape_n)
                    sized = page.evaluate(SIZED_JS, shape_n)
                    frame = page.evaluate(FRAME_JS, frame_n)
                    keys = page.evaluate(KEYS_JS, [n, False])
                    naive = page.evaluate(KEYS_JS, [n, True])
                    context.close()
                    if errors or not (update["ok"] and shape["ok"] and keys["ok"]) or update["cells"] != 36 * h \
                            or shape["cells"] != 36 * h:
                        raise RuntimeError(f"the shapes lab did not run cleanly: {errors}, {update['cells']} / {shape['cells']} S cells")
                    out[rate] = {"update": bench_twin._stats(update["times"]), "shape": bench_twin._stats(shape["times"]),
                                 "sized": bench_twin._stats(sized["times"]), "frame": bench_twin._stats(frame["times"]),
                                 "keys": bench_twin._stats(keys["times"]), "naive": bench_twin._stats(naive["times"]),
                                 "writes": (keys["during"], keys["after"]), "naive_writes": (naive["during"], naive["after"])}
                browser.close()
        finally:
            server.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="typed values to time (and 2x2 slider events)")
    parser.add_argument("--shape-n", type=int, default=200, help="shape changes to time")
    args = parser.parse_args()
    if hasattr(os, "getloadavg"):  # the figures scale with what else the machine is doing
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    r = measure(args.n, args.shape_n)
    heads = measure(args.n, args.shape_n, h=4)
    twin = bench_twin.measure(args.n, warmup=100)["view"]
    d, s = r[1], r[4]
    hd, hs = heads[1], heads[4]

    def pair(st):
        return f"{st['median_ms']:7.2f} / {st['p95_ms']:6.2f}"

    print("site labs in headless Chromium, ms, median / p95 (performance.now(), ~0.1 ms resolution):")
    print(f"  {'':52} {'desktop':>16}   {'4x CPU':>16}")
    print(f"  {'2x2 lab: update (a slider input event)':52} {pair(twin)}   {'':>16}   n={twin['n']}")
    print(f"  {'shapes lab 6x6, d=4: update (a typed value)':52} {pair(d['update'])}   {pair(s['update'])}   n={d['update']['n']}")
    print(f"  {'shapes lab 6x6, d=4: shape change (tables rebuilt)':52} {pair(d['shape'])}   {pair(s['shape'])}   "
          f"n={d['shape']['n']} (n 6<->5, d_v 4<->3)")
    print(f"  {'  the same + the layout it needs before it is drawn':52} {pair(d['sized'])}   {pair(s['sized'])}   "
          f"n={d['sized']['n']}")
    print(f"  {'shapes lab 6x6, d=4, h=4: update (a typed value)':52} {pair(hd['update'])}   {pair(hs['update'])}   n={hd['update']['n']}")
    print(f"  {'shapes lab 6x6, d=4, h=4: shape or h change':52} {pair(hd['shape'])}   {pair(hs['shape'])}   "
          f"n={hd['shape']['n']} (n 6<->5, h 4<->3)")
    print(f"  {'  the same + the layout it needs before it is drawn':52} {pair(hd['sized'])}   {pair(hs['sized'])}   "
          f"n={hd['sized']['n']}")
    for label, key in (("h=1", r), ("h=4", heads)):
        print(f"  {f'shapes lab {label}: shape change until drawn (next frame)':52} {pair(key[1]['frame'])}   "
              f"{pair(key[4]['frame'])}   n={key[1]['frame']['n']}")
    for label, key in (("h=1", r), ("h=4", heads)):
        print(f"  {f'shapes lab {label}: held arrow key, address once settled':52} {pair(key[1]['keys'])}   "
              f"{pair(key[4]['keys'])}   address written {key[1]['writes'][0]} times during {key[1]['keys']['n']} keys, "
              f"{key[1]['writes'][1]} after")
        print(f"  {'  the naive way: the address written at every key':52} {pair(key[1]['naive'])}   "
              f"{pair(key[4]['naive'])}   address written {key[1]['naive_writes'][0]} times")
    print("targets (desktop):")
    print(f"  update median <= {TARGETS['update_median_ms']:g} ms: "
          f"{bench_twin._verdict(d['update']['median_ms'] <= TARGETS['update_median_ms'])}")
    print(f"  shape change median <= {TARGETS['shape_median_ms']:g} ms: "
          f"{bench_twin._verdict(d['shape']['median_ms'] <= TARGETS['shape_median_ms'])}"
          f"; p95 within one frame ({TARGETS['shape_median_ms']:g} ms) too: "
          f"{bench_twin._verdict(d['shape']['p95_ms'] <= TARGETS['shape_median_ms'])}")
    print(f"  h=4: update median <= {TARGETS['update_median_ms']:g} ms: "
          f"{bench_twin._verdict(hd['update']['median_ms'] <= TARGETS['update_median_ms'])}; "
          f"shape or h change median <= {TARGETS['shape_median_ms']:g} ms: "
          f"{bench_twin._verdict(hd['shape']['median_ms'] <= TARGETS['shape_median_ms'])}; "
          f"at 4x CPU an update <= {TARGETS['heads_update_4x_ms']:g} ms: "
          f"{bench_twin._verdict(hs['update']['median_ms'] <= TARGETS['heads_update_4x_ms'])}")
    print(f"  h=4: a shape or h change with its layout inside one frame ({TARGETS['shape_median_ms']:g} ms), median: "
          f"{bench_twin._verdict(hd['sized']['median_ms'] <= TARGETS['shape_median_ms'])}; the address written "
          f"only once the held keys settled: {bench_twin._verdict(heads[1]['writes'][0] == 0 and heads[1]['writes'][1] >= 1)}")
    print("targets (4x CPU, a slow phone):")
    print(f"  h=4: a cell change (held key) <= {TARGETS['heads_update_4x_ms']:g} ms: "
          f"{bench_twin._verdict(hs['keys']['median_ms'] <= TARGETS['heads_update_4x_ms'])}; "
          f"a shape or h change to the next frame <= {TARGETS['heads_frame_4x_ms']:g} ms: "
          f"{bench_twin._verdict(hs['frame']['median_ms'] <= TARGETS['heads_frame_4x_ms'])}")
    print("  (Lighthouse mobile >= 90 and layout shift <= 0.02 on the shapes page: "
          "scripts/bench_lighthouse.py _build/html --pages book/shapes.html)")
    if hasattr(os, "getloadavg"):  # a figure measured while the load rose says less
        print(f"machine: load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

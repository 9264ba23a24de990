"""Benchmark: one control change -> what the reader sees, the kernel lab against the naive way.

Prints, side by side in one run (median and p95, in ms; from this machine, not a test):

1. Python side, no browser: one control change -> the kernel's new numbers.
   (a) the kernel lab (``attention_lab.AttentionLab``): set a control's ``.value``; it returns once
       ``core.attention`` has run and ``lab.result`` holds the new numbers (the view does not wait
       for this: it draws in the browser);
   (b) the naive way: ``ipywidgets.interactive`` (what ``interact`` uses) with a callback that
       recomputes and draws a new matplotlib figure (S, A, O, Q, K, V) as PNG on each change.
   Both get the same random sequence of changes.
2. A real JupyterLab as Binder gives it (scripts/binder_env.py: the env from binder/requirements.txt,
   postBuild, a plain server) in headless Chromium, a notebook holding (a) the lab and (b) a naive
   ``interact`` + new matplotlib figure; a key press (ArrowRight / ArrowLeft) on the Wv[0,0]
   slider's handle -> the O[爱,第 0 格] value shown updated (the cell's text for the lab; the new
   picture decoded for the naive way), timed inside the page with ``performance.now()`` from the
   keydown to the next animation frame after the change.  Twice: over a direct connection, and
   through scripts/latency_proxy.py (75 ms each way, a 150 ms round trip as mybinder often has).
   Targets: (a) median <= 20 ms on both links, and >= 8x faster than (b) over the slow link.
3. (if ``scripts/bench_twin.py`` is there) the static site's twin in headless Chromium.

Usage: .venv/bin/python scripts/bench.py [-n 300] [--naive-n 60] [--presses 40] [--naive-presses 20]
       [--seed 0] [--no-jupyter] [--no-twin]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from find_chromium import find_chromium  # noqa: E402  (the one finder of scripts and tests)

#: Slow link: seconds each way through scripts/latency_proxy.py.
SLOW = 0.075


def random_changes(n: int, seed: int) -> list[tuple[str, object]]:
    """``n`` (control name, new value) pairs, every value on its control's step grid."""
    from attention_lab.params import PARAM_NAMES, range_of

    rng = np.random.default_rng(seed)
    causal = True
    changes = []
    for _ in range(n):
        name = PARAM_NAMES[int(rng.integers(len(PARAM_NAMES)))]
        if name == "causal":
            causal = not causal
            changes.append((name, causal))
            continue
        r = range_of(name)
        k = int(rng.integers(0, round((r.max - r.min) / r.step) + 1))
        changes.append((name, round(r.min + k * r.step, 10)))
    return changes


# ------------------------------------------------------------------------------ 1. Python side

def bench_lab(changes) -> list[float]:
    from attention_lab import AttentionLab

    lab = AttentionLab()
    times = []
    for name, value in changes:
        control = lab.controls[name]
        if control.value == value:
            continue  # not a change: nothing would happen
        count = lab.update_count
        t0 = time.perf_counter()
        control.value = value  # returns once lab.result holds the new numbers
        times.append((time.perf_counter() - t0) * 1000)
        assert lab.update_count == count + 1
    return times


def bench_naive(changes) -> list[float]:
    """What a first notebook would do: ``interact`` with a callback that draws a new figure."""
    import ipywidgets as widgets

    from attention_lab import attention
    from attention_lab.params import default_params, tables_from_params
    from attention_lab.plotting import AttentionFigure
    from attention_lab.worked import worked_text

    params = default_params()
    image = widgets.Image(format="png")
    text = widgets.HTML()

    def callback(**values):
        result = attention(**tables_from_params(values))
        figure = AttentionFigure(result, ("S", "A", "O", "Q", "K", "V"))  # a new figure every time
        image.value = figure.to_png()
        text.value = worked_text(result, 1)

    controls = {}
    for name, value in params.items():
        controls[name] = widgets.Checkbox(value=value) if name == "causal" else widgets.FloatText(value=value)
    # Same wiring as ipywidgets.interact: one observer calls the function with every value.
    # (Outside a kernel, interactive's Output widget prints terminal escapes: swallow them.)
    with contextlib.redirect_stdout(io.StringIO()):
        interactive = widgets.interactive(callback, **controls)
        interactive.update()
        times = []
        for name, value in changes:
            control = controls[name]
            if control.value == value:
                continue
            t0 = time.perf_counter()
            control.value = value
            times.append((time.perf_counter() - t0) * 1000)
            gc.collect(0)
    return times


# ------------------------------------------------------------------------------ 2. JupyterLab

LAB_CELL = """\
from attention_lab import AttentionLab
lab = AttentionLab()
lab"""

NAIVE_CELL = """\
# The naive way: interact + a new matplotlib figure on every change.
import ipywidgets as widgets
from IPython.display import display
from attention_lab import attention
from attention_lab.lab import dom_class
from attention_lab.params import default_params, range_of, tables_from_params
from attention_lab.plotting import plot_attention

def naive(**params):
    display(plot_attention(attention(**tables_from_params(params)), ("S", "A", "O", "Q", "K", "V")))

sliders = {}
for name, value in default_params().items():
    if name == "causal":
        sliders[name] = widgets.Checkbox(value=value, description=name)
    else:
        r = range_of(name)
        sliders[name] = widgets.FloatSlider(value=value, min=r.min, max=r.max, step=r.step, description=name)
    sliders[name].add_class("naive-" + dom_class(name))
box = widgets.interactive(naive, **sliders)
box.add_class("naive-lab")
box"""

# In the page: keydown on `handle` starts the clock; the first change under `target` after it
# (text for the lab, a new <img> for the naive way, awaited until decoded) stops it at the next frame.
INSTALL = """([handleSel, targetSel, kind]) => {
  const handle = document.querySelector(handleSel), target = document.querySelector(targetSel);
  const b = window.__bench = { t0: 0, t1: 0, times: [] };
  handle.addEventListener('keydown', () => { b.t0 = performance.now(); b.t1 = 0; }, true);
  const done = () => requestAnimationFrame(() => {
    if (b.t0 && !b.t1) { b.t1 = performance.now(); b.times.push(b.t1 - b.t0); }
  });
  new MutationObserver((records) => {
    if (!b.t0 || b.t1) return;
    if (kind === 'text') { done(); return; }
    for (const r of records) for (const n of r.addedNodes) {
      const img = n.tagName === 'IMG' ? n : (n.querySelector && n.querySelector('img'));
      if (img) { img.decode().then(done, done); return; }
    }
  }).observe(target, { childList: true, characterData: true, subtree: true });
}"""


def _write_notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(LAB_CELL), nbformat.v4.new_code_cell(NAIVE_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def _press_series(page, handle_sel: str, target_sel: str, kind: str, presses: int):
    page.locator(target_sel).scroll_into_view_if_needed()
    page.evaluate(INSTALL, [handle_sel, target_sel, kind])
    handle = page.locator(handle_sel)
    for k in range(presses):
        handle.focus()
        page.keyboard.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
        page.wait_for_function("(n) => window.__bench.times.length >= n", arg=k + 1, timeout=60_000)
        page.wait_for_timeout(300)  # let the kernel's echo come back before the next press
    return page.evaluate("() => window.__bench.times")


def bench_jupyterlab(presses: int, naive_presses: int) -> dict:
    """-> {"direct": (lab times, naive times), "slow": (lab times, naive times)}."""
    from playwright.sync_api import sync_playwright

    import binder_env
    import latency_proxy

    env_dir = binder_env.ensure_env()
    out = {}
    with tempfile.TemporaryDirectory(prefix="f11-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "nb").mkdir()
        for link in ("direct", "slow"):  # one notebook (and kernel) for each link
            _write_notebook(tmp / "nb" / f"bench-{link}.ipynb")
        home = tmp / "home"
        home.mkdir()
        binder_env.run_postbuild(env_dir, home)
        with binder_env.running_jupyter("lab", tmp / "nb", home, env_dir) as (base, token), \
                latency_proxy.running(int(base.rsplit(":", 1)[1]), SLOW) as slow_port, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])
            try:
                for link, url in (("direct", base), ("slow", f"http://127.0.0.1:{slow_port}")):
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    page.set_default_timeout(90_000)
                    binder_env.open_and_run(page, url, token, f"bench-{link}.ipynb", "lab")
                    page.wait_for_selector('.f11-lab [data-attention-lab][data-lab-ready="true"]')
                    page.wait_for_selector(".naive-lab img")
                    page.wait_for_timeout(1000)
                    lab = _press_series(page, ".f11-lab .f11-param-Wv-0-0 .noUi-handle",
                                        '.f11-lab td[data-matrix="O"][data-row="1"][data-col="0"] .al-v',
                                        "text", presses)
                    naive = _press_series(page, ".naive-lab .naive-f11-param-Wv-0-0 .noUi-handle",
                                          ".naive-lab .widget-output", "img", naive_presses)
                    out[link] = (lab, naive)
                    page.close()
            finally:
                browser.close()
    return out


# ------------------------------------------------------------------------------ 3. the site's twin

def twin_row():
    path = ROOT / "scripts" / "bench_twin.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_twin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure()


# ------------------------------------------------------------------------------ report

def stats(times):
    return float(np.median(times)), float(np.percentile(times, 95)), len(times)


def row(label, times):
    med, p95, n = stats(times)
    return f"  {label:52} {med:9.2f} {p95:9.2f} {n:5d}"


def verdict(lab: list, naive: list, ms: float, times: float, digits: int) -> str:
    """The speed-up line: medians of the lab and the naive way, and whether the targets are met."""
    m_lab, m_naive = stats(lab)[0], stats(naive)[0]
    met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
    ratio = f", >= {times:g}x [{met(m_naive / m_lab >= times)}]" if times else ""
    return (f"  speed-up (median, naive / lab): {m_naive / m_lab:.{digits}f}x   "
            f"targets: lab median <= {ms:g} ms [{met(m_lab <= ms)}]{ratio}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="changes for the lab (Python side)")
    parser.add_argument("--naive-n", type=int, default=60, help="changes for the naive way (slow)")
    parser.add_argument("--presses", type=int, default=40, help="key presses on the lab in JupyterLab")
    parser.add_argument("--naive-presses", type=int, default=20, help="key presses on the naive interact")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-jupyter", action="store_true", help="skip the JupyterLab measurement")
    parser.add_argument("--no-twin", action="store_true", help="skip the static twin's measurement")
    parser.add_argument("--json", type=Path, help="also write the raw times here")
    args = parser.parse_args(argv)

    changes = random_changes(max(args.n, args.naive_n), args.seed)
    bench_lab(changes[:5])  # warm-up outside the measurement (imports, first figure)
    bench_naive(changes[:2])
    py_lab = bench_lab(changes[: args.n])
    py_naive = bench_naive(changes[: args.naive_n])
    raw = {"python_lab": py_lab, "python_naive": py_naive}

    head = f"  {'':52} {'median':>9} {'p95':>9} {'n':>5}"
    cpus, load = os.cpu_count(), os.getloadavg()[0]
    print(f"F11 lab benchmark, {time.strftime('%Y-%m-%d %H:%M')}, python {sys.version.split()[0]}, times in ms; "
          f"{cpus} CPUs, load average {load:.1f} at the start (figures are slower on a busy machine)")
    print("1. Python side: one control change -> the kernel's new numbers")
    print(head)
    print(row("(a) AttentionLab: control.value -> lab.result", py_lab))
    print(row("(b) naive interact + new matplotlib figure (PNG)", py_naive))
    print(verdict(py_lab, py_naive, ms=3, times=30, digits=0))

    if not args.no_jupyter:
        print("2. JupyterLab from the Binder env, headless Chromium: key press on a slider -> O[爱,第 0 格] shown updated")
        try:
            runs = bench_jupyterlab(args.presses, args.naive_presses)
        except Exception as exc:  # report, don't hide the Python figures above
            print(f"  not measured ({type(exc).__name__}: {str(exc)[:300]})")
        else:
            print(head)
            for link, what in (("direct", "direct connection"), ("slow", f"slow link, {SLOW * 1000:.0f} ms each way")):
                jl_lab, jl_naive = runs[link]
                raw.update({f"jupyter_{link}_lab": jl_lab, f"jupyter_{link}_naive": jl_naive})
                print(f"  {what}:")
                print(row("(a) AttentionLab (the view reads the sliders' models)", jl_lab))
                print(row("(b) naive interact + new matplotlib figure", jl_naive))
                print(verdict(jl_lab, jl_naive, ms=20, times=8 if link == "slow" else None, digits=1))

    if not args.no_twin:
        label = "(c) static site twin, headless Chromium"
        try:
            twin = twin_row()
        except Exception as exc:  # the twin's benchmark is someone else's; report, don't crash
            twin = exc
        print("3. The static site (no kernel)")
        if twin is None:
            print(f"  {label:52} not available (no scripts/bench_twin.py)")
        elif isinstance(twin, Exception):
            print(f"  {label:52} not available ({type(twin).__name__}: {twin})")
        else:
            # bench_twin.measure() -> {"view": stats, "naive": stats} (or one stats dict, older versions).
            rows = twin.items() if "median_ms" not in twin else [("view", twin)]
            for name, st in rows:
                what = {"view": label, "naive": "(d) naive page (rebuilds everything per change)"}.get(name, name)
                print(f"  {what:52} {st['median_ms']:9.2f} {st['p95_ms']:9.2f} {st['n']:5d}")
    if args.json:
        args.json.write_text(json.dumps(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())

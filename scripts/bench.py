"""Benchmark: time from one control change to everything re-rendered.

Prints a table (median and p95, in ms) for, side by side in the same run:

(a) the kernel lab (``attention_lab.AttentionLab``): set a control's ``.value``
    and wait until the computation, both heatmap PNGs and the worked text are
    updated (the lab updates synchronously, so that is when ``.value =`` returns);
(b) the naive way: an ``ipywidgets.interact``-style callback that recomputes and
    draws a new figure (S, A, O, Q, K, V) and renders it to PNG on each change;
(c) the static JavaScript twin in headless Chromium, if ``scripts/bench_twin.py``
    exists (it exposes ``measure() -> {"median_ms", "p95_ms", "n"}``).

Both (a) and (b) get the same random sequence of changes (a random control, a
random value on its step grid).  Not a test: figures to read, from this machine.

Usage: .venv/bin/python scripts/bench.py [-n 300] [--naive-n 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import io
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


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
        value = round(r.min + k * r.step, 10)
        changes.append((name, int(value) if name == "d_k" else value))
    return changes


def bench_lab(changes) -> list[float]:
    from attention_lab import AttentionLab

    lab = AttentionLab()
    times = []
    for name, value in changes:
        control = lab.controls[name]
        if control.value == value:
            continue  # not a change: nothing would happen
        t0 = time.perf_counter()
        control.value = value  # returns once every output is updated
        times.append((time.perf_counter() - t0) * 1000)
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
        if name == "causal":
            controls[name] = widgets.Checkbox(value=value)
        else:
            controls[name] = widgets.FloatText(value=value)
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


def twin_row():
    path = ROOT / "scripts" / "bench_twin.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_twin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="changes for the lab")
    parser.add_argument("--naive-n", type=int, default=60, help="changes for the naive way (slow)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    changes = random_changes(max(args.n, args.naive_n), args.seed)
    # Warm-up outside the measurement (imports, fonts, first figure).
    bench_lab(changes[:5])
    lab = bench_lab(changes[: args.n])
    naive = bench_naive(changes[: args.naive_n])
    rows = [("(a) kernel lab, AttentionLab", lab), ("(b) naive interact, new figure each change", naive)]

    def stats(times):
        return float(np.median(times)), float(np.percentile(times, 95)), len(times)

    print(f"change -> everything re-rendered (ms), {time.strftime('%Y-%m-%d %H:%M')}, "
          f"python {sys.version.split()[0]}")
    print(f"{'':46} {'median':>8} {'p95':>8} {'n':>6}")
    for label, times in rows:
        med, p95, n = stats(times)
        print(f"{label:46} {med:8.1f} {p95:8.1f} {n:6d}")
    try:
        twin = twin_row()
    except Exception as exc:  # the twin's benchmark is someone else's; report, don't crash
        twin = exc
    label = "(c) static twin, headless Chromium"
    if twin is None:
        print(f"{label:46} {'not available (no scripts/bench_twin.py)':>24}")
    elif isinstance(twin, Exception):
        print(f"{label:46} not available ({type(twin).__name__}: {twin})")
    else:
        print(f"{label:46} {twin['median_ms']:8.2f} {twin['p95_ms']:8.2f} {twin['n']:6d}")
    med_lab, med_naive = stats(lab)[0], stats(naive)[0]
    print(f"speed-up (median, naive / lab): {med_naive / med_lab:.1f}x; "
          f"target: lab median <= 30 ms and >= 5x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The kernel lab driven through its contract, with no browser: set a control's value as a slider
move or notebook code would, then check what the kernel holds (``lab.result``, ``lab.notes``,
``lab.state``) against the core, computed independently.  (The view draws from the controls'
models in the browser: tests/test_jupyter_browser.py checks it in a real JupyterLab.)"""

from __future__ import annotations

import gc
import importlib.util
import json
import math
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from attention_lab import AttentionLab, attention, baseline
from attention_lab.params import D_K_POWERS, PARAM_NAMES, RANGES, coerce, default_params, parse_number, range_of
from attention_lab.web import lab_html
from attention_lab.widget import LabView

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "attention_lab" / "static" / "attention-lab"
DRAFT = {"S10": 0.7071067812, "A10": 0.6697615493, "A11": 0.3302384507,
         "O10": 6.6976154933, "O11": 6.6047690135}


@pytest.fixture(scope="module")
def lab():
    return AttentionLab()


@pytest.fixture
def fresh(lab):
    lab.set_params(default_params(), row=1)
    return lab


def independent(params: dict):
    """The core's answer for these control values, not through the lab."""
    X = np.array([[params[f"X[{i},{j}]"] for j in range(2)] for i in range(2)])
    W = {t: np.array([[params[f"{t}[{i},{j}]"] for j in range(2)] for i in range(2)])
         for t in ("Wq", "Wk", "Wv")}
    return attention(X, W["Wq"], W["Wk"], W["Wv"], d_k=params["d_k"], causal=params["causal"])


def random_value(rng, name):
    if name == "causal":
        return bool(rng.integers(2))
    r = range_of(name)
    k = int(rng.integers(0, round((r.max - r.min) / r.step) + 1))
    return round(r.min + k * r.step, 10)


#: The view's side, as widget.js computes it in the browser from what the kernel sends: each control's
#: value from its model's wire state (coerced and rounded as widget.js params() does: attention.js
#: coerce, jupyter_glue.rounded), the row from the row toggle's index, the tables by attention.js, the
#: notes from the view's kernel_notes and attention.js messages (widget.js notes(), nothing typed).
#: One node process for the module, a JSON line in and out per look.
VIEW_SCRIPT = r"""
const core = require(process.argv[1]);
const rounded = (v) => (typeof v === "number" && isFinite(v) ? Number(v.toFixed(10)) : v);
const table = (t) => t.map((r) => r.map((v) => (v === -Infinity ? null : v)));
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const { config, values, index, kernel_notes } = JSON.parse(line);
  const p = {};
  config.names.forEach((name) => {
    const raw = name in values ? values[name] : config.start[name];
    p[name] = rounded(core.coerce(name, raw, config.ranges, config.baseline, undefined, config.strings).value);
  });
  const r = core.attentionFromParams(p);
  const result = {};
  ["Q", "K", "V", "S", "A", "O"].forEach((n) => { result[n] = table(r[n]); });
  const out = [], noted = [];
  kernel_notes.forEach((n) => {
    if (n.name === null || n.name === undefined) { out.push(n.text); return; }
    if (p[n.name] !== n.value) return;
    out.push(n.text); noted.push(n.name);
  });
  const notes = out.concat(core.messages(p, config.ranges, config.strings.lab || {}, noted));
  process.stdout.write(JSON.stringify({ params: p, row: index === 0 ? 0 : 1, result, d_k: r.d_k, notes }) + "\n");
});
"""
_view = {}


@pytest.fixture(scope="module", autouse=True)
def _view_process():
    yield
    proc = _view.pop("proc", None)
    if proc is not None:
        proc.stdin.close()
        proc.wait(timeout=10)


def view_shows(lab) -> dict:
    """What the lab's view shows now, worked out from what reaches the browser (the controls' models'
    wire state, the view's config and kernel_notes), not from the kernel's own state."""
    if "proc" not in _view:
        node = shutil.which("node")
        if node is None:
            pytest.fail("node not found: run scripts/test.sh, which installs Node.js")
        _view["proc"] = subprocess.Popen([node, "-e", VIEW_SCRIPT, str(STATIC / "attention.js")], cwd=ROOT,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
    proc = _view["proc"]
    wire = {name: w.get_state() for name, w in lab.view.controls.items()}
    message = {"config": lab.view.config, "kernel_notes": lab.view.get_state()["kernel_notes"],
               "values": {name: st["value"] for name, st in wire.items() if name != "row"},
               "index": wire["row"]["index"]}
    proc.stdin.write(json.dumps(message, allow_nan=False) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def assert_view_shows(lab, expected):
    """The view, reading what the kernel sends (view_shows), shows exactly the core's tables for
    ``expected`` (computed from the values the test set, not through the lab), and the kernel's
    own result, row and notes are the same as the view's."""
    shown = view_shows(lab)
    for name in ("Q", "K", "V", "S", "A", "O"):
        want = getattr(expected, name)
        got = np.array([[-np.inf if v is None else v for v in row] for row in shown["result"][name]])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"the view's {name}")
        np.testing.assert_allclose(getattr(lab.result, name), want, rtol=0, atol=1e-12, err_msg=f"the kernel's {name}")
    assert shown["d_k"] == expected.d_k == lab.result.d_k
    assert shown["params"] == lab.params and shown["row"] == lab.row
    assert shown["notes"] == lab.notes
    json.dumps(lab.state, allow_nan=False)  # the kernel's state still travels as plain JSON
    assert not any("nan" in n.lower() and "没有采用" not in n for n in shown["notes"])


def test_controls_are_named_as_the_contract_says(lab):
    assert tuple(lab.controls) == PARAM_NAMES
    d_k = lab.controls["d_k"]
    assert (d_k.base ** d_k.min, d_k.base ** d_k.max) == (1, 64)  # a power-of-two track, as on the site
    assert lab.controls["causal"].value is True
    for name in PARAM_NAMES[:-2]:
        r = RANGES[name.split("[")[0]]
        control = lab.controls[name]
        assert (control.min, control.max, control.step) == (r.min, r.max, r.step)
        assert control.readout  # the readout can be typed into


def test_the_png_path_is_gone_and_the_view_is_the_sites_renderer():
    assert importlib.util.find_spec("attention_lab.fastrender") is None
    esm = LabView._esm if isinstance(LabView._esm, str) else str(LabView._esm)
    for name in ("attention.js", "render.js", "widget.js"):
        assert (STATIC / name).read_text("utf-8") in esm, name
    assert "export default" in esm and "mountView" in esm
    assert (STATIC / "lab.css").read_text("utf-8") in str(LabView._css)


def test_the_view_on_its_own_is_given_the_start_values():
    view = LabView(params={"d_k": 8.0}, row=0)
    assert view.config["start"] == {**default_params(), "d_k": 8.0} and view.config["row"] == 0
    assert view.controls == {} and view.kernel_notes == []


def test_the_view_holds_the_controls_models_one_model(lab):
    """The view is linked to the very control widgets (serialised as model references), so the
    browser redraws from their values; the kernel sends the view no tables, only its notes."""
    assert set(LabView.class_trait_names(sync=True)) >= {"config", "controls", "kernel_notes"}
    assert "state" not in LabView.class_trait_names(sync=True)
    assert lab.view.controls == {**lab.controls, "row": lab.row_control}
    wire = lab.view.get_state()["controls"]
    assert wire == {name: "IPY_MODEL_" + w.model_id for name, w in lab.view.controls.items()}


def test_a_value_from_the_browser_is_never_sent_back_changed(fresh):
    """The browser's stepping arithmetic sends 1.1000000000000005; the control keeps exactly what
    was sent (a "corrected" 1.1 sent back would rewind a fast drag), the lab computes with 1.1."""
    sent = []
    control = fresh.controls["X[0,0]"]
    original = control.send_state
    control.send_state = lambda key=None: sent.append(key)
    try:
        with control._lock_property(value=1.1000000000000005):  # as ipywidgets' set_state does
            control.set_state({"value": 1.1000000000000005})
    finally:
        control.send_state = original
    assert control.value == 1.1000000000000005 and not sent
    assert fresh.params["X[0,0]"] == 1.1
    assert_view_shows(fresh, independent(fresh.params))


def test_random_slider_moves_hand_the_view_the_cores_numbers(fresh):
    rng = np.random.default_rng(11)
    for _ in range(40):
        name = PARAM_NAMES[int(rng.integers(len(PARAM_NAMES)))]
        fresh.controls[name].value = random_value(rng, name)
        if rng.random() < 0.2:
            fresh.row_control.value = 1 - fresh.row_control.value
        assert_view_shows(fresh, independent(fresh.params))


def test_baseline_button_gives_the_chapters_numbers(fresh):
    fresh.controls["X[0,0]"].value = -2.0
    fresh.controls["causal"].value = False
    fresh.buttons[None].click()
    r = fresh.result
    assert r.S[1, 0] == pytest.approx(DRAFT["S10"], abs=1e-10)
    assert math.isinf(r.S[0, 1]) and r.S[0, 1] < 0
    assert fresh.state["result"]["S"][0][1] is None  # masked: JSON has no -inf
    assert r.A[1].tolist() == pytest.approx([DRAFT["A10"], DRAFT["A11"]], abs=1e-10)
    assert r.O[1].tolist() == pytest.approx([DRAFT["O10"], DRAFT["O11"]], abs=1e-10)
    assert_view_shows(fresh, attention(**baseline()))


def test_contrast_one_only_wv_changes_v_and_o_but_keeps_shares(fresh):
    fresh.buttons["only_wv"].click()
    base, r = attention(**baseline()), fresh.result
    np.testing.assert_allclose(r.A, base.A)
    np.testing.assert_allclose(r.V, np.array(baseline()["X"]))  # V = X
    assert not np.allclose(r.O, base.O)
    assert_view_shows(fresh, attention(**baseline("only_wv")))


def test_contrast_two_only_wq_makes_queries_equal_keys(fresh):
    fresh.buttons["only_wq"].click()
    base, r = attention(**baseline()), fresh.result
    np.testing.assert_allclose(r.Q, r.K)
    np.testing.assert_allclose(r.V, base.V)
    assert not np.allclose(r.A, base.A)
    assert_view_shows(fresh, attention(**baseline("only_wq")))


def test_typed_out_of_range_values_are_clamped_with_a_visible_note(fresh):
    fresh.controls["Wq[0,0]"].value = 100
    assert fresh.controls["Wq[0,0]"].value == RANGES["Wq"].max
    assert "Wq[0,0]" in fresh.shown_notes() and "100" in fresh.shown_notes()
    fresh.controls["Wv[1,1]"].value = -1e9
    assert fresh.controls["Wv[1,1]"].value == RANGES["Wv"].min
    assert "Wv[1,1]" in fresh.shown_notes()
    fresh.controls["d_k"].value = 1000
    assert fresh.controls["d_k"].value == 64
    assert "d_k" in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))
    # Moving the control back inside its range takes its note away.
    fresh.controls["Wq[0,0]"].value = 0.5
    assert "Wq[0,0]" not in fresh.shown_notes()


def test_bad_start_values_are_clamped_or_refused_with_notes_never_raised():
    lab = AttentionLab(params={"X[0,0]": 3.05, "Wq[0,0]": float("nan"), "Wk[1,1]": "abc",
                               "Wv[0,0]": -math.inf, "d_k": 3.9, "X[1,0]": "−0.5", "nonsense": 1}, row=7)
    base = default_params()
    assert lab.params["X[0,0]"] == 3.0 and lab.params["d_k"] == 4.0 and lab.params["X[1,0]"] == -0.5
    for name in ("Wq[0,0]", "Wk[1,1]", "Wv[0,0]"):
        assert lab.params[name] == base[name]  # refused: the baseline stays
    assert lab.row == 1
    notes = lab.shown_notes()
    for text in ("X[0,0]", "3.05", "Wq[0,0]", "Wk[1,1]", "“abc”", "Wv[0,0]", "3.9", "nonsense", "row"):
        assert text in notes, text
    assert_view_shows(lab, independent(lab.params))


def test_start_params_that_are_not_a_dict_are_ignored_with_a_note():
    lab = AttentionLab(params=[("X[0,0]", 2.0)])
    assert lab.params == default_params()
    assert "params 需要一个" in lab.shown_notes()
    with pytest.raises(TypeError, match="set_params 需要一个"):
        lab.set_params("X[0,0]=2")
    assert lab.params == default_params()


@pytest.mark.parametrize("raw, want", [(3.9, 4), (3.5, 4), (2.5, 2), (1.2, 1), ("1,5", 2), ("１６", 16), (0.4, 1)])
def test_d_k_rounds_like_the_site_half_to_even(fresh, raw, want):
    fresh.controls["d_k"].value = raw
    assert fresh.controls["d_k"].value == want
    assert "d_k" in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


def test_typed_text_follows_the_sites_number_grammar(fresh):
    fresh.controls["X[0,1]"].value = "−0.5"  # the minus sign the tables show
    assert fresh.controls["X[0,1]"].value == -0.5
    fresh.controls["Wv[0,0]"].value = "１．５"
    assert fresh.controls["Wv[0,0]"].value == 1.5
    fresh.controls["Wq[1,1]"].value = "1,5"  # a decimal comma
    assert fresh.controls["Wq[1,1]"].value == 1.5
    fresh.controls["Wq[1,1]"].value = "0x10"  # refused: the value stays as it was
    assert fresh.controls["Wq[1,1]"].value == 1.5
    assert "“0x10”没有采用" in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


def test_the_causal_box_takes_words_and_refuses_the_rest(fresh):
    fresh.controls["causal"].value = "off"
    assert fresh.controls["causal"].value is False
    fresh.controls["causal"].value = "maybe"  # refused: stays off, says so
    assert fresh.controls["causal"].value is False
    assert "causal 只能是开或关，“maybe”没有采用，仍为关" in fresh.shown_notes()
    fresh.controls["causal"].value = 1
    assert fresh.controls["causal"].value is True and "causal 只能" not in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


def test_a_refusal_after_a_move_keeps_its_note(fresh):
    fresh.controls["X[0,0]"].value = 0.7
    fresh.controls["X[0,0]"].value = float("nan")  # refused: stays 0.7, no change event
    assert fresh.controls["X[0,0]"].value == 0.7
    assert "X[0,0] 需要一个有限的数" in fresh.shown_notes()
    fresh.controls["Wk[0,1]"].value = 1.0  # another control moves: the note stays
    assert "X[0,0] 需要一个有限的数" in fresh.shown_notes()
    fresh.controls["X[0,0]"].value = 0.8  # the same control takes a good value: its note goes
    assert "X[0,0]" not in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


@pytest.mark.parametrize("bad", [{"X[0,0]": 0.5, "Wq[9,9]": 1.0},
                                 {"X[0,0]": 0.5, "Wk[0,0]": float("nan")},
                                 {"X[0,0]": 0.5, "causal": "maybe"}])
def test_set_params_is_all_or_nothing(fresh, bad):
    fresh.controls["Wv[1,0]"].value = 2.0
    before_params, before_result = fresh.params, fresh.result
    with pytest.raises(ValueError, match="没有改动任何值"):
        fresh.set_params(bad)
    assert fresh.params == before_params and fresh.result is before_result
    assert "没有改动任何值" in fresh.shown_notes()
    assert fresh.state["params"] == before_params
    # The next good change clears that message and applies normally.
    fresh.set_params({"X[0,0]": 0.5, "Wk[0,0]": 9})
    assert fresh.params["X[0,0]"] == 0.5 and fresh.params["Wk[0,0]"] == 3.0
    assert "没有改动任何值" not in fresh.shown_notes() and "Wk[0,0] 的范围是" in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


def test_set_params_recomputes_once(fresh):
    count = fresh.update_count
    fresh.set_params({name: random_value(np.random.default_rng(2), name) for name in PARAM_NAMES})
    assert fresh.update_count == count + 1
    assert_view_shows(fresh, independent(fresh.params))


def test_d_k_is_the_sites_power_of_two_slider_that_takes_any_typed_integer(fresh):
    d_k = fresh.controls["d_k"]
    assert (d_k.base, d_k.min, d_k.max, d_k.step) == (2, 0, 6, 1)  # stops 1, 2, 4, ..., 64
    assert [2 ** k for k in range(7)] == list(D_K_POWERS)
    for value in D_K_POWERS:
        d_k.value = float(value)  # what the track sends at each stop
        assert d_k.value == value and not [n for n in fresh.notes if n.startswith("d_k 取整数")]
        assert_view_shows(fresh, independent(fresh.params))
    d_k.value = 5  # typed in the readout: any integer is taken, as the site's box does
    assert fresh.params["d_k"] == 5 and "d_k=5" in fresh.shown_notes()


def test_d_k_other_than_the_width_is_explained(fresh):
    assert "宽度是 2" not in fresh.shown_notes()
    fresh.controls["d_k"].value = 64
    assert "宽度是 2" in fresh.shown_notes() and "d_k=64" in fresh.shown_notes()
    fresh.controls["d_k"].value = 1
    assert "不缩放" in fresh.shown_notes()


@pytest.mark.parametrize("where", ["min", "max"])
@pytest.mark.parametrize("d_k", [1, 64])
@pytest.mark.parametrize("causal", [True, False])
def test_extremes_never_raise_or_show_nan(fresh, where, d_k, causal):
    params = {name: getattr(range_of(name), where) for name in PARAM_NAMES[:-2]}
    params.update(d_k=d_k, causal=causal)
    fresh.set_params(params)
    for row in (0, 1):
        fresh.row_control.value = row
        assert_view_shows(fresh, independent(fresh.params))
        assert np.all(np.isfinite(fresh.result.A)) and np.all(np.isfinite(fresh.result.O))
        assert "算不出" not in fresh.shown_notes()


def test_a_failing_computation_shows_a_message_instead_of_raising(fresh, monkeypatch):
    import attention_lab.lab as lab_module

    def broken(**kwargs):
        raise ValueError("softmax: a row has every position masked")

    before = fresh.result
    monkeypatch.setattr(lab_module, "attention", broken)
    fresh.controls["X[0,0]"].value = 0.3  # must not raise
    assert "算不出" in fresh.shown_notes()
    assert any("算不出" in n["text"] for n in fresh.view.kernel_notes)  # the view says so too
    assert fresh.result is before  # the last good result stays


def test_a_refused_computation_is_told_in_chinese_not_in_the_cores_english(fresh, monkeypatch):
    """The note says why in Chinese, by the refusal's kind (strings_zh.json "errors"), not the core's
    English message ("scores overflow: ..."); an error without a kind is named by its type."""
    import attention_lab.lab as lab_module
    from attention_lab.core import AttentionInputError
    from attention_lab.strings import strings

    errors = strings()["errors"]
    for exc, said in ((AttentionInputError("overflow", "scores overflow: S would reach about 1e+400"), errors["overflow"]),
                      (AttentionInputError("all_masked", "softmax: a row has every position masked"), errors["all_masked"]),
                      (TypeError("unsupported operand"), errors["other"].replace("{type}", "TypeError"))):
        def broken(**kwargs):
            raise exc

        monkeypatch.setattr(lab_module, "attention", broken)
        fresh.controls["X[0,0]"].value = 0.3 if fresh.controls["X[0,0]"].value != 0.3 else 0.4
        notes = fresh.shown_notes()
        assert said in notes, notes
        assert "overflow" not in notes and "softmax:" not in notes and "operand" not in notes, notes


def test_display_bundle_has_the_widget_the_static_html_and_text(fresh):
    fresh.controls["Wq[0,1]"].value = 1.25
    bundle = fresh._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == fresh.widget.model_id
    assert bundle["text/html"] == lab_html(fresh.params, fresh.row)  # the site's twin, same state
    assert "AttentionLab" in bundle["text/plain"]


def test_python_and_javascript_read_typed_numbers_alike():
    """params.coerce and attention.js coerce give the same value and note on the same inputs."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: run scripts/test.sh, which installs Node.js")
    inputs = ["−0.5", "１．５", "1,5", "0x10", "", "  2 ", "1e1", "-3.05", "inf", "NaN", "1,2,3", "1.5.2",
              "－２", "＋0．25", "1_0", "１，５", "abc", "64.5", "3.9", "2.5", "٣", "0.1e-2", ".5", "5."]
    names = ["X[0,1]", "Wv[1,0]", "d_k", "causal"]
    cases = [(n, raw) for n in names for raw in inputs] + [("causal", v) for v in ("on", "0", "yes", "x")]
    from attention_lab.params import RANGES as R
    from attention_lab.strings import strings

    ranges = {k: {"min": r.min, "max": r.max, "step": r.step} for k, r in R.items()}
    current = {"X[0,1]": 0.7, "Wv[1,0]": 2.5, "d_k": 8.0, "causal": False}
    script = (
        "const core = require(process.argv[1]);"
        "const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = data.cases.map(([n, raw]) => { const c = core.coerce(n, raw, data.ranges, data.baseline,"
        " data.current[n], data.strings); return [c.value, c.note]; });"
        "process.stdout.write(JSON.stringify(out));")
    payload = json.dumps({"cases": cases, "ranges": ranges, "baseline": default_params(), "current": current,
                          "strings": strings()})
    proc = subprocess.run([node, "-e", script, str(STATIC / "attention.js")], input=payload,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    js = json.loads(proc.stdout)
    py = [list(coerce(n, raw, current=current[n])) for n, raw in cases]
    mismatches = [(case, p, j) for case, p, j in zip(cases, py, js) if p != j]
    assert not mismatches, mismatches
    # And the grammar itself, on the numbers the issue names.
    assert [parse_number(t) for t in ("−0.5", "１．５", "1,5")] == [-0.5, 1.5, 1.5]
    assert math.isnan(parse_number("0x10"))


def test_memory_stays_flat_over_many_changes(fresh):
    """Each change reuses the view: no growth over hundreds of changes (a leak of even
    1 KB per change would add up to megabytes in a lesson)."""
    rng = np.random.default_rng(3)
    pool = [(name, random_value(rng, name)) for name in rng.choice(PARAM_NAMES[:-1], 40)]

    def run(n):
        for k in rng.integers(len(pool), size=n):
            name, value = pool[k]
            fresh.controls[name].value = value

    run(200)
    gc.collect()
    blocks_before = sys.getallocatedblocks()
    tracemalloc.start()
    try:
        run(50)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        run(400)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    run(600)
    gc.collect()
    assert end - start < 300_000, f"grew by {(end - start) / 1e3:.0f} kB over 400 changes"
    assert sys.getallocatedblocks() - blocks_before < 20_000
    assert_view_shows(fresh, independent(fresh.params))


@pytest.mark.parametrize("name", ["X[0,1]", "d_k", "causal"])
def test_none_in_a_control_is_refused_with_a_note_and_nothing_raises(fresh, name):
    """traitlets' Any would take None without asking the validator: the lab's controls ask it."""
    before = fresh.params[name]
    fresh.controls[name].value = None  # must not raise
    assert fresh.controls[name].value == before and fresh.params[name] == before
    assert f"{name} " in fresh.shown_notes() and "None" in fresh.shown_notes()
    fresh.controls["Wq[0,0]"].value = 1.0  # later changes still work, the note stays
    assert f"{name} " in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))
    repr(fresh), fresh._repr_mimebundle_()  # displaying it works too


@pytest.mark.parametrize("where", ["start", "control", "set_params"])
def test_huge_integers_are_clamped_with_a_note(where):
    lab = AttentionLab(params={"X[0,0]": 10**400, "d_k": -10**400}) if where == "start" else AttentionLab()
    if where == "control":
        lab.controls["X[0,0]"].value = 10**400
        lab.controls["d_k"].value = -10**400
    elif where == "set_params":
        lab.set_params({"X[0,0]": 10**400, "d_k": -10**400})
    assert lab.params["X[0,0]"] == RANGES["X"].max and lab.params["d_k"] == 1
    notes = lab.shown_notes()
    assert "X[0,0] 的范围是 −3 到 3，1e+400 已改为 3" in notes and "−1e+400 已改为 1" in notes
    assert_view_shows(lab, independent(lab.params))


def test_a_refusal_keeps_its_note_through_set_params_of_other_controls(fresh):
    fresh.controls["X[0,0]"].value = "abc"
    fresh.set_params({"Wq[0,0]": 1.0})
    assert "X[0,0] 需要一个数，“abc”没有采用" in fresh.shown_notes()
    fresh.set_params({"X[0,0]": 0.5})  # that control set again: its note goes
    assert "“abc”" not in fresh.shown_notes()


def test_numpy_scalars_and_bools_go_through_the_same_coercion(fresh):
    fresh.controls["X[1,1]"].value = np.float32(0.5)
    fresh.controls["Wv[0,0]"].value = np.int64(7)
    fresh.controls["causal"].value = np.bool_(False)
    assert fresh.params["X[1,1]"] == 0.5 and fresh.params["Wv[0,0]"] == 7.0 and fresh.params["causal"] is False
    fresh.controls["Wq[0,1]"].value = True  # a bool is no number: refused
    assert fresh.params["Wq[0,1]"] == default_params()["Wq[0,1]"] and "Wq[0,1] 需要一个数" in fresh.shown_notes()
    assert_view_shows(fresh, independent(fresh.params))


def test_the_view_shows_a_kernel_note_only_while_its_control_holds_the_value(fresh):
    """kernel_notes carry the value each note is about: the browser shows the note while that
    control still holds it (a drag afterwards takes it away at once, before the kernel answers)."""
    fresh.controls["Wk[0,0]"].value = 9
    note = next(n for n in fresh.view.kernel_notes if n["name"] == "Wk[0,0]")
    assert note["value"] == RANGES["Wk"].max and "9 已改为 3" in note["text"]
    with pytest.raises(ValueError):
        fresh.set_params({"Wq[9,9]": 1.0})
    assert any(n["name"] is None and "没有改动任何值" in n["text"] for n in fresh.view.kernel_notes)


def test_set_params_sends_nothing_for_values_equal_after_the_labs_rounding():
    """A slider's value from the browser's stepping (−0.49999999999999956) and the baseline's −0.5
    are one value to the lab: 恢复基准 (set_params) changes nothing, so no message goes back to the
    browser, where the reader may already be pressing keys (issue 27, item 3: over a slow link the
    late −0.5 undid five fast presses)."""
    lab = AttentionLab(params=default_params("only_wq"))
    noisy = -0.49999999999999956
    assert round(noisy, 10) == default_params()["Wq[1,0]"] == -0.5
    lab.controls["Wq[1,0]"].value = noisy  # as the browser sends it
    changes = []
    lab.controls["Wq[1,0]"].observe(changes.append, names="value")
    lab.set_params(default_params())
    assert changes == [] and lab.controls["Wq[1,0]"].value == noisy
    assert lab.params == default_params() and lab.notes == []
    # A value that is a change still is one, and a clamped one keeps its note.
    lab.set_params({"Wq[1,0]": 99})
    assert lab.controls["Wq[1,0]"].value == 3 and any("99 已改为 3" in n for n in lab.notes)


def test_a_typed_values_note_from_the_view_is_in_lab_notes_while_its_control_holds_the_value():
    """The view takes a typed value with the site's coerce and sends its note (issue 27, item 2):
    the kernel shows it in lab.notes, in the view's order, in place of an older note of that
    control, until the control holds another value; nonsense from the view is ignored."""
    lab = AttentionLab(params={"d_k": 100})  # a start note for d_k: 100 -> 64
    assert any("100 已改为 64" in n for n in lab.notes)
    note = coerce("d_k", "3.5", current=64.0)[1]
    lab.controls["d_k"].value = 4.0  # the value the view set, then its note
    lab._on_view_msg(lab.view, {"typed": {"name": "d_k", "value": 4, "text": note}})
    assert lab.notes[0] == note and not any("100 已改为" in n for n in lab.notes)
    assert lab.notes == [note] + lab._messages(lab.params)
    lab.controls["d_k"].value = 8.0  # moved on: the note goes
    assert note not in lab.notes
    # "abc" refused: the value stays, the note is shown while it does; typed again (None): it goes.
    refusal = coerce("Wq[0,0]", "abc", current=lab.params["Wq[0,0]"])[1]
    lab._on_view_msg(lab.view, {"typed": {"name": "Wq[0,0]", "value": lab.params["Wq[0,0]"], "text": refusal}})
    assert refusal in lab.notes
    lab._on_view_msg(lab.view, {"typed": None})
    assert refusal not in lab.notes
    for bad in ({"typed": {"name": "nope", "value": 1, "text": "x"}}, {"typed": {"name": "d_k", "value": "abc", "text": "x"}},
                {"typed": {"name": "d_k", "value": 8, "text": 5}}, {"typed": "x"}, {"other": 1}, "x", None):
        lab._on_view_msg(lab.view, bad)
        assert "x" not in lab.notes

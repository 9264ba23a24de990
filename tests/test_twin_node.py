"""The static twin (attention_lab/static/attention-lab/) without a browser.

* Its JavaScript tests (``node --test tests/js/*.test.cjs``) run from pytest, against test
  vectors generated now by ``scripts/make_vectors.py`` from the Python core, so
  the suite has one runner and the vectors can never go stale.
* Its weight: JS + CSS at most 60 KB.
* The HTML root and config that ``attention_lab.web`` puts on the page.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attention_lab.params import PARAM_NAMES, default_params
from attention_lab.web import START_SCRIPT, TWIN_CSS, TWIN_JS, lab_config, lab_html

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "attention_lab" / "static" / "attention-lab"
sys.path.insert(0, str(ROOT / "scripts"))
import make_shape_vectors  # noqa: E402
import make_vectors  # noqa: E402


@pytest.fixture(scope="module")
def vectors_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("twin") / "vectors.json"
    path.write_text(json.dumps(make_vectors.document(), ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def shape_vectors_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("shapes") / "shape_vectors.json"
    path.write_text(json.dumps(make_shape_vectors.document(), ensure_ascii=False), encoding="utf-8")
    return path


def test_javascript_twin_passes_its_node_tests(vectors_file, shape_vectors_file):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: run scripts/test.sh, which installs Node.js")
    # Files, not the folder: `node --test tests/js/` fails on newer Node (MODULE_NOT_FOUND).
    files = sorted(str(f.relative_to(ROOT)) for f in (ROOT / "tests" / "js").glob("*.test.cjs"))
    # TAP explicitly: newer Node prints its "spec" report by default, without "# pass N".
    proc = subprocess.run([node, "--test", "--test-reporter=tap", *files], cwd=ROOT, capture_output=True, text=True,
                          # Both vector files made here, and this Python for anything else a test runs:
                          # nothing of the checkout's own .venv (VENV may be anywhere, README).
                          env={"ATTENTION_VECTORS": str(vectors_file), "SHAPE_VECTORS": str(shape_vectors_file),
                               "PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=300)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"node --test failed:\n{report[-8000:]}"
    passed = re.search(r"^# pass (\d+)", report, re.M)
    assert passed and int(passed.group(1)) >= 10, f"too few node tests ran:\n{report[-3000:]}"


def test_vectors_hold_masked_cells_as_text_and_python_worked_text(vectors_file):
    doc = json.loads(vectors_file.read_text(encoding="utf-8"))
    baseline = next(v for v in doc["vectors"] if v["label"] == "baseline")
    assert baseline["S"][0][1] == "-Infinity"
    assert baseline["A"][0][1] == 0.0
    assert "0.6697615493" in baseline["worked"][1]
    # The saturated cases the node test compares (issue 28): tiny shares as powers of ten, never 0.
    issue28 = next(v for v in doc["vectors"] if v["label"] == "saturated, issue 28")
    assert "除以总和：[1 − 3.2×10⁻¹⁰⁰, 3.2×10⁻¹⁰⁰]" in issue28["worked"][1]
    under = next(v for v in doc["vectors"] if v["label"] == "exp below the smallest float")
    assert under["A"][0][1] == 0.0 and "1.4×10⁻⁵⁶³" in under["worked"][0]


def test_lab_view_and_controls_weigh_at_most_228_kb():
    # 60 KB before the one view took over Jupyter's drawing and gained linked cells,
    # explanations, step-through, what-changed and predict (issues 7 and 8); 100 KB until the
    # worked text told the step-through's five stages, masked scores included (issue 16); 104 KB
    # until a lab that cannot start says why in Chinese and copy link survives any clipboard
    # failure (issue 18: about 3 KB); 108 KB until the one core and view took n x m tables,
    # cross-attention and padding for the shapes lab (issue 20: about 4 KB); 112 KB until the lab ran a
    # class (issue 17, about 7 KB: the projector sizing, a gesture's change marks, step-through numbers
    # in S with its lines, back and Esc, notes that never clip, the copy-link overlay); 120 KB until a
    # drag rebuilt the worked text once per frame (issue 21) and Q/K/V scrolled in their own strip on
    # a phone (about 0.8 KB); ~37 KB gzipped; 180 KB since the vector plane (issue 25: about 40 KB, 11 KB
    # gzipped, half of it comments: two SVG panels, dragging, links both ways, step-through) and the
    # input fixes and true tiny shares of issues 28 and 29 (about 12 KB); ~55 KB gzipped; 196 KB since
    # several heads in the one view and the core (issue 31: about 15 KB, 4 KB gzipped: each head's S and
    # A, O and Y, the heads' columns marked, the sixth stage, linked cells and explanations per head);
    # 204 KB since the presenter's page (issue 29: about 8 KB, 2.5 KB gzipped: a clicker's keys and
    # their hint, one Tab stop per parameter table, projector text >= 16 px and a short window's fit,
    # the stage lines' four decimals); 212 KB since the redraw caches of issue 25 (f77a2a9 left the
    # files at 204.4 KB) and the twin naming overflow and NaN as the core does (issue 26: about 2 KB);
    # 220 KB since the plane redrawn for paper, the lab's destroy() and the colours read from the
    # config instead of typed stops (issues 25, 29, 30: about 3 KB, mostly comments); 228 KB since a
    # shape change reuses the cells that stay (issue 31: about 5 KB, a third of it comments: rows and
    # columns added or taken away in place, the head groups kept) and the catalog's sentences in the
    # core (issue 30).
    files = [STATIC / f for f in TWIN_JS + TWIN_CSS]
    total = sum(f.stat().st_size for f in files)
    assert total <= 228 * 1024, f"the lab's JS+CSS is {total} bytes > 228 KB: {[(f.name, f.stat().st_size) for f in files]}"


def test_config_carries_names_ranges_baseline_contrasts_and_strings():
    config = lab_config()
    assert config["names"] == list(PARAM_NAMES)
    assert config["baseline"] == default_params()
    assert config["contrasts"]["only_wv"] == default_params("only_wv")
    assert config["ranges"]["Wv"] == {"min": -20.0, "max": 20.0, "step": 0.5}
    assert "worked" in config["strings"] and "buttons" in config["strings"]


def test_partial_start_params_fill_in_from_the_baseline():
    config = lab_config({"X[0,1]": 2, "causal": 0}, row=0)
    assert config["start"]["X[0,1]"] == 2.0
    assert config["start"]["causal"] is False
    assert config["start"]["Wv[0,0]"] == 5.0
    assert config["row"] == 0


def test_unknown_start_params_are_refused():
    with pytest.raises(ValueError, match="unknown parameters"):
        lab_config({"X[2,0]": 1})
    with pytest.raises(ValueError, match="row"):
        lab_config(row=2)


def test_config_json_cannot_close_its_script_element(monkeypatch):
    import attention_lab.web as web

    hostile = web.strings()
    hostile["lab"] = {"title": "</script><script>alert(1)</script><!--"}
    monkeypatch.setattr(web, "strings", lambda: hostile)
    page = lab_html()
    inside = page.split("data-attention-lab-config>", 1)[1].split("</script>", 1)[0]
    assert "<" not in inside
    assert json.loads(inside)["strings"]["lab"]["title"] == hostile["lab"]["title"]
    # The config and the fixed start call after the root; nothing from the strings can add one.
    assert page.count("<script") == 2
    assert page.endswith(f"</div><script>{START_SCRIPT}</script>")


def node_eval(script: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: run scripts/test.sh, which installs Node.js")
    proc = subprocess.run([node, "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cell_text_passes_wcag_aa_on_every_colour_of_every_scale():
    out = json.loads(node_eval("""
      const render = require("./attention_lab/static/attention-lab/render.js");
      render.setColours(""" + json.dumps(lab_config()["colours"]) + """);
      let worst = Infinity;
      for (const name of Object.keys(render.SCALES)) {
        const [lo, hi] = render.SCALES[name];
        for (let k = -50; k <= 1050; k++) {
          const rgb = render.cellColour(name, lo + (hi - lo) * k / 1000);
          worst = Math.min(worst, render.textColour(rgb).ratio);
        }
      }
      console.log(JSON.stringify({worst, scales: render.SCALES}));"""))
    assert out["worst"] >= 4.5
    assert out["scales"]["A"] == [0, 1]  # shares: the whole range of a share


def test_the_views_cells_take_matplotlibs_colours_and_text_colour_from_the_config(tmp_path):
    """render.js colours a cell from the config's colours (attention_lab.plotting.colour_config), so
    the site's and Jupyter's tables have exactly the colours matplotlib gives the chapter's figures
    at the same value, and the same black or white text (plotting.text_colour); both configs carry them."""
    import matplotlib as mpl
    from matplotlib.colors import Normalize

    from attention_lab.plotting import CMAP, SCALES, colour_config, text_colour
    from attention_lab.shapes import shapes_config

    colours = lab_config()["colours"]
    assert colours == shapes_config()["colours"] == colour_config()
    cmap = mpl.colormaps[CMAP]
    # Each scale at 2001 even steps and beyond both ends, every colormap entry's edges, and the end
    # values themselves (1.0 takes the last entry, as in matplotlib).
    values = {name: sorted({*(lo + (hi - lo) * k / 2000 for k in range(-100, 2101)),
                            *(lo + (hi - lo) * i / cmap.N for i in range(cmap.N + 1)), lo, hi})
              for name, (lo, hi) in SCALES.items()}
    given = tmp_path / "colours.json"
    given.write_text(json.dumps({"colours": colours, "values": values}), encoding="utf-8")
    got = json.loads(node_eval(f"""
      const render = require("./attention_lab/static/attention-lab/render.js");
      const given = JSON.parse(require("fs").readFileSync({json.dumps(str(given))}, "utf8"));
      render.setColours(given.colours);
      const values = given.values;
      const out = {{}};
      for (const name of Object.keys(values)) out[name] = values[name].map(v => {{
        const rgb = render.cellColour(name, v);
        return [rgb, render.textColour(rgb).colour];
      }});
      console.log(JSON.stringify(out));"""))
    ink = {"black": colours["text"]["dark"], "white": colours["text"]["light"]}
    for name, (lo, hi) in SCALES.items():
        want_rgb = cmap(Normalize(lo, hi, clip=True)(values[name]), bytes=True)[:, :3].tolist()
        got_rgb = [rgb for rgb, _ in got[name]]
        assert got_rgb == want_rgb, name
        want_ink = [ink[text_colour([c / 255 for c in rgb])] for rgb in want_rgb]
        assert [t for _, t in got[name]] == want_ink, name


def test_the_view_refuses_to_start_without_the_configs_colours():
    # No copy of the colours in render.js: a driver that forgets to pass them is told so.
    out = node_eval("""
      const render = require("./attention_lab/static/attention-lab/render.js");
      try { render.setColours(undefined); console.log("no error"); } catch (e) { console.log(e.message); }""")
    assert "options.colours" in out and "colour_config" in out, out


def test_typed_number_grammar_is_the_same_in_javascript_and_python():
    from attention_lab.params import parse_number

    typed = ["−0.5", "１．５", "1,5", "0x10", "", " 2e1 ", "－３", "1,5.0", "1,2,3", "1.5.2", "＋２", "　４　", "inf", "1_000"]
    got = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"console.log(JSON.stringify({json.dumps(typed, ensure_ascii=False)}.map(t => String(c.parseNumber(t)))));"))
    want = ["NaN" if v != v else repr(float(v)).removesuffix(".0") for v in map(parse_number, typed)]
    assert got == want
    assert got[:3] == ["-0.5", "1.5", "1.5"] and got[3] == "NaN"


def test_number_text_rounds_exact_ties_to_even_as_python_does():
    # pyFixed finds ties with an exact power-of-two test; every formatted number in the lab
    # (cells, worked text) goes through it, so it must equal Python's f"{x:.{d}f}" everywhere:
    # exact binary ties (x.5 at the last digit), their neighbours, slider-grid products, -0.
    import random

    rng = random.Random(21)
    xs = [0.0, -0.0, 0.0625, -2.5, 0.5, 1.5, 1e20 + 0.5, 2.0 ** -100, 4503599627370497.5]
    xs += [rng.randrange(1 << 20) * 2.0 ** rng.randrange(-24, 4) for _ in range(600)]
    xs += [(rng.randrange(-80, 81) * 0.05) * (rng.randrange(-80, 81) * 0.05) for _ in range(300)]
    xs += [rng.uniform(-20, 20) for _ in range(300)]
    cases = [(x if k % 2 else -x, k % 12) for k, x in enumerate(xs)] + [(2.0 ** -100, 99), (0.125, 0)]
    got = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"console.log(JSON.stringify({json.dumps(cases)}.map(([x, d]) => c.pyFixed(x, d))));"))
    want = [f"{x:.{d}f}" for x, d in cases]
    assert [c for c, g, w in zip(cases, got, want) if g != w] == []


def test_one_number_text_in_both_languages_for_cells_and_worked_text():
    """JS formatValue (a cell: 3 decimals; the worked text's fmt: 10) writes every number as
    attention_lab.formatting.format_number does: signs, trailing zeros, −0, ±∞ and NaN."""
    import random

    from attention_lab.formatting import format_number

    rng = random.Random(11)
    xs = [0.0, -0.0, 10.0, -20.0, 0.5, -1e-12, 1 / 3, -2 / 3, 123.4567, 6.6976154929, -0.0004]
    xs += [rng.uniform(-700, 700) for _ in range(200)] + [rng.randrange(-80, 81) * 0.05 for _ in range(100)]
    cases = [(x, d) for x in xs for d in (0, 3, 10)]
    special = ["-Infinity", "Infinity", "NaN"]
    got = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"const cases = {json.dumps(cases)}.concat({json.dumps(special)}.map(s => [Number(s), 3]));"
        "console.log(JSON.stringify({cells: cases.map(([x, d]) => c.formatValue(x, d)),"
        " worked: cases.map(([x]) => c.fmt(x))}));"))
    floats = [x for x, _ in cases] + [float(s.lower().replace("infinity", "inf")) for s in special]
    digits = [d for _, d in cases] + [3, 3, 3]
    assert got["cells"] == [format_number(x, d) for x, d in zip(floats, digits)]
    assert got["worked"] == [format_number(x) for x in floats]
    assert got["cells"][-3:] == ["−∞", "+∞", "NaN"]


def test_shares_and_powers_of_ten_read_the_same_in_javascript_and_python():
    """formatShare (a cell's share: "<0.001" where it only rounds to 0, ">0.999" where it only
    rounds to 1 beside another readable share, a masked "0" kept) and formatPower ("3.2×10⁻¹⁰⁰")
    give formatting.format_share / format_power's text, and shownText reads it as power_value does."""
    from fractions import Fraction

    from attention_lab.formatting import format_power, format_share, power_value
    from attention_lab.worked import share_texts

    inf = "-Infinity"
    rows = [([1.0, 3.2e-100], [229.1, 0.0]), ([1.0, 0.0], [0.0, inf]), ([0.0004, 0.9996], [0.0, 7.8]),
            ([0.5, 0.5], [1.0, 1.0]), ([0.0, 1.0], [-1300.0, 0.0]), ([0.9995, 0.0005], [7.6, 0.0]),
            ([1 / 3, 1 / 3, 1 / 3], [0.0, 0.0, 0.0]), ([0.0, 0.0, 1.0], [inf, -40.0, 0.0])]
    logs = [-99.498, -563.0, -10.0001, -0.02, -1e-9, -45.99999, -3.04, -700.7]
    got = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"const rows = {json.dumps(rows)}.map(([a, s]) => [a, s.map(Number)]);"
        "console.log(JSON.stringify({shares: rows.map(([a, s]) => a.map((_, j) => [3, 10].map(d => c.formatShare(a, s, j, d)))),"
        " texts: rows.map(([a, s]) => c.shareTexts(s, a)),"
        f" powers: {json.dumps(logs)}.map(c.formatPower)}}));"))
    want_shares = [[[format_share(a, [float(x) for x in s], j, d) for d in (3, 10)] for j in range(len(a))] for a, s in rows]
    assert got["shares"] == want_shares
    # What an explanation quotes for such a share: the worked text's own words for it.
    assert got["texts"] == [share_texts([float(x) for x in s], a) for a, s in rows]
    assert got["texts"][0] == ["1 − 3.2×10⁻¹⁰⁰", "3.2×10⁻¹⁰⁰"] and got["texts"][1] == ["1", "0"]
    assert want_shares[0] == [[">0.999", ">0.9999999999"], ["<0.001", "<0.0000000001"]]  # the issue's row
    assert want_shares[1] == [["1", "1"], ["0", "0"]]  # one readable share is exactly 1; a masked one exactly 0
    assert got["powers"] == [format_power(x) for x in logs]
    texts = got["powers"] + ["1 − " + got["powers"][0], "−0.25", "6.6976154933", "0"]
    dec = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"console.log(JSON.stringify({json.dumps(texts, ensure_ascii=False)}.map(t => {{"
        " const d = c.shownText(t); return [String(d.n), d.s]; })));"))
    assert [Fraction(int(n), 10 ** s) for n, s in dec] == [power_value(t) for t in texts]


def test_a_refusal_is_told_in_the_same_chinese_in_javascript_and_python():
    """attention.js errorText (what the site's and Jupyter's labs put in their error note) gives
    attention_lab.strings.error_text's sentence for each kind of refusal; the core's English never."""
    from attention_lab.core import AttentionInputError
    from attention_lab.strings import error_text, strings

    table = strings()
    kinds = [k for k in table["errors"] if not k.startswith("_") and k != "other"]
    got = json.loads(node_eval(
        'const c = require("./attention_lab/static/attention-lab/attention.js");'
        f"const strings = {json.dumps(table, ensure_ascii=False)};"
        "const errs = " + json.dumps(kinds) + ".map(k => { const e = new Error('english ' + k); e.name = 'AttentionInputError'; e.kind = k; return e; });"
        "const pad = (() => { try { c.paddingMask(2, 3, 3); } catch (e) { return e; } })();"
        "console.log(JSON.stringify({kinds: errs.map(e => c.errorText(e, strings)), pad: c.errorText(pad, strings),"
        " plain: c.errorText(new TypeError('x'), strings)}));"))
    assert got["kinds"] == [error_text(AttentionInputError(k, "english " + k), table) for k in kinds]
    assert got["pad"] == table["errors"]["mask"] and "pad must" not in got["pad"]
    assert got["plain"] == error_text(TypeError("x"), table) == "计算没有完成（TypeError）"

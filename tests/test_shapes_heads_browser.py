"""Several heads in the shapes lab (issue 31), in Chromium on the built book/shapes.html.

One page, several checks (the browser suite is at its time budget): every head's S and A
(cells [data-matrix=S|A][data-head=t]), the concatenation O, Y and Q, K, V equal an independent
numpy reference (written here, not attention_lab.core) and the core, for random states (h 2..4,
self and cross, causal on and off, padded keys); a link with h and Wo is the site's and Python's
address and opens the same state; links without h mean one head; refused values get notes; on a
1024x768 projector both heads' A and Y share the screen, also with Wq in view, and changing head
1's Wq moves only head 1's A and Y; the step-through explains the chosen head and then the projection.
"""

from __future__ import annotations

import math

import numpy as np

from attention_lab.plotting import format_value
from attention_lab.shapes import EXAMPLES, compute, resized, table_shape, to_query
from attention_lab.web import strings

PAGE = "/book/shapes.html"
LAB = "[data-shapes-lab]"


def independent(state: dict) -> dict:
    """Multi-head attention from the tables, by hand: each head's columns, the bottom-right causal
    mask and the padded keys, a plain softmax, the heads side by side, times Wo."""
    t = {k: np.array(v, dtype=float) for k, v in state["tables"].items()}
    h, dk, dv = state["h"], state["d_k"], state["d_v"]
    X = t["X"]
    src = t["Xs"] if state["mode"] == "cross" else X
    n, m = X.shape[0], src.shape[0]
    allowed = np.ones((n, m), dtype=bool)
    if state["causal"] and state["mode"] == "self":
        allowed &= np.tril(np.ones((n, m), dtype=bool), m - n)
    if state["pad"]:
        allowed[:, m - state["pad"]:] = False
    Q, K, V = X @ t["Wq"], src @ t["Wk"], src @ t["Wv"]
    out = {"Q": Q, "K": K, "V": V, "S": [], "A": [], "O": []}
    for k in range(h):
        q, key, v = Q[:, k * dk:(k + 1) * dk], K[:, k * dk:(k + 1) * dk], V[:, k * dv:(k + 1) * dv]
        S = np.where(allowed, q @ key.T / math.sqrt(dk), -np.inf)
        E = np.exp(S - S.max(axis=1, keepdims=True))
        A = E / E.sum(axis=1, keepdims=True)
        out["S"].append(S)
        out["A"].append(A)
        out["O"].append(A @ v)
    out["O"] = np.concatenate(out["O"], axis=1)
    out["Y"] = out["O"] @ t["Wo"]
    return out


CELLS_JS = """() => {
  const out = {};
  for (const td of document.querySelectorAll('[data-shapes-lab] td.al-cell[data-matrix]')) {
    const m = td.dataset.matrix, key = (m === 'S' || m === 'A') ? m + td.dataset.head : m;
    (out[key] = out[key] || []);
    (out[key][+td.dataset.row] = out[key][+td.dataset.row] || [])[+td.dataset.col] =
      [td.dataset.value, td.querySelector('.al-v').textContent, td.hasAttribute('data-changed')];
  }
  return out;
}"""


def shown(page) -> dict:
    return page.evaluate(CELLS_JS)


def assert_shows(page, state: dict) -> dict:
    """Every result cell on screen against the reference and the core (value, text); returns the cells."""
    ref, core = independent(state), compute(state)
    cells = shown(page)
    tables = {"Q": (ref["Q"], core.Q), "K": (ref["K"], core.K), "V": (ref["V"], core.V), "O": (ref["O"], core.O),
              "Y": (ref["Y"], core.Y)}
    for k in range(state["h"]):
        tables[f"S{k}"] = (ref["S"][k], core.heads[k].S)
        tables[f"A{k}"] = (ref["A"][k], core.heads[k].A)
    assert set(cells) == set(tables), (sorted(cells), sorted(tables))
    for key, (want, theirs) in tables.items():
        got = cells[key]
        assert (len(got), len(got[0])) == want.shape, (key, state)
        for i, row in enumerate(got):
            for j, (value, text, _) in enumerate(row):
                w = float(want[i, j])
                if math.isinf(w):
                    assert value == "-Infinity" and math.isinf(theirs[i, j]), (key, i, j)
                    continue
                assert abs(float(value) - w) <= 1e-9 * max(1.0, abs(w)), (key, i, j, value, w, state)
                assert abs(float(theirs[i, j]) - w) <= 1e-9 * max(1.0, abs(w)), (key, i, j)
                if key[0] != "A":  # the cell's own number as the book writes it (A: tiny shares as a bound, <0.001)
                    assert text == format_value(float(value)), (key, i, j, text, value)
    return cells


def random_heads(rng, mode: str) -> dict:
    n = int(rng.integers(1, 7))
    m = int(rng.integers(n, 7)) if mode == "cross" else n
    s = {"n": n, "m": m, "d_model": int(rng.integers(1, 5)), "d_k": int(rng.integers(1, 5)), "d_v": int(rng.integers(1, 5)),
         "h": int(rng.integers(2, 5)), "mode": mode, "causal": bool(rng.integers(2)), "pad": int(rng.integers(0, m)),
         "row": int(rng.integers(0, n)), "tokens": ["我", "爱", "读", "这", "本", "书"][:n],
         "source_tokens": ["我", "爱", "读", "这", "本", "书"][:m]}
    step = {"X": 0.1, "Xs": 0.1, "Wq": 0.05, "Wk": 0.05, "Wv": 0.5, "Wo": 0.05}
    top = {"X": 30, "Xs": 30, "Wq": 60, "Wk": 60, "Wv": 40, "Wo": 60}
    s["tables"] = {t: (rng.integers(-top[t], top[t] + 1, size=table_shape(t, s)) * step[t]).round(4).tolist() for t in step}
    return s


def lab_state(page) -> dict:
    return page.evaluate("() => document.querySelector('[data-shapes-lab]').__attentionLab.state")


def box(page, selector: str):
    return page.evaluate("(s) => { const e = document.querySelector(s); if (!e || !e.getClientRects().length) return null;"
                         " const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; }", selector)


def test_two_heads_on_a_projector_equal_python_with_links_old_and_new(new_page, site_url):
    rec = new_page(width=1024, height=768)
    page = rec.page
    ss = strings()["shapes"]
    example = EXAMPLES["two_heads"]

    def goto(query: str) -> None:
        page.goto(site_url + PAGE + query)
        page.wait_for_selector(f"{LAB}[data-lab-ready=true]")

    # The example's link (h and Wo in it) is Python's and the site's address, and opens the state.
    goto("?" + to_query(example))
    assert page.evaluate("() => AttentionShapesLab.toQuery(document.querySelector('[data-shapes-lab]').__attentionLab.state)") \
        == to_query(example)
    assert "&h=2&" in to_query(example) and "&Wo=" in to_query(example)
    assert page.locator(f"{LAB} [data-lab-notes]").inner_text().strip() == ""
    before = assert_shows(page, example)
    captions = page.locator(f"{LAB} .al-sao caption").all_inner_texts()
    assert captions == ["S 分数表（头 0） [3, 3]", "A 份额表（头 0） [3, 3]", "S 分数表（头 1） [3, 3]",
                        "A 份额表（头 1） [3, 3]", "O 拼接表（各头的输出并排） [3, 4]", "Y 输出表 = O·Wo [3, 4]"], captions
    assert page.locator(f"{LAB} td[data-matrix=Q][data-head='1']").count() == 3 * example["d_k"]
    # The vector plane says why it is not drawn.
    assert page.get_attribute(f"{LAB} [data-plane]", "data-plane") == "none"
    assert "多头" in page.locator(f"{LAB} .al-plane-none").inner_text()

    # 1024 x 768: both heads' A and Y on the first screen, nothing sideways; and with Wq scrolled
    # into view (the teacher's next move) they still are.
    A0, A1, Y = (f'{LAB} figure[data-matrix-table="A"][data-head="0"]', f'{LAB} figure[data-matrix-table="A"][data-head="1"]',
                 f'{LAB} figure[data-matrix-table="Y"]')
    top_bar = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.al-results')).top) || 0")

    def on_screen(selector):
        b = box(page, selector)
        return b is not None and b[0] >= top_bar - 1 and b[1] <= 768 + 1 and b[3] <= 1024

    assert page.evaluate("() => scrollY") == 0 and all(map(on_screen, (A0, A1, Y))), [box(page, s) for s in (A0, A1, Y)]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1024
    assert page.evaluate("() => Math.min(...[...document.querySelectorAll('[data-shapes-lab] .al-sao td.al-cell .al-v')]"
                         ".map(v => parseFloat(getComputedStyle(v).fontSize)))") >= 20
    page.evaluate("() => document.querySelector('[data-input-table=Wq]').scrollIntoView({block: 'end'})")
    assert all(map(on_screen, (A0, A1, Y, f"{LAB} [data-input-table=Wq]"))), [box(page, s) for s in (A0, A1, Y)]

    # Head 1's Wq changed by typing: head 0's A stays, head 1's A and Y move (and are marked).
    cell = page.locator(f'{LAB} [data-param-text="Wq[2,3]"]')
    cell.fill("1")
    cell.dispatch_event("change")
    changed = {**example, "tables": {**example["tables"], "Wq": [r[:] for r in example["tables"]["Wq"]]}}
    changed["tables"]["Wq"][2][3] = 1.0
    after = assert_shows(page, changed)
    assert [[c[0] for c in row] for row in after["A0"]] == [[c[0] for c in row] for row in before["A0"]]
    assert not any(c[2] for row in after["A0"] for c in row) and any(c[2] for row in after["A1"] for c in row)
    assert after["Y"] != before["Y"]

    # The step-through explains the chosen head's row (its row header), then the projection (stage 6).
    page.evaluate("() => scrollTo(0, 0)")
    page.locator(f'{LAB} figure[data-matrix-table="A"][data-head="1"] [data-lab-row-pick="1"]').click()
    assert lab_state(page)["row"] == 1
    assert "头 1" in page.locator(f"{LAB} .al-worked-title").inner_text()
    stage = page.locator(f"{LAB} .al-stage")
    texts = []
    for _ in range(6):
        page.locator(f"{LAB} [data-lab-action=step]").click()
        texts.append(stage.inner_text())
        y_row = [c[1] for c in shown(page)["Y"][1]]
        assert (set(y_row) == {"…"}) == (len(texts) < 6), (len(texts), y_row)
    assert "头 1" in texts[0] and "Wo" in texts[5] and "6" in texts[5]
    assert any("Y 第 0 格" in t for t in page.locator(f"{LAB} [data-lab-stage-lines]").all_inner_texts())
    page.locator(f"{LAB} [data-lab-action=step]").click()
    assert page.get_attribute(LAB, "data-step") == "0"
    # A cell of Y explains itself from O's row and Wo's column.
    page.locator(f'{LAB} td.al-cell[data-matrix="Y"][data-row="2"][data-col="1"]').hover()
    assert page.locator(f"{LAB} [data-lab-explain]").inner_text().startswith("Y[猫,第 1 格] = O 第 2 行 · Wo 第 1 列 =")
    assert page.locator(f"{LAB} [data-linked][data-lab-source^='Wo[']").count() == 4
    # The arrow keys go on across the heads as they are drawn: S0 → S1 along the top, S1 ↓ A1.
    page.locator(f'{LAB} td.al-cell[data-matrix="S"][data-head="0"][data-row="2"][data-col="2"]').focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => { const d = document.activeElement.dataset; return [d.matrix, d.head, d.row, d.col]; }") \
        == ["A", "1", "0", "0"]

    # Random heads, self and cross, causal and padded, from their links: the reference and the core.
    rng = np.random.default_rng(31)
    for mode in ("self", "cross", "self", "cross"):
        state = random_heads(rng, mode)
        goto("?" + to_query(state))
        notes = page.locator(f"{LAB} [data-lab-notes]").inner_text()
        assert ss["link_note_head"] not in notes, notes
        assert lab_state(page)["h"] == state["h"]
        assert_shows(page, state)

    # An old link (no h) is one head, drawn as before heads: no data-head, no Y, no Wo box.
    old = resized(EXAMPLES["apple_food"], n=3)
    goto("?" + to_query(old))
    assert lab_state(page)["h"] == 1 and "h=" not in to_query(old)
    assert page.locator(f"{LAB} [data-head]").count() == 0 and page.locator(f"{LAB} td[data-matrix=Y]").count() == 0
    assert page.locator(f"{LAB} [data-input-table=Wo]").is_hidden()
    # Refused or clamped: h out of range, Wo without heads, Wo of the wrong count.
    for query, note in (("?n=3&h=9", "h 只能是 1 到 4 的整数，“9”已改为 4"), ("?n=2&Wo=1,0,0,1", ss["link_wo_single"]),
                        ("?n=2&h=2&Wo=1,2,3", "Wo 在这个形状下是 [4, 2]，需要 8 个数")):
        goto(query)
        assert note in page.locator(f"{LAB} [data-lab-notes]").inner_text(), (query, note)
    assert rec.console_errors == [] and rec.page_errors == []


MARKS_JS = """() => {
  const lab = document.querySelector('[data-shapes-lab]'), out = { bad: [], cols: {}, rows: {}, picks: {} };
  for (const fig of lab.querySelectorAll('figure[data-matrix-table]')) {
    const name = fig.dataset.matrixTable, key = fig.dataset.head !== undefined ? name + fig.dataset.head : name;
    out.cols[key] = [...fig.querySelectorAll('thead tr:last-child th.al-col')].map(th => th.textContent);
    out.rows[key] = fig.querySelectorAll('tbody tr').length;
    out.picks[key] = [...fig.querySelectorAll('tbody [data-lab-row-pick]')].map(b => [b.dataset.labRowPick, b.textContent]);
    for (const tr of fig.querySelectorAll('tbody tr')) if (tr.querySelectorAll('td.al-cell').length !== out.cols[key].length) out.bad.push(key + ': a row of another width');
  }
  return out;
}"""


def test_shape_changes_in_place_keep_the_cells_that_stay_and_show_what_python_computes(new_page, site_url):
    """A shape or h change keeps the nodes of the cells that stay (render.js reshapeMatrix, shapes.js
    drawTable) and adds or takes away rows and columns at the end: after each change of n, h, d_v,
    d_k, the mode and m, by the controls, every cell equals the reference, every row is as wide as
    its header, the heads' columns are marked where they now begin, the row buttons name the tokens,
    and a cell that stayed is still the same node."""
    page = new_page(width=1280, height=900).page
    page.goto(site_url + PAGE + "?" + to_query(resized(EXAMPLES["two_heads"], n=4)))
    page.wait_for_selector(f"{LAB}[data-lab-ready=true]")
    tag = ("() => { for (const sel of ['td.al-cell[data-matrix=S][data-head=\"0\"][data-row=\"0\"][data-col=\"0\"]',"
           " 'td.al-cell[data-matrix=Q][data-row=\"1\"][data-col=\"0\"]', 'td.al-in[data-matrix=Wq][data-row=\"0\"][data-col=\"0\"]'])"
           " document.querySelector('[data-shapes-lab] ' + sel).__kept = true; }")
    kept = ("() => ['td.al-cell[data-matrix=S][data-head=\"0\"][data-row=\"0\"][data-col=\"0\"]',"
            " 'td.al-cell[data-matrix=Q][data-row=\"1\"][data-col=\"0\"]', 'td.al-in[data-matrix=Wq][data-row=\"0\"][data-col=\"0\"]']"
            ".map(sel => !!document.querySelector('[data-shapes-lab] ' + sel).__kept)")
    page.evaluate(tag)
    moves = [("n", 3), ("n", 5), ("h", 3), ("d_v", 1), ("h", 4), ("d_v", 3), ("h", 2), ("n", 2), ("n", 4)]
    for name, value in moves:
        box = page.locator(f'{LAB} [data-param="{name}"]')
        box.fill(str(value))
        box.dispatch_event("change")
        state = lab_state(page)
        assert state[name] == value, (name, value)
        assert_shows(page, state)
        marks = page.evaluate(MARKS_JS)
        assert not marks["bad"], marks["bad"]
        n, h, dv, dk = state["n"], state["h"], state["d_v"], state["d_k"]
        for key in [f"{t}{k}" for k in range(h) for t in ("S", "A")] + ["O", "Y"]:
            assert marks["rows"][key] == n and [int(p[0]) for p in marks["picks"][key]] == list(range(n)), (key, marks)
            assert [p[1] for p in marks["picks"][key]] == state["tokens"][:n], (key, marks["picks"][key])
        assert len(marks["cols"]["O"]) == h * dv and len(marks["cols"]["Q"]) == h * dk
        for t, width in (("O", dv), ("Q", dk), ("V", dv)):  # each head's columns, and where the next begins
            got = page.evaluate("(t) => [...document.querySelectorAll(`[data-shapes-lab] td.al-cell[data-matrix=${t}][data-row='0']`)]"
                                ".map(td => [+td.dataset.col, td.dataset.head, td.hasAttribute('data-head-start')])", t)
            assert got == [[j, str(j // width), j > 0 and j % width == 0] for j in range(h * width)], (t, got)
        for t, width in (("Wq", dk), ("Wv", dv)):
            got = page.evaluate("(t) => [...document.querySelectorAll(`[data-shapes-lab] td.al-in[data-matrix=${t}][data-row='0']`)]"
                                ".map(td => [td.dataset.head, td.hasAttribute('data-head-start')])", t)
            assert got == [[str(j // width), j > 0 and j % width == 0] for j in range(h * width)], (t, got)
        assert all(page.evaluate(kept)), (name, value, page.evaluate(kept))
    # Cross attention with m keys: the keys' tables take m rows, S and A m columns named by the source.
    page.locator(f"{LAB} input[name$='-mode'][value=cross], {LAB} input[type=radio][value=cross]").first.check()
    box = page.locator(f'{LAB} [data-param="m"]')
    box.fill("5")
    box.dispatch_event("change")
    state = lab_state(page)
    assert state["mode"] == "cross" and state["m"] == 5
    assert_shows(page, state)
    marks = page.evaluate(MARKS_JS)
    assert not marks["bad"] and marks["rows"]["K"] == 5 and marks["cols"]["S0"] == state["source_tokens"][:5], marks
    assert all(page.evaluate(kept))

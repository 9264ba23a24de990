// The twin's computation (attention_lab/static/attention-lab/attention.js) against the Python core.
//
// Vectors come from scripts/make_vectors.py: the file named by $ATTENTION_VECTORS
// (tests/test_twin_node.py generates it fresh), or, when run alone with
// `node --test tests/js/*.test.cjs`, generated here by calling Python.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const ROOT = path.resolve(__dirname, "..", "..");
const SOURCE = path.join(ROOT, "attention_lab", "static", "attention-lab", "attention.js");
const core = require(SOURCE);
const TOL = 1e-9;

function loadDocument() {
  const file = process.env.ATTENTION_VECTORS;
  if (file) return JSON.parse(fs.readFileSync(file, "utf8"));
  const venv = path.join(ROOT, ".venv", "bin", "python");
  const python = process.env.PYTHON || (fs.existsSync(venv) ? venv : "python3");
  return JSON.parse(execFileSync(python, [path.join(ROOT, "scripts", "make_vectors.py")],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 }));
}
const DOC = loadDocument();
const VECTORS = DOC.vectors;
// The page's own configuration (attention_lab.web.lab_config): RANGES, BASEline, strings.
const { ranges: RANGES, baseline: BASE, strings: STRINGS } = DOC.config;
const decode = (t) => t.map((row) => row.map((v) => (v === "-Infinity" ? -Infinity : v)));

function assertTableClose(name, got, want, label) {
  assert.equal(got.length, want.length, `${label}: ${name} rows`);
  want.forEach((row, i) => row.forEach((w, j) => {
    const g = got[i][j];
    if (w === -Infinity) {
      assert.equal(g, -Infinity, `${label}: ${name}[${i},${j}] should be masked (-Infinity), got ${g}`);
    } else {
      assert.ok(Number.isFinite(g) && Math.abs(g - w) <= TOL,
        `${label}: ${name}[${i},${j}] = ${g}, Python says ${w} (diff ${Math.abs(g - w)})`);
    }
  }));
}

/** The Python result of a vector, in the shape attention.js returns (withMask false: as the
 *  kernel lab sends it, without M). */
function pythonResult(v, withMask = true) {
  const r = { d_k: v.d_k, raw_scores: decode(v.raw_scores) };
  for (const n of ["Q", "K", "V", "S", "A", "O"]) r[n] = decode(v[n]);
  if (withMask) r.M = decode(v.M);
  return r;
}

test("the vectors cover baseline, contrasts, causal off, d_k 1 and 64, random and extreme cases", () => {
  const labels = VECTORS.map((v) => v.label);
  for (const want of ["baseline", "only_wv", "only_wq", "baseline causal off", "d_k=1", "d_k=64", "saturated", "all max"]) {
    assert.ok(labels.includes(want), want);
  }
  assert.ok(labels.filter((l) => l.startsWith("random")).length >= 30);
});

test("every table of every vector equals the Python core to 1e-9", () => {
  for (const v of VECTORS) {
    const r = core.attentionFromParams(v.params);
    for (const n of ["Q", "K", "V", "S", "A", "O", "raw_scores"]) assertTableClose(n, r[n], decode(v[n]), v.label);
    assert.equal(r.d_k, v.d_k);
  }
});

test("baseline gives the chapter's numbers", () => {
  const r = core.attentionFromParams(VECTORS.find((v) => v.label === "baseline").params);
  assert.deepEqual(r.Q, [[0, 1], [1, 0]]);
  assert.deepEqual(r.V, [[10, 0], [0, 20]]);
  assert.equal(r.S[0][1], -Infinity);
  assert.ok(Math.abs(r.A[1][0] - 0.6697615493) < 1e-10);
  assert.ok(Math.abs(r.O[1][1] - 6.6047690135) < 1e-10);
});

test("only_wv changes V and O but keeps the shares", () => {
  const base = core.attentionFromParams(VECTORS.find((v) => v.label === "baseline").params);
  const wv = core.attentionFromParams(VECTORS.find((v) => v.label === "only_wv").params);
  assert.deepEqual(wv.A, base.A);
  assert.notDeepEqual(wv.O, base.O);
});

test("softmax subtracts the row maximum: huge scores give no overflow", () => {
  const [row] = core.softmax([[1000, 999]]);
  assert.ok(Math.abs(row[0] - 1 / (1 + Math.exp(-1))) < 1e-15);
  const [sat] = core.softmax([[1e6, -1e6, -Infinity]]);
  assert.deepEqual(sat, [1, 0, 0]);
});

test("a row with every position masked throws a clear error instead of NaN", () => {
  assert.throws(() => core.softmax([[-Infinity, -Infinity]]), /every position masked/);
  assert.throws(() => core.scaledDotProductAttention([[1, 0]], [[1, 0]], [[1, 1]], { mask: [[-Infinity]] }),
    /every position masked/);
});

test("causalMask lets position i read 0..i", () => {
  assert.deepEqual(core.causalMask(3), [[0, -Infinity, -Infinity], [0, 0, -Infinity], [0, 0, 0]]);
  assert.throws(() => core.causalMask(0), /positive/);
});

test("general form: n queries, m keys, d_v != d_k", () => {
  const r = core.scaledDotProductAttention([[1, 0, 0]], [[1, 0, 0], [0, 1, 0]], [[1, 2, 3, 4], [5, 6, 7, 8]]);
  assert.equal(r.O.length, 1);
  assert.equal(r.O[0].length, 4);
  assert.equal(r.d_k, 3);
});

test("worked text: the JavaScript rules give Python's text character for character", () => {
  // Same numbers in (Python's tables), same text out: this checks every template and number rule.
  for (const v of VECTORS) {
    for (const row of [0, 1]) {
      assert.equal(core.workedText(pythonResult(v), row, STRINGS.worked), v.worked[row], `${v.label}, row ${row}`);
    }
  }
});

test("worked text from a result without M (the kernel lab's) is the same text", () => {
  for (const v of VECTORS) {
    for (const row of [0, 1]) {
      assert.equal(core.workedText(pythonResult(v, false), row, STRINGS.worked), v.worked[row], `${v.label}, row ${row}`);
    }
  }
});

test("each stage's worked lines equal Python's, for both rows and every stage", () => {
  assert.deepEqual(core.WORKED_STAGE, DOC.worked_stage);
  for (const v of VECTORS) {
    const r = core.attentionFromParams(v.params);
    for (const row of [0, 1]) {
      const lines = core.workedSteps(r, row, STRINGS.worked);
      for (let stage = 0; stage <= 5; stage++) {
        const text = lines.filter((l) => l.stage === stage).map((l) => l.text).join("\n");
        assert.equal(text, v.worked_stages[row][stage], `${v.label}, row ${row}, stage ${stage}`);
      }
      // Stages only go forward, and each of 1..5 opens with its heading.
      assert.deepEqual(lines.map((l) => l.stage), lines.map((l) => l.stage).slice().sort((a, b) => a - b));
      assert.deepEqual(lines.filter((l) => l.kind === "head").map((l) => l.key), ["step1", "step2", "step3", "step4", "step5"]);
    }
  }
});

test("the masked cell's raw score is a number before the mask; its −∞ first appears at stage 3", () => {
  const v = VECTORS.find((x) => x.label === "baseline");
  const lines = core.workedSteps(core.attentionFromParams(v.params), 0, STRINGS.worked);
  const at = (key) => lines.filter((l) => l.key === key).map((l) => l.text);
  assert.deepEqual(at("dot"), ["对“我”的原始分数：q₀·k₀ = 0×1+1×0 = 0", "对“爱”的原始分数：q₀·k₁ = 0×0+1×1 = 1"]);
  assert.deepEqual(at("scaled"), ["缩放分数：[0/√2, 1/√2] ≈ [0, 0.7071067812]"]);
  assert.deepEqual(at("add_mask"), ["加上掩码：[0, 0.7071067812] + [0, −∞] = [0, −∞]"]);
  assert.equal(lines.find((l) => l.text.includes("−∞")).key, "add_mask");
  assert.equal(lines.find((l) => l.text.includes("−∞")).stage, 3);
});

test("worked text computed in JavaScript equals Python's, character for character, in every case", () => {
  // Random cases included: "=" versus "≈" tolerates float noise (EXACT_TOL in worked.py), so numpy's
  // BLAS matmul and a plain JavaScript loop agree on it even where their last bits differ.
  for (const v of VECTORS) {
    const r = core.attentionFromParams(v.params);
    for (const row of [0, 1]) assert.equal(core.workedText(r, row, STRINGS.worked), v.worked[row], `${v.label}, row ${row}`);
  }
});

test("typed values are coerced exactly as attention_lab.params.coerce does", () => {
  for (const c of DOC.coerce) {
    const got = core.coerce(c.name, c.raw, RANGES, BASE, undefined, STRINGS);
    assert.deepEqual({ value: got.value, note: got.note }, { value: c.value, note: c.note }, `${c.name} <- ${JSON.stringify(c.raw)}`);
  }
});

test("coerce's notes are the string table's coerce templates, filled by name", () => {
  // A changed sentence in strings_zh.json reaches the note: the note is read from the table given.
  const marked = { coerce: Object.fromEntries(Object.entries(STRINGS.coerce).map(([k, v]) => [k, "<" + v + ">"])) };
  const notes = ["X[0,0]", "d_k", "causal"].flatMap((name) => ["99", "abc", "3.5", "inf", "maybe"]
    .map((raw) => core.coerce(name, raw, RANGES, BASE, undefined, marked).note).filter((n) => n));
  assert.ok(notes.length >= 8, notes.join(" | "));
  for (const n of notes) assert.match(n, /^<.*>$/, n);
  assert.equal(core.coerce("causal", "maybe", RANGES, BASE, undefined, marked).note, "<causal 只能是开或关，“maybe”没有采用，仍为<开>>");
});

test("a link round-trips every parameter and the row", () => {
  for (const v of VECTORS.slice(0, 20)) {
    const q = core.toQuery(v.params, 0);
    const back = core.fromQuery("?" + q, BASE, 1, RANGES, BASE, STRINGS);
    assert.deepEqual(back.notes, [], q);
    assert.deepEqual(back.params, v.params, q);
    assert.equal(back.row, 0);
  }
});

test("hostile or malformed link parameters are ignored with notes, never used", () => {
  const search = "?X=1,2,%3Cscript%3Ealert(1)%3C/script%3E,0x10&Wq=1,2&%3Cimg%20src=x%3E=1&d_k=1e9&causal=maybe"
    + "&row=7&Wv=" + "9".repeat(500) + ",1,1,1&Wk[0,0]=0.25&%E0%A4%A=1&highlight=attention&__proto__=1";
  const r = core.fromQuery(search, BASE, 1, RANGES, BASE, STRINGS);
  assert.equal(r.params["X[0,0]"], 1);
  assert.equal(r.params["X[0,1]"], 2);
  assert.equal(r.params["X[1,0]"], BASE["X[1,0]"], "<script> refused");
  assert.equal(r.params["X[1,1]"], BASE["X[1,1]"], "hex refused");
  assert.equal(r.params.d_k, 64, "clamped");
  assert.equal(r.params.causal, true);
  assert.equal(r.row, 1);
  assert.equal(r.params["Wv[0,0]"], BASE["Wv[0,0]"], "huge string refused");
  assert.equal(r.params["Wk[0,0]"], 0.25, "single names work too");
  assert.deepEqual(Object.keys(r.params).sort(), [...core.PARAM_NAMES].sort(), "no new keys");
  const text = r.notes.join("\n");
  for (const part of ["<img src", "Wq", "d_k", "row", "causal", "__proto__"]) assert.ok(text.includes(part), part);
  assert.ok(!text.includes("highlight"), "the site's own search parameter is not ours to complain about");
  assert.ok(r.notes.every((n) => n.length < 120), "notes shorten long input");
  const long = core.fromQuery("?X=" + "1,".repeat(3000), BASE, 1, RANGES, BASE, STRINGS);
  assert.equal(long.notes.length, 1);
  assert.deepEqual(long.params, BASE);
});

test("number formats follow Python's", () => {
  assert.equal(core.formatValue(0.7071067811865475), "0.707");
  assert.equal(core.formatValue(-0.0001), "0");
  assert.equal(core.formatValue(-2.5), "−2.5");
  assert.equal(core.formatValue(-Infinity), "−∞");
  assert.equal(core.pyFixed(0.0625, 3), "0.062");   // ties to even, as Python
  assert.equal(core.pyFixed(-0, 2), "-0.00");
  assert.equal(core.pyG(100.7), "100.7");
  assert.equal(core.pyG(1e20), "1e+20");
  assert.equal(core.fmt(0.70710678118654), "0.7071067812");
  assert.equal(core.fmt(-1e-12), "0");
});

test("attention.js never touches the page", () => {
  const src = fs.readFileSync(SOURCE, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  assert.ok(!/\bdocument\b/.test(src));
  assert.ok(!/window\.(?!AttentionLabCore)/.test(src.replace("typeof window !== \"undefined\" ? window : null", "")));
});

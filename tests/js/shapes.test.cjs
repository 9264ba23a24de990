// The shapes lab's computation (attention.js generalAttention, causalMask's diagonal, paddingMask,
// workedSteps with n x m tables and key tokens) against the Python core's general_attention.
//
// Vectors come from scripts/make_shape_vectors.py: the file named by $SHAPE_VECTORS
// (tests/test_shapes_node.py generates it fresh), or, run alone, generated here by calling Python.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const ROOT = path.resolve(__dirname, "..", "..");
const core = require(path.join(ROOT, "attention_lab", "static", "attention-lab", "attention.js"));
const STRINGS = JSON.parse(fs.readFileSync(path.join(ROOT, "attention_lab", "strings_zh.json"), "utf8"));
const TOL = 1e-9;

function loadDocument() {
  const file = process.env.SHAPE_VECTORS;
  if (file) return JSON.parse(fs.readFileSync(file, "utf8"));
  const venv = path.join(ROOT, ".venv", "bin", "python");
  const python = process.env.PYTHON || (fs.existsSync(venv) ? venv : "python3");
  return JSON.parse(execFileSync(python, [path.join(ROOT, "scripts", "make_shape_vectors.py")],
    { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 }));
}
const DOC = loadDocument();
const decode = (t) => t.map((row) => row.map((v) => (v === "-Infinity" ? -Infinity : v)));

function close(actual, expected, label) {
  assert.equal(actual.length, expected.length, label + ": rows");
  actual.forEach((row, i) => {
    assert.equal(row.length, expected[i].length, label + ": columns of row " + i);
    row.forEach((v, j) => {
      const e = expected[i][j];
      if (e === -Infinity) assert.equal(v, -Infinity, `${label}[${i}][${j}] masked`);
      else assert.ok(Math.abs(v - e) <= TOL * Math.max(1, Math.abs(e)), `${label}[${i}][${j}]: ${v} vs ${e}`);
    });
  });
}

test("generalAttention equals the Python core for every shape, self and cross, causal and padded", () => {
  assert.ok(DOC.vectors.length >= 50);
  let cross = 0, padded = 0, rectangularCausal = 0;
  for (const v of DOC.vectors) {
    const run = () => core.generalAttention(v.X, v.Wq, v.Wk, v.Wv, v.Xs, v.causal, v.pad);
    if (v.error) {
      assert.throws(run, (e) => e.kind === v.error);
      continue;
    }
    const r = run();
    for (const name of ["Q", "K", "V", "M", "S", "A", "O", "raw_scores"]) close(r[name], decode(v[name]), name);
    assert.equal(r.d_k, v.d_k);
    assert.equal(r.d_k, v.Wq[0].length, "√d_k of the real width");
    if (v.Xs) cross++;
    if (v.pad) padded++;
    if (v.causal && v.Xs && v.Xs.length !== v.X.length) rectangularCausal++;
  }
  assert.ok(cross >= 10 && padded >= 10 && rectangularCausal >= 3, `${cross} cross, ${padded} padded, ${rectangularCausal} n≠m causal`);
});

test("the worked text of every row equals Python's, cross rows and padded keys included", () => {
  let rows = 0, padLines = 0;
  for (const v of DOC.vectors.filter((v) => v.worked)) {
    const r = core.generalAttention(v.X, v.Wq, v.Wk, v.Wv, v.Xs, v.causal, v.pad);
    const keys = v.Xs ? DOC.source_tokens : DOC.tokens;
    v.worked.forEach((text, i) => {
      assert.equal(core.workedText(r, i, STRINGS.worked, DOC.tokens, keys), text, `row ${i} of ${JSON.stringify(v.X)}`);
      padLines += text.split("\n").filter((l) => l.includes("填充掩码不许")).length;
      rows++;
    });
  }
  assert.ok(rows >= 100 && padLines >= 20, `${rows} rows, ${padLines} padded-key lines`);
});

test("causal aligns bottom-right when n < m: the last query reads every key (a KV cache)", () => {
  assert.deepEqual(core.causalMask(2, 4, 2), [[0, 0, 0, -Infinity], [0, 0, 0, 0]]);
  const X = [[1], [2]], Xs = [[1], [1], [1], [1]], W = [[1]];
  const r = core.generalAttention(X, W, W, W, Xs, true, 0);
  assert.deepEqual(r.A[1], [0.25, 0.25, 0.25, 0.25]);
  assert.equal(r.A[0][3], 0);
});

test("padded keys get share 0 in every row and their own worked note; cross rows name the source tokens", () => {
  const X = [[1, 0], [0, 1], [1, 1]], Xs = [[1, 0], [0, 1], [1, 1], [0, 0]];
  const I = [[1, 0], [0, 1]];
  const r = core.generalAttention(X, I, I, I, Xs, false, 1);
  r.A.forEach((row) => assert.equal(row[3], 0));
  assert.deepEqual(core.paddingMask(1, 3, 2), [[0, -Infinity, -Infinity]]);
  const lines = core.workedSteps(r, 2, STRINGS.worked, ["我", "爱", "你"], ["I", "love", "you", "<pad>"]);
  assert.ok(lines.some((l) => l.key === "masked_pad" && l.text.includes("<pad>")));
  assert.ok(!lines.some((l) => l.key === "masked_pos"));
  assert.ok(lines[0].text.includes("你"), lines[0].text);
  assert.ok(lines.find((l) => l.key === "raw_scores").text.includes("[I, love, you, <pad>]"));
  assert.throws(() => core.paddingMask(2, 3, 3), (e) => e.kind === "mask");
  assert.throws(() => core.generalAttention(X, I, I, I, [[1, 2, 3]], false, 0), (e) => e.kind === "shape");
});

test("multiHeadAttention equals the Python core for h = 2..4 heads: each head's S, A, O, the concatenation and Y", () => {
  assert.ok(DOC.heads.length >= 20);
  let narrow = 0, cross = 0;
  for (const v of DOC.heads) {
    const r = core.multiHeadAttention(v.X, v.Wq, v.Wk, v.Wv, v.Wo, v.h, v.Xs, v.causal, v.pad);
    assert.equal(r.heads.length, v.h);
    for (const name of ["Q", "K", "V", "O", "Y"]) close(r[name], decode(v[name]), name);
    v.heads.forEach((head, t) => {
      for (const name of ["S", "A", "O", "raw_scores"]) close(r.heads[t][name], decode(head[name]), `head ${t} ${name}`);
      assert.equal(r.heads[t].d_k, v.Wq[0].length / v.h, "√d_k of one head's width");
    });
    if (v.h * r.d_k !== v.X[0].length) narrow++;
    if (v.Xs) cross++;
  }
  assert.ok(narrow >= 10 && cross >= 5, `${narrow} with h·d_k ≠ d_model, ${cross} cross`);
});

test("each head's worked text and the projection's lines equal Python's, row by row", () => {
  let rows = 0;
  for (const v of DOC.heads) {
    const r = core.multiHeadAttention(v.X, v.Wq, v.Wk, v.Wv, v.Wo, v.h, v.Xs, v.causal, v.pad);
    const keys = v.Xs ? DOC.source_tokens : DOC.tokens;
    v.worked.forEach((texts, i) => {
      texts.forEach((text, t) => assert.equal(core.workedText(r.heads[t], i, STRINGS.worked, DOC.tokens, keys), text, `row ${i}, head ${t}`));
      const lines = core.projectionSteps(r, i, STRINGS.shapes.heads.worked, DOC.tokens);
      assert.equal(lines.map((l) => l.text).join("\n"), v.projection[i], `projection of row ${i}`);
      assert.ok(lines.every((l) => l.stage === 6));
      rows++;
    });
  }
  assert.ok(rows >= 60, `${rows} rows`);
});

test("heads that do not divide the tables' widths, or a Wo of the wrong shape, are refused by name", () => {
  const I = [[1, 0], [0, 1]];
  assert.throws(() => core.multiHeadAttention(I, [[1, 0, 0], [0, 1, 0]], [[1, 0, 0], [0, 1, 0]], I, null, 2), (e) => e.kind === "shape");
  assert.throws(() => core.multiHeadAttention(I, I, I, I, [[1, 0]], 2), (e) => e.kind === "shape");
  const r = core.multiHeadAttention(I, I, I, I, null, 2);
  assert.equal(r.Y, null);
  assert.deepEqual(r.O.map((row) => row.length), [2, 2]);
});

test("a typed shape or pad is taken, moved or refused exactly as attention_lab.shapes.coerce_shape, with its note", () => {
  assert.ok(DOC.coerce_shape.length >= 20);
  for (const c of DOC.coerce_shape) {
    const got = core.coerceShape(c.name, c.raw, c.limits, c.current, STRINGS.shapes);
    assert.deepEqual(got, { value: c.value, note: c.note }, `${c.name} typed ${JSON.stringify(c.raw)}`);
  }
  // The rule, read in Chinese: every moved or refused value says so; a value taken as typed says nothing.
  for (const c of DOC.coerce_shape) assert.equal(c.note === null, core.parseNumber(c.raw) === c.value, JSON.stringify(c));
});

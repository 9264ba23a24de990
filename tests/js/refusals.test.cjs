// The twin refuses bad input exactly as the Python core does: the same table of cases
// (tests/js/bad_inputs.json, also read by tests/test_core.py) and the same error kind.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..", "..");
const core = require(path.join(ROOT, "attention_lab", "static", "attention-lab", "attention.js"));
const DOC = JSON.parse(fs.readFileSync(path.join(__dirname, "bad_inputs.json"), "utf8"));

const SPECIAL = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };
/** {"$": "NaN"} -> NaN etc., everywhere in a value. */
function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value !== null && typeof value === "object") {
    if (Object.keys(value).length === 1 && "$" in value) return SPECIAL[value.$];
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
  }
  return value;
}

const BASE = { X: [[1, 1], [1, -1]], Wq: [[0.5, 0.5], [-0.5, 0.5]], Wk: [[0.5, 0.5], [0.5, -0.5]], Wv: [[5, 10], [5, -10]] };
const EYE = [[1, 0], [0, 1]];

function baseParams() {
  const p = {};
  for (const t of core.TABLES) for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) p[`${t}[${i},${j}]`] = BASE[t][i][j];
  p.d_k = 2;
  p.causal = true;
  return p;
}

function run(c) {
  const a = decode(c.args);
  if (c.call === "params") return core.attentionFromParams({ ...baseParams(), ...a });
  if (c.call === "attention") {
    const t = { ...BASE, ...a };
    return core.attention(t.X, t.Wq, t.Wk, t.Wv, a.d_k, "causal" in a ? a.causal : undefined);
  }
  if (c.call === "sdpa") {
    const options = {};
    for (const k of ["d_k", "mask", "causal"]) if (k in a) options[k] = a[k];
    return core.scaledDotProductAttention(a.Q || EYE, a.K || EYE, a.V || EYE, options);
  }
  if (c.call === "softmax") return core.softmax(a.scores);
  throw new Error("unknown call " + c.call);
}

test("the shared table of bad inputs has cases for every kind of refusal", () => {
  const kinds = new Set(DOC.cases.map((c) => c.kind));
  for (const k of ["type", "nonfinite", "shape", "d_k", "causal", "mask", "all_masked", "overflow", null]) {
    assert.ok(kinds.has(k), `no case of kind ${k}`);
  }
});

for (const c of DOC.cases) {
  test(`${c.label} (${c.kind === null ? "accepted" : c.kind})`, () => {
    let error = null;
    let result;
    try { result = run(c); } catch (e) { error = e; }
    if (c.kind === null) {
      assert.equal(error, null, `refused: ${error && error.message}`);
      for (const row of result.A) assert.ok(row.every(Number.isFinite), "shares must be finite");
      return;
    }
    assert.ok(error, "accepted, but should be refused as " + c.kind);
    assert.equal(error.name, "AttentionInputError", error.stack);
    assert.equal(error.kind, c.kind, error.message);
    if (c.message) assert.ok(error.message.includes(c.message), `"${error.message}" should contain "${c.message}"`);
  });
}

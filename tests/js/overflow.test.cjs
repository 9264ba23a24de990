// Outside its ranges the twin (attention.js) names the case as the Python core does (issue 26, item 9):
// a table past the floats throws kind "overflow", NaN given throws "nonfinite", never a NaN/±inf
// result or an "all_masked" for what is an overflow.  Cases: tests/js/overflow_cases.json (the
// Python side of the same table: tests/test_api_inputs.py).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..", "..");
const core = require(path.join(ROOT, "attention_lab", "static", "attention-lab", "attention.js"));
const { cases: CASES } = JSON.parse(fs.readFileSync(path.join(__dirname, "overflow_cases.json"), "utf8"));
const WORDS = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };
const decode = (t) => t.map((row) => row.map((v) => (typeof v === "string" ? WORDS[v] : v)));

function run(c) {
  const a = c.args;
  if (c.call === "attention") return core.attention(decode(a.X), decode(a.Wq), decode(a.Wk), decode(a.Wv), a.d_k, a.causal);
  if (c.call === "sdpa") return core.scaledDotProductAttention(decode(a.Q), decode(a.K), decode(a.V), { causal: a.causal });
  if (c.call === "softmax") return core.softmax(decode(a.scores));
  if (c.call === "general") return core.generalAttention(decode(a.X), decode(a.Wq), decode(a.Wk), decode(a.Wv), decode(a.Xs), false, 0);
  throw new Error("unknown call " + c.call);
}

test("every case past the floats throws the kind the Python core gives, with a message that says so", () => {
  for (const c of CASES.filter((c) => c.kind !== "overflow_row_two" && c.kind !== "rescaled")) {
    assert.throws(() => run(c), (e) => {
      assert.equal(e.kind, c.kind, c.label);
      if (c.kind === "overflow") assert.match(e.message, /overflow/, c.label);
      return true;
    }, c.label);
  }
});

test("a score the causal mask hides may overflow: the readable row 0 is computed, row 1 overflows", () => {
  const c = CASES.find((c) => c.kind === "overflow_row_two");
  assert.throws(() => run(c), (e) => e.kind === "overflow" && /scores S/.test(e.message));
  const r = core.scaledDotProductAttention([[1, 1], [1, 1]], [[1, 1], [1e200, 1e200]], [[1], [2]], { causal: true });
  assert.deepEqual(r.A[0], [1, 0]);  // S[0][1] = 1e200 + -inf is hidden: not an overflow
});

test("O past the floats only by rounding is computed, as the core's _mix does: finite, inside each column of V", () => {
  const c = CASES.find((c) => c.kind === "rescaled");
  const V = decode(c.args.V), plain = core.matmul(run(c).A, V);
  assert.ok(plain.flat().some((v) => !Number.isFinite(v)), "the case no longer overflows A·V: it tests nothing");
  const O = run(c).O;
  O[0].forEach((v, j) => {
    const col = V.map((row) => row[j]);
    assert.ok(Number.isFinite(v) && v >= Math.min(...col) && v <= Math.max(...col), `O[0][${j}] = ${v}`);
  });
});

test("the refusal's Chinese sentence names an overflow as one (strings_zh.json errors)", () => {
  const strings = JSON.parse(fs.readFileSync(path.join(ROOT, "attention_lab", "strings_zh.json"), "utf8"));
  const error = (() => { try { run(CASES[1]); } catch (e) { return e; } })();
  assert.equal(core.errorText(error, strings), strings.errors.overflow);
  assert.match(core.errorText(error, strings), /溢出/);
});

test("inside the ranges nothing changed: the baseline's shares are finite and sum to 1", () => {
  const I = [[1, 0], [0, 1]];
  const r = core.attention([[1, 1], [1, -1]], [[0.5, 0.5], [-0.5, 0.5]], I, I, 2, true);
  r.A.forEach((row) => assert.ok(Math.abs(row[0] + row[1] - 1) < 1e-12));
});

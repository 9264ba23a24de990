// The vector plane's geometry (render.js planeModel, convexHull, planeBox), against sums written
// out here: projections, dot products, hulls and the box that keeps the picture still.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..", "..");
const core = require(path.join(ROOT, "attention_lab", "static", "attention-lab", "attention.js"));
const render = require(path.join(ROOT, "attention_lab", "static", "attention-lab", "render.js"));
const close = (a, b, tol = 1e-12) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

/** A seeded generator (mulberry32): the same cases on every run. */
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const table = (r, n, m, lo, hi) => Array.from({ length: n }, () => Array.from({ length: m }, () => lo + (hi - lo) * r()));

test("the baseline: q爱 lies along k我 (a foot at k我's tip) and is perpendicular to k爱 (a foot at the origin)", () => {
  const X = [[1, 1], [1, -1]], Wq = [[0.5, 0.5], [-0.5, 0.5]], Wk = [[0.5, 0.5], [0.5, -0.5]], Wv = [[5, 10], [5, -10]];
  const r = core.attention(X, Wq, Wk, Wv, 2, true);
  const m = render.planeModel(r, 1);
  assert.deepEqual(m.q, [1, 0]);
  assert.deepEqual(m.keys[0].foot, [1, 0]);
  assert.deepEqual(m.keys[1].foot, [0, 0]);
  close(m.keys[0].scaled, 1 / Math.SQRT2);
  assert.equal(m.keys[1].dot, 0);
  // Row 0 (我) reads only itself: 爱 is masked and its value is not in the hull.
  const m0 = render.planeModel(r, 0);
  assert.equal(m0.keys[1].masked, true);
  assert.deepEqual(m0.hull, [[10, 0]]);
});

test("for random states, each foot gives the raw score as its signed length times |q|, and o is the shares' mix", () => {
  const r = rng(25);
  for (let k = 0; k < 300; k++) {
    const n = 1 + Math.floor(r() * 4), m = 1 + Math.floor(r() * 5);
    const X = table(r, n, 2, -3, 3), Xs = table(r, m, 2, -3, 3);
    const W = () => table(r, 2, 2, -3, 3);
    const res = core.generalAttention(X, W(), W(), table(r, 2, 2, -20, 20), Xs, false, Math.floor(r() * m));
    const row = Math.floor(r() * n);
    const model = render.planeModel(res, row);
    const q = res.Q[row], qn = Math.hypot(q[0], q[1]);
    model.keys.forEach((key, j) => {
      const kv = res.K[j];
      close(key.dot, q[0] * kv[0] + q[1] * kv[1], 1e-12);
      close(key.scaled, key.dot / Math.sqrt(res.d_k), 1e-12);
      // The foot lies on q's line, and k minus the foot is perpendicular to q.
      close(key.foot[0] * q[1] - key.foot[1] * q[0], 0, 1e-9);
      close((kv[0] - key.foot[0]) * q[0] + (kv[1] - key.foot[1]) * q[1], 0, 1e-9);
      const signed = (key.foot[0] * q[0] + key.foot[1] * q[1]) / qn;
      close(signed * qn, key.dot, 1e-9);
      assert.equal(key.masked, res.S[row][j] === -Infinity);
      close(key.share, res.A[row][j]);
    });
    const o = [0, 1].map((c) => res.V.reduce((t, v, j) => t + res.A[row][j] * v[c], 0));
    close(model.o[0], o[0], 1e-9);
    close(model.o[1], o[1], 1e-9);
  }
});

test("o always lies inside the hull of the values it may read (never outside the values)", () => {
  const r = rng(7);
  const inside = (hull, p) => {
    if (hull.length === 1) return Math.hypot(p[0] - hull[0][0], p[1] - hull[0][1]) < 1e-9;
    if (hull.length === 2) {
      const [a, b] = hull, ab = [b[0] - a[0], b[1] - a[1]], ap = [p[0] - a[0], p[1] - a[1]];
      const cross = ab[0] * ap[1] - ab[1] * ap[0], t = (ab[0] * ap[0] + ab[1] * ap[1]) / (ab[0] ** 2 + ab[1] ** 2);
      return Math.abs(cross) <= 1e-7 * Math.max(1, Math.hypot(...ab) ** 2) && t >= -1e-9 && t <= 1 + 1e-9;
    }
    return hull.every((a, k) => {  // counter-clockwise: p left of (or on) every edge
      const b = hull[(k + 1) % hull.length];
      return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= -1e-7 * Math.max(1, Math.hypot(b[0] - a[0], b[1] - a[1]) ** 2);
    });
  };
  for (let k = 0; k < 300; k++) {
    const n = 1 + Math.floor(r() * 4), m = 2 + Math.floor(r() * 4);
    const X = table(r, n, 2, -3, 3);
    const Xs = table(r, m, 2, -3, 3);
    const res = core.generalAttention(X, table(r, 2, 2, -3, 3), table(r, 2, 2, -3, 3), table(r, 2, 2, -20, 20), Xs, false, Math.floor(r() * m));
    for (let row = 0; row < n; row++) {
      const model = render.planeModel(res, row);
      assert.ok(inside(model.hull, model.o), `case ${k} row ${row}: o ${model.o} outside ${JSON.stringify(model.hull)}`);
    }
  }
});

test("the hull is the convex hull: every point inside or on it, its corners among the points, counter-clockwise", () => {
  assert.deepEqual(render.convexHull([[0, 0], [2, 0], [1, 1], [1, 0.2], [2, 2], [0, 2]]), [[0, 0], [2, 0], [2, 2], [0, 2]]);
  assert.deepEqual(render.convexHull([[3, 1], [0, 0]]), [[0, 0], [3, 1]]);
  assert.deepEqual(render.convexHull([[0, 0], [1, 1], [2, 2]]), [[0, 0], [2, 2]]);  // on one line: the two ends
});

test("the plane's box holds every point and the origin, and stays put while a small change still fits", () => {
  const box = render.planeBox([[1, 1], [1, -1], [0, 1]]);
  assert.ok(box.x0 < 0 && box.x1 > 1 && box.y0 < -1 && box.y1 > 1);
  assert.equal(render.planeBox([[1.05, 1], [1, -0.95], [0, 1]], box), box);   // still fits: the same box
  const grown = render.planeBox([[2.5, 1], [1, -1]], box);
  assert.notEqual(grown, box);
  assert.ok(grown.x1 > 2.5);
  const shrunk = render.planeBox([[0.1, 0.1]], box);                           // much smaller: zoom in
  assert.ok(shrunk.x1 - shrunk.x0 < (box.x1 - box.x0) / 2);
  const empty = render.planeBox([[0, 0]]);                                      // all at the origin: a unit box
  assert.ok(empty.x1 - empty.x0 >= 1 && empty.y1 - empty.y0 >= 1);
});

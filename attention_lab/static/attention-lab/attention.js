/* F11 attention lab, static twin: the computation (attention.js).
 *
 * Mirrors attention_lab.core (the computation), params (the names), formatting and worked (the
 * texts) in plain JavaScript with the same names.  No DOM access: it runs in the browser
 * (window.AttentionLabCore) and in Node (module.exports) for `node --test`.
 * Tables are arrays of rows (row vectors, weights on the right: Q = X Wq).
 *
 * It computes what its callers give it and does not check it: the labs pass only values that
 * coerce() has turned into numbers in range, at shapes they build themselves.  Refusing bad
 * input (type, NaN, shape, overflow...) is the Python core's job (core.AttentionInputError),
 * where anyone can call it with anything.  The few throws left guard the mathematics itself,
 * and name the case as the core does: past the float range, a table that overflows (Q, K, V, S,
 * Y) throws kind "overflow" (never NaN/±inf in a result, nor "all_masked" for NaN scores);
 * NaN or ±inf given in a table, "nonfinite".  O = A·V, whose exact value never leaves the floats,
 * is rescaled where rounding alone would carry it past them, as the core's _mix does (mix).
 */
(function (root, factory) {
  "use strict";
  var core = factory();
  if (typeof module !== "undefined" && module.exports) module.exports = core;
  if (root) root.AttentionLabCore = core;
})(typeof window !== "undefined" ? window : null, function () {
  "use strict";

  var TOKENS = ["我", "爱"];
  var TABLES = ["X", "Wq", "Wk", "Wv"];
  var RESULT_TABLES = ["Q", "K", "V", "S", "A", "O"];
  var PARAM_NAMES = [];
  TABLES.forEach(function (t) {
    for (var i = 0; i < 2; i++) for (var j = 0; j < 2; j++) PARAM_NAMES.push(t + "[" + i + "," + j + "]");
  });
  PARAM_NAMES.push("d_k", "causal");

  // ---------------------------------------------------------------- tables

  /** An error with the `kind` the Python core gives the same case (tests/js/shapes.test.cjs compares them). */
  function inputError(kind, message) {
    var error = new Error(message);
    error.name = "AttentionInputError";
    error.kind = kind;
    return error;
  }

  /** Throw `kind` ("nonfinite" for input, "overflow" for a product) if table t holds NaN or ±inf. */
  function finite(t, kind, what) {
    for (var i = 0; i < t.length; i++) {
      for (var j = 0; j < t[i].length; j++) {
        if (!isFinite(t[i][j])) {
          throw inputError(kind, kind === "overflow" ? what + " overflows: it left the float range (1.8e+308); use smaller inputs"
            : what + " must hold finite numbers (no NaN or inf)");
        }
      }
    }
    return t;
  }

  /** (n, k) @ (k, m) -> (n, m). */
  function matmul(a, b) {
    var n = a.length, k = b.length, m = b[0].length;
    if (a[0].length !== k) {
      throw new Error("matmul: shapes (" + n + ", " + a[0].length + ") and (" + k + ", " + m + ") do not fit");
    }
    var out = new Array(n);
    for (var i = 0; i < n; i++) {
      var row = new Array(m);
      for (var j = 0; j < m; j++) {
        var s = 0;
        for (var p = 0; p < k; p++) s += a[i][p] * b[p][j];
        row[j] = s;
      }
      out[i] = row;
    }
    return out;
  }

  function transpose(a) {
    var out = [];
    for (var j = 0; j < a[0].length; j++) {
      var row = [];
      for (var i = 0; i < a.length; i++) row.push(a[i][j]);
      out.push(row);
    }
    return out;
  }

  /** Additive causal mask (n, m): 0 on and below the diagonal, -Infinity above; `diagonal`
   *  shifts it as torch.tril's (m - n: bottom-right, as a KV cache needs). */
  function causalMask(n, m, diagonal) {
    if (m === undefined) m = n;
    diagonal = diagonal || 0;
    if (!(n >= 1 && m >= 1)) throw new Error("mask shape must be positive; got (" + n + ", " + m + ")");
    var out = [];
    for (var i = 0; i < n; i++) {
      var row = [];
      for (var j = 0; j < m; j++) row.push(j <= i + diagonal ? 0 : -Infinity);
      out.push(row);
    }
    return out;
  }

  /** Numerically stable softmax of each row: subtracts the row's maximum first.
   *  -Infinity entries get exactly 0; a row with every entry -Infinity throws. */
  function softmax(scores) {
    return scores.map(function (row) {
      var max = -Infinity;
      for (var j = 0; j < row.length; j++) {
        if (row[j] !== row[j]) throw inputError("nonfinite", "softmax received NaN scores");
        if (row[j] === Infinity) throw inputError("overflow", "scores overflow: softmax received +inf scores");
        if (row[j] > max) max = row[j];
      }
      if (max === -Infinity) {
        throw inputError("all_masked", "softmax: a row has every position masked (-inf), so there is nothing to read");
      }
      var exps = row.map(function (v) { return Math.exp(v - max); });
      var sum = 0;
      for (j = 0; j < exps.length; j++) sum += exps[j];
      return exps.map(function (e) { return e / sum; });
    });
  }

  /** General single head on projected tables: Q (n, d_k), K (m, d_k), V (m, d_v).
   *  options: {d_k, mask (n, m) of 0 / -Infinity, causal}. */
  function scaledDotProductAttention(Q, K, V, options) {
    options = options || {};
    var n = Q.length, m = K.length;
    var dK = options.d_k === undefined || options.d_k === null ? Q[0].length : options.d_k;
    var M = [];
    for (var i = 0; i < n; i++) M.push(new Array(m).fill(0));
    if (options.mask) {
      var user = options.mask;
      M = M.map(function (row, i) { return row.map(function (v, j) { return v + user[i][j]; }); });
    }
    if (options.causal) {
      var C = causalMask(n, m);
      M = M.map(function (row, i) { return row.map(function (v, j) { return v + C[i][j]; }); });
    }
    var raw = matmul(finite(Q, "nonfinite", "Q"), transpose(finite(K, "nonfinite", "K")));
    var root = Math.sqrt(dK);
    var S = raw.map(function (row, i) { return row.map(function (v, j) { return v / root + M[i][j]; }); });
    // As the core: a cell the mask hides may be anything; a readable one past the floats is an overflow.
    finite(S.map(function (row, i) { return row.filter(function (_, j) { return M[i][j] !== -Infinity; }); }),
      "overflow", "scores S = Q·Kᵀ/√d_k");
    var A = softmax(S);
    var O = mix(A, finite(V, "nonfinite", "V"));
    return { Q: Q, K: K, V: V, M: M, S: S, A: A, O: O, d_k: dK, scale: root, raw_scores: raw };
  }

  /** x·2^k, exact (as numpy's ldexp) for the k mix needs: 2^k itself is a float for -1074 <= k <= 1023. */
  function ldexp(x, k) {
    return k > 1023 ? x * Math.pow(2, k - 1023) * Math.pow(2, 1023) : x * Math.pow(2, k);
  }

  /** O = A·V, kept finite where the exact answer is (the core's _mix): each O[i][c] is a weighted
   *  average of V's column c, so only rounding can carry a sum of huge products past the largest
   *  float (V near 1.8e+308).  Then, as the core does, the product is taken on V scaled by a power of
   *  two, scaled back and held inside the column's range; never inf. */
  function mix(A, V) {
    var O = matmul(A, V), ok = O.every(function (row) { return row.every(isFinite); });
    if (ok) return O;
    var top = 0;
    V.forEach(function (row) { row.forEach(function (v) { top = Math.max(top, Math.abs(v)); }); });
    var e = Math.floor(Math.log2(top)) + 1;  // frexp's exponent: top < 2^e
    if (Math.pow(2, e - 1) > top) e -= 1;     // log2 rounded up at a power of two
    var small = V.map(function (row) { return row.map(function (v) { return ldexp(v, -e); }); });
    var lo = V[0].map(function (_, c) { return Math.min.apply(null, V.map(function (row) { return row[c]; })); });
    var hi = V[0].map(function (_, c) { return Math.max.apply(null, V.map(function (row) { return row[c]; })); });
    O = matmul(A, small).map(function (row) {
      return row.map(function (v, c) { return Math.min(hi[c], Math.max(lo[c], ldexp(v, e))); });
    });
    return finite(O, "overflow", "O = A·V");  // cannot happen for a finite V (a guard, as the core's)
  }

  /** Self-attention of one head: X (n, d_model), Wq/Wk (d_model, d_k), Wv (d_model, d_v). */
  function attention(X, Wq, Wk, Wv, dK, causal) {
    var P = projections(X, X, Wq, Wk, Wv);
    return scaledDotProductAttention(P.Q, P.K, P.V,
      { d_k: dK, causal: causal === undefined ? true : causal });
  }

  /** Q = X Wq, K = source Wk, V = source Wv: "nonfinite" for NaN/inf given, "overflow" for a product past the floats. */
  function projections(X, source, Wq, Wk, Wv) {
    [["X", X], ["Xs", source], ["Wq", Wq], ["Wk", Wk], ["Wv", Wv]].forEach(function (p) { finite(p[1], "nonfinite", p[0]); });
    return { Q: finite(matmul(X, Wq), "overflow", "Q = X·Wq"), K: finite(matmul(source, Wk), "overflow", "K = X·Wk"),
      V: finite(matmul(source, Wv), "overflow", "V = X·Wv") };
  }

  /** As core.padding_mask: the last `pad` keys -Infinity for every query (0 <= pad < m). */
  function paddingMask(n, m, pad) {
    if (!(pad >= 0 && pad < m && Math.floor(pad) === pad)) {
      throw inputError("mask", "pad must be a whole number from 0 to " + (m - 1) + " (m = " + m + "); got " + pad);
    }
    var out = [];
    for (var i = 0; i < n; i++) out.push(new Array(m).fill(0).map(function (_, j) { return j < m - pad ? 0 : -Infinity; }));
    return out;
  }

  /** As core.general_attention: Q = X Wq; K, V from `source` (cross) or X (self); causal aligned
   *  bottom-right; the last `pad` keys masked.  The result also carries `pad` and `causal`. */
  function generalAttention(X, Wq, Wk, Wv, source, causal, pad) {
    source = source || X;
    if (source[0].length !== X[0].length) {
      throw inputError("shape", "Xs must have as many features as X: X is (" + X.length + ", " + X[0].length +
        "), Xs is (" + source.length + ", " + source[0].length + ")");
    }
    var P = projections(X, source, Wq, Wk, Wv);
    var n = X.length, m = source.length, mask = paddingMask(n, m, pad || 0);
    if (causal) {
      var C = causalMask(n, m, m - n);
      mask = mask.map(function (row, i) { return row.map(function (v, j) { return v + C[i][j]; }); });
    }
    var r = scaledDotProductAttention(P.Q, P.K, P.V, { mask: mask });
    r.pad = pad || 0;
    r.causal = !!causal;
    return r;
  }

  /** As core.multi_head_attention: h heads side by side (PyTorch's nn.MultiheadAttention
   *  convention).  Wq, Wk (d_model, h·d_k), Wv (d_model, h·d_v), Wo (h·d_v, d_model) or null.  Head t
   *  is generalAttention on columns t·d_k … (t+1)·d_k − 1 of Wq and Wk (t·d_v … of Wv); the result:
   *  {Q, K, V (the heads' columns side by side), heads: [one generalAttention result per head],
   *  O (the heads' outputs concatenated, n × h·d_v), Y (O · Wo, or null), Wo, h, d_k, d_v, pad, causal}. */
  function multiHeadAttention(X, Wq, Wk, Wv, Wo, h, source, causal, pad) {
    h = h || 1;
    if (!(h >= 1 && Math.floor(h) === h)) throw inputError("shape", "h (the number of heads) must be a whole number from 1 up; got " + h);
    if (Wq[0].length !== Wk[0].length || Wq[0].length % h || Wv[0].length % h) {
      throw inputError("shape", "Wq and Wk must have h·d_k columns and Wv h·d_v (h = " + h + "): Wq (" + Wq.length + ", " +
        Wq[0].length + "), Wk (" + Wk.length + ", " + Wk[0].length + "), Wv (" + Wv.length + ", " + Wv[0].length + ")");
    }
    var dK = Wq[0].length / h, dV = Wv[0].length / h, heads = [];
    function cols(W, from, to) { return W.map(function (row) { return row.slice(from, to); }); }
    for (var t = 0; t < h; t++) {
      heads.push(generalAttention(X, cols(Wq, t * dK, (t + 1) * dK), cols(Wk, t * dK, (t + 1) * dK),
        cols(Wv, t * dV, (t + 1) * dV), source, causal, pad));
    }
    function side(name) {
      return heads[0][name].map(function (_, i) {
        return [].concat.apply([], heads.map(function (r) { return r[name][i]; }));
      });
    }
    var out = { Q: side("Q"), K: side("K"), V: side("V"), heads: heads, O: side("O"), Y: null, Wo: Wo || null,
      h: h, d_k: dK, d_v: dV, pad: pad || 0, causal: !!causal };
    if (Wo) {
      if (Wo.length !== h * dV || Wo[0].length !== X[0].length) {
        throw inputError("shape", "Wo must be (h·d_v, d_model) = (" + h * dV + ", " + X[0].length + "); got (" +
          Wo.length + ", " + Wo[0].length + ")");
      }
      out.Y = finite(matmul(out.O, finite(Wo, "nonfinite", "Wo")), "overflow", "Y = O·Wo");
    }
    return out;
  }

  /** What this browser lacks of what the labs use beyond ES5, by name ([] when nothing): older
   *  browsers (Safari before 14: BigInt) run ES5 but not these.  Both labs' site drivers (app.js,
   *  shapes.js) ask before building anything and then say strings.faults.browser_lacks instead. */
  function browserLacks() {
    var needs = [[typeof BigInt, "BigInt"], [typeof Array.from, "Array.from"], [typeof Object.assign, "Object.assign"],
      [typeof Object.is, "Object.is"], [typeof Math.log10, "Math.log10"], [typeof [].fill, "Array.fill"],
      [typeof "".repeat, "String.repeat"]];
    return needs.filter(function (n) { return n[0] !== "function"; }).map(function (n) { return n[1]; });
  }

  /** Why a computation was refused, in Chinese (attention_lab.strings.error_text): strings.errors
   *  for the error's kind, else its "other" sentence with the error's name; the message is English. */
  function errorText(error, strings) {
    var t = (strings && strings.errors) || {}, kind = error && error.kind;
    if (typeof kind === "string" && kind.charAt(0) !== "_" && t[kind]) return t[kind];
    return t.other ? t.other.split("{type}").join((error && error.name) || "Error") : String(error && error.message);
  }

  // ---------------------------------------------------------------- params

  function tableOf(name) { return name.split("[")[0]; }

  /** Flat params {"X[0,0]": .., "d_k": .., "causal": ..} -> tables ready for attention.
   *  Values are taken as they are: typed text goes through coerce() first. */
  function tablesFromParams(params) {
    var out = {};
    TABLES.forEach(function (t) {
      out[t] = [0, 1].map(function (i) {
        return [0, 1].map(function (j) { return params[t + "[" + i + "," + j + "]"]; });
      });
    });
    out.d_k = params.d_k;
    out.causal = params.causal;
    return out;
  }

  function attentionFromParams(params) {
    var t = tablesFromParams(params);
    return attention(t.X, t.Wq, t.Wk, t.Wv, t.d_k, t.causal);
  }

  // Python's float formats, so that texts match attention_lab character for character.

  /** Python f"{x:.{digits}f}" (round half to even on the exact binary value; keeps "-0"). */
  function pyFixed(x, digits) {
    if (x !== x) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    var neg = x < 0 || Object.is(x, -0);
    var ax = Math.abs(x);
    var s = ax.toFixed(digits);
    // toFixed rounds exact ties away from zero; Python rounds them to even.  x is a tie at
    // `digits` exactly when x·2^(digits+1) is an odd integer (x·10^digits then ends in .5);
    // the power of two makes the test exact and cheap (no long toFixed, no regex).
    if (ax < 1e21 && digits < 100 && ax * Math.pow(2, digits + 1) % 2 === 1) {
      var down = ax.toFixed(digits + 1).slice(0, -1);  // exact: the tie has digits+1 decimals
      if (down.charAt(down.length - 1) === ".") down = down.slice(0, -1);
      if (Number(down.charAt(down.length - 1)) % 2 === 0) s = down;
    }
    return (neg ? "-" : "") + s;
  }

  /** Python f"{x:g}" (6 significant digits, trailing zeros dropped). */
  function pyG(x) {
    if (x !== x) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    var e = Number(Math.abs(x).toExponential(5).split("e")[1]);
    var s;
    if (e < -4 || e >= 6) {
      var parts = x.toExponential(5).split("e");
      var mant = parts[0].indexOf(".") >= 0 ? parts[0].replace(/0+$/, "").replace(/\.$/, "") : parts[0];
      var ex = Number(parts[1]);
      s = mant + "e" + (ex < 0 ? "-" : "+") + (Math.abs(ex) < 10 ? "0" : "") + Math.abs(ex);
    } else {
      s = pyFixed(x, Math.max(0, 5 - e));
      if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
    }
    return s;
  }

  /** How the book writes a number, the one formatter (attention_lab.formatting.format_number):
   *  rounded to `digits` decimals (3, a table cell, by default; the worked text's fmt: 10), trailing
   *  zeros dropped, "−" (U+2212) for minus, "−∞"/"+∞", "NaN". */
  function formatValue(value, digits) {
    if (digits === undefined) digits = 3;
    if (value !== value) return "NaN";
    if (value === -Infinity) return "−∞";
    if (value === Infinity) return "+∞";
    var text = pyFixed(value, digits);
    if (text.indexOf(".") >= 0) text = text.replace(/0+$/, "").replace(/\.$/, "");
    if (text === "-0" || text === "") return "0";
    return text.charAt(0) === "-" ? "−" + text.slice(1) : text;
  }

  var SUPERSCRIPTS = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻" };
  var POWER_SIGN = "×10";

  /** A positive number given by its base-10 logarithm, "3.2×10⁻¹⁰⁰" (formatting.format_power):
   *  two significant digits, from the logarithm, so exp(−1000) (0 in floats) is still written. */
  function formatPower(log10) {
    var exponent = Math.floor(log10), mantissa = formatValue(Math.pow(10, log10 - exponent), 1);
    if (mantissa === "10") { exponent += 1; mantissa = "1"; }
    return mantissa + POWER_SIGN + String(exponent).replace(/[0-9-]/g, function (c) { return SUPERSCRIPTS[c]; });
  }

  /** Share j of one row of A as a table cell writes it (formatting.format_share; scores: that row
   *  of S): formatValue, but a readable share that would show as 0, or as 1 beside another
   *  readable one, shows its bound ("<0.001", ">0.999"); a masked share (−∞ score) stays "0". */
  function formatShare(shares, scores, j, digits) {
    if (digits === undefined) digits = 3;
    var text = formatValue(shares[j], digits);
    if (scores[j] === -Infinity) return text;
    var readable = scores.filter(function (s) { return s !== -Infinity; }).length;
    if (text === "0") return "<" + (digits > 0 ? "0." + "0".repeat(digits - 1) + "1" : "1");
    if (text === "1" && readable > 1) return ">" + formatValue(1 - Math.pow(10, -digits), digits);
    return text;
  }

  /** Typed characters read as their ASCII twins (as attention_lab.params._TYPED): full-width
   *  digits, "．", the minus sign the tables show ("−", U+2212), "－", "＋", "，", U+3000. */
  var TYPED = { "\uFF0E": ".", "\u2212": "-", "\uFF0D": "-", "\uFF0B": "+", "\uFF0C": ",", "\u3000": " " };
  for (var d = 0; d < 10; d++) TYPED[String.fromCharCode(0xFF10 + d)] = String(d);

  /** Typed text -> ASCII number text: "−０．５" -> "-0.5"; one comma and no point is a
   *  decimal comma ("1,5" -> "1.5"); anything else is left for the grammar to refuse. */
  function normalizeNumberText(text) {
    text = String(text).replace(/[\uFF10-\uFF19\uFF0E\u2212\uFF0D\uFF0B\uFF0C\u3000]/g, function (c) { return TYPED[c]; });
    text = text.replace(/^[\s]+|[\s]+$/g, "");
    if (text.split(",").length === 2 && text.indexOf(".") < 0) text = text.replace(",", ".");
    return text;
  }

  /** Python float(text) for plain decimal text after normalizeNumberText; NaN for anything
   *  else (no hex, no "", no "Infinity", no "1,2,3").  Same grammar as attention_lab.params.parse_number. */
  var NUMBER_RE = /^\s*[+-]?(\d+(_\d+)*\.?(\d+(_\d+)*)?|\.\d+(_\d+)*)([eE][+-]?\d+)?\s*$/;
  function parseNumber(text) {
    if (typeof text === "number") return text;
    if (typeof text !== "string" || text.length > 64) return NaN;
    text = normalizeNumberText(text);
    if (!NUMBER_RE.test(text)) return NaN;
    return Number(text.replace(/_/g, ""));
  }

  /** A number in a note: Python's f"{x:g}" with the chapter's minus sign (U+2212), as params._g. */
  function noteNum(x) { return pyG(x).replace(/-/g, "\u2212"); }

  function quoted(raw) {
    var text = typeof raw === "string" ? raw : (typeof raw === "number" ? pyG(raw) : String(raw));
    return text.length > 24 ? text.slice(0, 24) + "…" : text;
  }

  /** As attention_lab.params.coerce: {value, note} for a typed value of control `name`.
   *  ranges: {X: {min, max, step}, ...}; baseline: flat default params; current: the
   *  control's value now, kept when `raw` is refused (baseline when not given); strings:
   *  config.strings (the notes: its coerce templates; every caller passes it). */
  function coerce(name, raw, ranges, baseline, current, strings) {
    var cs = (strings && strings.coerce) || {};
    // The shapes lab's cells (Xs[5,3], Wv[0,3]...) take their table's range.
    if (PARAM_NAMES.indexOf(name) < 0 && !(/\[\d+,\d+\]$/.test(name) && ranges[tableOf(name)])) throw new Error("unknown parameter " + name);
    if (name === "causal") {
      if (raw === true || raw === false) return { value: raw, note: null };
      var text = String(raw).trim().toLowerCase();
      if (["1", "true", "on", "yes"].indexOf(text) >= 0) return { value: true, note: null };
      if (["0", "false", "off", "no"].indexOf(text) >= 0) return { value: false, note: null };
      var keepOn = current === undefined || current === null ? true : !!current;
      return { value: keepOn, note: fill(cs.causal, { name: name, state: keepOn ? cs.on : cs.off, raw: quoted(raw) }) };
    }
    var r = ranges[tableOf(name)];
    var keep = current === undefined || current === null ? baseline[name] : Number(current);
    var value = parseNumber(raw);
    if (value !== value || !isFinite(value)) {
      // a_number for text that is no number at all; a_finite_number for NaN, Infinity, "inf", "1e999".
      var word = typeof raw === "string" && /^[+-]?(inf|infinity|nan)$/.test(normalizeNumberText(raw).toLowerCase());
      var nonfinite = value === value || word || (typeof raw === "number" && raw !== raw);
      return { value: keep, note: fill(cs.not_number, { name: name, what: nonfinite ? cs.a_finite_number : cs.a_number,
        keep: noteNum(keep), raw: quoted(raw) }) };
    }
    var note = null;
    if (value < r.min || value > r.max) {
      var clamped = Math.min(r.max, Math.max(r.min, value));
      note = fill(cs.range, { name: name, min: noteNum(r.min), max: noteNum(r.max), value: noteNum(value), clamped: noteNum(clamped) });
      value = clamped;
    }
    if (name === "d_k") {
      var rounded = roundHalfEven(value);
      if (rounded !== value) {
        note = note || fill(cs.d_k_integer, { value: noteNum(value), rounded: noteNum(rounded) });
        value = rounded;
      }
      value = Math.min(r.max, Math.max(r.min, value));
    }
    return { value: value, note: note };
  }

  /** As attention_lab.shapes.coerce_shape: {value, note} for a typed shape (n, m, d_model, d_k, d_v, h)
   *  or pad.  limits: [lo, hi] (pad: [0, keys - 1]); current: kept when `raw` is no number; ss: the
   *  string table's "shapes" part.  A non-integer goes to the nearest integer (halves to even), a value
   *  outside the limits to the nearer end, each with a note. */
  function coerceShape(name, raw, limits, current, ss) {
    var lo = limits[0], hi = limits[1], value = parseNumber(raw);
    if (value !== value || !isFinite(value)) {
      return { value: current, note: fill(ss.shape_refused, { name: name, raw: quoted(raw), value: noteNum(current) }) };
    }
    var whole = Math.min(hi, Math.max(lo, roundHalfEven(value)));
    if (whole === value) return { value: whole, note: null };
    return { value: whole, note: fill(name === "pad" ? ss.link_pad : ss.link_shape,
      { name: name, min: lo, max: hi, m: hi + 1, raw: quoted(raw), value: whole }) };
  }

  /** Python round(x): halves go to the even neighbour. */
  function roundHalfEven(x) {
    var f = Math.floor(x), d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

  // ---------------------------------------------------------------- links

  /** Keys a link may carry: one per table (four numbers, row by row), d_k, causal, row. */
  var LINK_KEYS = ["X", "Wq", "Wk", "Wv", "d_k", "causal", "row"];
  /** Query keys that belong to the site, not to the lab (Sphinx search highlighting). */
  var SITE_KEYS = ["highlight"];
  var MAX_QUERY = 2000;

  /** params + row -> "X=1,1,1,-1&Wq=...&d_k=2&causal=1&row=1" (plain, readable, no encoding needed). */
  function toQuery(params, row) {
    var parts = TABLES.map(function (t) {
      var vals = [];
      for (var i = 0; i < 2; i++) for (var j = 0; j < 2; j++) vals.push(String(params[t + "[" + i + "," + j + "]"]));
      return t + "=" + vals.join(",");
    });
    parts.push("d_k=" + String(params.d_k));
    parts.push("causal=" + (params.causal ? "1" : "0"));
    parts.push("row=" + String(row));
    return parts.join("&");
  }

  function shortText(text) {
    text = String(text);
    return text.length > 24 ? text.slice(0, 24) + "…" : text;
  }

  /** Read a query string ("?X=..&..") over `start` params.  Returns {params, row, notes, noted, found}.
   *  Everything is treated as data: values are parsed as numbers, checked and clamped;
   *  anything else is ignored and described in `notes` (plain strings, for textContent);
   *  `noted`: names whose value has its own note (no second one that it is at a range end). */
  function fromQuery(search, start, startRow, ranges, baseline, strings) {
    var tw = (strings && strings.twin) || {}, faults = (strings && strings.faults) || {};
    var noted = [], seen = {};
    var params = {};
    PARAM_NAMES.forEach(function (n) { params[n] = start[n]; });
    var row = startRow;
    var notes = [];
    var found = false;
    search = String(search || "");
    if (search.charAt(0) === "?") search = search.slice(1);
    if (!search) return { params: params, row: row, notes: notes, noted: noted, found: found };
    if (search.length > MAX_QUERY) {
      notes.push(tw.link_too_long || "");
      return { params: params, row: row, notes: notes, found: true };
    }
    search.split("&").forEach(function (pair) {
      if (!pair) return;
      var eq = pair.indexOf("=");
      var key, raw;
      try {
        key = decodeURIComponent((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, " "));
        raw = eq < 0 ? "" : decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, " "));
      } catch (e) {
        notes.push((tw.link_bad || "") + shortText(pair));
        found = true;
        return;
      }
      if (SITE_KEYS.indexOf(key) >= 0) return;
      found = true;
      if (seen[key] === 1) notes.push((faults.link_repeated || "") + shortText(key));  // the last one is used
      seen[key] = (seen[key] || 0) + 1;
      if (LINK_KEYS.indexOf(key) < 0 && PARAM_NAMES.indexOf(key) < 0) {
        notes.push((tw.link_unknown || "") + shortText(key));
        return;
      }
      if (key === "row") {
        if (raw === "0" || raw === "1") row = Number(raw);
        else notes.push((tw.link_row || "") + shortText(raw));
        return;
      }
      if (TABLES.indexOf(key) >= 0) {
        var vals = raw.split(",");
        if (vals.length !== 4) {
          notes.push(key + (tw.link_four || "") + shortText(raw));
          return;
        }
        vals.forEach(function (v, k) { take(key + "[" + Math.floor(k / 2) + "," + (k % 2) + "]", v); });
        return;
      }
      take(key, raw);
    });
    return { params: params, row: row, notes: notes, noted: noted, found: found };

    // One value from a link: a usable number is clamped/rounded into range (with a note
    // saying so); anything else is refused with a note and the start value kept.
    function take(name, raw) {
      var refused = name === "causal"
        ? ["1", "true", "on", "yes", "0", "false", "off", "no"].indexOf(String(raw).trim().toLowerCase()) < 0
        : !isFinite(parseNumber(raw));
      if (refused) {
        notes.push(name === "causal" ? (faults.link_causal || "") + shortText(raw) : name + (tw.link_refused || "") + shortText(raw));
        return;
      }
      var c = coerce(name, raw, ranges, baseline, undefined, strings);
      if (c.note) { notes.push(c.note); noted.push(name); }
      params[name] = c.value;
    }
  }

  // ---------------------------------------------------------------- status messages

  /** As the kernel lab's _messages: d_k = 1, d_k not the width, causal off.  A value at a range
   *  end is legal and gets no note (a typed value that was clamped has its own, from coerce).
   *  labStrings: strings_zh.json's "lab" section; ranges and noted: kept for the callers. */
  function messages(params, ranges, labStrings, noted) {
    var s = labStrings || {}, out = [];
    var dK = params.d_k;
    if (dK === 1 && s.d_k_one) out.push(s.d_k_one);
    if (dK !== 2 && s.d_k_not_width) out.push(s.d_k_not_width.split("{d_k}").join(fmt(dK)));
    if (!params.causal && s.causal_off_note) out.push(s.causal_off_note);
    return out;
  }

  // ---------------------------------------------------------------- worked arithmetic
  // As attention_lab.worked (read its docstring: the rules there are the contract).

  /** A number as the worked text shows it: 10 decimals, trailing zeros dropped, "−∞" when masked. */
  function fmt(x) {
    var text = fmtSeen.get(x);
    if (text === undefined) {
      if (fmtSeen.size > 4000) fmtSeen.clear();
      fmtSeen.set(x, text = formatValue(x, 10));
    }
    return text;
  }
  var fmtSeen = new Map();  // fmt's texts by value (the worked text writes the same numbers again and again)

  function factor(x) {
    var text = fmt(x);
    return text.charAt(0) === "−" ? "(" + text + ")" : text;
  }

  function vec(xs) { return "[" + xs.map(fmt).join(", ") + "]"; }

  /** x as its text at `digits` decimals (default: the worked text's 10) shows it, back as a number. */
  function shownAs(x, digits) {
    return x === Infinity || x === -Infinity ? x : parseFloat(formatValue(x, digits === undefined ? 10 : digits).replace("−", "-"));
  }
  /** True when x's text (10 decimals, or `digits`) stands for x up to float noise (worked.py's EXACT_TOL). */
  var EXACT_TOL = 1e-12;
  function exact(x, digits) {
    if (x === Infinity || x === -Infinity) return true;
    if (x !== x) return false;
    return Math.abs(shownAs(x, digits) - x) <= EXACT_TOL * Math.max(1, Math.abs(x));
  }
  /** The chapter's "=" rule for an explanation at `digits` decimals: "=" only when `fromShown` (the
   *  result worked from the shown numbers) is the shown x and x itself is not rounded; else "≈". */
  function eqShown(fromShown, x, digits) {
    return exact(x, digits) && Math.abs(fromShown - shownAs(x, digits)) <= EXACT_TOL * Math.max(1, Math.abs(x)) ? "=" : "≈";
  }

  function eqSign(xs) { return xs.every(function (x) { return exact(x); }) ? "=" : "≈"; }

  /** A shown decimal (fmt's text) as an exact scaled integer {n: BigInt, s: decimals}, as worked.shown. */
  function shown(x) { return shownText(fmt(x)); }
  /** The exact value of a text as the worked text writes numbers (formatting.power_value): a decimal,
   *  "3.2×10⁻¹⁰⁰" or "1 − 3.2×10⁻¹⁰⁰", as {n: BigInt, s: decimals}. */
  function shownText(text) {
    if (text.indexOf("1 − ") === 0) {
      var rest = shownText(text.slice(4));
      return { n: pow10(rest.s) - rest.n, s: rest.s };
    }
    var power = 0, at = text.indexOf(POWER_SIGN);
    if (at >= 0) {
      power = Number(text.slice(at + POWER_SIGN.length).replace(/[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]/g, function (c) {
        return c === "⁻" ? "-" : String("⁰¹²³⁴⁵⁶⁷⁸⁹".indexOf(c));
      }));
      text = text.slice(0, at);
    }
    var neg = text.charAt(0) === "−";
    if (neg) text = text.slice(1);
    var parts = text.split("."), frac = parts[1] || "", n = BigInt(parts[0] + frac), s = frac.length - power;
    if (s < 0) { n = n * pow10(-s); s = 0; }
    return { n: neg ? -n : n, s: s };
  }
  function pow10(k) { return BigInt("1" + "0".repeat(k)); }
  function atScale(a, s) { return a.n * pow10(s - a.s); }
  function decSame(a, b) { var s = Math.max(a.s, b.s); return atScale(a, s) === atScale(b, s); }
  function decSign(a) { return a.n > BigInt(0) ? 1 : (a.n < BigInt(0) ? -1 : 0); }

  /** "=" when the shown factors, multiplied and added exactly, give the shown result (worked._sum_eq);
   *  a factor is a number or the text it is shown as (a share of softmaxTexts). */
  function sumEq(pairs, result) {
    if (!exact(result)) return "≈";
    var total = { n: BigInt(0), s: 0 };
    function value(x) { return typeof x === "string" ? shownText(x) : shown(x); }
    pairs.forEach(function (p) {
      var a = value(p[0]), b = value(p[1]), prod = { n: a.n * b.n, s: a.s + b.s };
      var s = Math.max(total.s, prod.s);
      total = { n: atScale(total, s) + atScale(prod, s), s: s };
    });
    return decSame(total, shown(result)) ? "=" : "≈";
  }

  /** "=" when every shown raw/√d_k is exactly the shown scaled score (worked._quotient_eq). */
  function quotientEq(raw, scaled, dK) {
    var root = shown(dK);
    for (var j = 0; j < raw.length; j++) {
      if (!exact(scaled[j])) return "≈";
      var a = shown(raw[j]), b = shown(scaled[j]);
      var left = { n: a.n * a.n, s: 2 * a.s }, right = { n: b.n * b.n * root.n, s: 2 * b.s + root.s };
      if (!decSame(left, right) || decSign(a) !== decSign(b)) return "≈";
    }
    return "=";
  }

  /** "=" when every finite shown score plus its shown mask entry is the shown S (worked._add_eq). */
  function addEq(scaled, mask, S) {
    for (var j = 0; j < S.length; j++) {
      if (S[j] === -Infinity || mask[j] === 0) continue;  // x + (−∞) = −∞; x + 0 is x
      if (!(exact(scaled[j]) && exact(mask[j]) && exact(S[j]))) return "≈";
      var a = shown(scaled[j]), b = shown(mask[j]), s = Math.max(a.s, b.s);
      if (!decSame({ n: atScale(a, s) + atScale(b, s), s: s }, shown(S[j]))) return "≈";
    }
    return "=";
  }

  /** Each worked template's stage (0: the row's objects; 1..5: q·k, ÷√d_k, + M, softmax, × V),
   *  as worked.STAGE; the step-through follows it. */
  var WORKED_STAGE = {};
  ["receiver readable masked_pos masked_pad", "step1 dot raw_scores", "step2 scaled no_scaling",
    "step3 add_mask mask_hides mask_none", "step4 sub_max exp exp_sum shares masked_share tiny_share",
    "step5 out_cell output"].forEach(function (keys, stage) {
    keys.split(" ").forEach(function (k) { WORKED_STAGE[k] = stage; });
  });

  var SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉";
  function subscript(i) {
    return String(i).replace(/[0-9]/g, function (d) { return SUBSCRIPTS.charAt(Number(d)); });
  }

  /** Literal placeholder replacement, as Python's _fill (str.replace, in key order). */
  function fill(template, values) {
    Object.keys(values).forEach(function (key) {
      var mark = "{" + key + "}";
      if (template.indexOf(mark) >= 0) template = template.split(mark).join(String(values[key]));
    });
    return template;
  }

  /** log Σ exp(v) without underflow: the largest first, the terms added left to right (worked._log_sum_exp). */
  function logSumExp(values) {
    var top = Math.max.apply(null, values), sum = 0;
    values.forEach(function (v) { sum += Math.exp(v - top); });
    return top + Math.log(sum);
  }

  /** worked.softmax_texts: {exps, total, shares} as the worked text writes them: fmt, except what
   *  would show as 0 or 1 while it is not (a readable key's exp or share, a share beside another
   *  readable key, the sum then): "3.2×10⁻¹⁰⁰", "1 − 3.2×10⁻¹⁰⁰", "1 + 3.2×10⁻¹⁰⁰". */
  function softmaxTexts(shifted, exps, total, shares, readable) {
    var live = [];
    readable.forEach(function (r, j) { if (r) live.push(j); });
    var expTexts = exps.map(fmt), shareTexts = shares.map(fmt), totalText = fmt(total);
    live.forEach(function (j) { if (expTexts[j] === "0") expTexts[j] = formatPower(shifted[j] / Math.LN10); });
    if (live.length > 1) {
      var logTotal = Math.log(total);
      if (totalText === "1") {
        var top = live.filter(function (j) { return shifted[j] === 0; })[0];
        totalText = "1 + " + formatPower(logSumExp(live.filter(function (j) { return j !== top; })
          .map(function (j) { return shifted[j]; })) / Math.LN10);
      }
      live.forEach(function (j) {
        if (shareTexts[j] === "0") shareTexts[j] = formatPower((shifted[j] - logTotal) / Math.LN10);
        else if (shareTexts[j] === "1") {
          var rest = logSumExp(live.filter(function (k) { return k !== j; }).map(function (k) { return shifted[k]; }));
          shareTexts[j] = "1 − " + formatPower((rest - logTotal) / Math.LN10);
        }
      });
    }
    return { exps: expTexts, total: totalText, shares: shareTexts };
  }

  /** One row of S's softmax steps, as core.softmax_steps: {shifted (S − max, masked −∞), exps
   *  (masked 0), total (added left to right)}. */
  function softmaxRow(S) {
    var top = -Infinity;
    S.forEach(function (s) { if (s !== -Infinity && s > top) top = s; });
    if (top === -Infinity) top = 0;
    var shifted = S.map(function (s) { return s === -Infinity ? -Infinity : s - top; });
    var exps = shifted.map(function (s) { return s === -Infinity ? 0 : Math.exp(s); }), total = 0;
    exps.forEach(function (e) { total += e; });
    return { shifted: shifted, exps: exps, total: total };
  }

  /** A row's shares as the worked text writes them (worked.share_texts), from that row of S and of A:
   *  what an explanation quotes for a share that its cell (formatShare) shows only as a bound. */
  function shareTexts(S, A) {
    var row = softmaxRow(S);
    return softmaxTexts(row.shifted, row.exps, row.total, A, S.map(function (s) { return s !== -Infinity; })).shares;
  }

  /** worked.worked_steps: [{kind, key, stage, text, j?, c?}].  templates: strings_zh.json's
   *  "worked".  Without result.M (the kernel lab's result), M is −∞ where S is, else 0. */
  function workedSteps(result, row, templates, tokens, keyTokens) {
    tokens = tokens || TOKENS;
    var n = result.S.length, m = result.S[0].length, pad = result.pad || 0;
    if (!(row >= 0 && row < n) || Math.floor(row) !== row) throw new Error("row must be in 0.." + (n - 1) + "; got " + row);
    var i = row, t = templates;
    var keys = keyTokens || tokens;  // cross-attention: the source side's tokens
    function tok(j, own) { var t = own ? tokens : keys; return j < t.length ? t[j] : String(j); }
    var q = result.Q[i], raw = result.raw_scores[i], S = result.S[i], A = result.A[i], O = result.O[i];
    var root = Math.sqrt(result.d_k);  // as the core divides: S = raw / √d_k + M
    var scaled = raw.map(function (v) { return v / root; });
    var mask = result.M ? result.M[i] : S.map(function (s) { return s === -Infinity ? -Infinity : 0; });
    var readable = S.map(function (s) { return s !== -Infinity; });
    var dK = fmt(result.d_k);
    var common = { i: i, qi: "q" + subscript(i), oi: "o" + subscript(i), row_tok: tok(i, 1), d_k: dK };
    var lines = [];
    function add(kind, key, values) {
      var all = {};
      Object.keys(common).forEach(function (k) { all[k] = common[k]; });
      Object.keys(values || {}).forEach(function (k) { all[k] = values[k]; });
      var line = { kind: kind, key: key, stage: WORKED_STAGE[key], text: fill(t[key], all) };
      if (values && values.j !== undefined) line.j = values.j;
      if (values && values.c !== undefined) line.c = values.c;
      lines.push(line);
    }
    var range = [];
    for (var j = 0; j < m; j++) range.push(j);

    add("line", "receiver", { tok: tok(i, 1), q: vec(q), eq_q: eqSign(q) });
    range.forEach(function (j) {
      var ctx = { j: j, tok: tok(j), kj: "k" + subscript(j), vj: "v" + subscript(j),
        k: vec(result.K[j]), eq_k: eqSign(result.K[j]) };
      if (readable[j]) {
        ctx.v = vec(result.V[j]); ctx.eq_v = eqSign(result.V[j]);
        add("line", "readable", ctx);
      }
      else add("note", j >= m - pad ? "masked_pad" : "masked_pos", ctx);
    });

    add("head", "step1");  // q·k for every key, masked or not
    range.forEach(function (j) {
      add("line", "dot", { j: j, tok: tok(j), kj: "k" + subscript(j),
        expr: q.map(function (a, p) { return factor(a) + "×" + factor(result.K[j][p]); }).join("+"),
        eq: sumEq(q.map(function (a, p) { return [a, result.K[j][p]]; }), raw[j]), value: fmt(raw[j]) });
    });
    add("line", "raw_scores", { vec: vec(raw), order: "[" + range.map(function (j) { return tok(j); }).join(", ") + "]" });

    add("head", "step2");
    var scaledExpr = "[" + range.map(function (j) { return fmt(raw[j]) + "/√" + dK; }).join(", ") + "]";
    add("line", "scaled", { expr: scaledExpr, eq: quotientEq(raw, scaled, result.d_k), vec: vec(scaled) });
    if (result.d_k === 1) add("note", "no_scaling");

    add("head", "step3");  // + M: a masked key's −∞ appears here
    add("line", "add_mask", { scaled: vec(scaled), mask: vec(mask), eq: addEq(scaled, mask, S), vec: vec(S) });
    range.forEach(function (j) { if (!readable[j]) add("note", "mask_hides", { j: j, tok: tok(j), value: fmt(scaled[j]) }); });
    if (mask.every(function (v) { return v === 0; })) add("note", "mask_none");

    add("head", "step4");
    var row = softmaxRow(S), texts = softmaxTexts(row.shifted, row.exps, row.total, A, readable);
    add("line", "sub_max", { vec: vec(row.shifted) });
    add("line", "exp", { vec: "[" + texts.exps.join(", ") + "]" });
    add("line", "exp_sum", { value: texts.total });
    add("line", "shares", { vec: "[" + texts.shares.join(", ") + "]" });
    range.forEach(function (j) { if (!readable[j]) add("note", "masked_share", { tok: tok(j), j: j }); });
    range.forEach(function (j) {
      var text = texts.shares[j];
      if (readable[j] && text !== fmt(A[j]) && text.indexOf("1 ") !== 0) add("note", "tiny_share", { tok: tok(j), j: j, value: text });
    });
    var soft = texts.shares.map(function (text) { return /[ ×]/.test(text) ? "(" + text + ")" : text; });

    add("head", "step5");
    var allCells = "=";
    for (var c = 0; c < result.V[0].length; c++) {
      var used = range.filter(function (j) { return readable[j]; });
      var expr = used.map(function (j) {
        return soft[j] + "×" + factor(result.V[j][c]);
      }).join(" + ");
      var cellEq = sumEq(used.map(function (j) { return [texts.shares[j], result.V[j][c]]; }), O[c]);
      if (cellEq !== "=") allCells = "≈";
      add("line", "out_cell", { c: c, expr: expr, eq: cellEq, value: fmt(O[c]) });
    }
    add("line", "output", { eq: allCells, vec: vec(O) });
    return lines;
  }

  function workedText(result, row, templates, tokens, keyTokens) {
    return workedSteps(result, row, templates, tokens, keyTokens).map(function (l) { return l.text; }).join("\n");
  }

  /** The sixth stage of a multi-head result's row (shapes.projection_steps): the heads' outputs
   *  concatenated, times Wo, Y.  templates: strings_zh.json shapes.heads.worked; lines as workedSteps'. */
  function projectionSteps(result, row, templates, tokens) {
    var t = templates || {}, i = row, o = result.O[i], y = result.Y[i], Wo = result.Wo, lines = [];
    var tok = tokens && i < tokens.length ? tokens[i] : String(i);
    function add(kind, key, values) {
      var all = { i: i, sub: subscript(i), row_tok: tok, h: result.h };
      Object.keys(values || {}).forEach(function (k) { all[k] = values[k]; });
      var line = { kind: kind, key: key, stage: 6, text: fill(t[key], all) };
      if (values && values.c !== undefined) line.c = values.c;
      lines.push(line);
    }
    add("head", "step6");
    add("line", "concat", { vec: vec(o) });
    var all = "=";
    for (var c = 0; c < y.length; c++) {
      var expr = o.map(function (v, p) { return factor(v) + "×" + factor(Wo[p][c]); }).join(" + ");
      var eq = sumEq(o.map(function (v, p) { return [v, Wo[p][c]]; }), y[c]);
      if (eq !== "=") all = "≈";
      add("line", "y_cell", { c: c, expr: expr, eq: eq, value: fmt(y[c]) });
    }
    add("line", "y_output", { eq: all, vec: vec(y) });
    return lines;
  }

  return {
    TOKENS: TOKENS,
    TABLES: TABLES,
    RESULT_TABLES: RESULT_TABLES,
    PARAM_NAMES: PARAM_NAMES,
    matmul: matmul,
    transpose: transpose,
    causalMask: causalMask,
    paddingMask: paddingMask,
    generalAttention: generalAttention,
    multiHeadAttention: multiHeadAttention,
    projectionSteps: projectionSteps,
    softmax: softmax,
    scaledDotProductAttention: scaledDotProductAttention,
    attention: attention,
    tableOf: tableOf,
    tablesFromParams: tablesFromParams,
    attentionFromParams: attentionFromParams,
    coerce: coerce,
    coerceShape: coerceShape,
    parseNumber: parseNumber,
    normalizeNumberText: normalizeNumberText,
    pyFixed: pyFixed,
    pyG: pyG,
    formatValue: formatValue,
    formatPower: formatPower,
    formatShare: formatShare,
    errorText: errorText,
    browserLacks: browserLacks,
    softmaxTexts: softmaxTexts,
    shareTexts: shareTexts,
    shownText: shownText,
    toQuery: toQuery,
    fromQuery: fromQuery,
    fmt: fmt,
    shownAs: shownAs,
    eqShown: eqShown,
    factor: factor,
    vec: vec,
    exact: exact,
    shown: shown,
    subscript: subscript,
    WORKED_STAGE: WORKED_STAGE,
    workedSteps: workedSteps,
    workedText: workedText,
    messages: messages
  };
});

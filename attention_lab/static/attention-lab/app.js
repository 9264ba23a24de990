/* F11 attention lab on the static site: the controls (app.js).
 *
 * For every element with [data-attention-lab]: read its JSON config
 * (<script type="application/json" data-attention-lab-config>, made by
 * attention_lab.web.lab_config), build the controls (sliders, number boxes, d_k on a
 * power-of-two slider, the causal box, the row choice, the buttons) and hand them to the
 * one view (render.js mountView), which draws the tables and the worked text.  One state
 * object {params, row}: every change goes through setParam/setAll -> update(), which
 * recomputes with attention.js and calls view.update.
 *
 * The address bar follows the state (history.replaceState, no history entries):
 * ?X=1,1,1,-1&Wq=..&Wk=..&Wv=..&d_k=2&causal=1&row=1, and no query at the baseline, so a
 * reload shows what was on screen.  A drag's address (a slider's, a plane point's) is written
 * when it is let go; a key's and a typed value's after a short rest (a held arrow key repeats
 * faster than that, and history.replaceState costs more than the redraw), with the change
 * marks at once; either also when the page is hidden or left.  A button's, a link's, the
 * mask's and the row's address at once.
 * Link values are data only: parsed as numbers, checked,
 * clamped, and any problem is shown with textContent, never as HTML.
 *
 * Start-up: web.lab_html puts `AttentionLab.startAll()` right after each root, so the lab
 * starts as soon as its HTML and these scripts are there; when the scripts come first
 * (the site loads them at the top of <head>), they start every root when parsing ends.
 */
(function () {
  "use strict";
  if (typeof window === "undefined" || typeof document === "undefined") return;
  var core = window.AttentionLabCore;
  var render = window.AttentionLabRender;
  var labCount = 0;
  /** The address bar waits this long (ms) for a dragged value to rest; letting go writes it at
   *  once.  history.replaceState is slow and rate-limited (Safari throws after ~100 in 30 s). */
  var URL_IDLE_MS = 300;
  /** A finger on a slider's track moves it only after going this far (CSS px) more sideways than
   *  up or down; going further up or down first is a scroll. */
  var TOUCH_SLOP = 8;
  /** A touch that comes while the page still moves (less than this many ms after its last scroll
   *  event) is the finger stopping a fling: lifted without a drag, it sets nothing. */
  var FLING_MS = 150;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function fill(template, values) {
    template = String(template || "");
    Object.keys(values).forEach(function (k) { template = template.split("{" + k + "}").join(String(values[k])); });
    return template;
  }

  function copyParams(p) {
    var out = {};
    core.PARAM_NAMES.forEach(function (n) { out[n] = p[n]; });
    return out;
  }

  function sameParams(a, b) {
    return core.PARAM_NAMES.every(function (n) { return a[n] === b[n]; });
  }

  /** d_k slider position (the index of the nearest power of two among `powers`) for any d_k. */
  function dkPosition(dK, powers) {
    return Math.max(0, Math.min(powers.length - 1, Math.round(Math.log(dK / powers[0]) / Math.LN2)));
  }

  function Lab(root, config) {
    var self = this;
    // The d_k slider's stops (1, 2, 4, ..., 64): attention_lab.params.D_K_POWERS, sent in the config.
    var DK_POWERS = this.dkPowers = config.dk_powers;
    var s = config.strings || {};
    var tw = s.twin || {};
    var labStr = s.lab || {};
    var ctl = s.controls || {};
    var tokens = s.tokens || core.TOKENS;
    var index = ++labCount;
    var uid = "al" + index;
    if (!root.id) root.id = index === 1 ? "attention-lab" : "attention-lab-" + index;
    this.root = root;
    this.config = config;
    // Listeners outside the lab's element (the document, the window), each with its remover:
    // destroy() takes every one away.
    var outs = this._outs = [];
    var listenOut = this.listenOut = function (target, type, fn, opts) {
      target.addEventListener(type, fn, opts);
      outs.push(function () { target.removeEventListener(type, fn, opts); });
    };
    this.first = index === 1;
    /** The single source of truth: every number on screen is recomputed from it. */
    this.state = { params: copyParams(config.start), row: config.row === 0 ? 0 : 1 };
    this.typedNotes = [];
    this.notedNames = [];   // controls whose typed value has its own note among typedNotes
    var controls = this.controls = {};   // name -> {range, text} | {box}

    root.classList.add("al-lab");
    var fallback = root.querySelector("[data-attention-lab-fallback]");
    if (fallback) root.removeChild(fallback);

    var head = el("div", { "class": "al-head" });
    head.appendChild(el("p", { "class": "al-title" }, labStr.title || ""));
    head.appendChild(el("p", { "class": "al-hint" }, labStr.hint || ""));
    root.appendChild(head);
    this._head = head;

    // ---------------------------------------------------------------- controls
    var panel = el("div", { "class": "al-controls" });
    var skip = el("a", { "class": "al-skip", href: "#" }, tw.skip || "");
    panel.appendChild(skip);
    core.TABLES.forEach(function (t) {
      var fs = el("fieldset", { "class": "al-fieldset" });
      fs.appendChild(el("legend", null, ctl["table_" + t] || t));
      for (var i = 0; i < 2; i++) {
        for (var j = 0; j < 2; j++) {
          var name = t + "[" + i + "," + j + "]";
          fs.appendChild(numberControl(name, config.ranges[t], name, fill(tw.control_label, { table: t, i: i, j: j })));
        }
      }
      rove(fs);
      panel.appendChild(fs);
    });

    var other = el("fieldset", { "class": "al-fieldset al-other" });
    other.appendChild(el("legend", null, tw.other_legend || ""));
    other.appendChild(numberControl("d_k", config.ranges.d_k, ctl.d_k || "d_k", tw.d_k_slider || "d_k"));

    var causalId = uid + "-causal";
    var causalBox = el("input", { type: "checkbox", id: causalId, "data-param": "causal" });
    var causalLabel = el("label", { "for": causalId, "class": "al-check", "data-lab-source": "causal" });
    causalLabel.appendChild(causalBox);
    causalLabel.appendChild(document.createTextNode(" " + (ctl.causal || "causal")));
    other.appendChild(causalLabel);
    controls.causal = { box: causalBox };
    causalBox.addEventListener("change", function () { self.typedNotes = []; self.setParam("causal", causalBox.checked); });

    var rowGroup = el("div", { "class": "al-rowchoice", role: "radiogroup", "aria-labelledby": uid + "-rowlabel" });
    rowGroup.appendChild(el("span", { id: uid + "-rowlabel", "class": "al-rowlabel" }, ctl.row || "row"));
    var rowInputs = [];
    (ctl.row_options || tokens).forEach(function (label, i) {
      var id = uid + "-row" + i;
      var radio = el("input", { type: "radio", name: uid + "-row", id: id, value: String(i), "data-lab-row": String(i) });
      radio.addEventListener("change", function () { if (radio.checked) self.setRow(i); });
      var lab = el("label", { "for": id, "class": "al-radio" });
      lab.appendChild(radio);
      lab.appendChild(document.createTextNode(" " + label));
      rowGroup.appendChild(lab);
      rowInputs.push(radio);
    });
    other.appendChild(rowGroup);
    panel.appendChild(other);

    var actions = el("div", { "class": "al-actions" });
    var buttons = el("div", { "class": "al-buttons" });
    var b = s.buttons || {};
    [["reset", null], ["only_wv", "only_wv"], ["only_wq", "only_wq"]].forEach(function (pair) {
      var btn = el("button", { type: "button", "class": "al-button", "data-lab-action": pair[0] }, b[pair[0]] || pair[0]);
      btn.addEventListener("click", function () {
        var target = pair[1] ? config.contrasts[pair[1]] : config.baseline;
        self.typedNotes = [];
        // A contrast is the baseline with one table changed: its change marks count from the baseline
        // (对照一 after 对照二 marks only V and O, as the chapter says), so the baseline is drawn first.
        if (pair[1] && !sameParams(self.state.params, config.baseline)) self.setAll(copyParams(config.baseline), self.state.row);
        // 恢复基准 is the page as it opened (row too), so the address loses its query.
        self.setAll(copyParams(target), pair[1] ? self.state.row : (config.row === 0 ? 0 : 1));
      });
      buttons.appendChild(btn);
    });
    var copyBtn = el("button", { type: "button", "class": "al-button al-copy", "data-lab-action": "copy_link" }, b.copy_link || "copy");
    buttons.appendChild(copyBtn);
    actions.appendChild(buttons);
    var linkId = uid + "-link";
    var linkBox = el("div", { "class": "al-linkbox" });
    linkBox.hidden = true;
    var linkLabel = el("label", { "for": linkId }, tw.link_manual || "");
    var linkField = el("input", { type: "text", id: linkId, readonly: "", "class": "al-link", "data-lab-link": "" });
    var linkClose = el("button", { type: "button", "class": "al-link-close", "aria-label": tw.link_close || "×" }, "×");
    linkBox.appendChild(linkLabel);
    linkBox.appendChild(linkField);
    linkBox.appendChild(linkClose);
    actions.appendChild(linkBox);
    panel.appendChild(actions);
    copyBtn.addEventListener("click", function () { self.copyLink(linkBox, linkLabel, linkField); });
    this._link = { box: linkBox, query: null };
    // The box lies over the controls above the buttons (never over 逐步/先预测 under them); it goes
    // with ×, Esc, a press anywhere else, or the next change (update()).
    var closeLink = function () { linkBox.hidden = true; document.removeEventListener("pointerdown", outside, true); };
    var outside = function (e) { if (!linkBox.contains(e.target) && e.target !== copyBtn) closeLink(); };
    this._link.opened = function () { document.addEventListener("pointerdown", outside, true); };
    outs.push(closeLink);
    linkClose.addEventListener("click", function () { closeLink(); copyBtn.focus(); });
    linkBox.addEventListener("keydown", function (e) { if (e.key === "Escape") { e.preventDefault(); closeLink(); copyBtn.focus(); } });
    copyBtn.addEventListener("keydown", function (e) { if (e.key === "Escape" && !linkBox.hidden) { e.preventDefault(); closeLink(); } });

    // ---------------------------------------------------------------- the view
    this.view = render.mountView(root, { strings: s, ranges: config.ranges, colours: config.colours, controls: panel, core: core,
      // The presenter's keys (presenterKeys) said beside 逐步: the projector page's own words, or the chapter's.
      keysHint: root.closest && root.closest("#f11-lab") ? tw.keys_hint_page : tw.keys_hint_embedded,
      // A point of the plane dragged (or moved with the arrow keys): that row of X, sliders and boxes too.
      onPoint: function (table, i, v, settling) { self.setPoint(i, v, settling); } });
    skip.setAttribute("href", "#" + this.view.resultsId);
    skip.addEventListener("click", function (e) {
      e.preventDefault();
      var target = document.getElementById(self.view.resultsId);
      if (target) target.focus();
    });
    // On paper (lab.css: print only) one line lists the state's parameters.
    this._printLine = root.insertBefore(el("p", { "class": "al-print-params", "data-lab-print-params": "" }), head.nextSibling);
    this._parts = { rowInputs: rowInputs };
    this.urlTimer = 0;
    // A pending address is written when the value settles: the pointer lets go (the slider's
    // change comes then too), the page is hidden or left (tab switch, reload, close).
    // While a pointer is held down (a drag, however slowly it goes) the address waits for it.
    var flush = function () { self.pressed = false; if (self.urlTimer) self.syncUrl(); self.view.settle(); };
    listenOut(document, "pointerdown", function () { self.pressed = true; }, true);
    listenOut(document, "pointerup", flush, true);
    listenOut(document, "pointercancel", flush, true);
    listenOut(document, "visibilitychange", flush);
    listenOut(window, "pagehide", flush);
    listenOut(window, "beforeprint", function () { self.showPrintLine(); });
    // When the page (or anything in it) last scrolled: a tap then stops a fling (FLING_MS).
    var scrolledAt = -Infinity;
    listenOut(document, "scroll", function (e) { scrolledAt = e.timeStamp; }, { capture: true, passive: true });

    // One numeric control: a slider (data-param) plus a text box for exact typing.
    function numberControl(name, range, labelText, spoken) {
      var dk = name === "d_k";
      var wrap = el("div", { "class": "al-control" + (dk ? " al-control-dk" : ""), "data-lab-source": name });
      var id = uid + "-" + name.replace(/[^A-Za-z0-9_]/g, "_");
      var label = el("label", { "for": id, "class": "al-label" }, labelText);
      var slider = el("input", dk
        ? { type: "range", id: id, "data-param": name, "data-scale": "log2", min: "0", max: String(DK_POWERS.length - 1), step: "1",
            list: id + "-marks", "aria-label": spoken, tabindex: "-1" }
        : { type: "range", id: id, "data-param": name, min: String(range.min), max: String(range.max),
            step: String(range.step), "aria-label": spoken, tabindex: "-1" });
      // One Tab stop per parameter: the box (the slider is for the mouse and the finger; a click
      // still focuses it and its keys work). The box is a spin button: ↑/↓ step it as the slider
      // would, PgUp/PgDn by ten steps, and any value in range can be typed.
      var text = el("input", { type: "text", role: "spinbutton", "data-param-text": name, "class": "al-number",
        inputmode: "decimal", autocomplete: "off", spellcheck: "false",
        "aria-valuemin": String(range.min), "aria-valuemax": String(range.max),
        "aria-label": dk ? (tw.d_k_value || name) : fill(tw.exact_value || "{name}", { name: spoken }) });
      function sliderValue() { return dk ? DK_POWERS[Math.round(Number(slider.value))] : Number(slider.value); }
      /** The slider's value into the state, as it moves; `held`: a touch's held value, so the thumb is
       *  put there too ("moving": the finger turned out to drag; "tap": a gesture over, settled now). */
      function slide(v, held) {
        self.typedNotes = [];
        self.setParam(name, v, held ? null : slider, held === "moving" ? "moving" : undefined);
      }
      // A finger on the track (issue 29): Chromium puts the value where the finger lands (at
      // touchstart) and, when the finger goes on up or down, scrolls the page (lab.css: touch-action
      // pan-y) and sends pointercancel.  So a touch's value waits: until the finger has gone
      // TOUCH_SLOP px more sideways than up or down (a drag: the value is taken and the slider follows
      // from there), or lifts before that (a tap: the value where it landed, as a click; but not the
      // tap that stops a scrolling page, FLING_MS).  Until then the thumb stays where it was; a swipe
      // that scrolls, or a cancelled touch, leaves the value as it was before the finger came (and
      // puts it back if a sideways start had moved it).
      var touch = null;  // {id, x, y, before, drag: undefined (not yet known) | true | false, value: held, fling}
      slider.addEventListener("pointerdown", function (e) {
        touch = e.pointerType !== "touch" ? null
          : { id: e.pointerId, x: e.clientX, y: e.clientY, before: self.state.params[name], drag: undefined, value: null,
              fling: e.timeStamp - scrolledAt < FLING_MS };
      });
      slider.addEventListener("pointermove", function (e) {
        if (!touch || e.pointerId !== touch.id || touch.drag !== undefined) return;
        var dx = Math.abs(e.clientX - touch.x), dy = Math.abs(e.clientY - touch.y);
        if (Math.max(dx, dy) < TOUCH_SLOP) return;
        touch.drag = dx > dy;
        if (touch.drag && touch.value !== null) slide(touch.value, "moving");
      });
      slider.addEventListener("pointerup", function (e) {
        if (!touch || e.pointerId !== touch.id) return;
        var t = touch;
        touch = null;
        if (t.drag === undefined && t.value !== null && !t.fling) slide(t.value, "tap");
        else self.showControl(name);
      });
      slider.addEventListener("pointercancel", function (e) {
        if (!touch || e.pointerId !== touch.id) return;
        var t = touch;
        touch = null;
        if (self.state.params[name] !== t.before) self.setParam(name, t.before); else self.showControl(name);
      });
      slider.addEventListener("input", function () {
        // A touch not (yet) a sideways drag: its value is held and the thumb put back.
        if (touch && touch.drag !== true) { touch.value = sliderValue(); self.showControl(name); return; }
        slide(sliderValue());
      });
      // Let go, or a key press: the address is written and the view shows what the gesture changed.
      slider.addEventListener("change", function () { if (dk) self.showControl(name); self.syncUrl(); self.view.settle(); });
      /** The box's text as a change takes it ({value, note}, coerce), or null when it shows the value. */
      function typed() {
        var now = self.state.params[name];
        return text.value === String(now) ? null : core.coerce(name, text.value, config.ranges, config.baseline, now, config.strings);
      }
      function noteTyped(c) {
        self.typedNotes = c && c.note ? [c.note] : [];
        self.notedNames = c && c.note ? [name] : [];
      }
      // What is typed is taken on Enter (change) and whenever the box is left (Tab, a click or a tap
      // elsewhere, a button): blur too, since no change event comes for a text a key had put there.
      function applyTyped() {
        var c = typed(), again = edited && !c && self.notedNames.indexOf(name) >= 0;
        edited = false;
        // The value it shows typed again (64 after "100 已改为 64"): a valid value, so its note goes.
        if (again) { noteTyped(null); self.update("keyed"); }
        if (!c) return;
        noteTyped(c);
        self.setParam(name, c.value, null, "keyed");
      }
      var edited = false;
      text.addEventListener("input", function () { edited = true; });
      text.addEventListener("change", applyTyped);
      text.addEventListener("blur", applyTyped);
      // ↑/↓ step the box as the slider steps (d_k: to the next power of two, as its stops), PgUp/PgDn
      // by ten steps (d_k: two stops), from what is typed if anything is (taken as Enter would, with
      // its note); at once, as a slider does, with the change marks at once and the address later.
      var KEYS = { ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10 };
      text.addEventListener("keydown", function (e) {
        if (e.key === "Enter" && edited && !typed()) applyTyped();  // no change event for an unchanged text
        var k = KEYS[e.key];
        if (!k || e.altKey || e.ctrlKey || e.metaKey) return;
        e.preventDefault();
        var c = typed(), now = c ? c.value : self.state.params[name], v;
        if (dk) {
          var up = DK_POWERS.filter(function (p) { return k > 0 ? p > now : p < now; });
          var hops = Math.min(Math.abs(k) > 1 ? 2 : 1, up.length);
          v = hops ? (k > 0 ? up[hops - 1] : up[up.length - hops]) : now;
        } else {
          v = Math.min(range.max, Math.max(range.min, Number((now + k * range.step).toFixed(10))));
        }
        noteTyped(c);
        self.setParam(name, v, null, "keyed");
      });
      wrap.appendChild(label);
      if (dk) {
        var track = el("div", { "class": "al-dk-track" });
        track.appendChild(slider);
        var list = el("datalist", { id: id + "-marks" });
        var marks = el("div", { "class": "al-dk-marks", "aria-hidden": "true" });
        DK_POWERS.forEach(function (p, k) {
          list.appendChild(el("option", { value: String(k), label: String(p) }));
          marks.appendChild(el("span", null, String(p)));
        });
        track.appendChild(list);
        track.appendChild(marks);
        wrap.appendChild(track);
      } else {
        wrap.appendChild(slider);
      }
      wrap.appendChild(text);
      controls[name] = { range: slider, text: text, dk: dk };
      return wrap;
    }
  }

  /** One Tab stop per parameter table (issue 29): its four boxes share it (roving tabindex: the box
   *  last focused keeps it).  ←/→ go to the box before or after it when the caret is at that end of
   *  the text, or the whole text is selected (as Tab and a move leave it); ↑/↓ still step the value,
   *  and what was typed is taken as the box is left (its blur). */
  function rove(fs) {
    var boxes = [].slice.call(fs.querySelectorAll("input[data-param-text]"));
    boxes.forEach(function (b, k) { b.tabIndex = k ? -1 : 0; });
    fs.addEventListener("focusin", function (e) {
      if (boxes.indexOf(e.target) >= 0) boxes.forEach(function (b) { b.tabIndex = b === e.target ? 0 : -1; });
    });
    fs.addEventListener("keydown", function (e) {
      var k = boxes.indexOf(e.target), d = { ArrowLeft: -1, ArrowRight: 1 }[e.key], b = e.target;
      if (k < 0 || !d || !boxes[k + d] || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      var len = b.value.length, all = b.selectionStart === 0 && b.selectionEnd === len;
      if (!all && !(b.selectionStart === b.selectionEnd && b.selectionStart === (d > 0 ? len : 0))) return;
      e.preventDefault();
      boxes[k + d].focus();
      boxes[k + d].select();
    });
  }

  /** Bring one control in line with the state (the one being dragged is left alone). */
  Lab.prototype.showControl = function (name, from) {
    var c = this.controls[name], v = this.state.params[name];
    if (c.box) { c.box.checked = !!v; return; }
    // The box first, while the page's layout is still clean: a focused box's new text makes
    // Chromium sync its selection, which lays out whatever is dirty by then.
    if (c.text.value !== String(v)) c.text.value = String(v);
    // d_k between two powers of two (a typed 3): its thumb between their marks (the track takes any
    // position then; a drag from there still stops at the powers, sliderValue).
    if (c.dk && c.range !== from) {
      var at = Math.log(v / this.dkPowers[0]) / Math.LN2, off = Math.abs(at - Math.round(at)) > 1e-9;
      if (c.range.step !== (off ? "any" : "1")) c.range.step = off ? "any" : "1";
      c.range.value = String(off ? at : dkPosition(v, this.dkPowers));
    } else if (c.range !== from) c.range.value = String(v);
    if (c.dk) c.range.setAttribute("aria-valuetext", "d_k = " + v);
    if (c.text.getAttribute("aria-valuenow") !== String(v)) c.text.setAttribute("aria-valuenow", String(v));
  };

  /** Change one parameter (a slider move, a typed value, the checkbox) and redraw; a slider
   *  being moved (`from`) settles when it is let go, a `pace` of "keyed" writes the address later
   *  (update). */
  Lab.prototype.setParam = function (name, value, from, pace) {
    this.state.params[name] = value;
    this.showControl(name, from);
    this.update(from ? "moving" : pace);
  };

  /** Row i of X from the plane (already snapped to the step and clamped by the view); `settling`
   *  while a drag goes on (the address is written when it is let go, as a slider's); an arrow key
   *  (and the let-go itself) settle at once and write the address later. */
  Lab.prototype.setPoint = function (i, v, settling) {
    var p = this.state.params, n0 = "X[" + i + ",0]", n1 = "X[" + i + ",1]";
    if (p[n0] === v[0] && p[n1] === v[1] && settling) return;
    this.typedNotes = [];
    p[n0] = v[0];
    p[n1] = v[1];
    this.showControl(n0);
    this.showControl(n1);
    this.update(settling ? "moving" : "keyed");
  };

  Lab.prototype.setRow = function (row) {
    this.state.row = row;
    this.update();
  };

  /** Replace the whole state (buttons, links) and bring every control in line. */
  Lab.prototype.setAll = function (params, row) {
    this.state.params = copyParams(params);
    this.state.row = row;
    var self = this;
    core.PARAM_NAMES.forEach(function (name) { self.showControl(name); });
    this.update();
  };

  /** Show notes (plain strings) in the view's note area, with the current messages. */
  Lab.prototype.showNotes = function (list) {
    this.typedNotes = list.slice();
    this.notedNames = [];
    this.update();
  };

  /** Recompute everything from the state and redraw it.  `pace`: none (a button, a link, the mask,
   *  the row): the view settled (change marks, notes) and the address written now; "keyed" (a key,
   *  a typed value): the view settled now, the address once the state rests (syncUrlLater);
   *  "moving" (a drag under way): the marks, the notes and the address when it settles. */
  Lab.prototype.update = function (pace) {
    var s = this.config.strings || {}, labStr = s.lab || {};
    var state = this.state, result = null, notes;
    this._parts.rowInputs.forEach(function (r, i) { if (r.checked !== (i === state.row)) r.checked = i === state.row; });
    notes = this.typedNotes.concat(core.messages(state.params, this.config.ranges, labStr,
      this.typedNotes.length ? this.notedNames : []));
    try {
      result = core.attentionFromParams(state.params);
    } catch (e) {
      notes = notes.concat([fill(labStr.error || "{message}", { message: core.errorText(e, this.config.strings) })]);
      this.view.update({ params: this.view.state.params || this.config.baseline, result: null, row: state.row, notes: notes });
      return null;
    }
    this.result = result;
    this.view.update({ params: state.params, result: result, row: state.row, notes: notes, settling: pace === "moving" });
    // The print line (paper only) is written with the address, and before printing.
    // The copied link is of the state it was copied from: the next change takes its box away.
    var link = this._link;
    if (link && !link.box.hidden && core.toQuery(state.params, state.row) !== link.query) link.box.hidden = true;
    if (pace) this.syncUrlLater(); else this.syncUrl();
    return result;
  };

  /** Take the lab away: every listener it added outside its element (document, window, the
   *  presenter's keys), the view and what the lab put in its root; an address still waiting is
   *  written first (as when the page is left).  The root can then be started anew (start). */
  Lab.prototype.destroy = function () {
    if (this.urlTimer) this.syncUrl();
    this._outs.splice(0).forEach(function (off) { off(); });
    this.view.destroy();
    var root = this.root;
    [this._head, this._printLine].forEach(function (n) { if (n.parentNode === root) root.removeChild(n); });
    root.classList.remove("al-lab");
    if (root.__attentionLab === this) root.__attentionLab = null;
  };

  /** On paper (no controls): X, Wq, Wk, Wv, d_k, the mask and what differs from the baseline. */
  Lab.prototype.showPrintLine = function () {
    var tw = this.config.strings.twin || {}, p = this.state.params, base = this.config.baseline || {};
    var num = function (v) { return String(v).replace("-", "\u2212"); }, v = { d_k: num(p.d_k) };
    v.causal = p.causal ? tw.print_causal_on : tw.print_causal_off;
    core.TABLES.forEach(function (t) { v[t] = "[[" + [0, 1].map(function (i) { return num(p[t + "[" + i + ",0]"]) + ", " + num(p[t + "[" + i + ",1]"]); }).join("], [") + "]]"; });
    var changed = core.PARAM_NAMES.filter(function (n) { return n in base && base[n] !== p[n]; }).map(function (n) {
      var c = n === "causal", show = function (x) { return c ? (x ? tw.print_on : tw.print_off) : num(x); };
      return fill(tw.print_changed_one, { name: c ? tw.print_mask : n, value: show(p[n]), base: show(base[n]) });
    });
    var text = fill(tw.print_params, v) + (changed.length ? fill(tw.print_changed, { list: changed.join("，") }) : tw.print_same);
    if (this._printLine.textContent !== text) this._printLine.textContent = text;
  };

  /** Write the address once the state has rested URL_IDLE_MS (each call restarts the wait: one
   *  timer, which waits on when it fires early, so an input costs no clearTimeout/setTimeout). */
  Lab.prototype.syncUrlLater = function () {
    var self = this, now = Date.now();
    this.urlDue = now + URL_IDLE_MS;
    if (this.urlTimer) return;
    var wait = function () {
      var left = self.urlDue - Date.now();
      if (left > 0 || self.pressed) self.urlTimer = setTimeout(wait, left > 0 ? left : URL_IDLE_MS); else self.syncUrl();
    };
    this.urlTimer = setTimeout(wait, URL_IDLE_MS);
  };

  /** The address bar follows the state (only the page's first lab writes it). */
  Lab.prototype.syncUrl = function () {
    clearTimeout(this.urlTimer);
    this.urlTimer = 0;
    this.showPrintLine();
    if (!this.first || !window.history || !window.history.replaceState) return;
    var loc = window.location;
    var atBase = sameParams(this.state.params, this.config.baseline) && this.state.row === (this.config.row === 0 ? 0 : 1);
    // The site's own query keys (the search page's ?highlight=) stay; the theme reads them later.
    var keep = loc.search.replace(/^\?/, "").split("&").filter(function (p) { return /^highlight=/.test(p); });
    var query = (atBase ? [] : [core.toQuery(this.state.params, this.state.row)]).concat(keep).join("&");
    var url = loc.pathname + (query ? "?" + query : "") + loc.hash;
    if (url === loc.pathname + loc.search + loc.hash) return;
    try { window.history.replaceState(window.history.state, "", url); } catch (e) { /* file:// in some browsers */ }
  };

  Lab.prototype.linkUrl = function () {
    var base = window.location.href.split("#")[0].split("?")[0];
    return base + "?" + core.toQuery(this.state.params, this.state.row) + "#" + this.root.id;
  };

  /** 复制链接: put the state in the address bar, copy it, and show it in a text field. */
  Lab.prototype.copyLink = function (box, label, field) {
    var url = this.linkUrl();
    var tw = (this.config.strings && this.config.strings.twin) || {};
    try { window.history.replaceState(window.history.state, "", url); } catch (e) { /* file:// */ }
    field.value = url;
    box.hidden = false;
    if (this._link && this._link.opened) this._link.opened();
    if (this._link) this._link.query = core.toQuery(this.state.params, this.state.row);
    label.textContent = tw.link_manual || "";
    var done = function () { label.textContent = tw.link_copied || ""; };
    var manual = function () { field.focus(); field.select(); };
    // Any clipboard failure (refused, throwing, no promise): the link stays selected to copy by hand.
    var p = null;
    try { p = navigator.clipboard && window.isSecureContext && navigator.clipboard.writeText(url); } catch (e) { p = null; }
    if (p && typeof p.then === "function") p.then(done, manual); else manual();
    return url;
  };

  // ---------------------------------------------------------------- a presenter's keys
  /** What a clicker (PageDown/PageUp) and →/← do: step the step-through forward and back (the
   *  view's 逐步 and 上一步), unless the focus is in a control whose keys they are (a box, a slider,
   *  the radio group, a table's cells, a plane point). On the projector page (#f11-lab) any key
   *  press outside such a control counts; in the chapter only while the lab has the focus or was
   *  the last thing pressed (elsewhere the page scrolls as usual). */
  var OWN_KEYS = "input, textarea, select, [contenteditable], [role=slider], [role=spinbutton], [role=radiogroup], td[data-matrix], [data-plane] [tabindex]";
  var PRESENTER_KEYS = { PageDown: 1, ArrowRight: 1, PageUp: -1, ArrowLeft: -1 };
  function presenterKeys(lab) {
    var root = lab.root, page = !!(root.closest && root.closest("#f11-lab")), pressedHere = false;
    var onPress = function (e) { pressedHere = root.contains(e.target); };
    var onKey = function (e) {
      var k = PRESENTER_KEYS[e.key], at = document.activeElement;
      if (!k || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      if (at && at !== document.body && at.closest && at.closest(OWN_KEYS)) return;
      var inLab = at && root.contains(at);
      if (!page && !inLab && !(pressedHere && (!at || at === document.body))) return;
      e.preventDefault();
      if (k > 0) lab.view.step(); else lab.view.back();
    };
    document.addEventListener("pointerdown", onPress, true);
    document.addEventListener("keydown", onKey);
    return function () { document.removeEventListener("pointerdown", onPress, true); document.removeEventListener("keydown", onKey); };
  }

  function readConfig(root) {
    var script = root.querySelector("script[data-attention-lab-config]");
    if (!script) throw new Error("attention lab: missing data-attention-lab-config");
    var config = JSON.parse(script.textContent);
    if (!config || !config.start || !config.ranges) throw new Error("attention lab: a config without start or ranges");
    return config;
  }

  function start(root, config) {
    if (root.__attentionLab) return root.__attentionLab;
    config = config || readConfig(root);
    var lab = new Lab(root, config);
    root.__attentionLab = lab;
    lab.stopKeys = presenterKeys(lab);
    lab._outs.push(lab.stopKeys);
    // On paper the ▲/▼ marks show every difference from the baseline, as the print line lists them.
    var paper = function () { lab.view.markFrom(lab.result ? core.attentionFromParams(config.baseline) : null); };
    var screen = function () { lab.view.markFrom(null); };
    lab.listenOut(window, "beforeprint", paper);
    lab.listenOut(window, "afterprint", screen);
    var link = core.fromQuery(window.location.search, lab.state.params, lab.state.row,
      config.ranges, config.baseline, config.strings);
    // lab_config's notes on start values, then the link's; one note per value (none at a range end).
    var head = link.notes.length ? [(config.strings.twin || {}).link_note_head || ""] : [];
    lab.typedNotes = (config.notes || []).concat(head, link.notes);
    lab.notedNames = (config.noted || []).concat(link.noted || []);
    lab.setAll(link.params, link.row);
    return lab;
  }

  /** Why the lab cannot run here, as the sentence to show ("" when it can): attention.js or
   *  render.js failed, or the browser lacks what the lab uses beyond ES5 (attention.js browserLacks,
   *  which shapes.js asks too). */
  function cannotRun(faults, loadFailed) {
    if (!core || !render) return faults.load_failed || loadFailed;
    var lacks = core.browserLacks();
    return lacks.length ? fill(faults.browser_lacks, { what: lacks.join("、") }) : "";
  }

  /** One sentence in place of whatever a failed start left (the inert config stays). */
  function showFault(root, text) {
    root.__attentionLab = true;
    root.classList.remove("al-lab");
    root.style.minHeight = "0";  // no lab comes: the page's text follows the sentence (f11-site.css holds a screen)
    [].slice.call(root.childNodes).forEach(function (n) { if (!(n.hasAttribute && n.hasAttribute("data-attention-lab-config"))) root.removeChild(n); });
    root.appendChild(el("p", { "class": "al-fallback al-error", role: "alert" }, text));
  }

  function startAll() {
    var roots = document.querySelectorAll("[data-attention-lab]");
    for (var k = 0; k < roots.length; k++) {
      var root = roots[k], faults = {};
      if (root.__attentionLab || !root.querySelector("script[data-attention-lab-config]")) continue;
      // The fallback's failure sentence (web.lab_html) serves when the config itself is broken.
      var fb = root.querySelector("[data-failed]"), failed = (fb && fb.getAttribute("data-failed")) || "";
      try {
        var config = readConfig(root), why;
        faults = (config.strings && config.strings.faults) || {};
        if ((why = cannotRun(faults, failed))) showFault(root, why); else start(root, config);
      } catch (e) {
        showFault(root, faults.start_failed ? fill(faults.start_failed, { message: e.message }) : failed + " (" + e.message + ")");
        if (window.console) window.console.warn(e);
      }
    }
  }

  window.AttentionLab = { start: start, startAll: startAll, Lab: Lab };
  // The projector page (its section is #f11-lab): a reload shows the lab from its top, not where the
  // browser's scroll restoration puts it (270-390 px down: the top sliders hidden, issue 29).
  if (document.getElementById("f11-lab") && window.history && "scrollRestoration" in window.history) {
    window.history.scrollRestoration = "manual";
  }
  // Roots already in the page start now; the inline call after each root (web.lab_html)
  // starts the ones parsed later; DOMContentLoaded catches anything left.
  // readystatechange "interactive" comes when parsing ends, before deferred scripts run
  // (DOMContentLoaded waits for them).
  startAll();
  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", function go() {
      if (document.readyState === "loading") return;
      document.removeEventListener("readystatechange", go);
      startAll();
    });
  }
  // And once more when the page has loaded (startAll skips a started root): about one chapter load
  // in sixty in Chromium left the lab unstarted and silent, the page complete, no error.
  if (document.readyState !== "complete") window.addEventListener("load", startAll);
})();

/* F11 attention lab in Jupyter: the anywidget glue (widget.js).
 *
 * attention_lab.widget.LabView ships attention.js + render.js + this file as one
 * ES module.  The first two are the website's own files: they register
 * window.AttentionLabCore and window.AttentionLabRender.  Here we only mount the
 * website's view (render.js mountView) in the widget's element and hand it the
 * kernel's state on every change: the kernel computes (attention_lab.core), the
 * view draws, exactly as on the site.
 *
 * Traits (attention_lab/widget.py): "config" (once: strings, ranges) and "state"
 * ({params, result, row, notes}; masked cells are null, JSON has no infinity).
 */
// ipywidgets' slider readouts show negatives with the typographic minus ("−0.50"), but read a
// typed value back with JavaScript's parseFloat, which refuses it (and full-width digits, and a
// decimal comma).  Before ipywidgets reads a readout of the lab (on Enter or on leaving it), the
// text is rewritten in the lab's own number grammar (attention.js parseNumber, the site's and
// attention_lab.params'); text that grammar refuses is left for ipywidgets to refuse.
let readoutsTidied = false;
function tidyReadouts(core) {
  if (readoutsTidied) return;
  readoutsTidied = true;
  const tidy = (e) => {
    const t = e.target;
    if (!(t instanceof Element) || !t.matches(".f11-lab .widget-readout[contenteditable]")) return;
    if (e.type === "keydown" && e.key !== "Enter") return;
    const value = core.parseNumber(t.textContent || "");
    if (Number.isFinite(value)) t.textContent = String(value);
  };
  // Capture phase: this runs before ipywidgets' own blur/keydown handlers on the readout.
  document.addEventListener("keydown", tidy, true);
  document.addEventListener("blur", tidy, true);
}

function renderLab({ model, el }) {
  const render = window.AttentionLabRender;
  const core = window.AttentionLabCore;
  const config = model.get("config") || {};
  tidyReadouts(core);
  const container = document.createElement("div");
  container.className = "attention-lab-jupyter";
  el.appendChild(container);
  // The controls are ipywidgets next to this view in the lab's box (class f11-lab), not inside it:
  // tell the view where they are, and name each one as the site's controls are (data-lab-source),
  // so hovering a Q/K/V cell marks the X row and the W column it comes from.
  const sourceRoot = () => {
    const box = el.closest(".f11-lab");
    if (!box) return null;
    box.querySelectorAll('[class*="f11-param-"]').forEach((node) => {
      if (node.hasAttribute("data-lab-source")) return;
      const cls = Array.from(node.classList).find((c) => c.indexOf("f11-param-") === 0);
      const m = /^f11-param-(X|Wq|Wk|Wv)-(\d)-(\d)$/.exec(cls);
      node.setAttribute("data-lab-source", m ? m[1] + "[" + m[2] + "," + m[3] + "]" : cls.slice("f11-param-".length));
    });
    // The row choice (ipywidgets ToggleButtons 我 | 爱), as the site's radios: a row header the
    // reader clicks in the view clicks the matching button, so the kernel's row follows.
    box.querySelectorAll(".f11-row button").forEach((node, k) => node.setAttribute("data-lab-row", String(k)));
    return box;
  };
  // Layout by the width of the whole lab (sliders + this view), as on the site, where the root
  // holds the controls too.  Wide (a projector, the file browser folded away): the lab's box
  // becomes a grid (class f11-split, styled in attention_lab/lab.py): sliders | S, A, O in a
  // column, and the rest of this view (buttons, explanation, Q/K/V, worked text) under both.
  // Narrower: the box wraps, this view under the sliders.
  const labBox = () => el.closest(".f11-lab");
  const view = render.mountView(container, {
    strings: config.strings, ranges: config.ranges, core: core, sourceRoot: sourceRoot,
    measure: () => labBox() || container, controlsBeside: true,
    onLayout: (mode) => { const box = labBox(); if (box) box.classList.toggle("f11-split", mode === "wide"); } });
  const apply = () => {
    const state = model.get("state");
    if (state && state.params) view.update(state);
  };
  apply();
  model.on("change:state", apply);
  return () => {
    model.off("change:state", apply);
    if (view.destroy) view.destroy();
    if (container.parentNode) container.parentNode.removeChild(container);
  };
}

export default { render: renderLab };

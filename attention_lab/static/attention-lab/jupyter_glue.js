/* F11 labs in Jupyter: what the two anywidget glues share (jupyter_glue.js).
 *
 * Joined into the widget's ES module before widget.js (the 2x2 lab, attention_lab.widget) or
 * shapes_widget.js (the shapes lab, attention_lab.shapes_lab).  Each lab's view reads the
 * ipywidgets controls' models in the browser and redraws from them; these are the pieces both do
 * the same way.  Not published on the site (book/_ext/f11_pages.py drops it).
 */

/** "Wq[0,1]" -> "f11-param-Wq-0-1": the class attention_lab.lab.dom_class gives each control. */
function domClass(name) {
  return "f11-param-" + name.replace(/[^A-Za-z0-9_]+/g, "-").replace(/^-+|-+$/g, "");
}

/** A control's value as the lab computes with it: the browser's stepping noise
 *  (0.5 + 0.05 -> 0.5499999999999999) rounded away at 10 decimals, as attention_lab.lab._round. */
function rounded(v) {
  return typeof v === "number" && isFinite(v) ? Number(v.toFixed(10)) : v;
}

/** The trait "controls" ({name: "IPY_MODEL_<id>"}) -> {name: the control's model}. */
async function controlModels(model) {
  const refs = model.get("controls") || {};
  const models = {};
  await Promise.all(Object.keys(refs).map(async (name) => {
    models[name] = await model.widget_manager.get_model(String(refs[name]).replace(/^IPY_MODEL_/, ""));
  }));
  return models;
}

/** A point of the vector plane moved: row i of `table` (X or Xs) set on its controls' models, the
 *  values [a, b] in the order of its columns (the kernel receives them as from a drag). */
function setPointRow(models, table, i, values) {
  values.forEach((x, c) => {
    const m = models[table + "[" + i + "," + c + "]"];
    if (m && m.get("value") !== x) { m.set("value", x); m.save_changes(); }
  });
}

/** Hovering a cell marks the controls it comes from: under the lab's box, by their dom_class. */
function sourcesIn(labBox) {
  return (wanted) => {
    const box = labBox();
    if (!box) return [];
    return wanted.flatMap((name) => Array.from(box.querySelectorAll("." + domClass(name))));
  };
}

/** A model change listener for `redraw`: a change made in this page (a drag, a key, a typed
 *  readout: ipywidgets passes its view as updated_view) is drawn at once; changes from the kernel
 *  come one control at a time (a button or an example sets many) and are drawn once, when the
 *  burst is over, so the marks of what changed show the whole step.  `busy()` true: ignore (the
 *  glue is setting several models itself and draws once after).  `.cancel()` drops a pending draw. */
function changeScheduler(redraw, busy) {
  let burst = null;
  const onChange = (_m, _v, options) => {
    if (busy && busy()) return;
    if (options && options.updated_view) {
      if (burst) { clearTimeout(burst); burst = null; }
      redraw();
      return;
    }
    if (burst) clearTimeout(burst);
    burst = setTimeout(() => { burst = null; redraw(); }, 40);
  };
  onChange.cancel = () => { if (burst) clearTimeout(burst); burst = null; };
  return onChange;
}

/** Capture-phase `handlers` ({type: fn}) on the lab's own box once it is in the page (anywidget
 *  renders before Jupyter attaches the output: tried for up to `tries` frames), then `then(box)`.
 *  Returns the function that takes them off again (the view's teardown). */
function listenOnBox(labBox, handlers, then, tries = 60) {
  let box = null, gone = false;
  const types = Object.keys(handlers);
  const attach = (left) => {
    if (gone) return;
    box = labBox();
    if (box) {
      types.forEach((t) => box.addEventListener(t, handlers[t], true));
      if (then) then(box);
    } else if (left > 0) requestAnimationFrame(() => attach(left - 1));
  };
  attach(tries);
  return () => {
    gone = true;
    if (box) types.forEach((t) => box.removeEventListener(t, handlers[t], true));
  };
}

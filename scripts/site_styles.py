"""Every element's computed style, to compare two stylesheets on the same page.

``STYLE_SIGNATURES`` (run with ``page.evaluate``) lists, in document order, each element of
the page and each ``::before``/``::after``/``::marker`` box that has content, with a hash of its
computed style: every property that some rule of the page's stylesheets sets
(``STYLE_PROPERTIES``, read from the page with the fuller stylesheets; the others cannot
depend on which rules were kept), except custom properties (their effect shows in the real
ones), as used values (0% read as 0px: the same length), so a lost rule shows up as a changed
colour, margin, width or display, and a changed width moves the widths of what follows.
Two pages draw the same when the lists are equal; :func:`differences` names the boxes that
are not, and ``STYLE_OF`` reads one box's properties for the message.  Used by ``tests/test_site_css.py`` (``tests/conftest.py``
puts this folder on the import path) and ``scripts/bench_css.py``.
"""

from __future__ import annotations

#: ``page.evaluate(STYLE_PROPERTIES)`` -> the properties the page's stylesheets set (longhands,
#: no custom properties), sorted: a property no rule sets is the same whatever a purge keeps.
STYLE_PROPERTIES = r"""() => {
  const names = new Set();
  const visit = (rules) => {
    for (const r of rules) {
      if (r.style) for (let i = 0; i < r.style.length; i++) names.add(r.style[i]);
      if (r.cssRules) visit(r.cssRules);
    }
  };
  for (const sheet of document.styleSheets) { try { visit(sheet.cssRules); } catch (e) { /* another origin */ } }
  return [...names].filter((p) => !p.startsWith("--")).sort();
}"""

#: ``page.evaluate(STYLE_SIGNATURES, [properties, within])`` -> [[index, pseudo, description, hash], ...]
#: for every box, or (``within``: a CSS selector) for those in and under the elements it selects.
STYLE_SIGNATURES = r"""([props, within]) => {
  const all = [document.documentElement, document.head, document.body, ...document.body.querySelectorAll("*")];
  const roots = within ? [...document.querySelectorAll(within)] : null;
  const out = [];
  const hash = (s) => {  // FNV-1a, 32 bits, twice (two seeds): a collision is not a concern here
    let a = 0x811c9dc5, b = 0x01000193 ^ s.length;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 16777619); b = Math.imul(b ^ c, 2246822519);
    }
    return (a >>> 0).toString(36) + (b >>> 0).toString(36);
  };
  // A minifier writes 0 for 0% (background-position: 0% 0% -> 0 0): computed as 0px, drawn the same.
  const same = (v) => v.indexOf("0%") < 0 ? v : v.replace(/(^|[\s(,])0%/g, "$10px");
  // (Ids with long numbers are made up at run time: Bootstrap's tooltip12345.)
  const describe = (el) => el.tagName.toLowerCase() + (el.id && !/\d{4,}/.test(el.id) ? "#" + el.id : "")
    + (el.classList && el.classList.length ? "." + [...el.classList].slice(0, 3).join(".") : "");
  all.forEach((el, index) => {
    if (roots && !roots.some((r) => r.contains(el))) return;
    for (const pseudo of [null, "::before", "::after", "::marker"]) {
      const cs = getComputedStyle(el, pseudo);
      if (pseudo && (cs.content === "none" || cs.content === "normal" || cs.display === "none")) continue;
      let text = "";
      for (const p of props) text += same(cs.getPropertyValue(p)) + ";";
      out.push([index, pseudo || "", describe(el), hash(text)]);
    }
  });
  return out;
}"""

#: ``page.evaluate(MATCHING, selectors)`` -> [the selectors that match an element of the page now,
#: the selectors Chromium cannot read].  Pseudo-elements (``::before``, ``:after``,
#: ``::-webkit-scrollbar``) and the states a reader or a script can put an element in (``:hover``,
#: ``:focus``, ``:checked``, ``:disabled`` …) are left out first, so a selector counts as
#: matching when its element is there in any such state.
MATCHING = r"""(selectors) => {
  const STATE = /:(hover|focus|focus-visible|focus-within|active|visited|link|any-link|target|checked|indeterminate|placeholder-shown|autofill|default|invalid|valid|in-range|out-of-range|required|optional|disabled|enabled|read-only|read-write|open|closed|modal|popover-open|fullscreen|user-invalid|user-valid|empty|first-child|last-child|only-child|first-of-type|last-of-type|only-of-type)(?![\w-])/g;
  const PSEUDO = /::?(before|after|marker|placeholder|selection|backdrop|first-letter|first-line|file-selector-button|-[a-z-]+)(\([^)]*\))?/g;
  const VENDOR = /:-[a-z-]+(\([^)]*\))?/g;
  const found = [], unread = [];
  for (const selector of selectors) {
    let s = selector.replace(PSEUDO, "").replace(VENDOR, "").replace(STATE, "");
    s = s.replace(/(^|[\s>+~(,])(?=[\s>+~),]|$)/g, "$1*").trim();  // a compound left empty matches any element
    try {
      if (document.querySelector(s)) found.push(selector);
    } catch (e) {
      unread.push(selector + "  ->  " + s);
    }
  }
  return [found, unread];
}"""

#: ``page.evaluate(STYLE_OF, [index, pseudo, properties])`` -> {property: value} of one listed box.
STYLE_OF = r"""([index, pseudo, props]) => {
  const all = [document.documentElement, document.head, document.body, ...document.body.querySelectorAll("*")];
  const cs = getComputedStyle(all[index], pseudo || null);
  return Object.fromEntries(props.map((p) => [p, cs.getPropertyValue(p)]));
}"""


def differences(expected: list, found: list) -> list[str]:
    """Where ``found`` (a STYLE_SIGNATURES list) draws differently from ``expected``, in page order."""
    if [e[:3] for e in expected] != [f[:3] for f in found]:
        have = {tuple(e[:3]) for e in expected}
        extra = [f"{f[2]}{f[1]} (element {f[0]}): a box the expected page does not have" for f in found
                 if tuple(f[:3]) not in have]
        mine = {tuple(f[:3]) for f in found}
        missing = [f"{e[2]}{e[1]} (element {e[0]}): missing" for e in expected if tuple(e[:3]) not in mine]
        return (missing + extra) or [f"the pages list {len(expected)} and {len(found)} boxes"]
    return [f"{e[2]}{e[1]} (element {e[0]})" for e, f in zip(expected, found) if e[3] != f[3]]


def changed_properties(expected_page, found_page, index: int, pseudo: str, properties: list[str]) -> dict:
    """{property: (expected value, found value)} for one box of two open pages."""
    a = expected_page.evaluate(STYLE_OF, [index, pseudo, properties])
    b = found_page.evaluate(STYLE_OF, [index, pseudo, properties])
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}

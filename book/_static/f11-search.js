/* Chinese search results that show prose (search.html only; book/_ext/f11_pages.py adds it).
 *
 * The query itself is split by the search language's splitQuery (book/_ext/f11_search.py,
 * SearchLanguage.js_splitter_code).  What stays here is the result summary: each hit points
 * to the smallest section that holds every word, and the summary is that section's prose
 * (no table of contents, code, or formula source).  Sphinx has no hook for the summary;
 * Search.makeSearchSummary is the function its search calls for each hit, so this file
 * replaces that one function (it must run before the first query: it is deferred, and Sphinx
 * starts the query on DOMContentLoaded).
 */
(function () {
  "use strict";

  var DROP = "nav, .toc, .headerlink, script, style, pre, .highlight, .cell_input, .cell_output, " +
    "figure, .f11-display-math, .admonition-title, [data-attention-lab], .sd-summary-title";

  function prose(element) {
    var clone = element.cloneNode(true);
    clone.querySelectorAll(DROP).forEach(function (e) { e.remove(); });
    // An inline formula reads as its letters (x₀ as x0), never as TeX source.
    clone.querySelectorAll("math").forEach(function (m) {
      m.replaceWith(document.createTextNode(m.textContent.replace(/\s+/g, "")));
    });
    return clone.textContent.replace(/\s+/g, " ").trim();
  }

  function bestSection(doc, keywords) {
    var article = doc.querySelector("article") || doc.querySelector('[role="main"]') || doc.body;
    var best = null;
    article.querySelectorAll("section[id]").forEach(function (section) {
      var text = prose(section).toLowerCase();
      if (!keywords.every(function (k) { return text.indexOf(k) !== -1; })) return;
      // The innermost such section (a later match inside an earlier one wins).
      if (best === null || best.contains(section)) best = section;
    });
    return { article: article, section: best };
  }

  function summary(text, keywords) {
    var lower = text.toLowerCase();
    var at = Math.max(0, Math.min.apply(null, keywords.map(function (k) {
      var i = lower.indexOf(k);
      return i < 0 ? Infinity : i;
    })));
    if (!isFinite(at)) at = 0;
    var start = Math.max(0, at - 60);
    return (start > 0 ? "……" : "") + text.substr(start, 180) + (start + 180 < text.length ? "……" : "");
  }

  function install() {
    if (typeof Search === "undefined") return false;
    // The words as typed (因果掩码), before splitQuery cut them into the index's words.
    var typed = (new URLSearchParams(window.location.search).get("q") || "")
      .toLowerCase().split(/\s+/).filter(Boolean);
    Search.makeSearchSummary = function (htmlText, keywords, anchor) {
      var doc = new DOMParser().parseFromString(htmlText, "text/html");
      var words = Array.from(keywords).map(function (k) { return String(k).toLowerCase(); });
      // The section holding the words as typed (因果掩码 itself) wins over one that
      // only holds their parts (因果 … 掩码).
      var found = bestSection(doc, typed);
      if (found.section) words = typed;
      else found = bestSection(doc, words);
      var place = found.section || (anchor && doc.querySelector(anchor)) || found.article;
      var p = document.createElement("p");
      p.className = "context";
      p.textContent = summary(prose(place), words);
      if (found.section) {
        // Point the result at that section and name it.
        setTimeout(function () {
          var item = p.parentElement;
          var link = item && item.querySelector("a");
          if (!link) return;
          link.href = link.href.split("#")[0] + "#" + found.section.id;
          var heading = found.section.querySelector("h1, h2, h3, h4");
          if (heading && heading.closest("section") === found.section && !/^h1$/i.test(heading.tagName)) {
            var name = heading.cloneNode(true);
            name.querySelectorAll(".headerlink").forEach(function (e) { e.remove(); });
            link.textContent = link.textContent + " › " + name.textContent.trim();
          }
        }, 0);
      }
      return p;
    };
    return true;
  }

  if (!install()) document.addEventListener("DOMContentLoaded", install);
})();

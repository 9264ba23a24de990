/* Chinese search that finds words (search.html only; book/_ext/f11_pages.py adds it).
 *
 * Sphinx segments the pages with jieba when it builds the index, but splits a query
 * only at spaces, so "因果掩码" (indexed as 因果 + 掩码) found nothing.  Here a query
 * is segmented the way the index is: greedy longest match against the index's own
 * words, so every compound the chapter uses is found when its parts are.
 *
 * Results point to the smallest section that holds every word, and the summary is
 * that section's prose: no table of contents, code, or formula source.
 */
(function () {
  "use strict";
  var CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
  var MAX_WORD = 8;

  function segment(query, index) {
    var words = [];
    query.split(/\s+/).forEach(function (token) {
      if (!token) return;
      if (!CJK.test(token) || index.terms[token] !== undefined || index.titleterms[token] !== undefined) {
        words.push(token);
        return;
      }
      var i = 0;
      while (i < token.length) {
        var found = "";
        for (var n = Math.min(MAX_WORD, token.length - i); n >= 2; n--) {
          var piece = token.substr(i, n);
          if (index.terms[piece] !== undefined || index.titleterms[piece] !== undefined) {
            found = piece;
            break;
          }
        }
        if (found) {
          words.push(found);
          i += found.length;
        } else {
          // A character the index does not hold as a word (single characters are not
          // indexed): a Latin run stays whole, a lone CJK character is skipped.
          var m = /^[^\u3400-\u9fff\uf900-\ufaff]+/.exec(token.substr(i));
          if (m) {
            words.push(m[0]);
            i += m[0].length;
          } else {
            i += 1;
          }
        }
      }
    });
    return words.join(" ");
  }

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
    var parse = Search._parseQuery;
    var typed = [];
    Search._parseQuery = function (query) {
      typed = query.toLowerCase().split(/\s+/).filter(Boolean);
      return parse(Search._index ? segment(query, Search._index) : query);
    };
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
  window.F11Search = { segment: segment };
})();

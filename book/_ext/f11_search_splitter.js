/* splitQuery for the Chinese search (SearchLanguage.js_splitter_code; book/_ext/f11_search.py).
 *
 * Sphinx segments the pages with jieba when it builds the index, and its default splitQuery
 * splits a query only at non-letters, so "因果掩码" (indexed as 因果 + 掩码) found nothing.
 * Here a query is segmented the way the index is: greedy longest match against the index's
 * own words (Search._index, loaded before any query runs), so every compound the chapter
 * uses is found when its parts are.  Latin words stay whole; a lone CJK character that is
 * not an indexed word is skipped (single characters are not indexed).
 */
function splitQuery(query) {
  var CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
  var MAX_WORD = 8;
  var index = (typeof Search !== "undefined" && Search._index) || { terms: {}, titleterms: {} };
  var known = function (w) { return index.terms[w] !== undefined || index.titleterms[w] !== undefined; };
  var words = [];
  query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/u).forEach(function (token) {
    if (!token) return;
    if (!CJK.test(token) || known(token.toLowerCase())) {
      words.push(token);
      return;
    }
    var i = 0;
    while (i < token.length) {
      var found = "";
      for (var n = Math.min(MAX_WORD, token.length - i); n >= 2; n--) {
        var piece = token.substr(i, n);
        if (known(piece.toLowerCase())) {
          found = piece;
          break;
        }
      }
      if (found) {
        words.push(found);
        i += found.length;
        continue;
      }
      var latin = /^[^\u3400-\u9fff\uf900-\ufaff]+/.exec(token.substr(i));
      if (latin) {
        words.push(latin[0]);
        i += latin[0].length;
      } else {
        i += 1;
      }
    }
  });
  return words;
}

/* Printing a page prints every collapsed block open (the self-check answers are
   <details> dropdowns), and closes again afterwards what the reader had closed.
   f11-site.css does the same for browsers that can style ::details-content.

   The worksheet (issue 29; its buttons come from book/_ext/f11_handout.py, hidden until this
   script shows them): html.f11-worksheet while printing, so the self-checks print without their
   answers (room to write instead, f11-site.css), and every lab on the page in its predict mode
   (A and O covered, as 先预测 shows them); after printing, the page and the labs as they were. */
(function () {
  "use strict";
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) {
      d.open = true;
      opened.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });

  function printWorksheet() {
    var html = document.documentElement, predicted = [];
    html.classList.add("f11-worksheet");
    document.querySelectorAll("[data-attention-lab]").forEach(function (root) {
      var lab = root.__attentionLab;
      if (lab && lab.view && !root.hasAttribute("data-predict")) { lab.view.predict(); predicted.push(lab); }
    });
    var done = function () {
      window.removeEventListener("afterprint", done);
      html.classList.remove("f11-worksheet");
      predicted.forEach(function (lab) { lab.view.reveal(); });
    };
    window.addEventListener("afterprint", done);
    window.print();
  }

  function showButtons() {
    document.querySelectorAll("[data-f11-worksheet]").forEach(function (b) {
      if (!b.hidden) return;
      b.hidden = false;
      b.addEventListener("click", printWorksheet);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", showButtons); else showButtons();
})();

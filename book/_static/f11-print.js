/* Printing a page prints every collapsed block open (the self-check answers are
   <details> dropdowns), and closes again afterwards what the reader had closed.
   f11-site.css does the same for browsers that can style ::details-content. */
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
})();

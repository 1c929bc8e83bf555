// Review page: "Select all" for the bulk actions.
(function () {
  "use strict";

  function boxes(name) {
    return document.querySelectorAll("input[type=checkbox][form='review-bulk'][name='" + name + "']");
  }

  // "Select all" only works with JavaScript, so it is shown only then.
  function revealSelectAll(root) {
    (root || document).querySelectorAll(".select-all[hidden]").forEach(function (el) { el.hidden = false; });
  }
  revealSelectAll(document);
  document.addEventListener("htmx:afterSettle", function () { revealSelectAll(document); });

  document.addEventListener("change", function (event) {
    var all = event.target.closest("[data-select-all]");
    if (all) {
      boxes(all.getAttribute("data-select-all")).forEach(function (box) { box.checked = all.checked; });
      return;
    }
    if (event.target.matches(".review-select")) {
      var master = document.querySelector("[data-select-all]");
      if (!master) return;
      var list = Array.prototype.slice.call(boxes(event.target.name));
      master.checked = list.length > 0 && list.every(function (box) { return box.checked; });
    }
  });
})();

// Review page: "Select all" for the bulk actions; deciding one fact keeps the others' edits.
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

  // A decision re-renders the whole panel: send the text of every other open edit form and
  // the ticked boxes along, so the server renders them as they were (nothing typed is lost).
  document.addEventListener("htmx:configRequest", function (event) {
    var detail = event.detail;
    if (detail.verb !== "post" || !detail.target || detail.target.id !== "review-panel") return;
    var own = detail.elt.closest ? detail.elt.closest("form") : null;
    document.querySelectorAll("#review-panel .review-edit").forEach(function (form) {
      var box = form.querySelector("textarea[name='content']");
      var item = form.closest(".review-item");
      if (form === own || !box || !item) return;
      detail.parameters["draft-" + item.id.replace(/^item-/, "")] = box.value;
    });
    if (own && own.id === "review-bulk") return;  // the ticked ones are what is being decided
    var ticked = Array.prototype.map.call(
      document.querySelectorAll("#review-panel .review-select:checked"),
      function (box) { return box.value; });
    if (ticked.length) detail.parameters["keep_selected"] = ticked;
  });

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

// Memories page: Escape cancels an inline edit, select all, close history.
// No inline scripts (CSP); every URL comes from the markup (rendered with url_for).
(function () {
  "use strict";

  // Escape inside an edit (or conflict) row presses its Cancel control.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var row = event.target.closest && event.target.closest("tr.editing, tr.conflict");
    if (!row) return;
    var cancel = row.querySelector("[data-cancel]");
    if (cancel) { event.preventDefault(); cancel.click(); }
  });

  document.addEventListener("change", function (event) {
    if (event.target.id !== "select-all") return;
    var boxes = document.querySelectorAll("#memory-rows .row-select");
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = event.target.checked;
  });

  document.addEventListener("click", function (event) {
    var close = event.target.closest("[data-close-history]");
    if (!close) return;
    var panel = document.getElementById("history-panel");
    if (!panel || !panel.contains(close)) return;  // the history page's own link navigates
    event.preventDefault();
    var section = panel.querySelector("[data-memory-id]");
    var id = section ? section.getAttribute("data-memory-id") : null;
    panel.innerHTML = "";
    var row = id ? document.getElementById("memory-" + id) : null;
    var back = row ? row.querySelector("a[hx-target='#history-panel']") : null;
    if (back) back.focus();
  });
})();

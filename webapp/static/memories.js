// Memories page: select all, close history.
// No inline scripts (CSP); every URL comes from the markup (rendered with url_for).
(function () {
  "use strict";

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

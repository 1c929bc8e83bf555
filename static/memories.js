// Memories page: select all, close history, keep open edits when the list reloads.
// No inline scripts (CSP); every URL comes from the markup (rendered with url_for).
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    if (event.target.id !== "select-all") return;
    var boxes = document.querySelectorAll("#memory-rows .row-select");
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = event.target.checked;
  });

  // The list reloads itself after an add, a search or a bulk action; a row being edited is
  // carried over as it is (same element, so the typed text and its version token stay).
  var openEdits = [];
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "results" || !event.detail.shouldSwap) return;
    openEdits = Array.prototype.slice.call(target.querySelectorAll("tr.editing[id]"));
  });
  document.addEventListener("htmx:afterSwap", function () {
    var edits = openEdits;
    openEdits = [];
    var rows = document.getElementById("memory-rows");
    edits.forEach(function (edit) {
      if (document.body.contains(edit)) return;
      var fresh = document.getElementById(edit.id);
      if (fresh) fresh.replaceWith(edit);
      else if (rows) rows.insertBefore(edit, rows.firstChild);  // not in this list: keep it on top
    });
  });

  // Close the history panel (its button, or Escape) and give focus back to the row's History.
  function closeHistory() {
    var panel = document.getElementById("history-panel");
    var section = panel ? panel.querySelector("[data-memory-id]") : null;
    if (!section) return false;
    var id = section.getAttribute("data-memory-id");
    panel.innerHTML = "";
    var row = id ? document.getElementById("memory-" + id) : null;
    var back = row ? row.querySelector("[data-history-button]") : null;
    if (back) back.focus();
    return true;
  }

  document.addEventListener("click", function (event) {
    var close = event.target.closest("[data-close-history]");
    if (!close) return;
    var panel = document.getElementById("history-panel");
    if (!panel || !panel.contains(close)) return;  // the history page's own button navigates
    event.preventDefault();
    closeHistory();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || event.defaultPrevented) return;
    if (event.target.closest && event.target.closest("[data-escape-cancels], .edit-form")) return;
    if (closeHistory()) event.preventDefault();
  });

  // Live character count of a memory being typed, against what the store has free (its one
  // cap, MEMORY_MAX_CHARS, is for every memory together; no memory may be longer than it).
  function formatted(n) { return Number(n).toLocaleString("en-US"); }
  function updateCount(box) {
    var out = document.getElementById(box.getAttribute("data-char-count"));
    if (!out) return;
    var text = out.querySelector(".char-count-text") || out;
    var length = box.value.trim().length;
    var per = Number(box.getAttribute("data-max-chars"));
    var free = Number(box.getAttribute("data-free-chars"));
    var gettext = window.memoryCurator ? window.memoryCurator.gettext : function (t) { return t; };
    var note = length > per ? gettext(" — longer than the whole store may hold") : length > free ? gettext(" — more than the store has free") : "";
    text.textContent = gettext("%(length)s characters · %(free)s of %(max)s free in the store")
      .replace("%(length)s", formatted(length)).replace("%(max)s", formatted(per))
      .replace("%(free)s", formatted(free)) + note;
    out.classList.toggle("over", note !== "");
  }
  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-char-count]")) updateCount(event.target);
  });
})();

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

  // Keyboard-first review: single keys act on the card that has focus (else the first card);
  // U presses the Undo of the decision just made.
  // They are off while typing in a field, with a modifier held, or while a dialog is open.
  var KEYS = { a: "[data-review-approve]", r: "[data-review-reject]", e: "[data-review-edit]" };

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll("#review-panel .review-item"));
  }

  function typing(target) {
    var fields = "textarea, select, [contenteditable], input:not([type=checkbox]):not([type=radio])" +
      ":not([type=button]):not([type=submit]):not([type=reset])";
    return !!(target && target.closest && target.closest(fields));
  }

  // The sticky selection bar covers the top of the window and a decision's notice (with its
  // Undo) the bottom: the browser's own scrolling (focus, anchors) leaves room for both
  // (scroll-padding in review.css reads these heights), and a card brought into view shows its
  // heading below the bar and its focused button above the notice.
  function keepClear() {
    var root = document.documentElement;
    var bar = document.getElementById("review-bulk");
    var toast = document.querySelector("#review-panel .review-toast");
    var covered = toast ? Math.max(0, window.innerHeight - toast.getBoundingClientRect().top) : 0;
    root.style.setProperty("--review-bar-height", (bar ? bar.offsetHeight + 8 : 0) + "px");
    root.style.setProperty("--review-toast-height", (covered ? covered + 8 : 0) + "px");
  }

  function bringIntoView(card, focused) {
    keepClear();
    var heading = card.querySelector("h3") || card;
    heading.scrollIntoView({ block: "nearest" });
    if (focused && focused !== heading) focused.scrollIntoView({ block: "nearest" });
  }

  keepClear();
  window.addEventListener("resize", keepClear);
  document.addEventListener("click", function (event) {
    if (event.target.closest("#review-notice [data-dismiss]")) window.setTimeout(keepClear, 0);
  });
  // After a decision the panel is new and focus is on the next card's Approve (app.js): bring
  // that card into view clear of the bar, with the notice at the bottom.
  document.addEventListener("htmx:afterSettle", function () {
    revealNeedsJs();
    keepClear();
    var focused = document.activeElement;
    var card = focused && focused.closest ? focused.closest("#review-panel .review-item") : null;
    if (card) bringIntoView(card, focused);
  });

  function focusCard(card) {
    if (!card) return;
    var target = card.querySelector("[data-review-approve]") || card.querySelector("textarea, button");
    if (target) { target.focus(); bringIntoView(card, target); }
  }

  function openHelp() {
    var help = document.getElementById("review-keys");
    if (help && !help.open) help.showModal();
  }

  function revealNeedsJs() {
    document.querySelectorAll("[data-needs-js][hidden]").forEach(function (el) { el.hidden = false; });
  }
  revealNeedsJs();
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-open-keys]")) openHelp();
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || document.querySelector("dialog[open]")) return;
    var key = event.key;
    if (key === "?") { event.preventDefault(); openHelp(); return; }
    if (key === "u" || key === "U") {  // the Undo of the notice at the bottom, when there is one
      var undo = document.querySelector("#review-notice .notice-undo button");
      if (undo) { event.preventDefault(); undo.click(); }
      return;
    }
    var list = cards();
    if (!list.length) return;
    var current = event.target.closest && event.target.closest(".review-item");
    var index = current ? list.indexOf(current) : -1;
    var lower = key.length === 1 ? key.toLowerCase() : key;
    if (lower === "j" || key === "ArrowDown" || lower === "k" || key === "ArrowUp") {
      var step = lower === "j" || key === "ArrowDown" ? 1 : -1;
      var next = index === -1 ? 0 : Math.min(list.length - 1, Math.max(0, index + step));
      event.preventDefault();
      focusCard(list[next]);
      return;
    }
    var selector = KEYS[lower];
    if (!selector) return;
    var control = (current || list[0]).querySelector(selector);
    if (!control || control.disabled) return;
    event.preventDefault();
    control.click();
  });
})();

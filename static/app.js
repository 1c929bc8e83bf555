// Memory Curator — small progressive enhancements. No inline scripts (the CSP forbids them).
(function () {
  "use strict";

  // Announce a message to screen readers through the shared live region.
  function announce(text) {
    var region = document.getElementById("announcer");
    if (!region || !text) return;
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }
  // The page's language: the server renders the translation of every literal string passed to
  // gettext in these scripts into <html data-messages> (scripts/i18n.sh extracts them for the catalogs).
  var messages = {};
  try { messages = JSON.parse(document.documentElement.getAttribute("data-messages") || "{}"); } catch (e) { messages = {}; }
  function gettext(text) { return Object.prototype.hasOwnProperty.call(messages, text) ? messages[text] : text; }
  window.memoryCurator = { announce: announce, gettext: gettext };

  document.addEventListener("click", function (event) {
    var dismiss = event.target.closest("[data-dismiss='banner']");
    if (dismiss) {
      var banner = dismiss.closest(".banner");
      if (banner) banner.remove();
      return;
    }
    var copy = event.target.closest("[data-copy-target]");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy-target"));
      if (!source) return;
      var text = source.textContent;
      var done = function () { announce(copy.getAttribute("data-copied-message") || gettext("Copied")); copy.setAttribute("data-copied", "true"); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
      } else { fallbackCopy(text); done(); }
    }
  });

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more we can do */ }
    area.remove();
  }

  // Escape inside an inline editor (data-escape-cancels) presses its Cancel control.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var scope = event.target.closest && event.target.closest("[data-escape-cancels]");
    var cancel = scope && scope.querySelector("[data-cancel]");
    if (cancel) { event.preventDefault(); cancel.click(); }
  });

  // Ctrl+Enter (Cmd+Enter on a Mac) in a form's text field submits that form, as its first
  // submit button would (add, save an edit, approve an edited fact).
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.defaultPrevented) return;
    var field = event.target;
    var form = field && field.form;
    if (!form || !field.matches("textarea, input")) return;
    var submitter = form.querySelector("button[type=submit]:not([data-cancel]):not([disabled])");
    event.preventDefault();
    if (form.requestSubmit) form.requestSubmit(submitter || undefined);
    else if (submitter) submitter.click();
  });

  // Confirm destructive actions: <button data-confirm="Really?">. (hx-confirm also works.)
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var message = form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  }, true);

  // After an htmx swap, move focus where the server asked (data-autofocus) and announce it.
  document.addEventListener("htmx:afterSettle", function (event) {
    var root = event.detail && event.detail.elt ? event.detail.elt : document;
    // The element that made the request may have been swapped away: look in the whole page.
    var target = document.querySelector("[data-autofocus]");
    if (target) {
      target.removeAttribute("data-autofocus");
      target.focus();
    }
    var message = root.querySelector && root.querySelector("[data-announce]");
    if (message) announce(message.getAttribute("data-announce"));
  });

  // The server sends HX-Trigger: {"announce": "..."} for outcomes worth saying out loud.
  // (app.js is deferred, so the body exists by now.)
  document.body.addEventListener("announce", function (event) {
    announce(event.detail && event.detail.value);
  });
})();

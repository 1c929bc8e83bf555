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
    var rewrite = event.target.closest("[data-use-rewrite]");
    if (rewrite) {
      // A refused secret's suggested rewrite goes into the form's text (not yet saved).
      var form = rewrite.closest("form");
      var field = form && form.querySelector("textarea[name='content']");
      if (!field) return;
      field.value = rewrite.getAttribute("data-use-rewrite");
      field.dispatchEvent(new Event("input", { bubbles: true }));
      var keep = form.querySelector("input[name='confirm_secret']");
      if (keep) keep.checked = false;
      field.removeAttribute("aria-invalid");
      field.focus();
      announce(gettext("The rewrite is in the field; save to keep it."));
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

  // ---------------------------------------------------------------- offline / 5xx / timeout
  // An htmx action that gets no usable answer (server unreachable, a proxy's 5xx, a timeout)
  // leaves the page as it was — so the typed text stays — and says so in a banner with Retry.
  // While the banner is up the page asks /healthz every few seconds; when the dashboard answers
  // again the banner goes away (Retry stays offered). The server's own error answers (a banner
  // sent with HX-Retarget) are shown as they are.
  var failed = null;   // {elt, verb, path, submitter, eventType} of the last failed request
  var polling = null;

  function bannerRegion() { return document.getElementById("banner"); }

  function clearNetworkBanners() {
    ["offline-banner", "online-again"].forEach(function (id) {
      var old = document.getElementById(id);
      if (old) old.remove();
    });
  }

  function networkBanner(id, level, title, advice, role) {
    var region = bannerRegion();
    if (!region) return null;
    clearNetworkBanners();
    var box = document.createElement("div");
    box.id = id;
    box.className = "banner banner-" + level + " network-banner";
    box.setAttribute("role", role);
    box.setAttribute("tabindex", "-1");
    var strong = document.createElement("strong");
    strong.textContent = title;
    box.appendChild(strong);
    var p = document.createElement("p");
    p.textContent = advice;
    box.appendChild(p);
    var actions = document.createElement("p");
    actions.className = "banner-actions";
    if (failed) {
      var retry = document.createElement("button");
      retry.type = "button";
      retry.className = "primary";
      retry.setAttribute("data-retry", "");
      retry.textContent = gettext("Retry");
      actions.appendChild(retry);
    }
    box.appendChild(actions);
    var close = document.createElement("button");
    close.type = "button";
    close.className = "banner-close";
    close.setAttribute("data-dismiss", "banner");
    close.setAttribute("aria-label", gettext("Dismiss this message"));
    close.textContent = "×";
    box.appendChild(close);
    region.insertBefore(box, region.firstChild);
    return box;
  }

  function remember(detail) {
    // A request that only reads something for a field ([data-no-retry]: the expiry a typed
    // text states) is not the person's action: it must not take the place of the action that
    // failed (an Add pressed while the hint was on its way), which Retry sends again.
    if (fieldHint(detail)) return;
    var config = detail.requestConfig || {};
    var trigger = config.triggeringEvent;
    failed = {
      elt: detail.elt,
      verb: (config.verb || "get").toUpperCase(),
      path: config.path || (detail.pathInfo && detail.pathInfo.requestPath),
      submitter: trigger && trigger.submitter ? trigger.submitter : null,
      eventType: trigger ? trigger.type : null
    };
  }

  function showUnreachable(title) {
    networkBanner("offline-banner", "error", title,
      gettext("Nothing was saved; your text is kept. The dashboard may be restarting: this message goes away when it answers again, then press Retry."), "alert");
    announce(title + " " + gettext("Nothing was saved; your text is kept."));
    startPolling();
  }

  function startPolling() {
    if (polling) return;
    var url = document.body.getAttribute("data-health-url");
    if (!url || !window.fetch) return;
    polling = window.setInterval(function () {
      window.fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (response) {
        var json = (response.headers.get("content-type") || "").indexOf("json") !== -1;
        if (response.status < 500 || json) answeredAgain();
      }, function () { /* still unreachable */ });
    }, 2000);
  }

  function stopPolling() {
    if (polling) window.clearInterval(polling);
    polling = null;
  }

  function answeredAgain() {
    stopPolling();
    if (!document.getElementById("offline-banner")) return;
    if (failed) {
      networkBanner("online-again", "ok", gettext("The dashboard answers again."),
        gettext("What you sent last was not saved; press Retry to send it again."), "status");
    } else {
      clearNetworkBanners();
    }
    announce(gettext("The dashboard answers again."));
  }

  function retry() {
    var f = failed;
    failed = null;
    clearNetworkBanners();
    if (!f || !f.elt || !document.body.contains(f.elt)) { window.location.reload(); return; }
    if (f.elt.tagName === "FORM" && f.eventType === "submit") {
      var submitter = f.submitter && f.elt.contains(f.submitter) ? f.submitter : undefined;
      if (f.elt.requestSubmit) { f.elt.requestSubmit(submitter); return; }
    }
    window.htmx.ajax(f.verb, f.path, { source: f.elt });
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-retry]")) { event.preventDefault(); retry(); }
  });

  document.addEventListener("htmx:sendError", function (event) {
    remember(event.detail);
    showUnreachable(gettext("Cannot reach the dashboard."));
  });
  document.addEventListener("htmx:timeout", function (event) {
    remember(event.detail);
    showUnreachable(gettext("The dashboard did not answer in time."));
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || xhr.status < 500) return;
    if (xhr.getResponseHeader("HX-Retarget")) return;  // the dashboard's own error banner
    event.detail.shouldSwap = false;  // a proxy's error page must not replace the form
    event.detail.isError = false;     // handled here: no console error
    remember(event.detail);
    showUnreachable(gettext("The dashboard answered with an error (HTTP %s).").replace("%s", String(xhr.status)));
  });
  // A request the person made (a click, a submit, typing, a choice), not one the page makes
  // by itself (a list reloading after a change, a panel polling).
  var PERSON_EVENTS = ["click", "submit", "change", "input", "keyup", "keydown", "search"];
  function byPerson(detail) {
    if (fieldHint(detail)) return false;  // a field's hint fetched as they typed: not their action
    var trigger = detail && detail.requestConfig && detail.requestConfig.triggeringEvent;
    return !!trigger && PERSON_EVENTS.indexOf(trigger.type) !== -1;
  }

  function fieldHint(detail) {
    return !!(detail && detail.elt && detail.elt.closest && detail.elt.closest("[data-no-retry]"));
  }

  document.addEventListener("htmx:afterRequest", function (event) {
    if (fieldHint(event.detail)) return;  // a field's hint says nothing of the person's action
    var xhr = event.detail.xhr;
    if (!(event.detail.successful && xhr && xhr.status < 500)) return;
    if (byPerson(event.detail)) {
      // The person has moved on (or sent it again by hand): the failed action is no longer
      // theirs to retry, and the dashboard evidently answers.
      stopPolling();
      clearNetworkBanners();
      failed = null;
    } else if (document.getElementById("offline-banner")) {
      answeredAgain();  // the dashboard answers: keep offering Retry, as the poll would
    }
  });

  // ---------------------------------------------------------------- messages of a moment
  // A message about the last action ([data-transient]: "Added …", "Already remembered …")
  // goes when the person does something else on the page; the field it described is no longer
  // marked invalid. What they typed stays.
  function clearTransient(source) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-transient]"), function (message) {
      var scope = message.closest("form") || message;
      if (source && scope.contains(source)) return;  // that form answers for itself
      if (message.id) {
        Array.prototype.forEach.call(document.querySelectorAll("[aria-describedby]"), function (field) {
          var ids = field.getAttribute("aria-describedby").split(/\s+/);
          if (ids.indexOf(message.id) === -1) return;
          var rest = ids.filter(function (id) { return id && id !== message.id; });
          if (rest.length) field.setAttribute("aria-describedby", rest.join(" "));
          else field.removeAttribute("aria-describedby");
          field.removeAttribute("aria-invalid");
        });
      }
      message.remove();
    });
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (byPerson(event.detail)) clearTransient(event.detail.elt);
  });

  // ---------------------------------------------------------------- unsaved edits
  // Leaving a page with a changed [data-warn-unsaved] form (the skill editor, an open inline
  // edit) asks first, and so does Cancel ([data-cancel]) of a form whose fields were changed.
  var saving = false;  // a [data-warn-unsaved] form was submitted: its own redirect may leave

  function fieldChanged(el) {
    if (el.disabled || /^(hidden|submit|button|reset|file|image)$/.test(el.type)) return false;
    if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked;
    if (el.tagName === "SELECT") {
      var options = Array.prototype.slice.call(el.options);
      var hasDefault = options.some(function (o) { return o.defaultSelected; });
      return options.some(function (o, i) {
        return o.selected !== (hasDefault ? o.defaultSelected : i === 0);
      });
    }
    return typeof el.value === "string" && el.value !== el.defaultValue;
  }

  function formChanged(form) {
    if (!form || !form.elements) return false;
    if (form.getAttribute("data-unsaved") === "true") return true;
    return Array.prototype.some.call(form.elements, fieldChanged);
  }

  function unsavedForms() {
    return Array.prototype.filter.call(document.querySelectorAll("form[data-warn-unsaved]"), formChanged);
  }

  window.addEventListener("beforeunload", function (event) {
    if (saving || !unsavedForms().length) return;
    event.preventDefault();
    event.returnValue = "";  // the browser shows its own "Leave site?" question
  });

  document.addEventListener("submit", function (event) {
    if (event.target.matches && event.target.matches("form[data-warn-unsaved]")) saving = true;
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    if (!(event.detail.successful && xhr && xhr.getResponseHeader("HX-Redirect"))) saving = false;
  });

  // A form sent back with an error holds the typed text as its "default": still unsaved.
  document.addEventListener("htmx:afterSwap", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || xhr.status < 400) return;
    var target = event.detail.target;
    if (target && target.id && !document.body.contains(target)) target = document.getElementById(target.id);
    if (!target) return;
    var forms = target.matches && target.matches("form[data-warn-unsaved]")
      ? [target] : Array.prototype.slice.call(target.querySelectorAll("form[data-warn-unsaved]"));
    forms.forEach(function (form) { form.setAttribute("data-unsaved", "true"); });
  });

  document.addEventListener("htmx:confirm", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.matches || !elt.matches("[data-cancel]")) return;
    var form = elt.closest("form");
    if (!formChanged(form)) return;
    event.preventDefault();
    if (window.confirm(elt.getAttribute("data-discard-message") || gettext("Discard your changes? They have not been saved."))) {
      event.detail.issueRequest(true);
    }
  });
})();

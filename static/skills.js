// Skills page: the reference path only matters for a reference, so it follows the chosen kind.
(function () {
  "use strict";

  function sync(form) {
    var chosen = form.querySelector("input[name='type']:checked");
    var field = form.querySelector("#field-reference");
    if (!chosen || !field) return;
    var wrapper = field.closest(".field");
    wrapper.hidden = chosen.value !== "reference";
  }

  function init(root) {
    (root || document).querySelectorAll("#skill-form").forEach(sync);
  }

  document.addEventListener("change", function (event) {
    if (event.target.name === "type") sync(event.target.form);
  });
  document.addEventListener("htmx:afterSettle", function () { init(document); });
  init(document);
})();

// Gate fields whose schema has a `pattern` (data-pattern): the browser refuses a value that
// does not match before the form is sent, as it does for the other constraints the card sets
// as HTML attributes. An HTML `pattern` attribute would anchor the expression to the whole
// value and compile it with the `v` flag; JSON Schema's `pattern` is an unanchored search, so
// it is checked here with the `u` flag instead. The server checks the full schema anyway: an
// expression this browser cannot compile is simply left to it.
(function () {
  "use strict";

  function check(field) {
    var expression;
    try {
      expression = new RegExp(field.dataset.pattern, "u");
    } catch (error) {
      return;
    }
    var value = field.value;
    // A blank optional field is left out of the input: there is nothing to match.
    var applies = value !== "" || field.getAttribute("aria-required") === "true";
    field.setCustomValidity(
      applies && !expression.test(value) ? "Match the pattern " + field.dataset.pattern : ""
    );
  }

  function checkAll(root) {
    if (!root.querySelectorAll) {
      return;
    }
    root.querySelectorAll("[data-pattern]").forEach(check);
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("[data-pattern]")) {
      check(event.target);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    checkAll(document);
  });
  document.addEventListener("htmx:load", function (event) {
    checkAll(event.target);
  });
})();

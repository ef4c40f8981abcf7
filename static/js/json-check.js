// JSON text areas (textarea[data-json-check]) are checked for syntax as you type; the hint
// beside them (.json-hint in the same field) says what is wrong, and the text area is marked
// invalid (setCustomValidity), so neither the browser nor htmx submits its form until it parses.
// The server checks again. The same markup as the editor's schema fields.
(function () {
  "use strict";

  function checkJson(area) {
    var hint = area.parentElement.querySelector(".json-hint");
    if (!hint) {
      return;
    }
    var text = area.value;
    var problem = "";
    if (text.trim() !== "") {
      try {
        JSON.parse(text);
      } catch (error) {
        problem = "Not valid JSON yet: " + error.message;
      }
    }
    hint.textContent = problem;
    area.setCustomValidity(problem);
    if (problem) {
      area.setAttribute("aria-invalid", "true");
    } else {
      area.removeAttribute("aria-invalid");
    }
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-json-check]")) {
      checkJson(event.target);
    }
  });
})();

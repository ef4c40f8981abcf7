// JSON text areas (textarea[data-json-check]) are checked for syntax as you type; the hint
// beside them (.json-hint in the same field) says what is wrong, and the text area is marked
// aria-invalid. By default it is also marked invalid for the browser (setCustomValidity), so
// neither the browser nor htmx submits its form until it parses (Start run). The editor's
// fields say data-json-check="hint": they are saved as they are typed, and text that is not
// JSON yet is held back by the server beside its field, so the form must still post it.
// The server checks again, always.
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
    if (area.dataset.jsonCheck !== "hint") {
      area.setCustomValidity(problem);
    }
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

// New graph: only the fields the chosen starting point needs are shown (the agents for
// Approval gate; critic, synthesizer and personas for the critic panels; rounds for Critic panel —
// rounds; none for Blank). Without this script every field is shown and the unused ones are
// ignored by the server.
(function () {
  "use strict";

  function show(form) {
    var chosen = form.querySelector("input[name=template]:checked");
    var template = chosen ? chosen.value : "blank";
    var group = form.querySelector("[data-template-fields]");
    var any = false;
    form.querySelectorAll("[data-for]").forEach(function (field) {
      var wanted = field.dataset.for.split(" ").indexOf(template) !== -1;
      field.hidden = !wanted;
      any = any || wanted;
    });
    if (group) {
      group.hidden = !any;
    }
  }

  function enhance() {
    var form = document.getElementById("new-graph-form");
    if (form) {
      show(form);
    }
  }

  document.addEventListener("change", function (event) {
    if (event.target.name === "template") {
      show(event.target.form);
    }
  });
  document.addEventListener("DOMContentLoaded", enhance);
  document.addEventListener("htmx:afterSettle", enhance);
})();

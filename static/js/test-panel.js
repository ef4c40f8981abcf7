// The editor's Test panel: picking a sample fills the input; Alt+Shift+T starts a test run;
// the nodes the panel lists as pinned are drawn pinned on the canvas (class "pinned").
(function () {
  "use strict";

  function markPinned() {
    var pinned = new Set();
    document.querySelectorAll("#pin-list [data-pinned-node]").forEach(function (item) {
      pinned.add(item.getAttribute("data-pinned-node"));
    });
    // A top-level node links to ?node=<its id> (its DOT id, the <title>, is another name).
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var link = group.querySelector("a");
      var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
      var id = href ? new URL(href, window.location.href).searchParams.get("node") : null;
      var top = href && !new URL(href, window.location.href).searchParams.has("in");
      group.classList.toggle("pinned", Boolean(top && id !== null && pinned.has(id)));
    });
  }

  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select || select.id !== "test-sample" || !select.value) return;
    var samples = JSON.parse(select.getAttribute("data-test-samples") || "{}");
    var input = document.getElementById("test-input");
    if (input && Object.prototype.hasOwnProperty.call(samples, select.value)) {
      input.value = JSON.stringify(samples[select.value], null, 2);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey && event.shiftKey && (event.key === "T" || event.key === "t")) {
      var button = document.getElementById("test-run-button");
      if (button && !button.disabled) {
        event.preventDefault();
        button.click();
      }
    }
  });

  document.addEventListener("htmx:afterSettle", markPinned);
  document.addEventListener("DOMContentLoaded", markPinned);
})();

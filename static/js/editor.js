// The editor page's small extras, where htmx cannot do it alone (spec 06, Look):
// a click on a canvas node fetches that node's form; JSON text areas are checked for syntax
// as you type (the server checks them again); the edge label offers the chosen branch's cases.
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  // Canvas nodes are SVG links to ?node=<id>; fetch the form in place instead of reloading.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("#canvas-panel svg a");
    if (!link || typeof window.htmx === "undefined") {
      return;
    }
    var href = link.getAttribute("href") || link.getAttribute("xlink:href");
    if (!href) {
      return;
    }
    event.preventDefault();
    window.htmx.ajax("GET", href, { target: "#node-panel", swap: "outerHTML" });
  });

  // An answer that arrives while someone is typing in the JSON text must not put the old text
  // back under the cursor: their typing is sent next, with the revision that answer carried.
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    if (target && target.id === "json-text" && target === document.activeElement) {
      event.detail.shouldSwap = false;
    }
  });

  function checkJson(area) {
    var hint = area.parentElement.querySelector(".json-hint");
    if (!hint) {
      return;
    }
    var text = area.value;
    if (text.trim() === "") {
      hint.textContent = "";
      area.removeAttribute("aria-invalid");
      return;
    }
    try {
      JSON.parse(text);
      hint.textContent = "";
      area.removeAttribute("aria-invalid");
    } catch (error) {
      hint.textContent = "Not valid JSON yet: " + error.message;
      area.setAttribute("aria-invalid", "true");
    }
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-json-check]")) {
      checkJson(event.target);
    }
  });

  // The label of a new edge: offer only the source branch's case names.
  function narrowLabels(select) {
    var list = document.getElementById("edge-labels");
    if (!list) {
      return;
    }
    list.querySelectorAll("option").forEach(function (option) {
      option.disabled = option.dataset.branch !== select.value;
    });
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-edge-from]")) {
      narrowLabels(event.target);
    }
  });

  function enhance() {
    var select = document.querySelector("[data-edge-from]");
    if (select) {
      narrowLabels(select);
    }
  }

  document.addEventListener("DOMContentLoaded", enhance);
  document.addEventListener("htmx:afterSettle", enhance);
})();

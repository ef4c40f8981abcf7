// Pan and zoom for every canvas on the page, and again after htmx swaps one in.
// The SVG is drawn by Graphviz on the server; this file only wires svg-pan-zoom to it.
(function () {
  "use strict";

  function enhance(root) {
    if (typeof window.svgPanZoom !== "function") {
      return;
    }
    root.querySelectorAll("[data-pan-zoom] > svg").forEach(function (svg) {
      if (svg.dataset.panZoom === "on") {
        return;
      }
      svg.dataset.panZoom = "on";
      svg.setAttribute("width", "100%");
      svg.setAttribute("height", "100%");
      window.svgPanZoom(svg, {
        controlIconsEnabled: true,
        zoomScaleSensitivity: 0.3,
        minZoom: 0.2,
        maxZoom: 8,
        fit: true,
        center: true,
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    enhance(event.target);
  });
})();

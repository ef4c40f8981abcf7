// Pan and zoom for every canvas on the page, and again after htmx swaps one in.
// The SVG is drawn by Graphviz on the server; this file only wires svg-pan-zoom to it.
// The library's own zoom icons inject a <style> element, which the CSP refuses, so the
// canvas template carries plain buttons instead, shown once pan and zoom are available.
(function () {
  "use strict";

  function enhance(root) {
    if (typeof window.svgPanZoom !== "function") {
      return;
    }
    root.querySelectorAll("[data-canvas]").forEach(function (figure) {
      var svg = figure.querySelector("[data-pan-zoom] > svg");
      if (!svg || svg.dataset.panZoom === "on") {
        return;
      }
      svg.dataset.panZoom = "on";
      svg.setAttribute("width", "100%");
      svg.setAttribute("height", "100%");
      // svg-pan-zoom writes the SVG's style attribute with setAttribute, which the CSP
      // (no inline styles) refuses; the same declarations through the CSSOM are allowed.
      var setAttribute = svg.setAttribute;
      svg.setAttribute = function (name, value) {
        if (name === "style") {
          svg.style.cssText = value;
          return;
        }
        setAttribute.call(svg, name, value);
      };
      var zoom = window.svgPanZoom(svg, {
        controlIconsEnabled: false,
        zoomScaleSensitivity: 0.3,
        minZoom: 0.2,
        maxZoom: 8,
        fit: true,
        center: true,
      });
      var tools = figure.querySelector("[data-zoom-tools]");
      if (!tools) {
        return;
      }
      tools.hidden = false;
      tools.addEventListener("click", function (event) {
        var button = event.target.closest("[data-zoom]");
        if (!button) {
          return;
        }
        if (button.dataset.zoom === "in") {
          zoom.zoomIn();
        } else if (button.dataset.zoom === "out") {
          zoom.zoomOut();
        } else {
          zoom.resetZoom();
          zoom.fit();
          zoom.center();
        }
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

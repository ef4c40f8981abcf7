// Pan and zoom for every canvas on the page, and again after htmx swaps one in.
// The SVG is drawn by Graphviz on the server; this file only wires svg-pan-zoom to it.
// The library's own zoom icons inject a <style> element, which the CSP refuses, so the
// canvas template carries plain buttons instead, shown once pan and zoom are available.
// A canvas drawn again (the editor redraws it after each edit) keeps the view the person
// panned or zoomed to; one they have not moved is fitted to the new drawing.
(function () {
  "use strict";

  // Per canvas (the figure's id): its svg-pan-zoom instance and whether the person moved it.
  var views = {};
  // The view to restore when a canvas of that id is drawn again: {zoom, pan}.
  var kept = {};
  // Set while this file moves a view itself, so that the move is not taken for the person's.
  var quiet = false;

  function remember() {
    Object.keys(views).forEach(function (id) {
      var view = views[id];
      if (!document.body.contains(view.svg)) {
        return;
      }
      if (view.moved) {
        kept[id] = { zoom: view.zoom.getSizes().realZoom, pan: view.zoom.getPan() };
      } else {
        delete kept[id];
      }
    });
  }

  function restore(zoom, view) {
    // zoom() is relative to the fitted size of this drawing; the kept view is absolute.
    zoom.zoom((view.zoom * zoom.getZoom()) / zoom.getSizes().realZoom);
    zoom.pan(view.pan);
  }

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
      var id = figure.id;
      var view = { svg: svg, zoom: null, moved: false };
      function moved() {
        if (!quiet) {
          view.moved = true;
        }
      }
      quiet = true;
      try {
        view.zoom = window.svgPanZoom(svg, {
          controlIconsEnabled: false,
          zoomScaleSensitivity: 0.3,
          minZoom: 0.2,
          maxZoom: 8,
          fit: true,
          center: true,
          onZoom: moved,
          onPan: moved,
        });
        if (kept[id]) {
          restore(view.zoom, kept[id]);
          view.moved = true;
        }
      } finally {
        quiet = false;
      }
      views[id] = view;
      // svg-pan-zoom keeps the browser from moving focus on a press (it would select text while
      // panning), so focus the drawing itself: keys then reach the canvas, not the last field.
      var drawing = figure.querySelector("[data-pan-zoom]");
      if (drawing) {
        drawing.addEventListener("mousedown", function () {
          if (document.activeElement !== drawing && !drawing.contains(document.activeElement)) {
            drawing.focus({ preventScroll: true });
          }
        });
      }
      var zoom = view.zoom;
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
          quiet = true;
          try {
            zoom.resetZoom();
            zoom.fit();
            zoom.center();
          } finally {
            quiet = false;
          }
          view.moved = false;
        }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
  });
  // Before htmx replaces anything (the canvas itself, out of band, or the whole editor),
  // note the views the person moved, so the new drawing opens where they were.
  document.addEventListener("htmx:beforeSwap", remember);
  document.addEventListener("htmx:oobBeforeSwap", remember);
  document.addEventListener("htmx:afterSettle", function (event) {
    enhance(event.target);
  });
})();

// Pan and zoom for every canvas on the page, and again after htmx swaps one in.
// The SVG is drawn by Graphviz on the server; this file only wires svg-pan-zoom to it.
// The library's own zoom icons inject a <style> element, which the CSP refuses, so the
// canvas template carries plain buttons instead, shown once pan and zoom are available.
//
// Readable at any size: zoom goes on until labels are 1.5 times their natural size, whatever
// the graph's size; Fit never blows a small graph up beyond its natural size; a graph too large
// to read when fitted opens at its natural size on its first node instead (Fit shows it whole,
// as an overview whose labels stay readable: overview, below), with a minimap.
//
// A canvas drawn again (the editor redraws it after each edit) keeps its view: a drawing of the
// same structure is patched in place (only the items it changed are replaced: patch, below); one
// of another structure replaces the canvas, keeping the zoom and the node nearest the middle
// where it was on screen, or is fitted anew when the person had not moved the view.
(function () {
  "use strict";

  // Per canvas (the figure's id): its svg-pan-zoom instance and whether the person moved it.
  var views = {};
  // What to restore when a canvas of that id is drawn again: {zoom, pan, moved, structure,
  // anchor: {id, x, y}} (a node's id and where its middle was on screen).
  var kept = {};
  // Set while this file moves a view itself, so that the move is not taken for the person's.
  var quiet = false;
  // Labels may grow to this many times their natural size.
  var LARGEST = 1.5;
  // Below this, fitted labels are too small to read: open at natural size instead.
  var READABLE = 0.5;

  // Where a node's middle is in the drawing's own coordinates (those pan and zoom move), which
  // svg-pan-zoom's pending redraw (it waits for the next frame) does not change.
  function inDrawing(view, node) {
    var box = node.getBBox();
    var viewport = view.svg.querySelector(".svg-pan-zoom_viewport");
    var point = view.svg.createSVGPoint();
    point.x = box.x + box.width / 2;
    point.y = box.y + box.height / 2;
    return point.matrixTransform(viewport.getCTM().inverse().multiply(node.getCTM()));
  }

  // Where that point is on the canvas (from its top left corner), at the view's pan and zoom.
  function onCanvas(view, point) {
    var pan = view.zoom.getPan();
    var real = view.zoom.getSizes().realZoom;
    return { x: pan.x + real * point.x, y: pan.y + real * point.y };
  }

  // The node to keep in place on screen: the one whose form is open, when it is in view (the
  // one being edited), else the one nearest the middle.
  function anchorOf(view) {
    var selected = view.svg.querySelector("g.node.selected[id]");
    if (selected) {
      var sizes = view.zoom.getSizes();
      var point = onCanvas(view, inDrawing(view, selected));
      if (point.x >= 0 && point.y >= 0 && point.x <= sizes.width && point.y <= sizes.height) {
        return { id: selected.id, x: point.x, y: point.y };
      }
    }
    return nearestNode(view);
  }

  function nearestNode(view) {
    var sizes = view.zoom.getSizes();
    var centre = { x: sizes.width / 2, y: sizes.height / 2 };
    var best = null;
    var bestDistance = Infinity;
    view.svg.querySelectorAll("g.node[id]").forEach(function (node) {
      var point = onCanvas(view, inDrawing(view, node));
      var distance = Math.abs(point.x - centre.x) + Math.abs(point.y - centre.y);
      if (distance < bestDistance) {
        best = { id: node.id, x: point.x, y: point.y };
        bestDistance = distance;
      }
    });
    return best;
  }

  function remember(event) {
    var target = event && event.detail && event.detail.target;
    Object.keys(views).forEach(function (id) {
      var view = views[id];
      if (!document.body.contains(view.svg) || (target && !target.contains(view.svg))) {
        return;
      }
      kept[id] = {
        zoom: view.zoom.getSizes().realZoom,
        pan: view.zoom.getPan(),
        moved: view.moved,
        structure: view.structure,
        anchor: anchorOf(view),
      };
    });
  }

  function realZoomTo(zoom, real) {
    // zoom() is relative to the fitted size of this drawing; ``real`` is absolute.
    zoom.zoom((real * zoom.getZoom()) / zoom.getSizes().realZoom);
  }

  function restore(view, previous) {
    var zoom = view.zoom;
    realZoomTo(zoom, previous.zoom);
    zoom.pan(previous.pan);
    var anchor = previous.anchor;
    var node = anchor && view.svg.querySelector("#" + CSS.escape(anchor.id));
    if (node) {
      var point = inDrawing(view, node);
      var real = zoom.getSizes().realZoom;
      zoom.pan({ x: anchor.x - real * point.x, y: anchor.y - real * point.y });
    }
  }

  // Fit, but never larger than the natural size; a drawing too large to read when fitted is
  // shown at natural size on its first (entry) node.
  function fitReadably(view, whole) {
    var zoom = view.zoom;
    zoom.resetZoom();
    zoom.fit();
    zoom.center();
    var real = zoom.getSizes().realZoom;
    if (real > 1) {
      realZoomTo(zoom, 1);
      zoom.center();
    } else if (!whole && real < READABLE) {
      realZoomTo(zoom, 1);
      var first = view.svg.querySelector("g.node[id]");
      if (first) {
        centreOn(view, first);
      }
    }
  }

  // Put ``node`` (an SVG g.node) in the middle of its canvas.
  function centreOn(view, node) {
    var sizes = view.zoom.getSizes();
    var point = inDrawing(view, node);
    view.zoom.pan({
      x: sizes.width / 2 - sizes.realZoom * point.x,
      y: sizes.height / 2 - sizes.realZoom * point.y,
    });
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
      var view = { svg: svg, zoom: null, moved: false, structure: figure.dataset.structure || "" };
      // The drawing's items as the server drew them (the page marks its own copies: the open
      // node, tab stops), to tell which items a later drawing of the same structure changed.
      var graph = svg.querySelector(":scope > g.graph");
      view.graph = graph;
      view.pristine = graph && view.structure ? Array.from(graph.cloneNode(true).children) : null;
      function moved() {
        if (!quiet) {
          view.moved = true;
        }
        scheduleMinimap(view);
        scheduleOverview(view);
      }
      quiet = true;
      try {
        view.zoom = window.svgPanZoom(svg, {
          controlIconsEnabled: false,
          zoomScaleSensitivity: 0.3,
          minZoom: 0.05,
          maxZoom: 8,
          fit: true,
          center: true,
          onZoom: moved,
          onPan: moved,
        });
        // Zoom in until labels are LARGEST times their natural size, whatever the fit.
        var fitted = view.zoom.getSizes().realZoom;
        view.zoom.setMaxZoom(Math.max(8, LARGEST / fitted));
        var previous = kept[id];
        var sameDrawing = previous && previous.structure && previous.structure === view.structure;
        if (previous && (previous.moved || sameDrawing)) {
          restore(view, previous);
          view.moved = previous.moved;
        } else {
          fitReadably(view, false);
        }
      } finally {
        quiet = false;
      }
      views[id] = view;
      view.figure = figure;
      minimap(view, fitted);
      overview(view);
      figure.dispatchEvent(new CustomEvent("canvas:ready", { bubbles: true }));
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
            fitReadably(view, true);
          } finally {
            quiet = false;
          }
          view.moved = false;
        }
      });
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
    });
  }

  // A minimap for drawings too large to read whole: a small picture of the drawing (inert: no
  // links, hidden from assistive technology, which has the canvas itself) with the part shown
  // outlined; a click or a drag in it moves the canvas there. Its height follows the drawing's
  // shape within bounds; a drawing so long that the whole of it would be a hairline there is
  // shown around the part in view, at a scale where it is at least half the minimap across,
  // and the picture follows the view as it moves (it stays put while it is dragged).
  var MINIMAP_LOWEST = 56;
  var MINIMAP_HIGHEST = 160;
  var SVG_NS = "http://www.w3.org/2000/svg";

  function minimap(view, fitted) {
    var old = view.figure.querySelector(".minimap");
    if (old) {
      old.remove();
    }
    if (fitted >= READABLE) {
      return;
    }
    var box = document.createElement("div");
    box.className = "minimap";
    box.setAttribute("aria-hidden", "true");
    var viewport = view.svg.querySelector(".svg-pan-zoom_viewport");
    var drawn = viewport.getBBox();
    drawn = { x: drawn.x, y: drawn.y, width: Math.max(drawn.width, 1), height: Math.max(drawn.height, 1) };
    view.figure.querySelector("[data-pan-zoom]").after(box);
    var width = box.clientWidth || 224;
    var height = Math.min(MINIMAP_HIGHEST, Math.max(MINIMAP_LOWEST, (width * drawn.height) / drawn.width));
    box.style.height = height + "px";
    var scale = Math.min(width / drawn.width, height / drawn.height);
    var across = Math.min(drawn.width, drawn.height);
    scale = Math.max(scale, Math.min(width, height) / 2 / across);
    var small = document.createElementNS(SVG_NS, "svg");
    small.setAttribute("preserveAspectRatio", "xMidYMid meet");
    var image = document.createElementNS(SVG_NS, "image");
    image.setAttribute("x", String(drawn.x));
    image.setAttribute("y", String(drawn.y));
    image.setAttribute("width", String(drawn.width));
    image.setAttribute("height", String(drawn.height));
    image.setAttribute("preserveAspectRatio", "none");
    small.appendChild(image);
    var frame = document.createElementNS(SVG_NS, "rect");
    frame.setAttribute("class", "minimap-frame");
    small.appendChild(frame);
    box.appendChild(small);
    view.minimap = {
      box: box,
      svg: small,
      frame: frame,
      drawn: drawn,
      image: image,
      region: { width: width / scale, height: height / scale },
      dragging: false,
    };
    // The picture comes after the canvas is painted: making it costs as much as the drawing.
    scheduleMinimapPicture(view, 0);
    function jump(event) {
      var point = small.createSVGPoint();
      point.x = event.clientX;
      point.y = event.clientY;
      var target = point.matrixTransform(small.getScreenCTM().inverse());
      var sizes = view.zoom.getSizes();
      view.zoom.pan({
        x: sizes.width / 2 - sizes.realZoom * target.x,
        y: sizes.height / 2 - sizes.realZoom * target.y,
      });
      view.moved = true;
    }
    box.addEventListener("mousedown", function (event) {
      view.minimap.dragging = true;
      jump(event);
      event.preventDefault();
    });
    box.addEventListener("mousemove", function (event) {
      if (view.minimap && view.minimap.dragging) {
        jump(event);
      }
    });
    document.addEventListener("mouseup", function () {
      if (view.minimap && view.minimap.dragging) {
        view.minimap.dragging = false;
        updateMinimap(view);
      }
    });
    updateMinimap(view);
  }

  // A picture of the drawing (an image, not a second copy of its elements: cheap to lay out
  // and paint, and nothing in it can take focus), over which the part shown is outlined.
  function picture(view) {
    var drawn = view.minimap.drawn;
    var inner = view.svg.querySelector(".svg-pan-zoom_viewport").cloneNode(true);
    inner.removeAttribute("transform");
    inner.removeAttribute("style");
    inner.querySelectorAll(".overview-labels").forEach(function (layer) {
      layer.remove();
    });
    var whole = document.createElementNS(SVG_NS, "svg");
    whole.setAttribute("xmlns", SVG_NS);
    whole.setAttribute("viewBox", [drawn.x, drawn.y, drawn.width, drawn.height].join(" "));
    whole.appendChild(inner);
    return "data:image/svg+xml;charset=utf-8," + encodeURIComponent(new XMLSerializer().serializeToString(whole));
  }

  function updateMinimap(view) {
    view.minimapPending = false;
    if (!view.minimap || !view.zoom) {
      return;
    }
    var sizes = view.zoom.getSizes();
    var pan = view.zoom.getPan();
    var real = sizes.realZoom;
    var shown = { x: -pan.x / real, y: -pan.y / real, width: sizes.width / real, height: sizes.height / real };
    var frame = view.minimap.frame;
    frame.setAttribute("x", String(shown.x));
    frame.setAttribute("y", String(shown.y));
    frame.setAttribute("width", String(shown.width));
    frame.setAttribute("height", String(shown.height));
    if (view.minimap.dragging) {
      return;
    }
    // The part of the drawing the minimap shows: all of it, or the part around the view.
    var drawn = view.minimap.drawn;
    var region = view.minimap.region;
    function place(middle, size, start, length) {
      if (size >= length) {
        return start + (length - size) / 2;
      }
      return Math.min(Math.max(middle - size / 2, start), start + length - size);
    }
    var x = place(shown.x + shown.width / 2, region.width, drawn.x, drawn.width);
    var y = place(shown.y + shown.height / 2, region.height, drawn.y, drawn.height);
    view.minimap.svg.setAttribute("viewBox", [x, y, region.width, region.height].join(" "));
  }

  // Readable at a glance: below OVERVIEW_BELOW the drawing's own labels (11 units) are smaller
  // than 8 pixels, so the canvas shows an overview instead. Its own text is hidden; a label of
  // OVERVIEW_PX on screen is laid over as many nodes as have room for one without touching
  // another (in the drawing's order: the entry first), the others waiting for a closer look,
  // as a map names its towns. Laid out again when the zoom changes, never on a pan.
  var OVERVIEW_BELOW = 0.75;
  var OVERVIEW_PX = 12;

  // Each node's first line of text (its display name) and its middle, in the drawing's units.
  function nodeLabels(view) {
    if (!view.labels) {
      view.labels = [];
      view.svg.querySelectorAll(".svg-pan-zoom_viewport > g.graph g.node").forEach(function (group) {
        var text = group.querySelector("text");
        var words = text ? text.textContent.trim() : "";
        if (!words) {
          return;
        }
        var box = group.getBBox();
        view.labels.push({ words: words, x: box.x + box.width / 2, y: box.y + box.height / 2 });
      });
    }
    return view.labels;
  }

  function overview(view) {
    view.overviewPending = false;
    if (!view.zoom || !document.body.contains(view.svg)) {
      return;
    }
    var real = view.zoom.getSizes().realZoom;
    var on = real < OVERVIEW_BELOW;
    view.figure.classList.toggle("overview", on);
    var layer = view.overviewLayer;
    if (!on) {
      if (layer) {
        layer.textContent = "";
      }
      view.overviewZoom = null;
      return;
    }
    if (layer && view.overviewZoom === real) {
      return;
    }
    view.overviewZoom = real;
    if (!layer) {
      var graph = view.svg.querySelector(".svg-pan-zoom_viewport > g.graph");
      if (!graph) {
        return;
      }
      layer = document.createElementNS(SVG_NS, "g");
      layer.setAttribute("class", "overview-labels");
      layer.setAttribute("aria-hidden", "true");
      layer.setAttribute("transform", graph.getAttribute("transform") || "");
      graph.after(layer);
      view.overviewLayer = layer;
    }
    var size = OVERVIEW_PX / real;
    var placed = [];
    var fragment = document.createDocumentFragment();
    // Kept inside the drawing, so that the labels at its ends are not cut by the canvas.
    var whole = view.svg.querySelector(".svg-pan-zoom_viewport > g.graph").getBBox();
    nodeLabels(view).forEach(function (label) {
      var half = (label.words.length + 1) * size * 0.3;
      var x = Math.max(whole.x + half, Math.min(label.x, whole.x + whole.width - half));
      var box = { left: x - half, right: x + half, top: label.y - size * 0.7, bottom: label.y + size * 0.7 };
      for (var index = 0; index < placed.length; index += 1) {
        var other = placed[index];
        if (box.left < other.right && other.left < box.right && box.top < other.bottom && other.top < box.bottom) {
          return;
        }
      }
      placed.push(box);
      var text = document.createElementNS(SVG_NS, "text");
      text.setAttribute("x", String(x));
      text.setAttribute("y", String(label.y));
      text.setAttribute("font-size", String(size));
      text.setAttribute("stroke-width", String(size / 4));
      text.setAttribute("text-anchor", "middle");
      text.setAttribute("dominant-baseline", "central");
      text.textContent = label.words;
      fragment.appendChild(text);
    });
    layer.textContent = "";
    layer.appendChild(fragment);
  }

  function scheduleOverview(view) {
    if (!view.overviewPending) {
      view.overviewPending = true;
      requestAnimationFrame(function () {
        overview(view);
      });
    }
  }

  function scheduleMinimap(view) {
    if (view.minimap && !view.minimapPending) {
      view.minimapPending = true;
      requestAnimationFrame(function () {
        updateMinimap(view);
      });
    }
  }

  // For the editor: centre a canvas on a node and mark it found (a brief outline).
  window.gatehouseCanvas = {
    centre: function (figureId, node) {
      var view = views[figureId];
      if (!view || !node) {
        return false;
      }
      quiet = true;
      try {
        if (view.zoom.getSizes().realZoom < 0.8) {
          realZoomTo(view.zoom, 1);
        }
        centreOn(view, node);
      } finally {
        quiet = false;
      }
      view.moved = true;
      scheduleMinimap(view);
      view.svg.querySelectorAll("g.node.found").forEach(function (other) {
        other.classList.remove("found");
      });
      node.classList.add("found");
      return true;
    },
    view: function (figureId) {
      return views[figureId] || null;
    },
  };

  // A drawing of the same structure as the one shown (the editor redraws after an edit of a
  // name, a label, a prompt: the nodes keep their places, and the server does not move the
  // drawing to the origin, so an unchanged item is drawn the same) is put in place item by
  // item: only the nodes and edges it changed are replaced, inside the shown drawing, whose
  // frame, pan and zoom stay as they are. Laying out, painting and setting pan and zoom up for
  // a whole new drawing of hundreds of nodes takes seconds; one node and its edges,
  // milliseconds. Returns false when the drawing cannot be patched (another structure, no
  // drawing yet): it is then replaced whole.
  function patch(panel, incoming) {
    var figure = panel.querySelector("[data-canvas]");
    var next = incoming.querySelector("[data-canvas]");
    var view = figure && views[figure.id];
    if (!next || !view || view.figure !== figure || !view.pristine || !view.graph) {
      return false;
    }
    if (!next.dataset.structure || next.dataset.structure !== view.structure) {
      return false;
    }
    if (panel.className !== incoming.className || next.id !== figure.id) {
      return false;
    }
    var svg = next.querySelector("[data-pan-zoom] > svg");
    var graph = svg && svg.querySelector(":scope > g.graph");
    if (!graph || !document.body.contains(view.graph)) {
      return false;
    }
    var items = graph.children;
    var shown = view.graph.children;
    var pristine = view.pristine;
    if (items.length !== pristine.length || shown.length !== pristine.length) {
      return false;
    }
    var changed = [];
    for (var index = 0; index < items.length; index += 1) {
      if (items[index].id !== pristine[index].id) {
        return false;
      }
      if (!items[index].isEqualNode(pristine[index])) {
        changed.push(index);
      }
    }
    // Collected first: replacing moves the new items out of the list being read.
    var fresh = changed.map(function (position) {
      return items[position];
    });
    changed.forEach(function (position, nth) {
      var item = fresh[nth];
      var old = shown[position];
      var focused = old.contains(document.activeElement);
      var copy = item.cloneNode(true);
      old.replaceWith(copy);
      pristine[position] = item;
      // A node being read with the keyboard keeps the focus when its drawing changes.
      var link = focused && copy.querySelector("a");
      if (link) {
        link.setAttribute("tabindex", "0");
        link.focus({ preventScroll: true });
      }
    });
    // The figure names the drawing it shows now (editor.js posts the key with each edit).
    Array.from(next.attributes).forEach(function (attribute) {
      if (figure.getAttribute(attribute.name) !== attribute.value) {
        figure.setAttribute(attribute.name, attribute.value);
      }
    });
    var caption = figure.querySelector(".canvas-caption");
    var nextCaption = next.querySelector(".canvas-caption");
    if (caption && nextCaption && caption.textContent !== nextCaption.textContent) {
      caption.textContent = nextCaption.textContent;
    }
    if (changed.length) {
      scheduleMinimapPicture(view, 2000);
      view.labels = null;
      view.overviewZoom = null;
      scheduleOverview(view);
    }
    return true;
  }

  // The minimap's picture is drawn when the page is idle, ``delay`` ms from now at the soonest:
  // it costs as much as a large drawing itself. After a patch it waits for typing to pause
  // (what an edit of a name changes is too small to see there).
  function scheduleMinimapPicture(view, delay) {
    if (!view.minimap) {
      return;
    }
    clearTimeout(view.pictureTimer);
    view.pictureTimer = setTimeout(function () {
      var idle = window.requestIdleCallback || function (callback) { return setTimeout(callback, 0); };
      idle(function () {
        if (view.minimap && document.body.contains(view.svg)) {
          view.minimap.image.setAttribute("href", picture(view));
        }
      });
    }, delay);
  }

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
  });
  // Before htmx replaces anything (the canvas itself, out of band, or the whole editor),
  // note the views, so the new drawing opens where the old one was.
  document.addEventListener("htmx:beforeSwap", remember);
  // A new canvas panel is put in place here, not by htmx: htmx would look up every id of the
  // new drawing in the old one to carry attributes over (thousands of look-ups on a large
  // graph, seconds of work) and scan it for its own attributes, which a drawing has none of.
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    var fragment = event.detail.fragment;
    if (!target || target.id !== "canvas-panel" || !fragment || !fragment.firstElementChild) {
      remember(event);
      return;
    }
    event.detail.shouldSwap = false;
    var incoming = fragment.firstElementChild;
    if (patch(target, incoming)) {
      target.dispatchEvent(new CustomEvent("canvas:swapped", { bubbles: true }));
      return;
    }
    remember(event);
    target.replaceWith(incoming);
    enhance(incoming);
    incoming.dispatchEvent(new CustomEvent("canvas:swapped", { bubbles: true }));
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    enhance(event.target);
  });
})();

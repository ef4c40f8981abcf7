// The editor's Test panel: picking a sample fills the input; Alt+Shift+T starts a test run;
// the nodes the panel lists as pinned are drawn pinned on the canvas (class "pinned"); and the
// latest test run is painted over the draft (#test-results-data, editor/services/test_results.py):
// each node it reached filled by its state, with the state in words above it, the edges it
// walked drawn thick, all greyed while the run tested another revision than the draft's.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var SIGNS = { running: "●", done: "✓", skipped: "–", waiting: "‖", failed: "✗", stopped: "■" };
  var STATES = Object.keys(SIGNS);

  // A canvas node's id and level from its link: ?node=<id>&in=<owner>… (the DOT id, in its
  // <title>, is another name).
  function placeOf(group) {
    var link = group.querySelector("a");
    var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
    if (!href) return null;
    var query = new URL(href, window.location.href).searchParams;
    var id = query.get("node");
    return id === null ? null : { id: id, level: query.getAll("in") };
  }

  function key(level, id) {
    return JSON.stringify([level, id]);
  }

  function markPinned() {
    var pinned = new Set();
    document.querySelectorAll("#pin-list [data-pinned-node]").forEach(function (item) {
      pinned.add(item.getAttribute("data-pinned-node"));
    });
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var place = placeOf(group);
      var top = place !== null && place.level.length === 0;
      group.classList.toggle("pinned", Boolean(top && pinned.has(place.id)));
    });
  }

  function results() {
    var source = document.getElementById("test-results-data");
    if (!source) return null;
    try {
      var data = JSON.parse(source.textContent);
      data.text = source.textContent;
      return data;
    } catch (error) {
      return null;
    }
  }

  // The results each drawing was last painted with (its data's text).
  var paintedWith = new WeakMap();

  function unpaint(svg) {
    svg.querySelectorAll(".test-badge").forEach(function (badge) {
      badge.remove();
    });
    svg.querySelectorAll("g.node.test-mark, g.edge.test-walked").forEach(function (group) {
      group.classList.remove("test-mark", "test-walked");
      STATES.forEach(function (state) {
        group.classList.remove("test-" + state);
      });
    });
  }

  function badge(group, mark) {
    var shape = group.querySelector("polygon, ellipse, path");
    if (!shape || !shape.getBBox) return;
    var box = shape.getBBox();
    var text = document.createElementNS(SVG, "text");
    text.setAttribute("class", "test-badge");
    text.setAttribute("x", String(box.x + box.width / 2));
    text.setAttribute("y", String(box.y - 4));
    text.setAttribute("text-anchor", "middle");
    text.textContent = SIGNS[mark.state] + " " + mark.state + (mark.note ? " · " + mark.note : "");
    (group.querySelector("a") || group).appendChild(text);
  }

  // The drawing's revision now (every edit answer replaces #draft-revision).
  function draftRevision(data) {
    var input = document.getElementById("draft-revision");
    return input ? Number(input.value) : data.draft_revision;
  }

  function paintResults() {
    var svg = document.querySelector("#canvas-panel svg");
    var figure = document.querySelector("#canvas-panel [data-canvas]");
    if (!svg || !figure) return;
    var data = results();
    var older = Boolean(data && data.revision !== null && data.revision !== draftRevision(data));
    figure.classList.toggle("test-older", older);
    document.querySelectorAll("[data-test-older]").forEach(function (note) {
      note.hidden = !older;
    });
    if (!data) {
      unpaint(svg);
      paintedWith.delete(svg);
      svg.removeAttribute("data-test-painted");
      return;
    }
    // Most answers (a keystroke in a form) leave the drawing and the results as they were:
    // repaint only when either changed (a drawing patched in place loses its marks on the
    // items it redrew, so the marks are counted too).
    if (
      paintedWith.get(svg) === data.text &&
      svg.querySelectorAll("g.node.test-mark").length === Number(svg.getAttribute("data-test-nodes")) &&
      svg.querySelectorAll("g.edge.test-walked").length === Number(svg.getAttribute("data-test-edges"))
    ) {
      return;
    }
    unpaint(svg);
    var marks = {};
    data.marks.forEach(function (mark) {
      marks[key(mark.in, mark.node)] = mark;
    });
    var walked = new Set(
      data.walked.map(function (edge) {
        return JSON.stringify([edge.in, edge.from, edge.to, edge.label]);
      })
    );
    var places = {};
    var painted = 0;
    svg.querySelectorAll("g.node").forEach(function (group) {
      var place = placeOf(group);
      var title = group.querySelector("title");
      if (!place) return;
      if (title) places[title.textContent] = place;
      var mark = marks[key(place.level, place.id)];
      if (!mark) return;
      group.classList.add("test-mark", "test-" + mark.state);
      badge(group, mark);
      painted += 1;
    });
    svg.querySelectorAll("g.edge").forEach(function (group) {
      var title = group.querySelector("title");
      var ends = title ? title.textContent.split("->") : [];
      var from = places[ends[0]];
      var to = places[ends[1]];
      if (!from || !to || key(from.level, "") !== key(to.level, "")) return;
      var label = group.querySelector("text");
      var text = label ? label.textContent : null;
      if (walked.has(JSON.stringify([from.level, from.id, to.id, text]))) {
        group.classList.add("test-walked");
      }
    });
    // What the page shows now, for the browser tests and the benchmark: the run and how many
    // of its nodes are painted.
    svg.setAttribute("data-test-painted", data.run + " " + data.state + " " + painted);
    paintedWith.set(svg, data.text);
    svg.setAttribute("data-test-nodes", String(painted));
    svg.setAttribute("data-test-edges", String(svg.querySelectorAll("g.edge.test-walked").length));
  }

  function refresh() {
    markPinned();
    paintResults();
  }

  // The typed input's fields are for a run without a sample: shown only while none is chosen.
  function showFields() {
    var select = document.getElementById("test-sample");
    var fields = document.querySelector("[data-sample-fields]");
    if (fields) {
      fields.hidden = Boolean(select && select.value);
    }
  }

  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select && select.id === "test-sample") showFields();
    if (!select || select.id !== "test-sample" || !select.value) return;
    var samples = JSON.parse(select.getAttribute("data-test-samples") || "{}");
    var input = document.getElementById("test-input");
    if (input && Object.prototype.hasOwnProperty.call(samples, select.value)) {
      input.value = JSON.stringify(samples[select.value], null, 2);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey && event.shiftKey && (event.code === "KeyT" || event.key === "T" || event.key === "t")) {
      var button = document.getElementById("test-run-button");
      if (button && !button.disabled) {
        event.preventDefault();
        button.click();
      }
    }
  });

  document.addEventListener("htmx:afterSettle", refresh);
  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:afterSettle", showFields);
  document.addEventListener("DOMContentLoaded", showFields);
})();

// The editor page's small extras, where htmx cannot do it alone (spec 06, Look):
// a click on a canvas node fetches that node's form; the canvas marks the node whose form is
// open; each edit tells the server which canvas and lists the page shows, so the answer leaves
// out the unchanged ones; JSON text areas are checked for syntax as you type (the server checks
// them again); the edge label offers the chosen branch's cases.
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

  // Every edit posts the keys of the canvas and the node and edge lists shown now; the answer
  // re-sends a piece only when its key changed (editor/views/editor.py, _leave_out_shown).
  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.verb !== "post" || !document.getElementById("editor")) {
      return;
    }
    var canvas = document.querySelector("#canvas-panel [data-canvas]");
    var lists = document.getElementById("node-list");
    if (canvas && canvas.dataset.key) {
      event.detail.parameters.shown_canvas = canvas.dataset.key;
    }
    if (lists && lists.dataset.key) {
      event.detail.parameters.shown_structure = lists.dataset.key;
    }
    // The whole JSON text comes back only while it is shown; opening it fetches it afresh.
    var json = document.getElementById("json");
    if (json && !json.open) {
      event.detail.parameters.json_hidden = "1";
    }
  });

  // The node whose form is open, or null. After a rename the form's hidden key has the new id
  // (answers replace it in place) before the panel is drawn again.
  function selectedNode() {
    var key = document.querySelector("#node-panel #node-key");
    if (key) {
      return key.value;
    }
    var panel = document.getElementById("node-panel");
    return panel && panel.dataset.nodeId !== undefined ? panel.dataset.nodeId : null;
  }

  // Canvas nodes link to ?node=<id> (nodes inside a subgraph link to their owner, whose form
  // edits them); the top-level node with the open form gets the class "selected".
  function markSelected() {
    var selected = selectedNode();
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var link = group.querySelector("a");
      var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
      var match = false;
      if (href && selected !== null && group.classList.contains("top-level")) {
        match = new URL(href, window.location.href).searchParams.get("node") === selected;
      }
      group.classList.toggle("selected", match);
    });
  }

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

  // The label of a new edge: only the source branch's case names, and no label field at all
  // when the source is not a branch. Without this script every branch's cases are offered.
  function narrowLabels(select) {
    var field = document.getElementById("edge-label-field");
    var label = document.getElementById("add-edge-label");
    if (!field || !label) {
      return;
    }
    var mine = null;
    label.querySelectorAll("optgroup").forEach(function (group) {
      var match = group.dataset.branch === select.value;
      group.hidden = !match;
      group.disabled = !match;
      if (match) {
        mine = group;
      }
    });
    field.hidden = mine === null;
    var chosen = label.selectedOptions[0];
    if (mine === null) {
      label.value = "";
    } else if (!chosen || chosen.parentElement !== mine) {
      var first = mine.querySelector("option");
      label.value = first ? first.value : "";
    }
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-edge-from]")) {
      narrowLabels(event.target);
    }
  });

  // The JSON text's line numbers, kept beside it as it is typed and scrolled, and the button
  // that puts the caret where a syntax error is.
  function numberLines() {
    var area = document.querySelector("textarea[data-line-numbers]");
    var gutter = document.getElementById("json-lines");
    if (!area || !gutter) {
      return;
    }
    var count = area.value.split("\n").length;
    if (gutter.dataset.count !== String(count)) {
      var lines = [];
      for (var number = 1; number <= count; number += 1) {
        lines.push(number);
      }
      gutter.textContent = lines.join("\n");
      gutter.dataset.count = String(count);
    }
    gutter.scrollTop = area.scrollTop;
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-line-numbers]")) {
      numberLines();
    }
  });
  document.addEventListener(
    "scroll",
    function (event) {
      if (event.target.matches && event.target.matches("textarea[data-line-numbers]")) {
        numberLines();
      }
    },
    true
  );

  document.addEventListener("click", function (event) {
    var jump = event.target.closest && event.target.closest("[data-json-jump]");
    var area = document.querySelector("textarea[data-line-numbers]");
    if (!jump || !area) {
      return;
    }
    var line = parseInt(jump.dataset.line, 10);
    var column = parseInt(jump.dataset.column, 10);
    var lines = area.value.split("\n");
    var offset = 0;
    for (var index = 0; index < line - 1 && index < lines.length; index += 1) {
      offset += lines[index].length + 1;
    }
    offset = Math.min(area.value.length, offset + Math.max(0, column - 1));
    var details = area.closest("details");
    if (details) {
      details.open = true;
    }
    area.focus();
    area.setSelectionRange(offset, offset);
    // Scroll the line into view: its share of the text's height.
    area.scrollTop = Math.max(0, (area.scrollHeight * (line - 1)) / lines.length - area.clientHeight / 3);
    numberLines();
  });

  // Undo and Redo from the keyboard, outside text fields (where the browser's own undo works):
  // Ctrl+Z (Cmd+Z), Ctrl+Shift+Z or Ctrl+Y.
  function isTextField(element) {
    if (!element || !element.matches) {
      return false;
    }
    return element.matches("textarea, select, [contenteditable], input:not([type=button]):not([type=submit]):not([type=radio]):not([type=checkbox]):not([type=hidden])");
  }

  document.addEventListener("keydown", function (event) {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || isTextField(event.target)) {
      return;
    }
    var key = event.key.toLowerCase();
    var id = null;
    if (key === "z") {
      id = event.shiftKey ? "redo-button" : "undo-button";
    } else if (key === "y" && !event.shiftKey) {
      id = "redo-button";
    }
    var button = id && document.getElementById(id);
    if (!button) {
      return;
    }
    event.preventDefault();
    if (!button.disabled) {
      button.click();
    }
  });

  // Saving… / Saved hh:mm / Not saved — retry: what the person's last change became. Every edit
  // of the editor is an htmx POST; its answer says whether it was saved.
  var lastForm = null;
  function saveState(text, state) {
    var element = document.getElementById("save-state");
    if (!element) {
      return;
    }
    element.dataset.state = state;
    element.textContent = "";
    element.append(document.createTextNode(text));
    if (state === "failed" && lastForm) {
      var retry = document.createElement("button");
      retry.type = "button";
      retry.className = "link-button";
      retry.id = "save-retry";
      retry.textContent = "retry";
      retry.addEventListener("click", function () {
        var form = lastForm;
        if (form && document.body.contains(form)) {
          saveState("Saving…", "saving");
          window.htmx.trigger(form, "submit");
        }
      });
      element.append(" — ", retry);
    }
  }

  function isEdit(event) {
    var config = event.detail.requestConfig || event.detail;
    return (config.verb || "").toLowerCase() === "post" && document.getElementById("editor");
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (isEdit(event)) {
      lastForm = event.detail.elt && event.detail.elt.closest ? event.detail.elt.closest("form") : null;
      saveState("Saving…", "saving");
    }
  });
  // A request that never got an answer (the network, the server gone).
  document.addEventListener("htmx:sendError", function (event) {
    if (isEdit(event)) {
      saveState("Not saved", "failed");
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!isEdit(event)) {
      return;
    }
    if (event.detail.successful) {
      // The answer has settled by the time this runs for oob swaps; a stale answer saved nothing.
      if (document.querySelector("#stale [role=alert], #stale .stale-panel")) {
        saveState("Not saved: this draft changed elsewhere", "failed-stale");
        return;
      }
      var now = new Date();
      var time = String(now.getHours()).padStart(2, "0") + ":" + String(now.getMinutes()).padStart(2, "0");
      saveState("Saved " + time, "saved");
    } else {
      saveState("Not saved", "failed");
    }
  });

  // Canvas nodes by node id (top-level ones link to ?node=<id>).
  function canvasNodes() {
    var found = [];
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var link = group.querySelector("a");
      var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
      var id = href ? new URL(href, window.location.href).searchParams.get("node") : null;
      var title = group.querySelector("a") && group.querySelector("a").getAttribute("xlink:title");
      found.push({ group: group, id: id, text: (group.textContent || "") + " " + (title || "") });
    });
    return found;
  }

  function centreNode(id) {
    if (!window.gatehouseCanvas) {
      return false;
    }
    var match = canvasNodes().find(function (node) {
      return node.id === id && node.group.classList.contains("top-level");
    });
    return match ? window.gatehouseCanvas.centre("canvas", match.group) : false;
  }

  // Choosing a node in the list brings it into view on the canvas, marked.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("#node-list a[href*='node=']");
    if (link) {
      centreNode(new URL(link.href, window.location.href).searchParams.get("node"));
    }
  });

  // Find a node by id or name: the first match is centred and marked; Enter goes to the next.
  var findState = { query: "", index: -1 };
  function find(next) {
    var input = document.getElementById("canvas-find");
    var result = document.getElementById("canvas-find-result");
    if (!input || !result) {
      return;
    }
    var query = input.value.trim().toLowerCase();
    if (!query) {
      result.textContent = "";
      return;
    }
    var matches = canvasNodes().filter(function (node) {
      return (node.id || "").toLowerCase().includes(query) || node.text.toLowerCase().includes(query);
    });
    if (query !== findState.query) {
      findState = { query: query, index: -1 };
    }
    if (!matches.length) {
      result.textContent = "No node matches.";
      return;
    }
    findState.index = next ? (findState.index + 1) % matches.length : 0;
    var chosen = matches[findState.index];
    window.gatehouseCanvas.centre("canvas", chosen.group);
    result.textContent =
      (findState.index + 1) + " of " + matches.length + (chosen.id ? ": " + chosen.id : "");
  }

  document.addEventListener("input", function (event) {
    if (event.target.id === "canvas-find") {
      find(false);
    }
  });
  document.addEventListener("submit", function (event) {
    if (event.target.id === "canvas-search" && window.gatehouseCanvas) {
      event.preventDefault();
      find(true);
    }
  });
  // "/" or Ctrl+F on the canvas goes to Find.
  document.addEventListener("keydown", function (event) {
    var onCanvas = event.target.closest && event.target.closest("#canvas-panel");
    if (!onCanvas) {
      return;
    }
    var slash = event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey;
    var ctrlF = (event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "f";
    if (slash || ctrlF) {
      var input = document.getElementById("canvas-find");
      if (input) {
        event.preventDefault();
        input.focus();
        input.select();
      }
    }
  });

  // --- Keyboard: one tab stop on the canvas, arrows along the edges, focus into the form ----

  // The canvas's nodes and edges by DOT id, from the SVG (a node's <title> is its DOT id, an
  // edge's is "tail->head").
  function graphOf() {
    var nodes = {};
    var next = {};
    var previous = {};
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var title = group.querySelector("title");
      if (title) {
        nodes[title.textContent] = group;
      }
    });
    document.querySelectorAll("#canvas-panel svg g.edge > title").forEach(function (title) {
      var ends = title.textContent.split("->");
      if (ends.length === 2) {
        (next[ends[0]] = next[ends[0]] || []).push(ends[1]);
        (previous[ends[1]] = previous[ends[1]] || []).push(ends[0]);
      }
    });
    return { nodes: nodes, next: next, previous: previous };
  }

  function linkOf(group) {
    return group ? group.querySelector("a") : null;
  }

  // Only one canvas node is a tab stop (the open one, else the first): the rest are reached
  // with the arrow keys, so Tab goes past a large canvas at once.
  function roveCanvas() {
    var links = document.querySelectorAll("#canvas-panel svg g.node a");
    if (!links.length) {
      return;
    }
    var chosen = document.querySelector("#canvas-panel svg g.node.selected a") || links[0];
    links.forEach(function (link) {
      link.setAttribute("tabindex", link === chosen ? "0" : "-1");
    });
  }

  function focusCanvasNode(group) {
    var link = linkOf(group);
    if (!link) {
      return;
    }
    document.querySelectorAll("#canvas-panel svg g.node a[tabindex='0']").forEach(function (other) {
      other.setAttribute("tabindex", "-1");
    });
    link.setAttribute("tabindex", "0");
    link.focus();
    if (window.gatehouseCanvas) {
      window.gatehouseCanvas.centre("canvas", group);
    }
  }

  document.addEventListener("keydown", function (event) {
    var link = event.target.closest && event.target.closest("#canvas-panel svg g.node a");
    if (!link || event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    var arrows = { ArrowRight: "next", ArrowLeft: "previous", ArrowDown: 1, ArrowUp: -1 };
    if (!(event.key in arrows)) {
      return;
    }
    event.preventDefault();
    var graph = graphOf();
    var here = link.closest("g.node").querySelector("title").textContent;
    var way = arrows[event.key];
    var target = null;
    if (way === "next" || way === "previous") {
      target = (graph[way][here] || [])[0];
    } else {
      // Up and down: the other nodes that share this one's first predecessor (or successor).
      var parent = (graph.previous[here] || [])[0];
      var siblings = parent ? graph.next[parent] : null;
      if (!siblings || siblings.length < 2) {
        var child = (graph.next[here] || [])[0];
        siblings = child ? graph.previous[child] : null;
      }
      if (siblings && siblings.length > 1) {
        var index = siblings.indexOf(here);
        target = siblings[(index + way + siblings.length) % siblings.length];
      }
    }
    if (target && graph.nodes[target]) {
      focusCanvasNode(graph.nodes[target]);
    }
  });

  // A node chosen (on the canvas, in the list, from an error) opens its form with the focus in
  // it; Escape in the form goes back to that node on the canvas.
  var focusForm = false;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var config = event.detail.requestConfig || {};
    var path = (config.path || "") + "";
    focusForm = (config.verb || "").toLowerCase() === "get" && path.indexOf("node=") !== -1;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!focusForm || !event.target || event.target.id !== "node-panel") {
      return;
    }
    focusForm = false;
    var first = event.target.querySelector("#node-form input:not([type=hidden]), #node-form select, #node-form textarea");
    (first || event.target).focus();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !event.target.closest || !event.target.closest("#node-panel")) {
      return;
    }
    var id = selectedNode();
    var match = canvasNodes().find(function (node) {
      return node.id === id && node.group.classList.contains("top-level");
    });
    if (match) {
      event.preventDefault();
      focusCanvasNode(match.group);
    }
  });

  // The palette adds next to the node whose form is open now.
  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("#canvas-actions")) {
      event.detail.parameters.after = selectedNode() || "";
    }
  });

  // --- Direct manipulation: connect two nodes, delete with Delete, add with N --------------

  // The node id of a canvas node group (its link's "kind node <id>" title), or null.
  function idOf(group) {
    var link = group && group.querySelector("a");
    var title = link && link.getAttribute("xlink:title");
    return title ? title.replace(/^\S+ node /, "") : null;
  }

  function kindOf(group) {
    var link = group && group.querySelector("a");
    var title = link && link.getAttribute("xlink:title");
    return title ? title.split(" ")[0] : null;
  }

  // The form that adds an edge does the work, so that the canvas and the form stay one path.
  function connect(source, target) {
    var form = document.getElementById("add-edge-form");
    if (!form || !source || !target) {
      return;
    }
    var from = idOf(source);
    var to = idOf(target);
    form.querySelector("[name=from]").value = from;
    form.querySelector("[name=to]").value = to;
    narrowLabels(form.querySelector("[name=from]"));
    var label = form.querySelector("[name=label]");
    label.value = "";
    var status = document.getElementById("connect-status");
    if (kindOf(source) === "branch") {
      var group = label.querySelector('optgroup[data-branch="' + CSS.escape(from) + '"]');
      var names = group ? Array.from(group.querySelectorAll("option")).map(function (o) { return o.value; }) : [];
      var dialog = document.getElementById("connect-label");
      var select = document.getElementById("connect-case");
      if (!dialog || !names.length) {
        form.requestSubmit();
        return;
      }
      select.textContent = "";
      names.forEach(function (name) {
        var option = document.createElement("option");
        option.value = name;
        option.textContent = name;
        select.append(option);
      });
      dialog.returnValue = "";
      dialog.addEventListener(
        "close",
        function () {
          if (dialog.returnValue === "ok") {
            label.value = select.value;
            form.requestSubmit();
            if (status) {
              status.textContent = "Connected " + from + " → " + to + " (" + select.value + ").";
            }
          }
        },
        { once: true }
      );
      dialog.showModal();
      return;
    }
    form.requestSubmit();
    if (status) {
      status.textContent = "Connected " + from + " → " + to + ".";
    }
  }

  // Connect by clicks: Connect, then the source, then the target.
  var connecting = null; // null: off; {source: null|group}
  function setConnecting(on) {
    var button = document.getElementById("connect-button");
    var status = document.getElementById("connect-status");
    connecting = on ? { source: null } : null;
    if (button) {
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
    if (status) {
      status.textContent = on ? "Connect: choose the node the edge comes from." : "";
    }
  }
  document.addEventListener("click", function (event) {
    if (event.target.id === "connect-button") {
      setConnecting(!connecting);
      return;
    }
    if (!connecting) {
      return;
    }
    var group = event.target.closest && event.target.closest("#canvas-panel svg g.node.top-level");
    if (!group) {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!connecting.source) {
      connecting.source = group;
      group.classList.add("found");
      document.getElementById("connect-status").textContent =
        "Connect " + idOf(group) + " to: choose the node the edge goes to.";
      return;
    }
    var source = connecting.source;
    source.classList.remove("found");
    setConnecting(false);
    connect(source, group);
  }, true);

  // Connect by dragging from one node to another (a drag that starts on the background pans).
  var drag = null;
  document.addEventListener("mousedown", function (event) {
    var group = event.button === 0 && event.target.closest && event.target.closest("#canvas-panel svg g.node.top-level");
    if (!group || connecting || !document.getElementById("add-edge-form")) {
      return;
    }
    drag = { source: group, x: event.clientX, y: event.clientY, moved: false };
    event.stopPropagation(); // not a pan
  }, true);
  document.addEventListener("mousemove", function (event) {
    if (drag && Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) > 6) {
      drag.moved = true;
    }
  });
  document.addEventListener("mouseup", function (event) {
    var started = drag;
    drag = null;
    if (!started || !started.moved) {
      return;
    }
    var target = event.target.closest && event.target.closest("#canvas-panel svg g.node.top-level");
    if (target && target !== started.source) {
      // The click that follows the drag must not open the target's form.
      document.addEventListener("click", function (click) {
        click.preventDefault();
        click.stopImmediatePropagation();
      }, { capture: true, once: true });
      connect(started.source, target);
    }
  });

  // Delete deletes the chosen node (its form's Delete, which can be undone); N goes to the
  // palette that adds a node next to it.
  document.addEventListener("keydown", function (event) {
    var onCanvas = event.target.closest && event.target.closest("#canvas-panel");
    if (!onCanvas || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (event.key === "Delete") {
      var form = document.querySelector("#delete-node form");
      var focused = event.target.closest("g.node");
      if (form && (!focused || idOf(focused) === selectedNode())) {
        event.preventDefault();
        form.requestSubmit();
      }
    } else if (event.key === "n" || event.key === "N") {
      var first = document.querySelector("[data-palette]");
      if (first) {
        event.preventDefault();
        first.focus();
      }
    }
  });

  function enhance() {
    var select = document.querySelector("[data-edge-from]");
    if (select) {
      narrowLabels(select);
    }
    document.querySelectorAll("[data-json-jump]").forEach(function (button) {
      button.hidden = false;
    });
    numberLines();
    markSelected();
    roveCanvas();
    var connectButton = document.getElementById("connect-button");
    if (connectButton) {
      connectButton.hidden = false;
    }
  }

  document.addEventListener(
    "toggle",
    function (event) {
      var json = event.target;
      if (json.id !== "json" || !json.open || typeof window.htmx === "undefined") {
        return;
      }
      var area = document.getElementById("json-text");
      if (!document.getElementById("editor") || !area || area.readOnly) {
        return;
      }
      // Read-only until the current text arrives, so nothing is typed into an old one.
      area.readOnly = true;
      window.htmx
        .ajax("GET", window.location.pathname + "?json=1", { target: "#json-text", swap: "outerHTML" })
        .finally(function () {
          var now = document.getElementById("json-text");
          if (now === area) {
            area.readOnly = false;
          }
          numberLines();
        });
    },
    true
  );

  document.addEventListener("DOMContentLoaded", enhance);
  document.addEventListener("htmx:afterSettle", enhance);
  document.addEventListener("canvas:swapped", enhance);
})();

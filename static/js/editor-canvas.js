// The editor's canvas, beyond pan and zoom (canvas.js): finding a node and bringing a node
// chosen in the list into view; the keyboard (one tab stop on the canvas, the arrow keys along
// the edges, focus into the form of a node chosen and Escape back to it); and direct
// manipulation (Connect by clicks or by dragging from node to node, Delete, N and the palette).
// Every change still goes through the page's forms, which work without this script.
(function () {
  "use strict";

  function selectedNode() {
    return window.gatehouseEditor ? window.gatehouseEditor.selectedNode() : null;
  }

  function narrowLabels(select) {
    if (window.gatehouseEditor) {
      window.gatehouseEditor.narrowLabels(select);
    }
  }

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
      var index = link === chosen ? "0" : "-1";
      if (link.getAttribute("tabindex") !== index) {
        link.setAttribute("tabindex", index);
      }
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
  // it: on the field an error, a held field or a hint is about (data-focus), else on the first;
  // Escape in the form goes back to that node on the canvas.
  var focusForm = false;
  var focusField = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var config = event.detail.requestConfig || {};
    var path = (config.path || "") + "";
    var target = event.detail.target;
    if (!target || target.id !== "node-panel") {
      return; // not a node's form (the node's test result loads beside it, for one)
    }
    focusForm = (config.verb || "").toLowerCase() === "get" && path.indexOf("node=") !== -1;
    var elt = event.detail.elt;
    focusField = focusForm && elt && elt.dataset ? elt.dataset.focus || null : null;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!focusForm || !event.target || event.target.id !== "node-panel") {
      return;
    }
    focusForm = false;
    var wanted = focusField ? document.getElementById(focusField) : null;
    focusField = null;
    if (wanted && !wanted.disabled) {
      wanted.focus();
      if (wanted.scrollIntoView) {
        wanted.scrollIntoView({ block: "center" });
      }
      return;
    }
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
        submitConnect(form, from, to, null);
        return;
      }
      // The cases without an edge first, the first of them chosen; a case that has its edge
      // already is offered last and says so.
      var routed = routedCases(from);
      var unused = names.filter(function (name) { return routed.indexOf(name) === -1; });
      var used = names.filter(function (name) { return routed.indexOf(name) !== -1; });
      select.textContent = "";
      unused.concat(used).forEach(function (name) {
        var option = document.createElement("option");
        option.value = name;
        option.textContent = routed.indexOf(name) === -1 ? name : name + " (has an edge already)";
        select.append(option);
      });
      select.value = unused.length ? unused[0] : "";
      if (!unused.length) {
        select.selectedIndex = -1;
      }
      dialog.returnValue = "";
      dialog.addEventListener(
        "close",
        function () {
          if (dialog.returnValue === "ok" && select.value) {
            label.value = select.value;
            submitConnect(form, from, to, select.value);
          } else if (dialog.returnValue === "ok" && status) {
            status.textContent = "Not connected: choose the case the edge is for.";
          }
        },
        { once: true }
      );
      dialog.showModal();
      return;
    }
    submitConnect(form, from, to, null);
  }

  function routedCases(branch) {
    return window.gatehouseEditor ? window.gatehouseEditor.routedCases(branch) : [];
  }

  // Add the edge, then say how it went: connected, or why not (an edge that is there already).
  function submitConnect(form, from, to, caseName) {
    var status = document.getElementById("connect-status");
    var what = from + " → " + to + (caseName ? " (" + caseName + ")" : "");
    form.addEventListener(
      "htmx:afterRequest",
      function () {
        var refused = document.querySelector("#add-edge-error .field-error");
        if (status) {
          status.textContent = refused ? "Not connected: " + refused.textContent + "." : "Connected " + what + ".";
        }
      },
      { once: true }
    );
    form.requestSubmit();
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
    if (event.key === "Delete" && selectedEdge) {
      var edgeForm = edgeDeleteForm(selectedEdge);
      if (edgeForm) {
        event.preventDefault();
        selectedEdge = null;
        edgeForm.requestSubmit();
      }
    } else if (event.key === "Delete") {
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

  // An edge clicked on the canvas is chosen (outlined); Delete then deletes it, through its
  // row's Delete edge in the edge list. A click anywhere else lets it go.
  var selectedEdge = null;
  function nodeIdsByDotId() {
    var ids = {};
    document.querySelectorAll("#canvas-panel svg g.node.top-level").forEach(function (group) {
      var title = group.querySelector("title");
      if (title) {
        ids[title.textContent] = idOf(group);
      }
    });
    return ids;
  }

  function edgeDeleteForm(edge) {
    var found = null;
    document.querySelectorAll("#edge-list li.edge").forEach(function (row) {
      var ends = row.querySelectorAll(":scope > code");
      if (!found && ends.length === 2 && ends[0].textContent === edge.from && ends[1].textContent === edge.to) {
        found = row.querySelector("form");
      }
    });
    return found;
  }

  document.addEventListener("click", function (event) {
    document.querySelectorAll("#canvas-panel svg g.edge.chosen").forEach(function (other) {
      other.classList.remove("chosen");
    });
    var group = event.target.closest && event.target.closest("#canvas-panel svg g.edge");
    selectedEdge = null;
    if (!group) {
      return;
    }
    var title = group.querySelector("title");
    var ends = title ? title.textContent.split("->") : [];
    var ids = nodeIdsByDotId();
    if (ends.length === 2 && ids[ends[0]] && ids[ends[1]]) {
      selectedEdge = { from: ids[ends[0]], to: ids[ends[1]] };
      group.classList.add("chosen");
      var status = document.getElementById("connect-status");
      if (status) {
        status.textContent = "Edge " + selectedEdge.from + " → " + selectedEdge.to + " chosen: Delete deletes it.";
      }
    }
  });

  // The nodes this page edits are those of its level: the top, or a body opened on its own
  // (?in=<owner>). The server marks the top level's nodes "top-level"; on a body's page the
  // mark moves to the body's nodes, so that connecting, dragging, the arrows and choosing an
  // edge work there as at the top.
  function markLevel() {
    var form = document.getElementById("canvas-actions") || document.getElementById("add-node-form");
    if (!form) {
      return;
    }
    var level = Array.from(form.querySelectorAll("input[name=in]")).map(function (input) {
      return input.value;
    });
    if (!level.length) {
      return;
    }
    var wanted = JSON.stringify(level);
    document.querySelectorAll("#canvas-panel svg g.node").forEach(function (group) {
      var link = group.querySelector("a");
      var href = link && (link.getAttribute("href") || link.getAttribute("xlink:href"));
      var here = href ? JSON.stringify(new URL(href, window.location.href).searchParams.getAll("in")) : "";
      group.classList.toggle("top-level", here === wanted);
    });
  }

  function enhance() {
    markLevel();
    roveCanvas();
    var connectButton = document.getElementById("connect-button");
    if (connectButton) {
      connectButton.hidden = false;
    }
  }

  // Once per answer, not once per element it swapped in (see editor.js).
  window.gatehouseEditor.afterSwaps(enhance);
})();

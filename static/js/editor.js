// The editor page's small extras, where htmx cannot do it alone (spec 06, Look):
// a click on a canvas node fetches that node's form; the canvas marks the node whose form is
// open; each edit tells the server which canvas and lists the page shows, so the answer leaves
// out the unchanged ones; the edge label offers the chosen branch's cases. (JSON text areas are
// checked for syntax as you type by json-check.js.)
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
    // Every form posts the page's revision: answers replace only #draft-revision (one input,
    // not one per form: a large graph has hundreds of forms, one per edge).
    var revision = document.getElementById("draft-revision");
    if (revision && "revision" in event.detail.parameters) {
      event.detail.parameters.revision = revision.value;
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
  // Nor may the current text fetched on opening the JSON panel replace what was typed into it
  // before it arrived (the save says so if the typing was based on an older text).
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (target && target.id === "json-text" && target.value !== target.defaultValue) {
      event.detail.shouldSwap = false;
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
      // The first case without an edge yet (a case that has its edge is not preselected).
      var routed = routedCases(select.value);
      var options = Array.from(mine.querySelectorAll("option"));
      var first = options.find(function (option) { return routed.indexOf(option.value) === -1; }) || options[0];
      label.value = first ? first.value : "";
    }
  }

  // The cases of a branch that have an edge, read from the edge list ("[case]" after its ends).
  function routedCases(branch) {
    var found = [];
    document.querySelectorAll("#edge-list li.edge").forEach(function (row) {
      var ends = row.querySelectorAll(":scope > code");
      var label = row.querySelector(":scope > .edge-label");
      if (ends.length === 2 && ends[0].textContent === branch && label) {
        found.push(label.textContent.replace(/^\[/, "").replace(/\]$/, ""));
      }
    });
    return found;
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

  // A post that changes the draft (the Test panel's and the node's test results' do not: they
  // run it, and say how it went in place).
  function isEdit(event) {
    var config = event.detail.requestConfig || event.detail;
    var elt = event.detail.elt;
    if (elt && elt.closest && elt.closest("#test-panel, #node-result")) {
      return false;
    }
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

  // For editor-canvas.js (the canvas's keyboard, find and direct manipulation).
  window.gatehouseEditor = {
    selectedNode: selectedNode,
    narrowLabels: narrowLabels,
    routedCases: routedCases,
    afterSwaps: afterSwaps,
  };

  // The forms' own revision inputs follow the page's (they are what a form posts without this
  // script's help, and what a form read before an answer arrived holds).
  function syncRevisions() {
    var revision = document.getElementById("draft-revision");
    if (!revision) {
      return;
    }
    document.querySelectorAll("input.draft-revision").forEach(function (input) {
      if (input.value !== revision.value) {
        input.value = revision.value;
      }
    });
  }

  // A control whose errors (an element it names in aria-describedby) say something is marked
  // aria-invalid, and unmarked once they are empty: answers replace the errors in place while
  // the person types. Only marks this file made are taken off (json-check.js makes its own).
  function markInvalid() {
    document.querySelectorAll("#editor [aria-describedby]").forEach(function (control) {
      if (!control.matches("input, select, textarea")) {
        return;
      }
      var wrong = control
        .getAttribute("aria-describedby")
        .split(/\s+/)
        .some(function (id) {
          var said = id && document.getElementById(id);
          return Boolean(said && said.querySelector(".field-error"));
        });
      if (wrong) {
        control.setAttribute("aria-invalid", "true");
        control.dataset.invalidByErrors = "1";
      } else if (control.dataset.invalidByErrors) {
        control.removeAttribute("aria-invalid");
        delete control.dataset.invalidByErrors;
      }
    });
  }

  // The control an answer names for the focus (autofocus: the row a button added or moved,
  // the builder drawn again) takes it; htmx focuses it only in the target of a swap, and the
  // node panel comes out of band. Taken once: the attribute goes.
  // Else a control replaced while it had the focus (a select that redrew its form) gives it
  // to its namesake in the new drawing. ("Lost": on the page's body, or on nothing.)
  var focusedId = null;
  function noteFocus(event) {
    var target = event.detail && event.detail.target;
    var active = document.activeElement;
    if (target && active && active.id && active !== document.body && target.contains(active)) {
      focusedId = active.id;
    }
  }
  document.addEventListener("htmx:oobBeforeSwap", noteFocus);
  document.addEventListener("htmx:beforeSwap", noteFocus);

  function takeFocus() {
    var wanted = document.querySelector("#editor [autofocus]");
    var lost = !document.activeElement || document.activeElement === document.body;
    function usable(element) {
      return Boolean(element) && !element.disabled && element.getClientRects().length > 0;
    }
    if (!wanted && lost && focusedId && usable(document.getElementById(focusedId))) {
      wanted = document.getElementById(focusedId);
    }
    // Else, when what had the focus went with the answer (a node or an edge deleted, Undo
    // with nothing left to undo), the first of the controls that take it back: Redo, or the
    // notice's Undo.
    if (!wanted && lost) {
      wanted = Array.from(document.querySelectorAll("#editor [data-focus-if-lost]")).find(usable) || null;
    }
    focusedId = null;
    if (!wanted) {
      return;
    }
    wanted.removeAttribute("autofocus");
    if (document.activeElement !== wanted) {
      wanted.focus();
    }
  }

  function enhance() {
    syncRevisions();
    markInvalid();
    takeFocus();
    var select = document.querySelector("[data-edge-from]");
    if (select) {
      narrowLabels(select);
    }
    document.querySelectorAll("[data-json-jump]").forEach(function (button) {
      button.hidden = false;
    });
    // The JSON text is long on a large graph: its lines are counted while it is shown (and
    // when it is opened).
    var json = document.getElementById("json");
    if (!json || json.open) {
      numberLines();
    }
    markSelected();
  }

  document.addEventListener(
    "toggle",
    function (event) {
      var json = event.target;
      if (json.id !== "json" || !json.open) {
        return;
      }
      numberLines();
      if (typeof window.htmx === "undefined") {
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

  // `enhancer` runs when the page is loaded, then once per answer: htmx fires afterSettle once
  // per element an answer swapped in, and the page is enhanced once, after the last of them (a
  // microtask runs when the settling loop is done). editor-canvas.js enhances its part the same
  // way (window.gatehouseEditor.afterSwaps).
  function afterSwaps(enhancer) {
    var pending = false;
    function once() {
      if (!pending) {
        pending = true;
        queueMicrotask(function () {
          pending = false;
          enhancer();
        });
      }
    }
    document.addEventListener("DOMContentLoaded", enhancer);
    document.addEventListener("htmx:afterSettle", once);
    document.addEventListener("canvas:swapped", once);
  }

  afterSwaps(enhance);
})();

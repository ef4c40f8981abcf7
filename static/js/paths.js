// The paths the node form's reference fields offer (editor/presentation/wiring.py): a field
// names its <datalist> with `list`, which the browser offers as you type or press ↓. In an
// expression (a case's condition, Stop when) the path being typed is the last word, so the
// offers become the text so far with that word completed. A tool's input mapping (JSON) has
// an Insert button that writes the chosen path at the caret. Without this script, the
// datalists still offer the paths to a field that holds only a path.
(function () {
  "use strict";

  // The paths a datalist offered as the server drew it, kept once per list.
  function basePaths(list) {
    if (!list.__paths) {
      list.__paths = Array.from(list.options).map(function (option) {
        return { value: option.value, label: option.textContent };
      });
    }
    return list.__paths;
  }

  var LAST_WORD = /[A-Za-z_][A-Za-z0-9_.]*$/;

  function completeExpression(input) {
    var list = input.list;
    if (!list) {
      return;
    }
    var paths = basePaths(list);
    var text = input.value;
    var word = (text.match(LAST_WORD) || [""])[0];
    var before = text.slice(0, text.length - word.length);
    // After a complete comparison or at the start, every path; inside a word, the paths it
    // begins.
    var offered = paths.filter(function (path) {
      return path.value.indexOf(word) === 0 && path.value !== word;
    });
    list.textContent = "";
    offered.forEach(function (path) {
      var option = document.createElement("option");
      option.value = before + path.value;
      option.textContent = path.label;
      list.append(option);
    });
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("input[data-expression][list]")) {
      completeExpression(event.target);
    }
  });
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("input[data-expression][list]")) {
      completeExpression(event.target);
    }
  });

  // Insert: the chosen path at the caret of the input mapping, as a JSON string; into an
  // empty mapping, a whole object naming the input after the path's last key.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-insert-path]");
    if (!button) {
      return;
    }
    var select = button.parentElement.querySelector("select[data-insert-into]");
    var area = select && document.getElementById(select.dataset.insertInto);
    if (!area || !select.value) {
      return;
    }
    var path = select.value;
    if (!area.value.trim()) {
      var parts = path.split(".").filter(function (part) { return !/^\d+$/.test(part); });
      area.value = "{\n  " + JSON.stringify(parts[parts.length - 1] || path) + ": " + JSON.stringify(path) + "\n}";
      area.setSelectionRange(area.value.length - 2, area.value.length - 2);
    } else {
      var start = area.selectionStart;
      var end = area.selectionEnd;
      var quoted = JSON.stringify(path);
      area.value = area.value.slice(0, start) + quoted + area.value.slice(end);
      area.setSelectionRange(start + quoted.length, start + quoted.length);
    }
    area.focus();
    // The form saves as it is typed in: this is typing too.
    area.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // Choosing a path to insert changes nothing yet: the form must not save on it.
  document.addEventListener(
    "input",
    function (event) {
      if (event.target.matches && event.target.matches("select[data-insert-into]")) {
        event.stopPropagation();
      }
    },
    true
  );

  function enhance() {
    document.querySelectorAll("[data-path-insert]").forEach(function (control) {
      control.hidden = false;
    });
  }

  if (window.gatehouseEditor) {
    window.gatehouseEditor.afterSwaps(enhance);
  } else {
    document.addEventListener("DOMContentLoaded", enhance);
  }
})();

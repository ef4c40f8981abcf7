// Copy buttons: <button type="button" data-copy="ID" hidden> copies the text of the element
// with that id (a hash, say) to the clipboard and says so in its own label for a moment.
// Without script (or without a clipboard) the buttons stay hidden and the text stays
// selectable.
(function () {
  "use strict";

  function reveal(root) {
    if (!root.querySelectorAll || !navigator.clipboard) {
      return;
    }
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) {
      return;
    }
    var source = document.getElementById(button.dataset.copy);
    if (!source || !navigator.clipboard) {
      return;
    }
    var label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    navigator.clipboard.writeText(source.textContent.trim()).then(
      function () {
        button.textContent = "Copied";
        window.setTimeout(function () {
          button.textContent = label;
        }, 1500);
      },
      function () {
        button.textContent = "Copy failed: select the text";
      }
    );
  });

  document.addEventListener("DOMContentLoaded", function () {
    reveal(document);
  });
  document.addEventListener("htmx:load", function (event) {
    reveal(event.target);
  });
})();

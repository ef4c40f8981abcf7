// The open inbox keeps its list up to date from the page's stream (/live/, event "count"),
// as the navigation bar's count does: when the number of waiting runs changes, the list is
// read again (the same URL, as the htmx fragment) and merged in. New cards appear in the
// server's order; cards no longer waiting go, except those the approver is busy with (one
// holding the focus or typed into) and receipts of their own decisions, which stay until the
// page is left.
(function () {
  "use strict";

  var busy = false;
  var again = false;
  var seen = null;

  function list() {
    return document.querySelector("#inbox-cards[data-live-list]");
  }

  function cards(root) {
    return Array.prototype.filter.call(root.children, function (child) {
      return child.classList.contains("inbox-card");
    });
  }

  function kept(card) {
    return (
      card.contains(document.activeElement) ||
      card.dataset.edited === "true" ||
      card.querySelector(".receipt") !== null
    );
  }

  function merge(html) {
    var current = list();
    var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("inbox-cards");
    if (!current || !fresh) {
      return;
    }
    var wanted = {};
    cards(fresh).forEach(function (card) {
      wanted[card.id] = true;
    });
    cards(current).forEach(function (card) {
      if (!wanted[card.id] && !kept(card)) {
        card.remove();
      }
    });
    var previous = null;
    cards(fresh).forEach(function (card) {
      var existing = document.getElementById(card.id);
      if (existing) {
        previous = existing;
        return;
      }
      var added = document.importNode(card, true);
      if (previous) {
        previous.after(added);
      } else {
        current.insertBefore(added, cards(current)[0] || current.querySelector(".empty, p:last-child"));
      }
      previous = added;
      htmx.process(added);
      htmx.trigger(added, "htmx:load");
    });
    var empty = current.querySelector(":scope > .empty");
    if (cards(current).length > 0 && empty) {
      empty.remove();
    } else if (cards(current).length === 0 && !empty) {
      var notice = fresh.querySelector(":scope > .empty");
      if (notice) {
        current.appendChild(document.importNode(notice, true));
      }
    }
  }

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(window.location.pathname + window.location.search, {
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html) {
          merge(html);
        }
      })
      .catch(function () {
        // The next change of the count tries again.
      })
      .finally(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  document.addEventListener("input", function (event) {
    var card = event.target.closest && event.target.closest(".inbox-card");
    if (card) {
      card.dataset.edited = "true";
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var number = document.querySelector("#inbox-count .inbox-count-number");
    seen = number ? number.textContent.trim() : null;
  });

  document.addEventListener("htmx:sseMessage", function (event) {
    if (!list() || !event.detail || event.detail.type !== "count") {
      return;
    }
    var count = String(event.detail.data).trim();
    if (count === seen) {
      return;
    }
    seen = count;
    refresh();
  });
})();

// The run page: selecting a node (on the canvas, in the events, or the node a run failed at)
// opens its detail in the page instead of on a page of its own, and moves the focus to it;
// after "Load older", the focus goes to the first of the rows it added.
// Without this file every one of those links is a plain link to a page that works alone.
(function () {
  "use strict";

  function target(link) {
    // SVG links keep their address in an SVGAnimatedString; HTML links in a string.
    var href = link.href && link.href.baseVal !== undefined ? link.href.baseVal : link.getAttribute("href");
    return href ? new URL(href, document.baseURI) : null;
  }

  function isNodeLink(link, url) {
    return url.origin === location.origin && /\/runs\/[^/]+\/node\/$/.test(url.pathname) &&
      (link.closest("#run-canvas") || link.classList.contains("node-link"));
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
        event.shiftKey || event.altKey || !window.htmx) {
      return;
    }
    var link = event.target.closest("a");
    var url = link && target(link);
    if (!url || !isNodeLink(link, url) || !document.getElementById("node-detail")) {
      return;
    }
    event.preventDefault();
    window.htmx.ajax("GET", url.pathname + url.search, {
      target: "#node-detail",
      swap: "outerHTML",
    });
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var element = event.detail && event.detail.elt;
    if (!element) {
      return;
    }
    var detail = document.getElementById("node-detail");
    if (detail && (element === detail || element.id === "node-detail")) {
      detail.focus();
      detail.scrollIntoView({ block: "nearest" });
      return;
    }
    var first = document.querySelector("[data-focus-first]");
    if (first) {
      first.removeAttribute("data-focus-first");
      first.focus();
    }
  });
})();

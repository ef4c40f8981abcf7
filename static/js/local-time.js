// Times come from the server in UTC (templates/account/_time.html:
// <time datetime="2026-11-30T03:24:00+00:00" data-local-time>2026-11-30 03:24 UTC</time>),
// readable without script (with data-local-seconds, to the second). Here they are rewritten in the browser's own time zone, in the same
// shape, with the UTC text kept as the tooltip; again for whatever htmx swaps in later.
(function () {
  "use strict";

  function pad(number) {
    return String(number).padStart(2, "0");
  }

  function localise(root) {
    if (!root.querySelectorAll) {
      return;
    }
    root.querySelectorAll("time[datetime][data-local-time]").forEach(function (time) {
      if (time.dataset.localTime === "done") {
        return;
      }
      var moment = new Date(time.getAttribute("datetime"));
      if (Number.isNaN(moment.getTime())) {
        return;
      }
      time.title = time.textContent.trim();
      time.textContent =
        moment.getFullYear() +
        "-" +
        pad(moment.getMonth() + 1) +
        "-" +
        pad(moment.getDate()) +
        " " +
        pad(moment.getHours()) +
        ":" +
        pad(moment.getMinutes()) +
        ("localSeconds" in time.dataset ? ":" + pad(moment.getSeconds()) : "");
      time.dataset.localTime = "done";
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    localise(document);
  });
  document.addEventListener("htmx:load", function (event) {
    localise(event.target);
  });
})();

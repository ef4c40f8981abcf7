// A sleeping run's page: the time left until its wake, counted down once a second in the page
// itself (no request while it sleeps). The wake itself comes over the page's event stream,
// which fetches the run's status again; the count stops at zero and says so meanwhile.
(function () {
  "use strict";

  function words(seconds) {
    var days = Math.floor(seconds / 86400);
    var hours = Math.floor((seconds % 86400) / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var rest = seconds % 60;
    var parts = [];
    if (days) { parts.push(days + " d"); }
    if (hours) { parts.push(hours + " h"); }
    if (minutes) { parts.push(minutes + " min"); }
    if (rest || !parts.length) { parts.push(rest + " s"); }
    return parts.join(" ");
  }

  function tick() {
    var clocks = document.querySelectorAll("[data-wake-at]");
    for (var i = 0; i < clocks.length; i++) {
      var clock = clocks[i];
      var wakeAt = Date.parse(clock.getAttribute("data-wake-at"));
      var left = clock.querySelector(".countdown-left");
      if (isNaN(wakeAt) || !left) { continue; }
      var seconds = Math.ceil((wakeAt - Date.now()) / 1000);
      clock.hidden = false;
      left.textContent = seconds > 0 ? words(seconds) : "a moment: it is due now";
    }
  }

  tick();
  window.setInterval(tick, 1000);
})();

// A sleeping run's wait (templates/runs/_sleeping.html), on its page and in the runs list: the
// time left until its wake, counted down once a second in the page itself (no request while it
// sleeps), and once the wake time has passed, how long it is overdue, as the server would say.
// The wake itself comes over the run page's event stream, which fetches the run's status again.
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

  function show(clock, lead, strong, trail) {
    var bold = document.createElement("strong");
    bold.textContent = strong;
    clock.replaceChildren(document.createTextNode(lead), bold, document.createTextNode(trail));
  }

  function tick() {
    var clocks = document.querySelectorAll(".countdown[data-wake-at]");
    for (var i = 0; i < clocks.length; i++) {
      var clock = clocks[i];
      var wakeAt = Date.parse(clock.getAttribute("data-wake-at"));
      if (isNaN(wakeAt)) { continue; }
      var left = wakeAt - Date.now();
      if (left > 0) {
        clock.classList.remove("overdue");
        show(clock, "wakes in ", words(Math.ceil(left / 1000)), "");
      } else {
        clock.classList.add("overdue");
        show(clock, "", "Overdue", " by " + words(Math.floor(-left / 1000)));
      }
    }
  }

  tick();
  window.setInterval(tick, 1000);
})();

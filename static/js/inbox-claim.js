// A claim on an inbox card lasts 30 minutes from the last time its holder acted on it. While
// the holder types in the card's form, the claim is renewed (its own claim address, posted in
// the background) at most once every five minutes, so it runs out only when they are idle.
(function () {
  "use strict";

  var EVERY_MS = 5 * 60 * 1000;
  var renewed = {};

  document.addEventListener("input", function (event) {
    var card = event.target.closest && event.target.closest(".inbox-card");
    if (!card) {
      return;
    }
    var form = card.querySelector("form.claim-form[data-claim-renew]");
    if (!form) {
      return;
    }
    var now = Date.now();
    if (renewed[card.id] && now - renewed[card.id] < EVERY_MS) {
      return;
    }
    renewed[card.id] = now;
    fetch(form.dataset.claimRenew, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
    }).catch(function () {
      delete renewed[card.id];
    });
  });
})();

// Marking workspace: highlight the transcript turns that evidence a target; print the report.
// No inline script anywhere (CSP script-src 'self'); everything works without this file too.
(function () {
  "use strict";

  function turnsFor(key) {
    return Array.prototype.filter.call(document.querySelectorAll(".turn[data-targets]"), function (turn) {
      return turn.getAttribute("data-targets").split(" ").indexOf(key) !== -1;
    });
  }

  function clear() {
    document.querySelectorAll(".turn.highlight").forEach(function (turn) {
      turn.classList.remove("highlight");
    });
    document.querySelectorAll(".show-evidence[aria-pressed='true']").forEach(function (button) {
      button.setAttribute("aria-pressed", "false");
    });
  }

  document.querySelectorAll(".show-evidence").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.getAttribute("data-key");
      var wasOn = button.getAttribute("aria-pressed") === "true";
      clear();
      if (wasOn) { return; }
      var turns = turnsFor(key);
      turns.forEach(function (turn) { turn.classList.add("highlight"); });
      button.setAttribute("aria-pressed", "true");
      if (turns.length) {
        turns[0].scrollIntoView({ block: "center", behavior: "auto" });
      }
    });
  });

  document.querySelectorAll("[data-print]").forEach(function (button) {
    button.addEventListener("click", function () { window.print(); });
  });
})();

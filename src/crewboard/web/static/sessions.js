// Spec sessions: the reply streaming in while the model writes, and the new-session form's
// workflows narrowed to the chosen mode. Plain JavaScript, nothing inline (the CSP forbids it).
(function () {
  "use strict";

  // The blocks a reply ends with become forms once it is finished: while it streams, the
  // text stops where the first one starts.
  var BLOCKS = ["<questions>", "<choice>", "<review>", "<spec-file", "<session-title>"];

  function prose(text) {
    var cut = text.length;
    BLOCKS.forEach(function (tag) {
      var at = text.indexOf(tag);
      if (at >= 0 && at < cut) { cut = at; }
    });
    return { text: text.slice(0, cut), more: cut < text.length };
  }

  // Something typed on the page that a reload would lose.
  function typed() {
    return Array.prototype.some.call(document.querySelectorAll("main textarea, main input[type=text]"), function (field) {
      return !field.disabled && field.value !== field.defaultValue;
    }) || Array.prototype.some.call(document.querySelectorAll("main input[type=radio], main input[type=checkbox]"), function (box) {
      return box.checked !== box.defaultChecked;
    });
  }

  var reply = document.querySelector("[data-stream]");
  if (reply && window.EventSource) {
    var shown = reply.querySelector("[data-partial]");
    var state = reply.querySelector("[data-reply-state]");
    var all = shown.textContent;
    var stream = new EventSource(reply.getAttribute("data-stream"));
    var show = function (text) {
      all = text;
      var part = prose(all);
      shown.textContent = part.text;
      state.textContent = part.more ? "is preparing a form for you…" : "is writing…";
    };
    stream.addEventListener("partial", function (event) { show(JSON.parse(event.data).text); });
    stream.addEventListener("more", function (event) { show(all + JSON.parse(event.data).text); });
    stream.addEventListener("ended", function () {
      stream.close();
      reply.setAttribute("data-ended", "1");
      if (!typed()) { window.location.reload(); return; }
      // Keep what the person typed: say the reply is ready and let them reload.
      state.textContent = "has finished. ";
      var again = document.createElement("button");
      again.type = "button";
      again.textContent = "Show the reply";
      again.addEventListener("click", function () { window.location.reload(); });
      state.appendChild(again);
    });
  }

  // The new-session form: only the workflows of the chosen mode.
  var mode = document.querySelector("[data-mode-select]");
  var flows = document.querySelector("[data-workflow-select]");
  if (mode && flows) {
    var narrow = function () {
      Array.prototype.forEach.call(flows.options, function (option) {
        var other = option.hasAttribute("data-mode") && option.getAttribute("data-mode") !== mode.value;
        option.hidden = other;
        option.disabled = other;
        if (other && option.selected) { flows.value = ""; }
      });
    };
    mode.addEventListener("change", narrow);
    narrow();
  }
})();

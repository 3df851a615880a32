// The task page's closed forms: opening one (its button, or a link such as "Comment" that names
// it in data-opens) puts the cursor in its first field; Escape or Cancel closes a field changed
// in place and gives the focus back. While a form in the live region is open or holds typed
// text, a live refresh waits (it would replace the form).
(function () {
  "use strict";
  var FIELDS = "input:not([type=hidden]), select, textarea";

  // The toggle event comes a moment after the form opens: by then the person (or a quick
  // script) may already be in one of its fields or on its buttons, which keep the focus.
  function focusFirst(details) {
    var here = document.activeElement;
    if (details.contains(here) && !here.matches("summary")) { return; }
    var field = details.querySelector(FIELDS);
    if (!field) { return; }
    field.focus();
    if (field.select && field.type === "text") { field.select(); }
  }

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!(details instanceof HTMLDetailsElement)) { return; }
    if (details.open && details.querySelector("form")) { focusFirst(details); }
    busy();
  }, true);

  document.addEventListener("click", function (event) {
    var opener = event.target.closest("[data-opens]");
    if (opener) {
      var details = document.getElementById(opener.getAttribute("data-opens"));
      if (details) {
        event.preventDefault();
        details.open = true;
        details.scrollIntoView({ block: "nearest" });
        focusFirst(details);
      }
      return;
    }
    var cancel = event.target.closest("[data-inline-cancel]");
    if (cancel) { close(cancel.closest("details")); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    var details = event.target.closest && event.target.closest("details[data-inline][open]");
    if (details) { event.preventDefault(); close(details); }
  });

  function close(details) {
    if (!details) { return; }
    details.querySelector("form").reset();
    details.open = false;
    details.querySelector("summary").focus();
    busy();
  }

  // A form in the live region that is open, or was typed in, holds the refresh back.
  var mine = false;
  function busy() {
    var region = document.querySelector("[data-live-region]");
    var held = false;
    if (region) {
      region.querySelectorAll("details").forEach(function (details) {
        if (details.open && details.querySelector("form")) { held = true; }
      });
      region.querySelectorAll("textarea, input[type=text]").forEach(function (field) {
        if (field.value !== field.defaultValue) { held = true; }
      });
    }
    if (held) { document.body.setAttribute("data-busy", "task-form"); mine = true; }
    else if (mine) { document.body.removeAttribute("data-busy"); mine = false; }
  }
  document.addEventListener("input", busy);
  busy();
})();

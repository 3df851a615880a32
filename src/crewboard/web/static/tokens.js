// The token form's presets: choosing one fills the kind, scopes and toolsets (an agent preset
// also picks a project when none is chosen); changing any of those by hand makes it "Custom".
// Without script the form is already filled from the default preset by the server.
(function () {
  "use strict";
  var presets = document.querySelector("[data-presets]");
  if (!presets) { return; }
  var form = presets.closest("form");
  var filling = false;

  function words(input, name) {
    return (input.getAttribute(name) || "").split(" ").filter(Boolean);
  }

  function fill(radio) {
    filling = true;
    var scopes = words(radio, "data-scopes");
    var toolsets = words(radio, "data-toolsets");
    var kind = radio.getAttribute("data-kind");
    form.querySelectorAll("input[name=kind]").forEach(function (input) {
      input.checked = input.value === kind;
    });
    form.querySelectorAll("input[name=scopes][type=checkbox]:not([disabled])").forEach(function (input) {
      input.checked = scopes.indexOf(input.value) !== -1;
    });
    form.querySelectorAll("input[name=toolsets]").forEach(function (input) {
      input.checked = toolsets.indexOf(input.value) !== -1;
    });
    var project = form.elements.project;
    if (kind === "agent" && project && !project.value && project.options.length > 1) {
      project.selectedIndex = 1;
    }
    // Let the seat field follow the new kind and project.
    form.dispatchEvent(new Event("change", { bubbles: true }));
    filling = false;
  }

  form.addEventListener("change", function (event) {
    var target = event.target;
    if (filling || !target || !target.name) { return; }
    if (target.name === "preset") {
      if (target.value !== "custom") { fill(target); }
      return;
    }
    if (target.name === "kind" || target.name === "scopes" || target.name === "toolsets") {
      var custom = form.querySelector("input[name=preset][value=custom]");
      if (custom) { custom.checked = true; }
    }
  });
})();

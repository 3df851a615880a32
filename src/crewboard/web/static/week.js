// The week page: offer the device's own time zone (the browser knows it) beside the list.
(function () {
  "use strict";
  var input = document.getElementById("week-tz");
  var list = document.getElementById("week-zones");
  var button = document.querySelector("[data-own-zone-button]");
  if (!input || !list || !button || !window.Intl) { return; }
  var own = "";
  try { own = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (error) { return; }
  if (!own) { return; }
  var listed = Array.prototype.some.call(list.options, function (option) { return option.value === own; });
  if (!listed) {
    var option = document.createElement("option");
    option.value = own;
    list.insertBefore(option, list.firstChild);
  }
  if (input.value === own) { return; }
  button.textContent = "Use this device's zone (" + own + ")";
  button.hidden = false;
  button.addEventListener("click", function () {
    input.value = own;
    input.form.requestSubmit ? input.form.requestSubmit() : input.form.submit();
  });
}());

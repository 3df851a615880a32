// Spec file page: words selected in the file's text become the passage of a new thread.
(function () {
  "use strict";
  var text = document.querySelector(".spec-text");
  var quote = document.getElementById("thread-quote");
  if (!text || !quote) { return; }
  function take() {
    var selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) { return; }
    var range = selection.getRangeAt(0);
    if (!text.contains(range.commonAncestorContainer)) { return; }
    var words = selection.toString().trim();
    if (words) { quote.value = words; }
  }
  text.addEventListener("mouseup", take);
  text.addEventListener("keyup", take);
}());

// The inbox's unread count in the header and the tab title follows a live refresh: app.js
// hands over the page it fetched, and the count and title are taken from it.
(function () {
  "use strict";
  document.addEventListener("crewboard:refreshed", function (event) {
    var html = event.detail && event.detail.html;
    if (!html) { return; }
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var count = fresh.querySelector("[data-unread-count]");
    var shown = document.querySelector("[data-unread-count]");
    if (count && shown) {
      shown.replaceWith(document.importNode(count, true));
    }
    if (fresh.title) { document.title = fresh.title; }
  });
})();

// Search from anywhere: Ctrl-K (⌘-K on a Mac) opens a dialog that shows the search page's
// results region as you type. Arrow keys move through the results, Enter opens one, Escape
// closes the dialog and focus goes back where it was. Without script the header's Search
// link opens the search page, which works as a plain form.
(function () {
  "use strict";

  var dialog = document.getElementById("search-dialog");
  if (!dialog || typeof dialog.showModal !== "function") { return; }
  var form = dialog.querySelector("[data-search-form]");
  var input = document.getElementById("search-dialog-q");
  var results = document.getElementById("search-dialog-results");
  var count = document.getElementById("search-dialog-count");
  var opener = null;
  var timer = null;
  var running = null;
  var shown = null;  // the query whose results are shown

  function open() {
    if (!dialog.open) {
      opener = document.activeElement;
      dialog.showModal();
    }
    input.focus();
    input.select();
  }

  dialog.addEventListener("close", function () {
    window.clearTimeout(timer);
    if (running) { running.abort(); running = null; }
    if (opener && typeof opener.focus === "function" && document.contains(opener)) { opener.focus(); }
    opener = null;
  });

  document.addEventListener("keydown", function (event) {
    var k = event.key === "k" || event.key === "K";
    if (k && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey) {
      event.preventDefault();
      open();
    }
  });

  document.querySelectorAll("[data-search-open]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) { return; }
      event.preventDefault();
      open();
    });
  });

  input.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(search, 200);
  });

  function search() {
    var q = input.value;
    if (q === shown) { return; }
    if (running) { running.abort(); }
    var asked = new AbortController();
    running = asked;
    var url = form.action + "?" + new URLSearchParams({ q: q, region: "1" }).toString();
    fetch(url, { credentials: "same-origin", signal: asked.signal })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (running !== asked) { return; }
        running = null;
        shown = q;
        show(new DOMParser().parseFromString(html, "text/html").querySelector("[data-search-results]"));
      })
      .catch(function (error) {
        if (error.name === "AbortError") { return; }
        running = null;
        count.textContent = "The search did not answer. Press Enter to open the search page.";
      });
  }

  // The region's own count line becomes the dialog's (a live region that stays in place, so
  // a screen reader announces each new count); the rest replaces the shown results.
  function show(region) {
    if (!region) {
      count.textContent = "The search did not answer. Press Enter to open the search page.";
      results.replaceChildren();
      return;
    }
    var said = region.querySelector("[data-search-count]");
    count.textContent = said ? said.textContent.trim() : "";
    if (said) { said.remove(); }
    results.replaceChildren.apply(results, Array.prototype.slice.call(region.childNodes));
  }

  dialog.addEventListener("keydown", function (event) {
    // A search box would take Escape to clear itself: here it closes, keeping the words.
    if (event.key === "Escape") {
      event.preventDefault();
      dialog.close();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") { return; }
    var links = Array.prototype.slice.call(results.querySelectorAll("a[data-result]"));
    if (!links.length) { return; }
    event.preventDefault();
    var index = links.indexOf(document.activeElement);
    if (event.key === "ArrowDown") {
      index = Math.min(index + 1, links.length - 1);
    } else {
      index -= 1;
    }
    if (index < 0) {
      input.focus();
      return;
    }
    links[index].focus();
    links[index].scrollIntoView({ block: "nearest" });
  });
})();

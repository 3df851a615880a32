// The header: one row that never wraps. On a desktop the pages that do not fit go under "More"
// (the current page's item always stays in the row); on a phone the pages and the project
// switcher sit behind the Menu button. The account menu holds tokens, password and sign out.
// Each menu is a disclosure button (aria-expanded); Escape or a click elsewhere closes it.
(function () {
  "use strict";
  var header = document.querySelector("[data-header]");
  if (!header) { return; }
  var items = header.querySelector("[data-nav-items]");
  var more = header.querySelector("[data-nav-more]");
  var moreButton = more && more.querySelector("button");
  var moreList = more && more.querySelector("ul");
  var menuButton = header.querySelector(".menu-button");

  function setOpen(button, open) {
    var target = document.getElementById(button.getAttribute("aria-controls"));
    button.setAttribute("aria-expanded", open ? "true" : "false");
    if (target === null) { return; }
    if (target.id === "site-menu") { header.classList.toggle("menu-open", open); }
    else { target.hidden = !open; }
  }

  function closeAll(except) {
    header.querySelectorAll("button[aria-expanded='true']").forEach(function (button) {
      if (button !== except) { setOpen(button, false); }
    });
  }

  header.addEventListener("click", function (event) {
    var button = event.target.closest("button[aria-expanded]");
    if (!button || !header.contains(button)) { return; }
    var open = button.getAttribute("aria-expanded") !== "true";
    closeAll(button);
    setOpen(button, open);
    if (open) {
      var target = document.getElementById(button.getAttribute("aria-controls"));
      var first = target && target.querySelector("a, button, select");
      if (first && button !== menuButton) { first.focus(); }
    }
  });
  document.addEventListener("click", function (event) {
    if (!header.contains(event.target)) { closeAll(null); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    var open = header.querySelector("button[aria-expanded='true']");
    if (open) { closeAll(null); open.focus(); }
  });
  // Tabbing out of an open menu closes it.
  header.addEventListener("focusout", function (event) {
    var next = event.relatedTarget;
    if (next && !header.contains(next)) { closeAll(null); }
  });

  // The desktop's row: every item back in the row, then the last items that are not the current
  // page's move under "More" until the row fits. A phone shows the whole list in its menu.
  function phone() { return menuButton && getComputedStyle(menuButton).display !== "none"; }
  function overflowing() { return items.scrollWidth > items.clientWidth + 1; }
  function fit() {
    if (!items || !more) { return; }
    if (moreButton.getAttribute("aria-expanded") === "true") { setOpen(moreButton, false); }
    Array.prototype.slice.call(moreList.children).forEach(function (li) { items.appendChild(li); });
    more.hidden = true;
    if (phone() || !overflowing()) { return; }
    more.hidden = false;
    var movable = Array.prototype.slice.call(items.children).filter(function (li) {
      return !li.querySelector("[aria-current]");
    });
    while (overflowing() && movable.length) {
      moreList.insertBefore(movable.pop(), moreList.firstChild);
    }
  }
  fit();
  header.classList.add("fitted");
  var waiting = null;
  window.addEventListener("resize", function () {
    window.clearTimeout(waiting);
    waiting = window.setTimeout(fit, 60);
  });
  // A live refresh may bring a new inbox count (unread.js swaps it in), which widens its item.
  document.addEventListener("crewboard:refreshed", function () {
    window.clearTimeout(waiting);
    waiting = window.setTimeout(fit, 0);
  });
})();

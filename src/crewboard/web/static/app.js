// Crewboard's only script: live updates, keyboard shortcuts, small conveniences.
// Plain JavaScript, no libraries, nothing inline (the Content-Security-Policy forbids it).
(function () {
  "use strict";

  // A select marked data-autosubmit sends its form on change (the project switcher).
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  // Buttons marked data-confirm ask first.
  document.querySelectorAll("[data-confirm]").forEach(function (button) {
    button.addEventListener("click", function (event) {
      if (!window.confirm(button.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
  });

  // Copy buttons: data-copy names the element whose text to copy.
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent).then(function () {
          button.textContent = "Copied";
        });
      }
    });
  });

  // The token form's seat field: shown for an agent token once a project is chosen, offering
  // only that project's AI seats (each option names its project in data-project).
  var seatField = document.querySelector("[data-seat-field]");
  if (seatField) {
    var form = seatField.form || seatField.closest("form");
    var seatSelect = seatField.querySelector("select");
    var showSeats = function () {
      var project = form.elements.project.value;
      var kind = form.querySelector("input[name=kind]:checked");
      var open = Boolean(project) && kind !== null && kind.value === "agent";
      seatField.hidden = !open;
      seatSelect.disabled = !open;
      Array.prototype.forEach.call(seatSelect.options, function (option) {
        var other = option.value !== "" && option.getAttribute("data-project") !== project;
        option.hidden = other;
        option.disabled = other;
        if (other && option.selected) { seatSelect.value = ""; }
      });
    };
    form.addEventListener("change", function (event) {
      if (event.target !== seatSelect) { showSeats(); }
    });
    showSeats();
  }

  // Live updates: pages marked data-live reload their live region when the event stream
  // reports a change of the kinds they show, and the header's notification bell follows the
  // person's unread count. The stream resumes by itself (Last-Event-ID).
  //
  // One stream per tab, over all of the person's projects (no ?project=): a notification
  // about another project than the page's must still move the bell, and one stream costs less
  // than two. So the live region takes only its own project's events (filtered here), and the
  // bell takes every "notification." event whatever its project. An event names no recipient
  // (it says only that something happened), so the bell then asks /notifications/count, one
  // COUNT of the session's own unread notifications; an event about someone else's
  // notification costs one small request and changes nothing.
  var live = document.body.getAttribute("data-live");
  var bell = document.querySelector("[data-notification-count]");
  var pending = null;
  var counting = null;
  if ((live || bell) && window.EventSource) {
    var kinds = {
      inbox: ["draft.", "proposal.", "task.question_", "message."],
      board: ["task."],
      activity: [""],
      task: ["task.", "draft."],
    }[live] || [];
    var project = document.body.getAttribute("data-project") || "";
    var stream = new EventSource("/events");
    stream.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (error) { return; }
      if (bell && event.type.indexOf("notification.") === 0) {
        window.clearTimeout(counting);
        counting = window.setTimeout(recount, 150);
      }
      if (!live || (project && event.projectId !== project)) { return; }
      var wanted = kinds.some(function (prefix) { return event.type.indexOf(prefix) === 0; });
      if (!wanted) { return; }
      window.clearTimeout(pending);
      pending = window.setTimeout(refresh, 150);
    };
  }
  // Back to a tab (or a page restored from the back-forward cache): the count may be stale.
  if (bell) {
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") { recount(); }
    });
    window.addEventListener("pageshow", function (event) { if (event.persisted) { recount(); } });
  }

  // The bell's badge: the number, and words for screen readers; hidden at 0.
  function recount() {
    fetch("/notifications/count", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (answer) {
        if (!answer || typeof answer.unread !== "number") { return; }
        var badge = document.querySelector("[data-notification-count]");
        if (!badge) { return; }
        var words = document.createElement("span");
        words.className = "visually-hidden";
        words.textContent = " unread";
        badge.textContent = String(answer.unread);
        badge.appendChild(words);
        badge.hidden = answer.unread === 0;
      })
      .catch(function () { /* the next event or visit tries again */ });
  }

  // A refresh waits while the page is busy (a card being dragged or saved), and keeps the
  // focused element (by id) and the region's own scroll position.
  function refresh() {
    var region = document.querySelector("[data-live-region]");
    if (!region) { return; }
    if (document.body.hasAttribute("data-busy")) {
      window.clearTimeout(pending);
      pending = window.setTimeout(refresh, 400);
      return;
    }
    // A page's own change saved while the fetch was under way makes its answer stale: fetch again.
    var changes = document.body.getAttribute("data-changes");
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Live": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (document.body.hasAttribute("data-busy") || document.body.getAttribute("data-changes") !== changes) {
          window.clearTimeout(pending);
          pending = window.setTimeout(refresh, 400);
          return;
        }
        if (!html) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live-region]");
        if (fresh) {
          var focused = document.activeElement && region.contains(document.activeElement) ? document.activeElement.id : "";
          var scrolled = region.scrollLeft;
          region.replaceWith(fresh);
          fresh.scrollLeft = scrolled;
          document.dispatchEvent(new CustomEvent("crewboard:refreshed", { detail: { html: html } }));
          var again = focused && document.getElementById(focused);
          if (again) { again.focus({ preventScroll: true }); }
        }
      });
  }
  document.addEventListener("crewboard:refresh", function () { refresh(); });

  // Keyboard shortcuts: g + letter to go somewhere, / to search, j/k to move, ? for help.
  var goPending = false;
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) { return; }
    if (goPending) {
      goPending = false;
      var link = document.querySelector('nav a[data-key="' + event.key + '"]');
      if (link) { event.preventDefault(); window.location.href = link.href; }
      return;
    }
    if (event.key === "g") { goPending = true; window.setTimeout(function () { goPending = false; }, 1500); return; }
    if (event.key === "/") {
      var search = document.querySelector("[data-search]");
      if (search) { event.preventDefault(); search.focus(); }
      return;
    }
    if (event.key === "j" || event.key === "k") {
      var items = Array.prototype.slice.call(document.querySelectorAll("[data-item]"));
      if (!items.length) { return; }
      var index = items.indexOf(document.activeElement);
      index = event.key === "j" ? Math.min(index + 1, items.length - 1) : Math.max(index - 1, 0);
      items[index].focus();
      event.preventDefault();
      return;
    }
    if (event.key === "?") {
      var dialog = document.getElementById("shortcuts");
      if (dialog && dialog.showModal) { dialog.showModal(); }
    }
  });
})();

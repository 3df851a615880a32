// The board: drag and drop (SortableJS), a keyboard path, moves saved without a reload,
// conflicts and waiting hand-ins shown in a dialog, a refused move's fix in the card, choosing
// cards for the bulk bar, filters applied without a reload, one column at a time on a phone.
// Without this script the filters are a form, and each card's box and the bulk bar below the
// board still move, assign and tag cards (a page load each).
(function () {
  "use strict";

  var NARROW = window.matchMedia("(max-width: 800px)");
  var TAB_KEY = "crewboard-board-column";
  var grabbed = null; // {tile, origin} while a card is picked up with the keyboard

  function board() { return document.querySelector("[data-board]"); }
  function tilesOf(list) { return Array.prototype.filter.call(list.children, function (el) { return el.classList.contains("tile"); }); }
  function listOf(tile) { return tile.parentElement; }
  function columnLabel(status) {
    var heading = document.querySelector("#column-" + status + " span");
    return heading ? heading.textContent : status;
  }
  function personName(id) {
    if (!id) { return "nobody"; }
    var option = document.querySelector('#board-assignee option[value="' + id + '"]');
    return option ? option.textContent.replace(/ \((AI|person|you)\)$/, "") : id;
  }

  function announce(text) {
    var status = document.getElementById("board-status");
    if (!status) { return; }
    status.textContent = "";
    window.setTimeout(function () { status.textContent = text; }, 30);
  }

  // While a card is held, dragged or saved, live refreshes wait (app.js reads data-busy): a
  // refresh would replace the card under the person's hand. Each reason is counted.
  var busyCount = 0;
  function busy(on) {
    busyCount = Math.max(0, busyCount + (on ? 1 : -1));
    if (busyCount) { document.body.setAttribute("data-busy", "1"); } else { document.body.removeAttribute("data-busy"); }
  }
  var pressed = false;
  document.addEventListener("pointerdown", function (event) {
    if (!pressed && event.target.closest && event.target.closest(".tile")) { pressed = true; busy(true); }
  }, true);
  ["pointerup", "pointercancel"].forEach(function (type) {
    document.addEventListener(type, function () { if (pressed) { pressed = false; busy(false); } }, true);
  });

  function originOf(tile) { return { list: listOf(tile), next: tile.nextElementSibling, status: listOf(tile).getAttribute("data-column") }; }
  function putBack(tile, origin) {
    origin.list.insertBefore(tile, origin.next && origin.next.parentElement === origin.list ? origin.next : null);
    refreshEmpty();
  }
  function samePlace(tile, origin) { return listOf(tile) === origin.list && tile.nextElementSibling === origin.next; }

  function refreshEmpty() {
    document.querySelectorAll(".column").forEach(function (column) {
      var list = column.querySelector(".tiles");
      var empty = column.querySelector(".empty");
      if (list && empty) { empty.hidden = tilesOf(list).length > 0; }
    });
  }

  function bump(status, by) {
    var badge = document.querySelector("#column-" + status + " [data-count]");
    if (badge) { badge.textContent = String(Math.max(0, parseInt(badge.textContent, 10) + by)); }
    var link = document.querySelector('.column-index a[data-tab="' + status + '"]');
    if (link && badge) { link.textContent = columnLabel(status) + " (" + badge.textContent + ")"; }
  }

  function describe(tile) {
    var status = listOf(tile).getAttribute("data-column");
    var key = tile.getAttribute("data-key");
    tile.setAttribute("aria-label", key + " " + tile.getAttribute("data-title") + ", in " + columnLabel(status));
    var pick = tile.querySelector(".pick");
    if (pick) { pick.value = key + "@" + tile.getAttribute("data-revision"); }
  }

  // --- saving a move -------------------------------------------------------------------------

  function save(tile, origin, extra) {
    var root = board();
    var list = listOf(tile);
    var status = list.getAttribute("data-column");
    var before = tile.nextElementSibling;
    var after = tile.previousElementSibling;
    var body = new URLSearchParams();
    body.set("csrf", root.getAttribute("data-csrf"));
    body.set("expected_revision", tile.getAttribute("data-revision"));
    body.set("status", status);
    body.set("after", after && after.classList.contains("tile") ? after.getAttribute("data-key") : "");
    body.set("before", before && before.classList.contains("tile") ? before.getAttribute("data-key") : "");
    Object.keys(extra || {}).forEach(function (name) { body.set(name, extra[name]); });
    var key = tile.getAttribute("data-key");
    busy(true);
    tile.setAttribute("aria-busy", "true");
    return fetch(root.getAttribute("data-board") + encodeURIComponent(key) + "/status", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json" },
      body: body,
    }).then(function (response) {
      return response.json().then(function (data) { return { code: response.status, data: data }; });
    }).then(function (answer) {
      var data = answer.data;
      if (data.ok) {
        tile.setAttribute("data-revision", String(data.revision));
        if (origin.status !== data.status) { bump(origin.status, -1); bump(data.status, +1); }
        describe(tile);
        tile.classList.add("saved");
        window.setTimeout(function () { tile.classList.remove("saved"); }, 1200);
        announce(data.notice);
      } else if (data.fix === "assignee") {
        offerAssignee(tile, origin, status, data.error);
      } else if (data.handIn) {
        askAboutHandIn(tile, origin, data);
      } else if (data.conflict) {
        showConflict(tile, origin, data);
      } else {
        putBack(tile, origin);
        showProblem(tile, data.error || "The move was not saved.");
      }
    }).catch(function () {
      putBack(tile, origin);
      showProblem(tile, "The server could not be reached; the card is back where it was. Try again in a moment.");
    }).then(function () {
      // Tell a live refresh already under way that its answer predates this move.
      document.body.setAttribute("data-changes", String(Number(document.body.getAttribute("data-changes") || 0) + 1));
      tile.removeAttribute("aria-busy");
      busy(false);
      refreshEmpty();
    });
  }

  // --- the dialog: a refusal, a conflict, a waiting hand-in ----------------------------------

  function openDialog(tile, title, paragraphs, buttons) {
    var dialog = document.getElementById("move-dialog");
    if (!dialog || !dialog.showModal) { window.alert(title + "\n\n" + paragraphs.join("\n")); return; }
    document.getElementById("move-dialog-title").textContent = title;
    var body = document.getElementById("move-dialog-body");
    body.textContent = "";
    paragraphs.forEach(function (part) {
      var node = typeof part === "string" ? document.createElement("p") : part;
      if (typeof part === "string") { node.textContent = part; }
      body.appendChild(node);
    });
    var actions = document.getElementById("move-dialog-actions");
    actions.textContent = "";
    buttons.forEach(function (spec, index) {
      var control;
      if (spec.href) {
        control = document.createElement("a");
        control.className = "button";
        control.href = spec.href;
      } else {
        control = document.createElement("button");
        control.type = "button";
        if (index === 0) { control.className = "primary"; }
        control.addEventListener("click", function () { dialog.close(); spec.run(); });
      }
      control.textContent = spec.label;
      actions.appendChild(control);
    });
    dialog.onclose = function () { if (document.body.contains(tile)) { tile.focus(); } };
    dialog.showModal();
  }

  function showProblem(tile, text) {
    openDialog(tile, "Not moved", [text], [{ label: "Close", run: function () {} }]);
  }

  function showConflict(tile, origin, data) {
    var now = data.conflict;
    var key = tile.getAttribute("data-key");
    var target = listOf(tile).getAttribute("data-column");
    var changes = document.createElement("ul");
    function line(label, was, is) {
      if (was === is) { return; }
      var item = document.createElement("li");
      item.textContent = label + ": " + was + " → " + is;
      changes.appendChild(item);
    }
    line("Column", columnLabel(origin.status), now.statusLabel);
    line("Title", tile.getAttribute("data-title"), now.title);
    line("Priority", tile.getAttribute("data-priority"), now.priority);
    line("Assignee", personName(tile.getAttribute("data-assignee")), personName(now.assigneeId || ""));
    if (!changes.children.length) {
      var same = document.createElement("li");
      same.textContent = "Its text or links changed; its column did not.";
      changes.appendChild(same);
    }
    putBack(tile, origin);
    var who = (now.updatedBy || "Someone") + " changed " + key + " " + now.when + ", after this board was drawn:";
    openDialog(tile, key + " changed meanwhile", [who, changes, "Your move was not saved."], [
      {
        label: "Move it to " + columnLabel(target) + " anyway",
        run: function () {
          tile.setAttribute("data-revision", String(now.revision));
          var from = originOf(tile);
          from.status = now.status;
          var list = board().querySelector('.tiles[data-column="' + target + '"]');
          if (list) { list.appendChild(tile); save(tile, from); }
        },
      },
      { label: "Keep it as it is now", run: function () { document.dispatchEvent(new CustomEvent("crewboard:refresh")); } },
    ]);
  }

  function askAboutHandIn(tile, origin, data) {
    var key = tile.getAttribute("data-key");
    var target = listOf(tile).getAttribute("data-column");
    putBack(tile, origin);
    openDialog(tile, key + " has a hand-in waiting", [
      "A hand-in of " + key + " waits for review. Moving the task to " + columnLabel(target) +
        " would leave the hand-in open while the board says the work is settled.",
      "Approve the hand-in now (it is accepted as it stands), or open it to read it first.",
    ], [
      {
        label: "Approve the hand-in and move to " + columnLabel(target),
        run: function () {
          var list = board().querySelector('.tiles[data-column="' + target + '"]');
          var from = originOf(tile);
          if (list) { list.appendChild(tile); save(tile, from, { approve_hand_in: data.handIn.id }); }
        },
      },
      { label: "Open the hand-in", href: data.handIn.url },
      { label: "Cancel", run: function () { announce(key + " stays in " + columnLabel(origin.status) + "."); } },
    ]);
  }

  // --- a refused move's fix, in the card ------------------------------------------------------

  // A move refused because the column needs an assignee: the card goes back, and offers a
  // picker that assigns and moves it again in one save.
  function offerAssignee(tile, origin, target, text) {
    putBack(tile, origin);
    if (NARROW.matches) { showColumn(origin.status); }
    var old = tile.querySelector(".fix");
    if (old) { old.remove(); }
    var key = tile.getAttribute("data-key");
    var box = document.createElement("div");
    box.className = "fix";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", "Assign " + key + " to move it");
    var said = document.createElement("p");
    said.textContent = key + " needs an assignee to move to " + columnLabel(target) + ". Who does it?";
    var select = document.createElement("select");
    select.setAttribute("aria-label", "Assignee for " + key);
    select.id = "fix-assignee-" + key;
    var options = document.getElementById("assignee-options");
    if (options) { select.appendChild(options.content.cloneNode(true)); }
    var actions = document.createElement("div");
    actions.className = "actions";
    var go = document.createElement("button");
    go.type = "button";
    go.className = "primary";
    go.textContent = "Assign and move to " + columnLabel(target);
    var cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    actions.appendChild(go);
    actions.appendChild(cancel);
    box.appendChild(said);
    box.appendChild(select);
    box.appendChild(actions);
    tile.appendChild(box);
    busy(true);  // a live refresh would take the picker away mid-choice
    function close() { if (box.parentElement) { box.remove(); busy(false); } }
    go.addEventListener("click", function () {
      var list = board().querySelector('.tiles[data-column="' + target + '"]');
      if (!list || !select.value) { return; }
      var from = originOf(tile);
      close();
      list.appendChild(tile);
      refreshEmpty();
      save(tile, from, { assignee: select.value });
      tile.focus({ preventScroll: true });
    });
    cancel.addEventListener("click", function () {
      close();
      tile.focus();
      announce(key + " stays in " + columnLabel(origin.status) + ".");
    });
    box.addEventListener("keydown", function (event) { event.stopPropagation(); });
    announce(text + " Choose an assignee in the card to move it.");
    select.focus();
    tile.scrollIntoView({ block: "nearest" });
  }

  // --- drag and drop -------------------------------------------------------------------------

  function enableDragging() {
    if (!window.Sortable) { return; }
    document.querySelectorAll(".tiles").forEach(function (list) {
      if (list.getAttribute("data-sortable")) { return; }
      list.setAttribute("data-sortable", "1");
      var origin = null;
      window.Sortable.create(list, {
        group: "board",
        draggable: ".tile",
        filter: "select, button, input, option",
        preventOnFilter: false,
        animation: 120,
        ghostClass: "tile-ghost",
        chosenClass: "tile-chosen",
        emptyInsertThreshold: 24,
        forceFallback: true, // pointer events, the same for mouse, pen and touch
        fallbackOnBody: true,
        onStart: function (event) { busy(true); origin = originOf(event.item); },
        onEnd: function (event) {
          busy(false);
          var tile = event.item;
          if (!origin || samePlace(tile, origin)) { return; }
          refreshEmpty();
          save(tile, origin);
          tile.focus({ preventScroll: true });
        },
      });
    });
  }

  // --- the keyboard path ---------------------------------------------------------------------

  function position(tile) {
    var tiles = tilesOf(listOf(tile));
    return (tiles.indexOf(tile) + 1) + " of " + tiles.length;
  }

  function where(tile) { return columnLabel(listOf(tile).getAttribute("data-column")) + ", " + position(tile); }

  function keyMove(tile, key) {
    var list = listOf(tile);
    if (key === "ArrowUp" || key === "ArrowDown") {
      var tiles = tilesOf(list);
      var index = tiles.indexOf(tile);
      if (key === "ArrowUp" && index > 0) { list.insertBefore(tile, tiles[index - 1]); }
      if (key === "ArrowDown" && index < tiles.length - 1) { list.insertBefore(tile, tiles[index + 1].nextElementSibling); }
    } else {
      var lists = Array.prototype.slice.call(document.querySelectorAll(".tiles"));
      var next = lists[lists.indexOf(list) + (key === "ArrowRight" ? 1 : -1)];
      if (!next) { return; }
      var at = Math.min(tilesOf(list).indexOf(tile), tilesOf(next).length);
      next.insertBefore(tile, tilesOf(next)[at] || null);
      if (NARROW.matches) { showColumn(next.getAttribute("data-column")); }
    }
    refreshEmpty();
    tile.focus();
    tile.scrollIntoView({ block: "nearest", inline: "nearest" });
    announce(where(tile));
  }

  document.addEventListener("keydown", function (event) {
    var tile = event.target;
    if (!tile || !tile.classList || !tile.classList.contains("tile")) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key;
    if (grabbed && grabbed.tile === tile) {
      if (/^Arrow(Up|Down|Left|Right)$/.test(key)) { event.preventDefault(); keyMove(tile, key); return; }
      if (key === " " || key === "Enter") {
        event.preventDefault();
        var held = grabbed;
        grabbed = null;
        tile.classList.remove("tile-grabbed");
        busy(false);
        if (samePlace(tile, held.origin)) { announce(tile.getAttribute("data-key") + " dropped where it was."); return; }
        save(tile, held.origin);
        return;
      }
      if (key === "Escape" || key === "Tab") {
        if (key === "Escape") { event.preventDefault(); }
        putBack(tile, grabbed.origin);
        grabbed = null;
        tile.classList.remove("tile-grabbed");
        busy(false);
        tile.focus();
        announce("Move cancelled; " + tile.getAttribute("data-key") + " is back in " + where(tile) + ".");
      }
      return;
    }
    if (key === "x" || key === "X") {
      var pick = tile.querySelector(".pick");
      if (pick) { event.preventDefault(); pick.checked = !pick.checked; picked(pick); }
    } else if (key === " ") {
      event.preventDefault();
      grabbed = { tile: tile, origin: originOf(tile) };
      tile.classList.add("tile-grabbed");
      busy(true);
      announce("Picked up " + tile.getAttribute("data-key") + " in " + where(tile) +
        ". Arrow keys move it, Space drops it, Escape cancels.");
    } else if (key === "Enter") {
      var link = tile.querySelector("a[href]");
      if (link) { event.preventDefault(); link.click(); }
    }
  });

  // --- one column at a time on a phone -------------------------------------------------------

  function showColumn(status) {
    var root = board();
    if (!root) { return; }
    var columns = root.querySelectorAll(".column");
    if (!root.querySelector('.column[data-status="' + status + '"]')) { status = columns[0].getAttribute("data-status"); }
    columns.forEach(function (column) {
      column.hidden = NARROW.matches && column.getAttribute("data-status") !== status;
    });
    document.querySelectorAll(".column-index a[data-tab]").forEach(function (link) {
      if (NARROW.matches && link.getAttribute("data-tab") === status) { link.setAttribute("aria-current", "true"); } else { link.removeAttribute("aria-current"); }
    });
    try { window.sessionStorage.setItem(TAB_KEY, status); } catch (error) { /* private mode */ }
  }

  function currentColumn() {
    try { return window.sessionStorage.getItem(TAB_KEY) || "backlog"; } catch (error) { return "backlog"; }
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest(".column-index a[data-tab]") : null;
    if (!link || !NARROW.matches) { return; }
    event.preventDefault();
    showColumn(link.getAttribute("data-tab"));
  });

  // The column tabs sit outside the live region: take their counts from the columns.
  function syncTabs() {
    document.querySelectorAll(".column").forEach(function (column) {
      var status = column.getAttribute("data-status");
      var badge = column.querySelector("[data-count]");
      var link = document.querySelector('.column-index a[data-tab="' + status + '"]');
      if (badge && link) { link.textContent = columnLabel(status) + " (" + badge.textContent + ")"; }
    });
  }

  function layout() {
    var root = board();
    if (!root) { return; }
    document.body.classList.toggle("board-tabs", NARROW.matches);
    showColumn(currentColumn());
    var hint = document.querySelector(".scroll-hint");
    if (hint) { hint.hidden = NARROW.matches || root.scrollWidth <= root.clientWidth + 1; }
  }

  // --- choosing cards for the bulk bar ------------------------------------------------------

  var chosen = {};  // key -> true, kept across live refreshes and filter changes
  var lastPick = null;

  function bulkBar() { return document.getElementById("bulk-form"); }
  function chosenKeys() { return Object.keys(chosen); }

  function showChoice() {
    var bar = bulkBar();
    var keys = chosenKeys();
    document.querySelectorAll(".tile").forEach(function (tile) {
      var on = !!chosen[tile.getAttribute("data-key")];
      tile.classList.toggle("is-picked", on);
      var pick = tile.querySelector(".pick");
      if (pick) { pick.checked = on; }
    });
    document.body.classList.toggle("board-picked", keys.length > 0);
    if (!bar) { return; }
    var said = bar.querySelector("[data-bulk-said]");
    var telling = said && !said.hidden;  // what the last change did stays until dismissed
    bar.hidden = keys.length === 0 && !telling;
    var count = bar.querySelector("[data-picked-count]");
    if (count) {
      count.textContent = keys.length === 1 ? "1 card chosen: " + keys[0] : keys.length + " cards chosen";
    }
    var clear = bar.querySelector("[data-clear-picks]");
    if (clear) { clear.hidden = bar.hidden; }
  }

  function picked(box) {
    var tile = box.closest(".tile");
    if (!tile) { return; }
    var key = tile.getAttribute("data-key");
    if (box.checked) { chosen[key] = true; } else { delete chosen[key]; }
    lastPick = box;
    showChoice();
  }

  document.addEventListener("click", function (event) {
    var box = event.target;
    if (!box.classList || !box.classList.contains("pick")) { return; }
    // Shift-click chooses (or clears) every card between the last box and this one.
    if (event.shiftKey && lastPick && lastPick !== box && document.body.contains(lastPick)) {
      var boxes = Array.prototype.slice.call(document.querySelectorAll(".tile .pick"));
      var from = boxes.indexOf(lastPick);
      var to = boxes.indexOf(box);
      if (from >= 0 && to >= 0) {
        boxes.slice(Math.min(from, to), Math.max(from, to) + 1).forEach(function (other) {
          other.checked = box.checked;
          var key = other.closest(".tile").getAttribute("data-key");
          if (box.checked) { chosen[key] = true; } else { delete chosen[key]; }
        });
      }
    }
    picked(box);
  });

  document.addEventListener("click", function (event) {
    var mode = event.target.closest ? event.target.closest("[data-select-mode]") : null;
    if (mode) {
      var on = mode.getAttribute("aria-pressed") !== "true";
      mode.setAttribute("aria-pressed", on ? "true" : "false");
      document.body.classList.toggle("board-picking", on);
      if (!on) { chosen = {}; showChoice(); }
      return;
    }
    if (event.target.closest && event.target.closest("[data-clear-picks]")) {
      chosen = {};
      var said = document.querySelector("[data-bulk-said]");
      if (said) { said.hidden = true; }
      showChoice();
      announce("No cards chosen.");
    }
  });

  // What the last change did stays in the bar (the count above it follows the choice): how
  // many were saved, and each refused card with its reason.
  function bulkResults(bar, data) {
    var said = bar.querySelector("[data-bulk-said]");
    if (!said) { return; }
    said.textContent = "";
    var saved = (data.results || []).filter(function (result) { return result.ok; }).length;
    var head = document.createElement("p");
    head.textContent = "Saved " + saved + " of " + (data.results || []).length + (data.results && data.results.length === 1 ? " card." : " cards.");
    said.appendChild(head);
    var list = document.createElement("ul");
    (data.results || []).forEach(function (result) {
      if (result.ok) { return; }
      var item = document.createElement("li");
      item.textContent = result.key + " was not changed: " + result.error;
      list.appendChild(item);
    });
    if (!data.results) {
      var problem = document.createElement("li");
      problem.textContent = data.notice || data.error || "The change was not saved.";
      list.appendChild(problem);
    }
    if (list.children.length) { said.appendChild(list); }
    said.hidden = false;
  }

  document.addEventListener("submit", function (event) {
    var bar = event.target;
    if (bar.id !== "bulk-form" || !window.fetch) { return; }
    event.preventDefault();
    var body = new URLSearchParams(new FormData(bar));
    busy(true);
    bar.setAttribute("aria-busy", "true");
    fetch(bar.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json" },
      body: body,
    }).then(function (response) {
      return response.json().catch(function () { return { ok: false, notice: "The change was not saved (" + response.status + "); reload the board and try again." }; });
    }).then(function (data) {
      var refused = {};
      (data.results || []).forEach(function (result) {
        if (!result.ok) { refused[result.key] = true; }
        var tile = document.getElementById("tile-" + result.key);
        if (result.ok && tile) { tile.setAttribute("data-revision", String(result.revision)); describe(tile); }
      });
      chosen = refused;  // the refused stay chosen, to fix and send again
      bulkResults(bar, data);
      announce(data.notice || data.error || "Saved.");
      showChoice();
    }).catch(function () {
      announce("The server could not be reached; nothing was changed. Try again in a moment.");
    }).then(function () {
      bar.removeAttribute("aria-busy");
      busy(false);
      document.dispatchEvent(new CustomEvent("crewboard:refresh"));
    });
  });

  // --- filters, sort and grouping without a reload ----------------------------------------

  function filterForm() { return document.getElementById("board-filter-form"); }

  function filterUrl(form) {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (value !== "" && !(name === "sort" && value === "board")) { params.append(name, value); }
    });
    var query = params.toString();
    return form.getAttribute("action") + (query ? "?" + query : "");
  }

  var filtering = 0;
  function applyFilters() {
    var form = filterForm();
    if (!form || !window.fetch || !window.history.replaceState) { return false; }
    var url = filterUrl(form);
    var ticket = ++filtering;
    document.body.setAttribute("data-changes", String(Number(document.body.getAttribute("data-changes") || 0) + 1));
    fetch(url, { credentials: "same-origin", headers: { "X-Live": "1" } }).then(function (response) {
      if (!response.ok) { throw new Error(String(response.status)); }
      return response.text();
    }).then(function (html) {
      if (ticket !== filtering) { return; }  // a later change is on its way
      var fresh = new DOMParser().parseFromString(html, "text/html");
      var body = fresh.getElementById("board-body");
      if (!body) { return; }
      document.getElementById("board-body").replaceWith(body);
      window.history.replaceState(null, "", url);
      var here = url.replace(/^[^?]*/, "");
      var query = here.replace(/^\?/, "");
      var viewQuery = document.querySelector("[data-view-query]");
      var freshQuery = fresh.querySelector("[data-view-query]");
      if (viewQuery && freshQuery) { viewQuery.value = freshQuery.value; }
      document.querySelectorAll("[data-next]").forEach(function (input) { input.value = form.getAttribute("action") + here; });
      var clear = document.querySelector("[data-clear-filters]");
      var freshClear = fresh.querySelector("[data-clear-filters]");
      if (clear && freshClear) { clear.hidden = freshClear.hidden; }
      var summary = document.querySelector(".board-filters > summary");
      var freshSummary = fresh.querySelector(".board-filters > summary");
      if (summary && freshSummary) { summary.innerHTML = freshSummary.innerHTML; }
      document.querySelectorAll("[data-view-link]").forEach(function (link) {
        if (link.getAttribute("href").replace(/^[^?]*\??/, "") === query) { link.setAttribute("aria-current", "true"); } else { link.removeAttribute("aria-current"); }
      });
      setUp();
      var shown = document.querySelectorAll(".tile").length;
      announce("Board updated: " + shown + (shown === 1 ? " card" : " cards") + " shown.");
    }).catch(function () {
      if (ticket === filtering) { window.location.assign(url); }  // the plain way
    });
    return true;
  }

  var typing = null;
  document.addEventListener("input", function (event) {
    var form = filterForm();
    if (!form || !form.contains(event.target) || event.target.tagName === "SELECT") { return; }
    window.clearTimeout(typing);
    typing = window.setTimeout(applyFilters, 300);
  });
  document.addEventListener("change", function (event) {
    var form = filterForm();
    if (!form || !form.contains(event.target) || event.target.tagName !== "SELECT") { return; }
    applyFilters();
  });
  document.addEventListener("submit", function (event) {
    if (event.target !== filterForm()) { return; }
    window.clearTimeout(typing);
    if (applyFilters()) { event.preventDefault(); }
  });
  document.addEventListener("click", function (event) {
    var clear = event.target.closest ? event.target.closest("[data-clear-filters]") : null;
    var form = filterForm();
    if (!clear || !form) { return; }
    event.preventDefault();
    form.querySelectorAll("input[type=search], input[type=text]").forEach(function (input) { input.value = ""; });
    form.querySelectorAll("select").forEach(function (select) { select.selectedIndex = 0; });
    applyFilters();
  });

  // "/" focuses the page's filter (app.js): open the filters first, so there is one to focus.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var field = event.target.closest ? event.target.closest("input, textarea, select, [contenteditable]") : null;
    var tool = document.querySelector(".board-filters");
    if (!field && tool) { tool.open = true; }
  }, true);

  // One tool open at a time; Escape or a click elsewhere closes it.
  document.addEventListener("toggle", function (event) {
    var opened = event.target;
    if (!opened.classList || !opened.classList.contains("board-tool") || !opened.open) { return; }
    document.querySelectorAll(".board-tool[open]").forEach(function (other) { if (other !== opened) { other.open = false; } });
  }, true);
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") { return; }
    var open = document.querySelector(".board-tool[open]");
    if (open && open.contains(event.target)) { open.open = false; open.querySelector("summary").focus(); }
  });
  document.addEventListener("click", function (event) {
    if (NARROW.matches) { return; }  // on a phone an open tool sits in the page, not over it
    document.querySelectorAll(".board-tool[open]").forEach(function (open) {
      if (!open.contains(event.target)) { open.open = false; }
    });
  });

  function setUp() {
    document.body.classList.add("board-js");
    var mode = document.querySelector("[data-select-mode]");
    if (mode) { mode.hidden = false; }
    // With this script a card is the focus stop (Enter opens it, Space picks it up).
    document.querySelectorAll(".tile").forEach(function (tile) {
      tile.tabIndex = 0;
      tile.setAttribute("data-item", "");
      var link = tile.querySelector("a[data-item]");
      if (link) { link.tabIndex = -1; link.removeAttribute("data-item"); }
    });
    enableDragging();
    refreshEmpty();
    syncTabs();
    layout();
    showChoice();
  }

  if (NARROW.addEventListener) { NARROW.addEventListener("change", layout); }
  window.addEventListener("resize", function () { window.clearTimeout(layout.pending); layout.pending = window.setTimeout(layout, 100); });
  document.addEventListener("crewboard:refreshed", setUp);
  setUp();
})();

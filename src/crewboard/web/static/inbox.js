// The inbox decides without a reload: a row's forms (approve, send back, reject) and a
// decision's Undo are sent with fetch and answered in JSON; the row leaves the list and a
// note above it says what the decision did, with its follow-up task and Undo. Without this
// script the same forms post and the server redirects back to the list with that note.
(function () {
  "use strict";

  var notes = document.querySelector("[data-decided-notes]");
  if (!notes) { return; }

  function post(form) {
    return fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      body: new URLSearchParams(new FormData(form)),
    }).then(function (response) {
      return response.json().catch(function () {
        return { ok: false, error: "The server did not answer; reload the page and try again." };
      });
    }, function () {
      return { ok: false, error: "Crewboard could not be reached; your decision was not sent." };
    });
  }

  function refresh() { document.dispatchEvent(new CustomEvent("crewboard:refresh")); }

  // An open note or reason being written holds the live refresh, which would replace it.
  function holdRefresh() {
    var writing = document.querySelector("[data-live-region] details.decide-step[open]") !== null;
    if (writing) { document.body.setAttribute("data-busy", "decide"); }
    else if (document.body.getAttribute("data-busy") === "decide") { document.body.removeAttribute("data-busy"); }
  }
  // Hold it from the press on: the toggle event comes a moment later, and a refresh landing
  // in that moment would close the step just opened.
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("details.decide-step > summary")) {
      document.body.setAttribute("data-busy", "decide");
    }
  }, true);
  document.addEventListener("toggle", function (event) {
    var step = event.target;
    if (!step.matches || !step.matches("details.decide-step")) { return; }
    if (step.open) {
      // One step open at a time in a row; its field takes the focus.
      var row = step.closest("[data-decide]");
      row.querySelectorAll("details.decide-step[open]").forEach(function (other) {
        if (other !== step) { other.open = false; }
      });
      var field = step.querySelector("textarea");
      // Not when the person is already in the step (the event comes a moment late).
      if (field && !(step.contains(document.activeElement) && !document.activeElement.matches("summary"))) { field.focus(); }
    }
    holdRefresh();
  }, true);

  function text(tag, words, className) {
    var node = document.createElement(tag);
    node.textContent = words;
    if (className) { node.className = className; }
    return node;
  }

  function link(href, words, attribute) {
    var anchor = text("a", words);
    anchor.href = href;
    if (attribute) { anchor.setAttribute(attribute, ""); }
    return anchor;
  }

  var MAX_NOTES = 4;
  var TONES = { approved: "ok", saved_to_memory: "ok", rejected: "bad", revision_requested: "warn" };

  // The note a decision leaves, as the server writes it in inbox_macros.html.
  function noteFor(decided, csrf, back) {
    var note = document.createElement("div");
    note.className = "decided-note";
    note.setAttribute("data-decided", decided.id);
    var said = document.createElement("p");
    said.appendChild(text("span", decided.said, "badge " + (TONES[decided.status] || "")));
    said.appendChild(document.createTextNode(" "));
    said.appendChild(link(decided.url, decided.title));
    said.appendChild(document.createTextNode((decided.taskKey ? " (" + decided.taskKey + ")" : "") + ". "));
    if (decided.followUp) {
      said.appendChild(document.createTextNode("Follow-up task: "));
      said.appendChild(link(decided.followUp.url, decided.followUp.key + " " + decided.followUp.title, "data-follow-up"));
      said.appendChild(document.createTextNode("."));
    }
    note.appendChild(said);
    if (decided.undo) {
      var form = document.createElement("form");
      form.method = "post";
      form.action = decided.undo;
      form.className = "inline";
      form.setAttribute("data-undo-form", "");
      [["csrf", csrf], ["next", back], ["from", "list"]].forEach(function (pair) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = pair[0];
        input.value = pair[1];
        form.appendChild(input);
      });
      var button = text("button", "Undo");
      button.type = "submit";
      button.setAttribute("aria-label", "Undo: " + decided.said + " " + decided.title);
      form.appendChild(button);
      note.appendChild(form);
      expire(note, decided.undoUntil);
    }
    return note;
  }

  // Undo goes once the server would refuse it (its window closed).
  function expire(note, until) {
    var left = until ? Date.parse(until) - Date.now() : 0;
    if (!(left > 0)) { return; }
    window.setTimeout(function () {
      var form = note.querySelector("[data-undo-form]");
      if (form) { form.remove(); }
    }, Math.min(left, 2147483647));
  }
  notes.querySelectorAll("[data-undo-until]").forEach(function (note) {
    expire(note, note.getAttribute("data-undo-until"));
  });

  function showError(place, words) {
    var old = place.querySelector(".error");
    if (old) { old.remove(); }
    var error = text("p", words, "error");
    error.setAttribute("role", "alert");
    place.appendChild(error);
  }

  // The next row's Approve takes the focus, so three approvals are three presses.
  function focusAfter(row) {
    var next = row.nextElementSibling;
    while (next && !next.querySelector("[data-approve]")) { next = next.nextElementSibling; }
    var target = next ? next.querySelector("[data-approve]") : notes.querySelector("[data-undo-form] button");
    if (target) { target.focus(); }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.hasAttribute("data-decide-form")) { decide(event, form); }
    else if (form.hasAttribute("data-undo-form") && notes.contains(form)) { undo(event, form); }
  });

  function decide(event, form) {
    event.preventDefault();
    var row = form.closest("li");
    var buttons = row.querySelectorAll("button, summary");
    buttons.forEach(function (button) { button.setAttribute("aria-disabled", "true"); });
    document.body.setAttribute("data-busy", "decide");
    var csrf = form.elements.csrf.value;
    var back = form.elements.next.value;
    post(form).then(function (answer) {
      document.body.removeAttribute("data-busy");
      buttons.forEach(function (button) { button.removeAttribute("aria-disabled"); });
      if (!answer.ok) {
        showError(form.closest("[data-decide]"), answer.error || "The decision was not taken.");
        return;
      }
      if (answer.decided) { notes.prepend(noteFor(answer.decided, csrf, back)); }
      else { notes.prepend(text("p", answer.notice, "decided-note")); }
      // The newest few stay; older notes go (their Undo lives on the hand-in's page).
      Array.prototype.slice.call(notes.children, MAX_NOTES).forEach(function (old) { old.remove(); });
      focusAfter(row);
      row.remove();
      holdRefresh();
      refresh();
    });
  }

  function undo(event, form) {
    event.preventDefault();
    var note = form.closest(".decided-note");
    post(form).then(function (answer) {
      if (!answer.ok) {
        showError(note, answer.error || "The decision was not undone.");
        return;
      }
      var said = text("p", answer.notice, "decided-note");
      note.replaceWith(said);
      refresh();
    });
  }
})();

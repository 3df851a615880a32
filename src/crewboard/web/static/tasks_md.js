// Checkbox lines of a spec file (templates/tasks_md.html): `[-]` shows as a mixed box; ticking
// one saves the file's next revision without a reload (the form posts the same fields without
// this script). Each save gives every box on the page the file's new version to save from.
(function () {
  "use strict";
  var root = document.querySelector("[data-tasks-md]");
  if (!root) { return; }
  var status = root.querySelector("[data-tasks-md-status]");

  root.querySelectorAll("input.task-box[data-indeterminate]").forEach(function (box) {
    box.indeterminate = true;
  });

  // Words selected in a title (to comment on them), or a commented passage in it clicked (to
  // show its thread), are no click on its box.
  root.addEventListener("click", function (event) {
    var label = event.target.closest && event.target.closest("label.task-title");
    if (!label) { return; }
    var selection = window.getSelection();
    var selecting = selection && !selection.isCollapsed && selection.toString().trim();
    if (selecting || event.target.closest("mark[data-threads]")) { event.preventDefault(); }
  });

  function announce(text) {
    if (status) { status.textContent = ""; window.setTimeout(function () { status.textContent = text; }, 30); }
  }

  function showProblem(item, text, reload) {
    var old = item.querySelector(".task-problem");
    if (old) { old.remove(); }
    var note = document.createElement("p");
    note.className = "flash error task-problem";
    note.setAttribute("role", "alert");
    note.textContent = text + " ";
    if (reload) {
      var link = document.createElement("a");
      link.href = reload;
      link.textContent = "Show the new text";
      note.appendChild(link);
    }
    item.querySelector(".task-head").insertAdjacentElement("afterend", note);
  }

  function settle(item, box, data) {
    box.indeterminate = false;
    box.checked = data.box === "x";
    box.removeAttribute("data-indeterminate");
    item.classList.remove("task-done", "task-in-progress", "task-pending");
    item.classList.add(data.box === "x" ? "task-done" : data.box === "-" ? "task-in-progress" : "task-pending");
    root.querySelectorAll("[data-expected-version]").forEach(function (input) {
      input.value = data.contentVersion;
    });
    var shown = item.querySelector("[data-task-status]");
    if (shown && data.task) {
      shown.textContent = data.task.statusLabel;
      shown.classList.toggle("ok", data.task.status === "done" || data.task.status === "approved");
      shown.classList.remove("warn");
    } else if (shown && !data.task) {
      shown.textContent = data.box === "x" ? "done" : "not done";
      shown.className = "visually-hidden";
      shown.setAttribute("data-task-status", "");
    }
    if (data.task) {  // the page's list of the file's tasks on the board
      document.querySelectorAll('[data-file-task-line="' + data.line + '"]').forEach(function (node) {
        node.textContent = data.task.statusLabel;
      });
    }
    document.querySelectorAll("[data-file-revision]").forEach(function (node) {
      node.textContent = String(data.revision);
    });
    item.classList.add("saved");
    window.setTimeout(function () { item.classList.remove("saved"); }, 1200);
  }

  root.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.classList || !box.classList.contains("task-box")) { return; }
    var form = box.form;
    var item = box.closest("li.task-item");
    var was = !box.checked;
    var wasMixed = box.hasAttribute("data-indeterminate");
    var old = item.querySelector(".task-problem");
    if (old) { old.remove(); }
    // Read the form before the boxes are held: a disabled box is not sent.
    var body = new URLSearchParams(new FormData(form));
    item.setAttribute("aria-busy", "true");
    root.querySelectorAll("input.task-box").forEach(function (b) { b.dataset.wasDisabled = b.disabled ? "1" : ""; b.disabled = true; });
    fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json" },
      body: body,
    }).then(function (response) {
      return response.json();
    }).then(function (data) {
      if (data.ok) {
        settle(item, box, data);
        announce(data.notice);
      } else {
        box.checked = was;
        box.indeterminate = wasMixed;
        showProblem(item, data.error || "The box was not saved.", data.conflict ? data.reload : null);
      }
    }).catch(function () {
      box.checked = was;
      box.indeterminate = wasMixed;
      showProblem(item, "The server could not be reached; the box was not saved. Try again in a moment.", null);
    }).then(function () {
      item.removeAttribute("aria-busy");
      root.querySelectorAll("input.task-box").forEach(function (b) { b.disabled = b.dataset.wasDisabled === "1"; });
      box.focus();
    });
  });
}());

// Spec file page, reviewed like a document. Words selected in the rendered text get a small
// "Comment" button; it opens the new-thread form beside them and sends where the words are
// (block and offset of both ends, web/spec_text.py numbers the blocks), which the server maps
// to the file's source. Threads sit level with their passage in the margin on a wide screen,
// after the block that holds it on a narrow one; a marked passage and its thread point at each
// other. Without this script the threads are listed in document order and the form takes a
// pasted passage.
(function () {
  "use strict";
  var doc = document.querySelector(".spec-doc");
  var column = document.getElementById("threads");
  if (!doc || !column) { return; }
  var review = document.querySelector(".spec-review");
  var list = column.querySelector(".thread-list");
  var threads = Array.prototype.slice.call(column.querySelectorAll("article.thread"));
  var button = document.querySelector(".comment-on-selection");
  var box = document.getElementById("new-thread-box");
  var form = document.getElementById("new-thread");
  var wide = window.matchMedia("(min-width: 1000px)");
  var GAP = 8;

  function blocks() { return Array.prototype.slice.call(doc.querySelectorAll("span.src[data-b]")); }

  function textBefore(span, node, offset) {
    var range = document.createRange();
    range.setStart(span, 0);
    range.setEnd(node, offset);
    return range.toString().length;
  }

  // The selection as (block, offset) of both ends and the words shown, or null. The words are
  // those of the numbered blocks only: a checkbox, a task's key and status are not the file's.
  function selected() {
    var selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) { return null; }
    var range = selection.getRangeAt(0);
    var touched = blocks().filter(function (span) { return range.intersectsNode(span); });
    if (!touched.length) { return null; }
    var first = touched[0], last = touched[touched.length - 1];
    var from = first.contains(range.startContainer) ? textBefore(first, range.startContainer, range.startOffset) : 0;
    var to = last.contains(range.endContainer) ? textBefore(last, range.endContainer, range.endOffset) : last.textContent.length;
    if (from >= first.textContent.length && touched.length > 1) { touched.shift(); first = touched[0]; from = 0; }
    if (to === 0 && touched.length > 1) { touched.pop(); last = touched[touched.length - 1]; to = last.textContent.length; }
    var words = touched.map(function (span, at) {
      var text = span.textContent;
      return text.slice(at === 0 ? from : 0, at === touched.length - 1 ? to : text.length);
    }).join("\n");
    if (!words.trim()) { return null; }
    return { start: first.dataset.b + ":" + from, end: last.dataset.b + ":" + to, words: words,
             rect: range.getBoundingClientRect() };
  }

  // --- the Comment button and the new-thread form beside the words ------------------------------
  var chosen = null;

  function offerComment() {
    if (!button) { return; }
    chosen = selected();
    if (!chosen) { button.hidden = true; return; }
    var card = button.offsetParent || doc;
    var around = card.getBoundingClientRect();
    button.hidden = false;
    var left = Math.min(chosen.rect.right - around.left, around.width - button.offsetWidth - GAP);
    button.style.top = (chosen.rect.bottom - around.top + 6) + "px";
    button.style.left = Math.max(GAP, left) + "px";
  }

  function field(name) { return form.querySelector("[name='" + name + "']"); }

  function openForm() {
    if (!chosen || !form) { return; }
    field("sel_revision").value = doc.dataset.revision;
    field("sel_start").value = chosen.start;
    field("sel_end").value = chosen.end;
    field("sel_text").value = chosen.words;
    document.getElementById("thread-selected").textContent = chosen.words.trim();
    form.querySelector(".selected-passage").hidden = false;
    form.querySelector(".typed-passage").hidden = true;
    box.open = true;
    box.classList.add("floating");
    var holder = box.offsetParent || column;
    box.style.top = (chosen.rect.top + window.scrollY - (holder.getBoundingClientRect().top + window.scrollY)) + "px";
    if (!wide.matches) { box.style.top = (parseFloat(box.style.top) + chosen.rect.height + GAP) + "px"; }
    button.hidden = true;
    document.getElementById("thread-body").focus({ preventScroll: true });
    box.scrollIntoView({ block: "nearest" });
  }

  function closeForm() {
    ["sel_revision", "sel_start", "sel_end", "sel_text"].forEach(function (name) { field(name).value = ""; });
    form.querySelector(".selected-passage").hidden = true;
    form.querySelector(".typed-passage").hidden = false;
    box.classList.remove("floating");
    box.style.top = "";
    box.open = false;
  }

  if (button && form) {
    doc.addEventListener("mouseup", function () { window.setTimeout(offerComment, 0); });
    doc.addEventListener("keyup", offerComment);
    button.addEventListener("mousedown", function (event) { event.preventDefault(); });
    button.addEventListener("click", openForm);
    form.querySelector(".cancel-thread").addEventListener("click", closeForm);
  }

  // --- threads beside their passages -------------------------------------------------------------
  function passage(thread) {
    var id = thread.dataset.thread;
    return doc.querySelector("mark[data-threads~='" + id + "']") ||
      (thread.dataset.block ? document.getElementById("b" + thread.dataset.block) : null);
  }

  function topLevel(node) {
    while (node && node.parentElement !== doc) { node = node.parentElement; }
    return node;
  }

  function layout() {
    threads.forEach(function (thread) { thread.style.marginTop = ""; });
    if (wide.matches) {
      threads.forEach(function (thread) { list.appendChild(thread); });
      threads.forEach(function (thread) {
        var target = passage(thread);
        if (!target) { return; }
        var want = target.getBoundingClientRect().top - thread.getBoundingClientRect().top;
        var margin = parseFloat(window.getComputedStyle(thread).marginTop) || 0;
        if (want > 0) { thread.style.marginTop = (margin + want) + "px"; }
      });
    } else {
      var after = new Map();
      threads.forEach(function (thread) {
        var target = passage(thread);
        var block = target && topLevel(target);
        if (!block) { list.appendChild(thread); return; }
        (after.get(block) || block).after(thread);
        after.set(block, thread);
      });
    }
  }

  function activate(id, focus) {
    doc.querySelectorAll("mark.active").forEach(function (mark) { mark.classList.remove("active"); });
    threads.forEach(function (thread) { thread.classList.toggle("active", thread.dataset.thread === id); });
    doc.querySelectorAll("mark[data-threads~='" + id + "']").forEach(function (mark) { mark.classList.add("active"); });
    var thread = document.getElementById("thread-" + id);
    if (focus && thread) {
      thread.querySelector("details").open = true;
      thread.querySelector("summary").focus({ preventScroll: true });
      thread.scrollIntoView({ block: "nearest" });
    }
  }

  function showThreadOf(mark) {
    var ids = mark.dataset.threads.split(" ");  // passages may overlap: each press the next
    var active = document.querySelector("article.thread.active");
    var current = active ? ids.indexOf(active.dataset.thread) : -1;
    activate(ids[(current + 1) % ids.length], true);
  }
  doc.addEventListener("click", function (event) {
    var mark = event.target.closest("mark[data-threads]");
    if (!mark || !window.getSelection().isCollapsed) { return; }
    showThreadOf(mark);
  });
  // The keyboard reaches each commented passage once (its first piece): Enter shows its thread.
  var reached = {};
  doc.querySelectorAll("mark[data-threads]").forEach(function (mark) {
    if (reached[mark.dataset.threads]) { return; }
    reached[mark.dataset.threads] = true;
    mark.tabIndex = 0;
    mark.setAttribute("role", "button");
    mark.setAttribute("aria-label", "Show the comments on: " + mark.textContent.trim().slice(0, 80));
  });
  doc.addEventListener("keydown", function (event) {
    var mark = event.target.closest && event.target.closest("mark[data-threads]");
    if (!mark || (event.key !== "Enter" && event.key !== " ")) { return; }
    event.preventDefault();
    showThreadOf(mark);
  });
  threads.forEach(function (thread) {
    thread.addEventListener("focusin", function () { activate(thread.dataset.thread, false); });
    thread.addEventListener("click", function () { activate(thread.dataset.thread, false); });
    var link = thread.querySelector("[data-thread-link]");
    if (link) {
      link.addEventListener("click", function (event) {
        var target = passage(thread);
        if (!target) { return; }
        event.preventDefault();
        activate(thread.dataset.thread, false);
        target.scrollIntoView({ block: "center" });
      });
    }
    var reply = thread.querySelector("details.reply");
    if (reply) {
      reply.addEventListener("toggle", function () {
        // Not when the person is already in it (the event comes a moment late).
        if (reply.open && !(reply.contains(document.activeElement) && !document.activeElement.matches("summary"))) { reply.querySelector("textarea").focus(); }
      });
    }
  });
  document.addEventListener("toggle", function () { if (wide.matches) { layout(); } }, true);
  wide.addEventListener("change", layout);
  window.addEventListener("resize", function () { if (wide.matches) { layout(); } });
  review.classList.add("placed");
  if (!wide.matches) {  // on a phone each thread is one line after its block until opened
    threads.forEach(function (thread) { thread.querySelector("details").open = false; });
  }
  layout();
  var landed = /^#thread-(.+)$/.exec(window.location.hash);  // back from writing to a thread
  if (landed && document.getElementById("thread-" + landed[1])) { activate(landed[1], true); }
}());

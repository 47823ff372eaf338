// Authoring studio editor: live validation, findings linked to the JSON, save and publish.
// No framework; talks to the REST API with the page's CSRF token.
//
// The JSON editor is CodeMirror 6 (static/vendor/studio-editor.js, built from frontend/): schema
// completion and hover, JSON and schema lint, and the server's findings as diagnostics at their
// paths. Without that bundle the plain <textarea> in the page is used with the same features that
// a textarea can offer. Either way the editor is reached through one small interface ("adapter").
//
// window.vivaStudio.editor exposes that adapter (the browser tests read the cursor through it).
(function () {
  "use strict";
  const root = document.getElementById("studio");
  if (!root) return;
  const textarea = document.getElementById("document");
  const parseStatus = document.getElementById("parse-status");
  const cursorPosition = document.getElementById("cursor-position");
  const schemaStatus = document.getElementById("schema-status");
  const fieldHelp = document.getElementById("field-help");
  const summary = document.getElementById("report-summary");
  const findingsBox = document.getElementById("report-findings");
  const saveButton = document.getElementById("save");
  const publishButton = document.getElementById("publish");
  const actionStatus = document.getElementById("action-status");
  const csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  // Translations: static/js/i18n.js (the page's JavaScript catalogue, English without it).
  const { gettext, tf } = window.vivaI18n;
  let revision = Number(root.dataset.revision);
  let lastReport = JSON.parse(document.getElementById("initial-report").textContent || "null");
  let timer = null;
  let requestNo = 0;
  let findingNo = 0;
  // Autosave (see "Save, autosave and publish" below).
  const autosaveStatus = document.getElementById("autosave-status");
  const AUTOSAVE_MS = 1500;
  const RETRY_MS = [3000, 6000, 15000, 30000, 60000];
  let autosaveTimer = null;
  let retryTimer = null;
  let retries = 0;
  let conflict = null; // a merge's open conflicts: autosave is off until the author chooses
  let failedText = null; // the text whose last save failed (leaving then only warns)
  let saving = 0;
  let queue = Promise.resolve(true);

  async function api(url, method, body) {
    let response;
    try {
      response = await fetch(url, {
        method,
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      return { status: 0, data: { error: { message: gettext("The server could not be reached. Check your connection and try again.") } } };
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { status: response.status, data };
  }

  function errorMessage(data, fallback) {
    return (data && data.error && data.error.message) || fallback;
  }

  function showCursor(pos, help) {
    cursorPosition.textContent = tf(gettext("Line %(line)s, column %(column)s."), { line: pos.line, column: pos.column });
    if (help === undefined || !window.VivaStudioEditor) return;
    // What the schema says about the field at the cursor (the hover tooltip, for the keyboard).
    fieldHelp.replaceChildren();
    fieldHelp.hidden = !help;
    if (!help) return;
    const name = document.createElement("strong");
    name.textContent = help.name;
    fieldHelp.append(name, help.type ? " (" + help.type + ")" : "", help.description ? ": " : "");
    window.VivaStudioEditor.appendRich(fieldHelp, help.description);
  }

  // --- Editor adapters: {getText(), setReport(report), revealPath(path), focus(), cursor()} -------

  function codeMirrorEditor(lib) {
    const host = document.createElement("div");
    host.className = "json-editor";
    textarea.after(host);
    const editor = lib.create(host, {
      doc: textarea.value,
      id: "document-editor",
      labelledBy: "document-label",
      describedBy: "document-help document-keys parse-status",
      onChange: onEdit,
      onCursor: showCursor,
    });
    // The textarea stays in the page (hidden) for the no-JavaScript case; its label now names the
    // editor, and clicking the label focuses it.
    textarea.hidden = true;
    textarea.disabled = true;
    const label = document.getElementById("document-label");
    label.removeAttribute("for");
    label.addEventListener("click", () => editor.focus());
    document.getElementById("document-keys").hidden = false;
    fetch(root.dataset.schemaUrl, { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
      .then((schema) => {
        editor.setSchema(schema);
        schemaStatus.textContent = gettext("Schema hints on.");
      })
      .catch(() => { schemaStatus.textContent = gettext("Schema hints unavailable; server validation still runs."); });
    return {
      kind: "codemirror",
      view: editor.view,
      getText: editor.getText,
      setText(text) {
        editor.view.dispatch({ changes: { from: 0, to: editor.view.state.doc.length, insert: text } });
      },
      setReport: editor.setReport,
      focus: editor.focus,
      cursor: editor.cursor,
      fieldHelp: editor.fieldHelp,
      locate: editor.locate,
      diagnostics: editor.diagnostics,
      revealPath: editor.revealPath,
    };
  }

  function textareaEditor() {
    // Locate a path ("nodes[q-1].followUpPolicy.maxFollowUps") by searching the text.
    function locate(path) {
      const text = textarea.value;
      let from = 0;
      const parts = (path || "").match(/[^.[\]]+|\[[^\]]*\]/g) || [];
      let found = true;
      for (const part of parts) {
        if (part === "$") continue;
        if (part.startsWith("[")) {
          const key = part.slice(1, -1);
          if (/^\d+$/.test(key)) continue;
          const at = text.indexOf('"nodeId": "' + key + '"', from);
          const atPool = at < 0 ? text.indexOf('"poolId": "' + key + '"', from) : at;
          if (atPool >= 0) from = atPool; else found = false;
        } else {
          const at = text.indexOf('"' + part + '"', from);
          if (at >= 0) from = at; else { found = false; break; }
        }
      }
      return { from, found };
    }
    function cursor() {
      const head = textarea.selectionStart;
      const before = textarea.value.slice(0, head).split("\n");
      return { line: before.length, column: before[before.length - 1].length + 1, pos: head };
    }
    textarea.addEventListener("input", () => onEdit(textarea.value));
    for (const type of ["keyup", "click", "select"]) textarea.addEventListener(type, () => showCursor(cursor()));
    return {
      kind: "textarea",
      getText: () => textarea.value,
      setText(text) { textarea.value = text; onEdit(text); },
      setReport: () => {},
      focus: () => textarea.focus(),
      cursor,
      revealPath(path) {
        const place = locate(path);
        const end = textarea.value.indexOf("\n", place.from);
        textarea.focus();
        textarea.setSelectionRange(place.from, end < 0 ? place.from : end);
        const pos = cursor();
        const lineHeight = textarea.scrollHeight / Math.max(1, textarea.value.split("\n").length);
        textarea.scrollTop = Math.max(0, (pos.line - 5) * lineHeight);
        showCursor(pos);
        return { ...pos, found: place.found };
      },
    };
  }

  const editor = window.VivaStudioEditor ? codeMirrorEditor(window.VivaStudioEditor) : textareaEditor();
  let savedText = editor.getText();
  // The flow picture and the forms (static/js/studio-flow.js) read and write the document
  // through this: setDocument() replaces the editor's text (validated and marked unsaved as if
  // typed); "studio:changed" on the studio element carries every new text and report.
  function announce() {
    const p = parsed();
    root.dispatchEvent(new CustomEvent("studio:changed", {
      detail: { document: p.ok ? p.value : null, report: lastReport },
    }));
  }
  // Other parts of the page that hold edits not yet in the editor (the flow's forms write typing
  // after a short pause) register a flush here; every action runs them first, so it acts on
  // everything the author typed: save, publish, "Go to", leaving the page.
  const flushers = [];
  function flushEdits() {
    for (const flush of flushers) flush();
  }
  window.vivaStudio = {
    editor,
    // The studio's JSON API call ({status, data}; status 0 when the server was not reached),
    // shared by the question bank and the review scripts.
    api,
    document: () => { flushEdits(); const p = parsed(); return p.ok ? p.value : null; },
    report: () => lastReport,
    setDocument(value) { editor.setText(JSON.stringify(value, null, 2)); },
    save: () => save(true),
    onFlush(flush) { flushers.push(flush); },
    flush: flushEdits,
    // A form field changed and its flush is still pending: the status says so at once (never
    // "All changes saved" over typing that is not in the draft yet), and no autosave starts
    // before the flush.
    editing() {
      clearTimeout(autosaveTimer);
      if (!conflict && !saving && !failedText) showSaveState("pending", gettext("Unsaved changes"));
    },
  };
  for (const id of ["preview-link", "review-publish"]) {
    const link = document.getElementById(id);
    if (link) link.addEventListener("click", flushEdits);
  }
  window.addEventListener("pagehide", flushEdits);

  // --- Report ---------------------------------------------------------------------------------

  // A finding's path in words: "nodes[q1].followUpPolicy.maxFollowUps" is "node q1, follow-up
  // questions, maximum number of follow-up questions" (the path itself is the button's title).
  // Each part is the form's label for it and each list entry its name, both from
  // static/js/studio-words.js in the page's language; a part without one is its humanised name.
  // Labels start lower case inside the sentence, except in German, where nouns keep theirs.
  function placeInWords(path) {
    const words = window.VivaStudioWords || null;
    const nounsCapitalised = /^de\b/i.test(document.documentElement.lang || "");
    const inSentence = (label) => (nounsCapitalised || /^.[A-Z]/.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1));
    const parts = [];
    let parent = null; // the name of the last named part, as the forms' "<parent>.<field>" keys
    let listName = null; // the name of the part just read, when an entry of it may follow
    for (const m of (path || "").matchAll(/\[([^\]]*)\]|([^.[\]]+)/g)) {
      if (m[2] === "$") continue;
      if (m[2] !== undefined) {
        const label = words && words.label(parent ? parent + "." + m[2] : m[2]);
        parts.push(label ? inSentence(label) : m[2].replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase());
        parent = listName = m[2];
        continue;
      }
      const id = /^\d+$/.test(m[1]) ? Number(m[1]) + 1 : m[1];
      const entry = listName && words && words.item(listName);
      listName = null;
      const list = parts.pop() || "";
      if (entry) { parts.push(tf(entry, { id })); continue; }
      const one = list.endsWith("ies") ? list.slice(0, -3) + "y" : list.replace(/s$/, "");
      parts.push(one + " " + id);
    }
    return parts.length ? parts.join(", ") : gettext("the package");
  }

  function jumpTo(path) {
    flushEdits();
    const place = editor.revealPath(path);
    if (!place) return;
    const where = placeInWords(path);
    actionStatus.textContent = place.found
      ? tf(gettext("Moved to %(place)s in the JSON (line %(line)s)."), { place: where, line: place.line })
      : tf(gettext("%(place)s is not in the JSON yet; moved to the closest place (line %(line)s)."), { place: where, line: place.line });
  }

  function renderReport(report) {
    lastReport = report;
    editor.setReport(report);
    findingsBox.replaceChildren();
    if (!report) { summary.textContent = gettext("Not validated yet."); updateButtons(); return; }
    const s = report.summary || {};
    const counts = { errors: s.errors || 0, warnings: s.warnings || 0, notes: s.info || 0 };
    summary.textContent = report.result === "pass"
      ? tf(gettext("Passes. %(errors)s error(s), %(warnings)s warning(s), %(notes)s note(s)."), counts)
      : tf(gettext("Rejected. %(errors)s error(s), %(warnings)s warning(s), %(notes)s note(s)."), counts);
    for (const [kind, list] of [["error", report.errors], ["warning", report.warnings], ["info", report.info]]) {
      if (!list || !list.length) continue;
      const heading = document.createElement("h3");
      heading.textContent = { error: gettext("Errors"), warning: gettext("Warnings"), info: gettext("Notes") }[kind];
      findingsBox.appendChild(heading);
      const items = document.createElement("ul");
      items.className = "findings";
      for (const f of list) {
        const item = document.createElement("li");
        item.className = "finding finding-" + kind;
        const text = document.createElement("span");
        text.id = "finding-" + (++findingNo);
        const rule = document.createElement("span");
        rule.className = "rule";
        rule.textContent = f.ruleId;
        text.append(rule, " " + f.message);
        item.append(text);
        if (f.path) {
          const go = document.createElement("button");
          go.type = "button";
          go.className = "secondary";
          go.textContent = tf(gettext("Go to %(place)s"), { place: placeInWords(f.path) });
          go.title = f.path; // the precise place, for integrators
          go.setAttribute("aria-describedby", text.id); // which finding, when several share a path
          go.addEventListener("click", () => jumpTo(f.path));
          item.append(document.createElement("br"), go);
        }
        items.appendChild(item);
      }
      findingsBox.appendChild(items);
    }
    updateButtons();
    announce();
  }

  function parsed() {
    try { return { ok: true, value: JSON.parse(editor.getText()) }; }
    catch (e) { return { ok: false, error: e.message }; }
  }

  function updateButtons() {
    const p = parsed();
    const hasErrors = !p.ok || !lastReport || lastReport.result !== "pass";
    publishButton.disabled = hasErrors;
    publishButton.title = !p.ok ? gettext("Fix the JSON syntax before publishing.")
      : hasErrors ? gettext("Fix every error before publishing.") : "";
    saveButton.disabled = !p.ok;
  }

  async function validateNow() {
    const p = parsed();
    if (!p.ok) {
      parseStatus.textContent = tf(gettext("Not valid JSON: %(error)s"), { error: p.error });
      updateButtons();
      return;
    }
    parseStatus.textContent = editor.getText() === savedText ? "" : gettext("Unsaved changes.");
    const mine = ++requestNo;
    summary.textContent = gettext("Validating…");
    const { status, data } = await api(root.dataset.validateUrl, "POST", { document: p.value });
    if (mine !== requestNo) return; // a newer edit is being validated
    if (status === 200) renderReport(data);
    else summary.textContent = errorMessage(data, tf(gettext("Validation failed (%(status)s)."), { status }));
  }

  function onEdit() {
    clearTimeout(timer);
    timer = setTimeout(validateNow, 400);
    updateButtons();
    announce();
    scheduleAutosave();
  }

  // --- Save, autosave and publish ---------------------------------------------------------------
  //
  // The draft is saved by itself AUTOSAVE_MS after the last edit, and before the page is left by a
  // link or a form (the preview, "Dry run and publish…", the navigation). Saves run one at a time
  // with the revision this page holds. A 409 (someone else saved first) is merged (below): their
  // changes and the author's are combined and saved; where both changed the same place, autosave
  // stops until the author chooses, and their work is never overwritten unasked. A save that
  // fails on the network keeps the edits and is tried again. While anything is unsaved, leaving
  // the page asks first (beforeunload).

  function showSaveState(state, text) {
    autosaveStatus.dataset.state = state;
    if (autosaveStatus.textContent !== text) autosaveStatus.textContent = text;
  }

  function unsaved() {
    flushEdits();
    return editor.getText() !== savedText;
  }

  // After an edit: "Unsaved changes", and a save once the author pauses.
  function scheduleAutosave() {
    clearTimeout(autosaveTimer);
    if (conflict) return; // the message stays until the page is reloaded
    if (editor.getText() === savedText) {
      if (!saving && !failedText) showSaveState("saved", gettext("All changes saved"));
      return;
    }
    if (!parsed().ok) {
      showSaveState("error", gettext("Not saved: the JSON is not valid. It is saved once it is."));
      return;
    }
    if (!saving && !failedText) showSaveState("pending", gettext("Unsaved changes"));
    autosaveTimer = setTimeout(() => save(false), AUTOSAVE_MS);
  }

  // --- Someone else saved first: merge ---------------------------------------------------------
  //
  // The saved version is fetched and merged with the author's (window.VivaMerge, three-way from
  // the version this page last saved or loaded). Without a clash the merge is saved at once and
  // the author is told whose changes came in. Where both changed the same place, the merge keeps
  // the author's text there, lists the places in words, and offers two choices: keep mine
  // there, or take the saved version there. Nothing is saved over their work until then.
  const mergeBox = document.getElementById("merge-conflicts");

  async function mergeTheirs(mine, manual, why) {
    const current = await api(root.dataset.saveUrl, "GET");
    if (current.status !== 200 || !window.VivaMerge || !current.data) {
      conflict = why;
      showSaveState("error", tf(gettext("Not saved: %(reason)s Autosave is off; your changes are still here, copy them before reloading."), { reason: why }));
      if (manual) actionStatus.textContent = tf(gettext("%(reason)s Your text is still in the editor: copy it before reloading."), { reason: why });
      return false;
    }
    const base = JSON.parse(savedText);
    const theirs = current.data.document;
    const { merged, conflicts } = window.VivaMerge.merge3(base, mine, theirs);
    adoptSaved(theirs, current.data.revision);
    editor.setText(JSON.stringify(merged, null, 2));
    if (!conflicts.length) {
      conflict = null;
      failedText = null;
      const saved = await saveNow(manual);
      if (saved) {
        const note = tf(gettext("Someone else saved changes meanwhile; they are merged with yours and saved (revision %(revision)s)."), { revision });
        showSaveState("saved", gettext("Merged and saved"));
        actionStatus.textContent = note;
      }
      return saved;
    }
    conflict = conflicts;
    showConflicts(mine, theirs, base);
    return false;
  }

  // --- Someone else saved: their changes come in (live updates) ------------------------------
  //
  // The presence heartbeat (studio-presence.js, every 5 s while someone else has the draft open)
  // tells the saved revision. When it is newer than this page's and nothing is unsaved here,
  // their version is loaded into the editor (and the form redrawn). With unsaved edits here
  // nothing happens now: the autosave after the author's pause meets their version as a 409 and
  // merges (above), so a clash is never judged on half-typed words. Through the save queue, so it
  // never runs beside a save.
  document.addEventListener("studio:revision", (event) => {
    const theirs = event.detail && event.detail.revision;
    if (!Number.isInteger(theirs) || theirs <= revision || conflict) return;
    const run = queue.then(() => catchUp(theirs));
    queue = run.catch(() => false);
  });

  async function catchUp(theirs) {
    if (theirs <= revision || conflict || unsaved()) return true;
    const current = await api(root.dataset.saveUrl, "GET");
    if (current.status !== 200 || !current.data || current.data.revision <= revision) return false;
    if (unsaved()) return true; // typed while their version was on its way: the autosave merges
    adoptSaved(current.data.document, current.data.revision);
    editor.setText(savedText);
    if (current.data.lastReport) renderReport(current.data.lastReport);
    showSaveState("saved", gettext("All changes saved"));
    actionStatus.textContent = tf(gettext("Someone else saved changes to this package; they are shown here (revision %(revision)s)."), { revision });
    return true;
  }

  // What the server holds now becomes what this page has saved (the base of the next merge).
  function adoptSaved(documentValue, newRevision) {
    savedText = JSON.stringify(documentValue, null, 2);
    revision = newRevision;
    document.getElementById("revision").textContent = String(revision);
  }

  function showConflicts(mine, theirs, base) {
    const places = conflict.map((c) => placeInWords(c.path));
    showSaveState("error", tf(gettext("Not saved: someone else changed the same places (%(places)s). Choose below."), { places: places.join("; ") }));
    mergeBox.replaceChildren();
    const heading = document.createElement("h2");
    heading.id = "merge-heading";
    heading.textContent = gettext("Someone else saved this package meanwhile");
    const intro = document.createElement("p");
    intro.textContent = gettext("Their other changes are merged with yours. You both changed these places; the editor shows yours:");
    const list = document.createElement("ul");
    for (const c of conflict) {
      const item = document.createElement("li");
      item.textContent = tf(gettext("%(place)s: yours %(mine)s, theirs %(theirs)s."), { place: placeInWords(c.path), mine: brief(c.mine), theirs: brief(c.theirs) });
      item.title = c.path;
      list.append(item);
    }
    const keep = document.createElement("button");
    keep.type = "button";
    keep.textContent = gettext("Keep mine in these places and save");
    keep.addEventListener("click", () => resolveConflicts(null));
    const take = document.createElement("button");
    take.type = "button";
    take.textContent = gettext("Take theirs in these places and save");
    take.addEventListener("click", () => resolveConflicts({ mine, theirs, base }));
    mergeBox.append(heading, intro, list, keep, take);
    mergeBox.hidden = false;
    heading.tabIndex = -1;
    heading.focus();
  }

  function brief(value) {
    if (value === undefined) return gettext("(removed)");
    const text = typeof value === "string" ? "“" + value + "”" : JSON.stringify(value);
    return text.length > 80 ? text.slice(0, 77) + "…" : text;
  }

  async function resolveConflicts(takeTheirs) {
    if (takeTheirs) {
      const { merged } = window.VivaMerge.merge3(takeTheirs.base, takeTheirs.mine, takeTheirs.theirs, "theirs");
      editor.setText(JSON.stringify(merged, null, 2));
    }
    conflict = null;
    failedText = null;
    mergeBox.hidden = true;
    mergeBox.replaceChildren();
    saveButton.focus();
    return save(true);
  }

  // Save what is in the editor (after flushing the forms). `manual` is the Save button (and
  // publish): it reports in the action status too. Returns whether everything is saved.
  function save(manual = true) {
    flushEdits();
    if (manual) actionStatus.textContent = gettext("Saving…");
    const run = queue.then(() => saveNow(manual));
    queue = run.catch(() => false);
    return run;
  }

  async function saveNow(manual) {
    flushEdits();
    if (manual && Array.isArray(conflict)) {
      // Save pressed with a merge's clashes open: the editor's text (theirs merged, mine at the
      // clashes) is what the author chose to keep.
      conflict = null;
      failedText = null;
      mergeBox.hidden = true;
    }
    clearTimeout(autosaveTimer);
    clearTimeout(retryTimer);
    const p = parsed();
    if (!p.ok) {
      showSaveState("error", gettext("Not saved: the JSON is not valid. It is saved once it is."));
      if (manual) actionStatus.textContent = gettext("Not saved: fix the JSON syntax first.");
      return false;
    }
    const text = editor.getText();
    if (text === savedText) {
      if (!conflict) showSaveState("saved", gettext("All changes saved"));
      if (manual) actionStatus.textContent = tf(gettext("Saved (revision %(revision)s)."), { revision });
      return true;
    }
    if (conflict && !manual) return false;
    saving++;
    showSaveState("saving", gettext("Saving…"));
    let result;
    try {
      result = await api(root.dataset.saveUrl, "PUT", { document: p.value, revision });
    } finally {
      saving--;
    }
    const { status, data } = result;
    if (status === 200) {
      revision = data.revision;
      savedText = text;
      failedText = null;
      retries = 0;
      document.getElementById("revision").textContent = String(revision);
      if (editor.getText() === savedText) {
        clearTimeout(timer);
        requestNo++; // a validation still in flight is for an older text
        renderReport(data.lastReport);
        parseStatus.textContent = "";
        showSaveState("saved", gettext("All changes saved"));
      } else {
        scheduleAutosave(); // typed while it was saving
        showSaveState("pending", gettext("Unsaved changes"));
      }
      if (manual) actionStatus.textContent = tf(gettext("Saved (revision %(revision)s)."), { revision });
      return true;
    }
    failedText = text;
    if (status === 409) return mergeTheirs(p.value, manual, errorMessage(data, gettext("Someone else saved this package first.")));
    const reason = status === 0 ? gettext("the server could not be reached.") : errorMessage(data, tf(gettext("the server answered %(status)s."), { status }));
    const retry = status === 0 || status === 408 || status === 429 || status >= 500;
    if (retry) {
      const wait = RETRY_MS[Math.min(retries, RETRY_MS.length - 1)];
      retries++;
      retryTimer = setTimeout(() => save(false), wait);
      showSaveState("error", tf(gettext("Not saved: %(reason)s Your changes are kept; trying again in %(seconds)s s."), { reason, seconds: Math.round(wait / 1000) }));
    } else {
      showSaveState("error", tf(gettext("Not saved: %(reason)s"), { reason }));
    }
    if (manual) actionStatus.textContent = tf(gettext("Not saved: %(reason)s"), { reason });
    return false;
  }

  // Back online: try again now.
  window.addEventListener("online", () => {
    if (failedText !== null && !conflict) save(false);
  });

  // Leaving with unsaved edits: the browser's own confirmation.
  window.addEventListener("beforeunload", (event) => {
    if (!unsaved()) return;
    event.preventDefault();
    event.returnValue = "";
  });

  // Leaving by a link or a form of this page: save first, then go. When that save fails the page
  // stays and says so; following the link again (the save failed for this text already, or a
  // 409 stopped the autosave) leaves through the browser's confirmation above.
  function leavesPage(link) {
    if (link.hasAttribute("download")) return false;
    const url = new URL(link.href, location.href);
    if (!/^https?:$/.test(url.protocol)) return false;
    return !(url.hash && url.origin === location.origin && url.pathname === location.pathname && url.search === location.search);
  }
  function shouldSaveFirst() {
    if (!unsaved()) return false;
    return !conflict && failedText !== editor.getText() && parsed().ok;
  }
  document.addEventListener("click", async (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link || !leavesPage(link) || !shouldSaveFirst()) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || (link.target && link.target !== "_self")) {
      save(false); // another tab or window: this page stays
      return;
    }
    event.preventDefault();
    if (await save(false)) window.location.assign(link.href);
    else actionStatus.textContent = gettext("The page was not left because your changes are not saved. Follow the link again to leave anyway.");
  });
  let submitting = false;
  document.addEventListener("submit", async (event) => {
    if (submitting || event.defaultPrevented || !shouldSaveFirst()) return;
    const form = event.target;
    const submitter = event.submitter;
    event.preventDefault();
    if (await save(false)) {
      submitting = true;
      try { form.requestSubmit(submitter || undefined); } finally { submitting = false; }
    } else actionStatus.textContent = gettext("The page was not left because your changes are not saved. Send the form again to leave anyway.");
  });

  function versionsLink(text) {
    const link = document.createElement("a");
    link.href = root.dataset.versionsUrl;
    link.textContent = text;
    return link;
  }

  // A translated sentence with a link in it: the text around the placeholder %(link)s, and the
  // link between (its place in the sentence is the translator's).
  function withLink(sentence, link) {
    const at = sentence.indexOf("%(link)s");
    if (at < 0) return [sentence, " ", link];
    return [sentence.slice(0, at), link, sentence.slice(at + "%(link)s".length)].filter((part) => part !== "");
  }

  function publishedMessage(text, number) {
    actionStatus.replaceChildren(text + " ", versionsLink(gettext("See all versions")));
    document.getElementById("published-info").replaceChildren(
      ...withLink(gettext("· latest published: %(link)s"), versionsLink(tf(gettext("version %(number)s"), { number }))),
    );
  }

  saveButton.addEventListener("click", () => save(true));
  publishButton.addEventListener("click", async () => {
    flushEdits();
    if (editor.getText() !== savedText && !(await save())) return;
    actionStatus.textContent = gettext("Publishing…");
    const { status, data } = await api(root.dataset.publishUrl, "POST", { revision });
    if (status === 201 || status === 200) {
      publishedMessage(status === 201
        ? tf(gettext("Published as version %(number)s."), { number: data.number })
        : tf(gettext("Unchanged since version %(number)s; nothing new to publish."), { number: data.number }), data.number);
    } else if (status === 422) {
      renderReport(data.error.details.report);
      actionStatus.textContent = tf(gettext("Not published: %(message)s"), { message: data.error.message });
    } else {
      actionStatus.textContent = errorMessage(data, tf(gettext("Publish failed (%(status)s)."), { status }));
    }
  });

  showCursor(editor.cursor(), editor.fieldHelp ? editor.fieldHelp() : undefined);
  renderReport(lastReport);
  showSaveState("saved", gettext("All changes saved"));
})();

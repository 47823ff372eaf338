// Authoring studio: the question bank (docs/studio.md, "Question bank"). No framework.
//
// "Save to question bank" under the node form: the selected node (not an end node) is saved,
// with its evidence targets, rubric and learning outcomes, after the draft itself is saved (the
// bank keeps the saved revision as the entry's provenance).
//
// "Add a question from the bank" opens a modal <dialog> (Escape closes it, focus returns to the
// button): search by words and tag, the built-in templates in the package's language, and the
// author's saved and shared questions as one radio group each. Choosing one asks the server what
// inserting it would do to the document in the editor (nothing is saved) and previews that: the
// node, its targets, renamed ids, outcomes, the node it follows, or why it cannot be added.
// "Add this question" asks again for the editor's document now and writes the answer through
// window.vivaStudio.setDocument (studio.js), so it is validated, autosaved and undoable like typing.
(function () {
  "use strict";
  const root = document.getElementById("studio");
  const dialog = document.getElementById("bank-dialog");
  if (!root || !dialog || !window.vivaStudio) return;
  const studio = window.vivaStudio;
  const { gettext, tf } = window.vivaI18n;
  const $ = (id) => document.getElementById(id);
  const openButton = $("bank-open");
  const query = $("bank-query");
  const tagSelect = $("bank-tag");
  const status = $("bank-status");
  const templatesList = $("bank-templates");
  const entriesList = $("bank-entries");
  const previewBody = $("bank-preview-body");
  const insertButton = $("bank-insert");
  const flowStatus = $("flow-status");
  let chosen = null; // {kind: "entry"|"template", id, title}
  let previewNo = 0;

  const api = (url, method, body) => window.vivaStudio.api(url, method, body); // studio.js

  function problem(result) {
    if (result.status === 0) return gettext("The server could not be reached; try again.");
    const error = result.data && result.data.error;
    return (error && error.message) || tf(gettext("The server answered %(status)s."), { status: result.status });
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  // Tags as typed in a field: separated by commas, blanks dropped (the server cleans the rest).
  const tagList = (text) => text.split(",").map((t) => t.trim()).filter(Boolean);

  // --- Save to question bank ------------------------------------------------------------------

  const saveForm = $("bank-save");
  const saveStatus = $("bank-save-status");
  let saveNodeId = null;

  function showSaveForm(nodeId) {
    const doc = studio.document();
    const node = doc && Array.isArray(doc.nodes) ? doc.nodes.find((n) => n && n.nodeId === nodeId) : null;
    const bankable = Boolean(node && node.kind !== "end");
    saveForm.hidden = !bankable;
    if (!bankable || nodeId === saveNodeId) return;
    saveNodeId = nodeId;
    $("bank-save-title").value = node.title || node.nodeId;
    $("bank-save-tags").value = "";
    saveStatus.textContent = "";
  }

  document.addEventListener("studio:node", (event) => showSaveForm(event.detail && event.detail.nodeId));

  saveForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const nodeId = window.vivaStudioNode;
    if (!nodeId) return;
    saveStatus.textContent = gettext("Saving the package first…");
    if (!(await studio.save())) {
      saveStatus.textContent = gettext("Not saved to the bank: the package could not be saved. See the save status above.");
      return;
    }
    const tags = tagList($("bank-save-tags").value);
    const result = await api($("bank-dialog").dataset.listUrl, "POST", {
      draftId: root.dataset.draftId,
      nodeId,
      title: $("bank-save-title").value.trim(),
      tags,
      shared: $("bank-save-shared").checked,
    });
    saveStatus.textContent = result.status === 201
      ? tf(gettext("Saved “%(title)s” to the question bank."), { title: result.data.title })
      : tf(gettext("Not saved to the bank: %(reason)s"), { reason: problem(result) });
  });

  // --- The picker -------------------------------------------------------------------------------

  function packageLanguage() {
    const doc = studio.document();
    return (doc && doc.metadata && typeof doc.metadata.language === "string" && doc.metadata.language) || "";
  }

  function mayManage(entry) {
    return dialog.dataset.admin === "true" || entry.owner === dialog.dataset.username;
  }

  function choice(list, group, item, kind, detail) {
    const li = el("li");
    const input = document.createElement("input");
    input.type = "radio";
    input.name = group;
    input.id = "bank-" + kind + "-" + item.id;
    input.value = item.id;
    const label = el("label", item.title);
    label.htmlFor = input.id;
    if (detail) label.append(" ", el("span", detail, "hint"));
    input.addEventListener("change", () => {
      chosen = { kind, id: item.id, title: item.title, entry: kind === "entry" ? item : null };
      preview();
    });
    li.append(input, " ", label);
    list.append(li);
  }

  function entryDetail(entry) {
    const from = entry.savedFrom || {};
    const parts = [tf(gettext("from %(package)s, node %(node)s"), { package: from.packageTitle || "?", node: from.nodeId })];
    if (from.versionNumber) parts.push(tf(gettext("version %(number)s"), { number: from.versionNumber }));
    if (entry.tags.length) parts.push(tf(gettext("tags: %(tags)s"), { tags: entry.tags.join(", ") }));
    if (entry.shared) parts.push(tf(gettext("shared by %(owner)s"), { owner: entry.owner }));
    return "(" + parts.join("; ") + ")";
  }

  async function loadTemplates() {
    const url = dialog.dataset.templatesUrl + "?language=" + encodeURIComponent(packageLanguage());
    const result = await api(url, "GET");
    templatesList.replaceChildren();
    if (result.status !== 200) { templatesList.append(el("li", problem(result))); return; }
    for (const template of result.data) choice(templatesList, "bank-choice", template, "template");
    const still = chosen && chosen.kind === "template" ? $("bank-template-" + chosen.id) : null;
    if (still) still.checked = true;
  }

  const knownTags = new Set();
  function rememberTags(entries) {
    let added = false;
    for (const entry of entries) for (const tag of entry.tags) if (!knownTags.has(tag)) { knownTags.add(tag); added = true; }
    if (!added) return;
    const current = tagSelect.value;
    const any = tagSelect.options[0];
    tagSelect.replaceChildren(any, ...[...knownTags].sort().map((tag) => new Option(tag, tag)));
    tagSelect.value = current;
  }

  async function search() {
    const params = new URLSearchParams({ q: query.value.trim(), tag: tagSelect.value, page_size: "50" });
    status.textContent = gettext("Searching…");
    const result = await api(dialog.dataset.listUrl + "?" + params, "GET");
    entriesList.replaceChildren();
    if (result.status !== 200) { status.textContent = problem(result); return; }
    const entries = result.data.results || [];
    rememberTags(entries);
    for (const entry of entries) choice(entriesList, "bank-choice", entry, "entry", entryDetail(entry));
    // The question being previewed stays chosen when the new results hold it.
    const still = chosen && chosen.kind === "entry" ? $("bank-entry-" + chosen.id) : null;
    if (still) still.checked = true;
    status.textContent = entries.length
      ? tf(gettext("%(count)s saved question(s) found."), { count: entries.length })
      : gettext("No saved question matches.");
  }

  // What the server would insert: the request both the preview and the insertion send.
  function insertRequest() {
    const body = { document: studio.document(), afterNodeId: window.vivaStudioNode || null };
    body[chosen.kind === "template" ? "templateId" : "entryId"] = chosen.id;
    return api(dialog.dataset.insertUrl, "POST", body);
  }

  async function preview() {
    const mine = ++previewNo;
    insertButton.disabled = true;
    if (!studio.document()) { previewBody.replaceChildren(el("p", gettext("Fix the JSON syntax first."))); return; }
    previewBody.replaceChildren(el("p", gettext("Loading the preview…")));
    const result = await insertRequest();
    if (mine !== previewNo) return;
    if (result.status !== 200) {
      const box = el("div");
      box.setAttribute("role", "alert");
      box.append(el("p", tf(gettext("This question cannot be added: %(reason)s"), { reason: problem(result) })));
      previewBody.replaceChildren(box);
      return;
    }
    previewBody.replaceChildren(...describe(result.data));
    if (chosen.entry && mayManage(chosen.entry)) previewBody.append(manage(chosen.entry));
    insertButton.disabled = false;
  }

  // The owner's controls of a saved question: its title and tags, share it or not, delete it.
  function manage(entry) {
    const box = el("fieldset");
    box.append(el("legend", gettext("Your saved question")));
    box.append(editForm(entry));
    const shared = document.createElement("input");
    shared.type = "checkbox";
    shared.id = "bank-entry-shared";
    shared.checked = entry.shared;
    const label = el("label", gettext("Shared with every author"));
    label.htmlFor = shared.id;
    shared.addEventListener("change", async () => {
      const result = await api(dialog.dataset.listUrl + entry.id + "/", "PATCH", { shared: shared.checked });
      if (result.status === 200) {
        entry.shared = result.data.shared;
        status.textContent = tf(entry.shared ? gettext("“%(title)s” is now shared with every author.") : gettext("“%(title)s” is now yours only."), { title: entry.title });
      } else {
        shared.checked = entry.shared;
        status.textContent = tf(gettext("Not changed: %(reason)s"), { reason: problem(result) });
      }
    });
    const remove = el("button", tf(gettext("Delete “%(title)s” from the bank"), { title: entry.title }), "link-button danger");
    remove.id = "bank-entry-delete";
    remove.type = "button";
    remove.addEventListener("click", async () => {
      const result = await api(dialog.dataset.listUrl + entry.id + "/", "DELETE");
      if (result.status !== 204) { status.textContent = tf(gettext("Not changed: %(reason)s"), { reason: problem(result) }); return; }
      chosen = null;
      insertButton.disabled = true;
      previewBody.replaceChildren(el("p", gettext("Choose a question to see what will be added."), "hint"));
      await search();
      status.textContent = tf(gettext("Deleted “%(title)s” from the bank."), { title: entry.title });
      query.focus();
    });
    const line = el("p");
    line.append(shared, " ", label);
    box.append(line, remove);
    return box;
  }

  // The entry's title and tags, changed in place (PATCH; the node itself never changes). The
  // list is searched again so the choice shows the new title; focus stays on the form.
  function editForm(entry) {
    const form = el("form", undefined, "bank-entry-edit");
    form.id = "bank-entry-edit";
    form.noValidate = true; // a blank title is answered in the dialog's status, not a browser bubble
    const field = (id, labelText, value) => {
      const label = el("label", labelText);
      label.htmlFor = id;
      const input = document.createElement("input");
      input.id = id;
      input.autocomplete = "off";
      input.value = value;
      form.append(label, input);
      return input;
    };
    const title = field("bank-entry-title", gettext("Title in the bank"), entry.title);
    title.maxLength = 200;
    title.required = true;
    const tags = field("bank-entry-tags", gettext("Tags (separated by commas)"), entry.tags.join(", "));
    const submit = el("button", gettext("Save title and tags"), "secondary");
    submit.type = "submit";
    form.append(submit);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!title.value.trim()) {
        status.textContent = gettext("Not changed: a saved question needs a title.");
        title.focus();
        return;
      }
      submit.disabled = true;
      const result = await api(dialog.dataset.listUrl + entry.id + "/", "PATCH", { title: title.value.trim(), tags: tagList(tags.value) });
      submit.disabled = false;
      if (result.status !== 200) {
        status.textContent = tf(gettext("Not changed: %(reason)s"), { reason: problem(result) });
        return;
      }
      entry.title = result.data.title;
      entry.tags = result.data.tags;
      if (chosen && chosen.entry === entry) chosen.title = entry.title;
      title.value = entry.title;
      tags.value = entry.tags.join(", ");
      const remove = $("bank-entry-delete");
      if (remove) remove.textContent = tf(gettext("Delete “%(title)s” from the bank"), { title: entry.title });
      await search();
      status.textContent = tf(gettext("Saved the title and tags of “%(title)s”."), { title: entry.title });
    });
    return form;
  }

  function describe(answer) {
    const node = answer.document.nodes.find((n) => n.nodeId === answer.nodeId) || {};
    const parts = [el("h4", node.title || node.nodeId)];
    const opening = node.prompt && node.prompt.opening;
    if (opening) parts.push(el("p", tf(gettext("Question: %(text)s"), { text: opening })));
    parts.push(el("p", answer.after
      ? tf(gettext("It is added as node %(id)s after %(after)s."), { id: answer.nodeId, after: answer.after })
      : tf(gettext("It is added as node %(id)s at the start of the exam."), { id: answer.nodeId })));
    const targets = el("ul");
    for (const target of node.evidenceTargets || []) {
      const levels = target.rubricDescriptor && target.rubricDescriptor.levels ? Object.keys(target.rubricDescriptor.levels).length : 0;
      targets.append(el("li", tf(gettext("%(label)s (%(id)s): %(levels)s rubric level(s)"), { label: target.label, id: target.id, levels })));
    }
    parts.push(el("p", gettext("Evidence targets:")), targets);
    const renamed = Object.entries(answer.renamed);
    if (renamed.length) parts.push(el("p", tf(gettext("Renamed because the package already uses the id: %(ids)s"), { ids: renamed.map(([a, b]) => a + " → " + b).join(", ") })));
    const mapped = Object.entries(answer.outcomesMapped);
    if (mapped.length) parts.push(el("p", tf(gettext("Learning outcomes used from this package: %(ids)s"), { ids: mapped.map(([a, b]) => a + " → " + b).join(", ") })));
    if (answer.outcomesAdded.length) parts.push(el("p", tf(gettext("Learning outcomes added to this package: %(ids)s"), { ids: answer.outcomesAdded.join(", ") })));
    return parts;
  }

  async function insert() {
    if (!chosen) return;
    insertButton.disabled = true;
    const result = await insertRequest();
    if (result.status !== 200) {
      status.textContent = tf(gettext("This question cannot be added: %(reason)s"), { reason: problem(result) });
      insertButton.disabled = false;
      return;
    }
    studio.setDocument(result.data.document);
    dialog.close();
    if (studio.flow) studio.flow.select({ type: "node", id: result.data.nodeId });
    flowStatus.textContent = tf(gettext("“%(title)s” added as node %(id)s."), { title: chosen.title, id: result.data.nodeId });
  }

  function open() {
    studio.flush();
    chosen = null;
    for (const radio of dialog.querySelectorAll("input[type=radio]")) radio.checked = false;
    insertButton.disabled = true;
    previewBody.replaceChildren(el("p", gettext("Choose a question to see what will be added."), "hint"));
    dialog.showModal();
    query.focus();
    loadTemplates();
    search();
  }

  openButton.addEventListener("click", open);
  $("bank-close").addEventListener("click", () => dialog.close());
  // Escape closes from anywhere in the dialog, also from the search field (which would only
  // clear its words).
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    dialog.close();
  });
  dialog.addEventListener("close", () => { previewNo++; openButton.focus(); });
  $("bank-search").addEventListener("submit", (event) => { event.preventDefault(); search(); });
  tagSelect.addEventListener("change", search);
  insertButton.addEventListener("click", insert);
  showSaveForm(window.vivaStudioNode);
})();

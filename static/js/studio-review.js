// Authoring studio: review before publish (docs/studio.md, "Review before publish"). No framework.
//
// The "Comments" section under the form lists the selected node's comments (with no node
// selected: the package's comments and those on removed nodes), with a count, "Resolve" or
// "Reopen" on each and a labelled text area to add one. It follows the studio's selection
// through the `studio:node` event and window.vivaStudioNode (studio-flow.js), like the
// question bank, and never touches studio.js.
//
// The "Review" card: the owner's "Publishing needs an approval" checkbox, the approval state and
// "Approve the current revision" (the draft is saved first, through window.vivaStudio.save).
(function () {
  "use strict";
  const root = document.getElementById("studio");
  const section = document.getElementById("review-comments");
  const card = document.getElementById("review-approval");
  if (!root || !section || !card || !window.vivaStudio) return;
  const studio = window.vivaStudio;
  const { gettext, ngettext, tf } = window.vivaI18n;
  const $ = (id) => document.getElementById(id);
  const commentsUrl = section.dataset.commentsUrl;
  const reviewUrl = card.dataset.reviewUrl;
  let comments = [];

  const api = (url, method, body) => window.vivaStudio.api(url, method, body); // studio.js

  function problem(result) {
    if (result.status === 0) return gettext("The server could not be reached; try again.");
    const error = result.data && (result.data.error || result.data);
    return (error && (error.message || error.detail)) || tf(gettext("The server answered %(status)s."), { status: result.status });
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function currentNode() {
    return window.vivaStudioNode || "";
  }

  function shown() {
    const nodeId = currentNode();
    if (nodeId) return comments.filter((c) => c.nodeId === nodeId);
    return comments.filter((c) => !c.nodeId || c.nodeRemoved);
  }

  function commentItem(comment) {
    const item = el("li", undefined, comment.resolved ? "review-comment resolved" : "review-comment");
    const meta = el("p", tf(gettext("%(name)s at revision %(revision)s, %(time)s"), {
      name: comment.authorName || comment.author,
      revision: comment.revision,
      time: new Date(comment.createdAt).toLocaleString(document.documentElement.lang || undefined),
    }), "hint");
    if (comment.nodeRemoved) meta.append(" ", el("strong", tf(gettext("(node removed: %(node)s)"), { node: comment.nodeId })));
    else if (!comment.nodeId && !currentNode()) meta.append(" ", el("span", gettext("(on the package)")));
    item.append(meta, el("p", comment.text));
    if (comment.resolved) item.append(el("p", tf(gettext("Resolved by %(name)s."), { name: comment.resolvedBy }), "hint"));
    const button = el("button", comment.resolved ? gettext("Reopen") : gettext("Resolve"), "secondary");
    button.type = "button";
    button.setAttribute("aria-label", tf(comment.resolved ? gettext("Reopen the comment “%(text)s”") : gettext("Resolve the comment “%(text)s”"), { text: comment.text.slice(0, 60) }));
    button.addEventListener("click", () => setResolved(comment, !comment.resolved));
    item.append(button);
    return item;
  }

  function draw() {
    const list = $("review-comment-list");
    const visible = shown();
    const open = visible.filter((c) => !c.resolved).length;
    $("review-comment-count").textContent = visible.length
      ? tf(ngettext("%(count)s comment, %(open)s unresolved", "%(count)s comments, %(open)s unresolved", visible.length), { count: visible.length, open })
      : gettext("No comments here yet.");
    $("review-comment-scope").textContent = currentNode()
      ? tf(gettext("On node %(node)s"), { node: currentNode() })
      : gettext("On the package as a whole and on removed nodes");
    list.replaceChildren(...visible.map(commentItem));
  }

  async function load() {
    const result = await api(commentsUrl, "GET");
    if (result.status === 200) comments = result.data.comments;
    draw();
    section.dataset.loaded = "true";
  }

  async function setResolved(comment, resolved) {
    const status = $("review-comment-status");
    const result = await api(`${commentsUrl}${comment.id}/`, "PATCH", { resolved });
    if (result.status !== 200) {
      status.textContent = tf(gettext("Not changed: %(reason)s"), { reason: problem(result) });
      return;
    }
    status.textContent = resolved ? gettext("Comment resolved.") : gettext("Comment reopened.");
    await load();
    await loadReview();
  }

  $("review-comment-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("review-comment-text");
    const status = $("review-comment-status");
    if (!text.value.trim()) {
      status.textContent = gettext("Write a comment first.");
      text.focus();
      return;
    }
    const result = await api(commentsUrl, "POST", { nodeId: currentNode(), text: text.value });
    if (result.status !== 201) {
      status.textContent = tf(gettext("Not added: %(reason)s"), { reason: problem(result) });
      return;
    }
    text.value = "";
    status.textContent = gettext("Comment added.");
    await load();
    await loadReview();
  });

  document.addEventListener("studio:node", () => draw());

  // --- Approval ---------------------------------------------------------------------------------

  function revision() {
    return Number($("revision").textContent);
  }

  function drawReview(state) {
    const required = $("review-required");
    if (required) required.checked = state.approvalRequired;
    const approve = $("review-approve");
    approve.hidden = !state.approvalRequired;
    let text = gettext("No approval is required to publish this package.");
    if (state.approvalRequired && !state.approvedBy) text = gettext("Not approved yet.");
    else if (state.approvalRequired && state.approvalCurrent) {
      text = tf(gettext("Approved by %(name)s at revision %(revision)s."), { name: state.approvedBy, revision: state.approvedRevision });
    } else if (state.approvalRequired) {
      text = tf(gettext("The approval is stale: the package was saved since revision %(revision)s."), { revision: state.approvedRevision });
    }
    $("review-approval-state").textContent = text;
    card.dataset.loaded = "true";
  }

  async function loadReview() {
    const result = await api(reviewUrl, "GET");
    if (result.status === 200) drawReview(result.data);
  }

  const requiredBox = $("review-required");
  if (requiredBox) {
    requiredBox.addEventListener("change", async () => {
      const result = await api(reviewUrl, "PATCH", { approvalRequired: requiredBox.checked });
      if (result.status === 200) drawReview(result.data);
      else $("review-approval-status").textContent = tf(gettext("Not changed: %(reason)s"), { reason: problem(result) });
    });
  }

  $("review-approve").addEventListener("click", async () => {
    const status = $("review-approval-status");
    if (!(await studio.save())) {
      status.textContent = gettext("Not approved: the package could not be saved. See the save status above.");
      return;
    }
    const result = await api(`${reviewUrl}approve/`, "POST", { revision: revision() });
    if (result.status !== 200) {
      status.textContent = tf(gettext("Not approved: %(reason)s"), { reason: problem(result) });
      return;
    }
    status.textContent = tf(gettext("You approved revision %(revision)s."), { revision: revision() });
    drawReview(result.data);
  });

  document.addEventListener("studio:revision", () => loadReview());
  load();
  loadReview();
})();

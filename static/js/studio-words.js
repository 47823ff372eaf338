// Authoring studio: the forms' labels and help in a lecturer's words (issue #34, "Words").
// The package schema's descriptions are written for integrators (JSON paths, rule ids); the JSON
// editor's hover still shows them. The forms (static/js/studio-flow.js) ask here instead:
// window.VivaStudioWords.label(key) and .help(key), where key is "<parent>.<field>" (the nearest
// named part of the document above the field, e.g. "evidenceTargets.id") or the field's name.
// Unknown keys answer null; the form then shows the humanised field name and no help.
// Strings go through gettext (the page's JavaScript catalogue, djangojs.po; marked with
// gettext_noop so that `make messages` finds them).
(function () {
  "use strict";
  const gettext = window.gettext || ((text) => text);
  const gettext_noop = (text) => text; // marks the tables' strings for makemessages

  const LABELS = {
    irVersion: gettext_noop("Package format version"),
    sttHandlingJustification: gettext_noop("Why some questions have no re-ask on unclear speech"),
    totalTimeBudgetSec: gettext_noop("Total time for the exam (seconds)"),
    maxFollowUpDurationSec: gettext_noop("Time for follow-up questions (seconds)"),
    maxDurationSec: gettext_noop("Maximum time (seconds)"),
    afterSec: gettext_noop("After seconds of silence"),
    textAfterSec: gettext_noop("After seconds without typing (text mode)"),
  };

  const HELP = {
    irVersion: gettext_noop("The version of the package format. Leave it as it is."),
    initialNodeId: gettext_noop("The part of the exam a candidate starts with."),
    "metadata.packageId": gettext_noop("A fixed identifier of this package, kept across its versions."),
    "metadata.version": gettext_noop("Your own version number for this package, for example 1.0.0."),
    "metadata.language": gettext_noop("The language the exam is conducted in."),
    structureLevel: gettext_noop("How open the questions are, from closed questions to open discussion."),
    structureJustification: gettext_noop("Needed when the questioning style differs between questions."),
    commandJustification: gettext_noop("Needed when a question does not let the candidate ask to repeat, clarify or pause."),
    endNodeRationale: gettext_noop("Needed when a way of ending the exam has no end step."),
    sttHandlingJustification: gettext_noop("Needed when a question has no re-ask for answers the speech recogniser could not hear clearly."),
    difficultyJustification: gettext_noop("Needed when the questions carry different amounts of evidence."),
    timeBudgetJustification: gettext_noop("Needed when the questions' time limits differ a lot."),
    expectedCandidateCount: gettext_noop("How many candidates will sit the exam."),
    totalTimeBudgetSec: gettext_noop("The whole exam's time; the examiner wraps up when it runs out."),
    "learningOutcomes.id": gettext_noop("A short code for the outcome, for example LO1."),
    "learningOutcomes.text": gettext_noop("What a student should be able to do."),
    "nodes.nodeId": gettext_noop("A short name for this step, unique in the package."),
    "nodes.title": gettext_noop("A title for you and the markers; candidates do not see it."),
    promptSeed: gettext_noop("What the examiner should do in this step, in your words."),
    scenario: gettext_noop("The situation presented to the candidate."),
    opening: gettext_noop("The question as the examiner says it, word for word."),
    closing: gettext_noop("What the examiner says at the end, word for word."),
    "evidenceTargets.id": gettext_noop("A short name for this target, unique in the step."),
    "evidenceTargets.label": gettext_noop("What the candidate should show, in a few words."),
    "evidenceTargets.description": gettext_noop("What you would hear from a candidate who shows it. Describe the behaviour, not a grade."),
    weight: gettext_noop("This target's share of the step's marks; the shares of a step add up to 1."),
    dimension: gettext_noop("The kind of knowledge the target shows."),
    markingCriteria: gettext_noop("The learning outcomes this target gives evidence for."),
    "levels.label": gettext_noop("A short name for the level, for example Mostly complete."),
    "levels.description": gettext_noop("What an answer at this level contains. Only markers see it."),
    maxFollowUps: gettext_noop("How many follow-up questions the examiner may ask; 0 means none."),
    followUpStyle: gettext_noop("How the examiner follows up; use the same style on every question."),
    requiredEvidenceTargetIds: gettext_noop("The targets the candidate must show before the step is complete."),
    minTurns: gettext_noop("How many answers the candidate gives at least before the step is complete."),
    maxDurationSec: gettext_noop("How long this step may take before the exam moves on."),
    forbiddenActions: gettext_noop("What the examiner must never do here."),
    allowed: gettext_noop("What the candidate may ask for here."),
    "transitions.id": gettext_noop("A short name for this transition, unique in the package."),
    targetNodeId: gettext_noop("Where the exam goes next: a step or a question pool."),
    "condition.targetIds": gettext_noop("The targets the candidate must have shown; none means the step's own completion rule decides."),
    count: gettext_noop("After how many answers in this step."),
    seconds: gettext_noop("After how many seconds in this step."),
    maxAttempts: gettext_noop("How often the examiner tries before escalating."),
    nodeIds: gettext_noop("The interchangeable questions; each candidate gets one of them."),
    "persona.name": gettext_noop("The examiner's name, as the candidate hears it."),
    roleMessage: gettext_noop("Who the examiner is and how they speak, in your words."),
  };

  for (const level of ["excellent", "satisfactory", "partial", "absent"]) {
    HELP[level + ".label"] = HELP["levels.label"];
    HELP[level + ".description"] = HELP["levels.description"];
  }

  function lookup(table, key) {
    if (Object.prototype.hasOwnProperty.call(table, key)) return gettext(table[key]);
    const name = key.split(".").pop();
    return Object.prototype.hasOwnProperty.call(table, name) ? gettext(table[name]) : null;
  }

  window.VivaStudioWords = {
    label: (key) => lookup(LABELS, key),
    help: (key) => lookup(HELP, key),
    gettext,
  };
})();

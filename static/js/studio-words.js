// Authoring studio: the forms' labels and help in a lecturer's words (issue #34, "Words").
// The package schema's descriptions are written for integrators (JSON paths, rule ids); the JSON
// editor's hover still shows them. The forms (static/js/studio-flow.js) ask here instead:
// window.VivaStudioWords.label(key) and .help(key), where key is "<parent>.<field>" (the nearest
// named part of the document above the field, e.g. "evidenceTargets.id") or the field's name.
// Every field of the package schema has a label (frontend/test/studio/studio-words.test.js
// fails on a new field without one). .item(listName) is the name of one entry of a list, a
// catalogue string with an %(id)s placeholder ("node %(id)s"): a finding's place in words
// (static/js/studio.js placeInWords) is built from these labels and entry names, and so are a
// list entry's legend and its "Remove ..." button (with the entry's number). .add(listName) is
// a list's "Add ..." button; .value(value) a choice's value in plain words ("stt_low_confidence"
// -> "Speech not recognised clearly").
// Unknown keys answer null; the form then shows the humanised field name and no help.
// Strings go through gettext (the page's JavaScript catalogue, djangojs.po; marked with
// gettext_noop so that `make messages` finds them).
//
// Under Node (frontend/test, `node --test`) this file is a CommonJS module exporting the same
// object (English: no catalogue); in the page it is window.VivaStudioWords.
(function (root, factory) {
  "use strict";
  if (typeof module === "object" && module.exports) module.exports = factory((text) => text);
  else root.VivaStudioWords = factory(root.gettext || ((text) => text));
})(typeof self !== "undefined" ? self : this, function (gettext) {
  "use strict";
  const gettext_noop = (text) => text; // marks the tables' strings for makemessages

  const LABELS = {
    irVersion: gettext_noop("Package format version"),
    sttHandlingJustification: gettext_noop("Why some questions have no re-ask on unclear speech"),
    totalTimeBudgetSec: gettext_noop("Total time for the exam (seconds)"),
    maxFollowUpDurationSec: gettext_noop("Time for follow-up questions (seconds)"),
    maxDurationSec: gettext_noop("Maximum time (seconds)"),
    afterSec: gettext_noop("After seconds of silence"),
    textAfterSec: gettext_noop("After seconds without typing (text mode)"),
    // The package and its settings.
    metadata: gettext_noop("About this exam"),
    persona: gettext_noop("The examiner"),
    globalPolicies: gettext_noop("Rules for the whole exam"),
    initialNodeId: gettext_noop("First node"),
    nodes: gettext_noop("Nodes"),
    questionPools: gettext_noop("Question pools"),
    packageId: gettext_noop("Package code"),
    title: gettext_noop("Title"),
    version: gettext_noop("Version"),
    language: gettext_noop("Language"),
    author: gettext_noop("Author"),
    createdAt: gettext_noop("Created on"),
    learningOutcomes: gettext_noop("Learning outcomes"),
    expectedCandidateCount: gettext_noop("Expected number of candidates"),
    structureLevel: gettext_noop("Openness of the questions"),
    structureJustification: gettext_noop("Why the questioning style differs"),
    commandJustification: gettext_noop("Why some questions limit what the candidate may ask for"),
    endNodeRationale: gettext_noop("Why a way of ending has no end node"),
    difficultyJustification: gettext_noop("Why the questions carry different amounts of evidence"),
    timeBudgetJustification: gettext_noop("Why the questions' time limits differ"),
    externalDependencies: gettext_noop("Outside resources"),
    extensions: gettext_noop("Extensions (for integrators)"),
    "learningOutcomes.id": gettext_noop("Code"),
    text: gettext_noop("Outcome"),
    uri: gettext_noop("Address (URL)"),
    purpose: gettext_noop("What it is used for"),
    "persona.name": gettext_noop("Examiner's name"),
    roleMessage: gettext_noop("Who the examiner is"),
    defaultCandidateCommands: gettext_noop("What candidates may ask for, unless a node says otherwise"),
    forbiddenActions: gettext_noop("What the examiner must never do"),
    // A node.
    nodeId: gettext_noop("Node name"),
    kind: gettext_noop("Kind of node"),
    promptSeed: gettext_noop("Instructions for the examiner"),
    scenario: gettext_noop("Situation for the candidate"),
    prompt: gettext_noop("What the examiner says"),
    opening: gettext_noop("Opening"),
    closing: gettext_noop("Closing"),
    evidenceTargets: gettext_noop("Evidence targets"),
    followUpPolicy: gettext_noop("Follow-up questions"),
    maxFollowUps: gettext_noop("Maximum number of follow-up questions"),
    followUpStyle: gettext_noop("Follow-up style"),
    completionPolicy: gettext_noop("When the node is complete"),
    requiredEvidenceTargetIds: gettext_noop("Targets that must be shown"),
    minTurns: gettext_noop("Minimum number of answers"),
    timeBudget: gettext_noop("Time limit"),
    timeBudgetMs: gettext_noop("Time limit (milliseconds, old form)"),
    candidateCommands: gettext_noop("What the candidate may ask for"),
    allowed: gettext_noop("Allowed requests"),
    forbidden: gettext_noop("Refused requests"),
    command: gettext_noop("Request"),
    onViolation: gettext_noop("When the candidate asks anyway"),
    reason: gettext_noop("Reason"),
    allowedActions: gettext_noop("What the examiner may do here"),
    recoveryHandlers: gettext_noop("When something goes wrong"),
    "recoveryHandlers.scenario": gettext_noop("Problem"),
    action: gettext_noop("What the examiner does"),
    maxAttempts: gettext_noop("Maximum number of attempts"),
    escalation: gettext_noop("Escalation"),
    "recoveryHandlers.escalation": gettext_noop("Next step if it goes on"),
    contextPolicy: gettext_noop("What the examiner remembers"),
    strategy: gettext_noop("Memory of the exam so far"),
    includePreviousNodeSummary: gettext_noop("Include a summary of the previous node"),
    endType: gettext_noop("How the exam ends here"),
    // An evidence target and its marking levels.
    id: gettext_noop("Short name"),
    label: gettext_noop("Label"),
    description: gettext_noop("Description"),
    weight: gettext_noop("Weight"),
    dimension: gettext_noop("Kind of knowledge"),
    markingCriteria: gettext_noop("Marking criteria"),
    rubricDescriptor: gettext_noop("Marking levels"),
    levels: gettext_noop("Levels"),
    excellent: gettext_noop("Excellent"),
    satisfactory: gettext_noop("Satisfactory"),
    partial: gettext_noop("Partial"),
    absent: gettext_noop("Absent"),
    // A transition.
    transitions: gettext_noop("Transitions"),
    targetNodeId: gettext_noop("Goes to"),
    condition: gettext_noop("Condition"),
    "condition.type": gettext_noop("Kind of condition"),
    targetIds: gettext_noop("Targets shown"),
    requiredEvidence: gettext_noop("Targets shown (old form)"),
    count: gettext_noop("Number of answers"),
    seconds: gettext_noop("Seconds in this node"),
    "condition.command": gettext_noop("Candidate's request"),
    // A question pool.
    poolId: gettext_noop("Pool name"),
    nodeIds: gettext_noop("Questions in the pool"),
    selection: gettext_noop("How a question is chosen"),
    difficultyCalibration: gettext_noop("Difficulty check"),
    method: gettext_noop("Method"),
    calibratedAt: gettext_noop("Checked on"),
    notes: gettext_noop("Notes"),
    // A question on the candidate's own work (issue #35, docs/spec/candidate-materials.md).
    "nodes.grounding": gettext_noop("Ask about the candidate's own work"),
    "grounding.material": gettext_noop("Which of their work"),
    "grounding.pick": gettext_noop("What to ask about"),
    "grounding.maxPassageChars": gettext_noop("Longest passage quoted (characters)"),
    "grounding.fallbackQuestion": gettext_noop("Question when their work gives nothing to ask about"),
  };

  // One entry of a list, by the list's name: %(id)s is the entry's id, or its number from 1.
  const ITEMS = {
    nodes: gettext_noop("node %(id)s"),
    questionPools: gettext_noop("question pool %(id)s"),
    learningOutcomes: gettext_noop("learning outcome %(id)s"),
    externalDependencies: gettext_noop("outside resource %(id)s"),
    evidenceTargets: gettext_noop("evidence target %(id)s"),
    transitions: gettext_noop("transition %(id)s"),
    recoveryHandlers: gettext_noop("recovery rule %(id)s"),
    forbidden: gettext_noop("refused request %(id)s"),
    allowed: gettext_noop("allowed request %(id)s"),
    forbiddenActions: gettext_noop("forbidden action %(id)s"),
    allowedActions: gettext_noop("allowed action %(id)s"),
    markingCriteria: gettext_noop("marking criterion %(id)s"),
    nodeIds: gettext_noop("pool question %(id)s"),
    requiredEvidenceTargetIds: gettext_noop("target %(id)s"),
    targetIds: gettext_noop("target %(id)s"),
    requiredEvidence: gettext_noop("target %(id)s"),
  };

  // A choice's value in plain words (issue #34): every string enum value of the package schema
  // and every kind of transition condition (the discriminator's values), so a select or a box
  // to tick never shows the humanised JSON value ("Stt low confidence"). The JSON value stays
  // the option's value; frontend/test/studio/studio-enum-words.test.js fails on a new value
  // without words. A value shared by two enums ("rephrase") means the same in both.
  const VALUES = {
    // What the candidate may ask for (CandidateCommandType).
    repeat: gettext_noop("Hear the question again"),
    clarification: gettext_noop("Ask what the question means"),
    request_rephrase: gettext_noop("Ask for the question in other words"),
    slow_down: gettext_noop("Ask the examiner to speak more slowly"),
    pause: gettext_noop("Ask for a pause"),
    resume: gettext_noop("Carry on after a pause"),
    thinking_aloud: gettext_noop("Think aloud without being interrupted"),
    help: gettext_noop("Ask how the exam works"),
    skip: gettext_noop("Skip the question"),
    revise_earlier_answer: gettext_noop("Go back to change an earlier answer"),
    finish: gettext_noop("Finish the exam early"),
    raise_hand: gettext_noop("Ask for attention"),
    challenge_premise: gettext_noop("Disagree with what a question assumes"),
    report_audio_issue: gettext_noop("Report a sound problem"),
    emergency_stop: gettext_noop("Stop the exam in an emergency"),
    signal_confidence: gettext_noop("Say how sure they are of an answer"),
    // What a grounded question asks about, and in which of the candidate's work (issue #35).
    submission: gettext_noop("Their submission"),
    report: gettext_noop("Their report"),
    choice: gettext_noop("A choice they made"),
    result: gettext_noop("A result they report"),
    limitation: gettext_noop("A limitation they name"),
    any: gettext_noop("Anything they wrote"),
    volume_up: gettext_noop("Ask the examiner to speak louder"),
    volume_down: gettext_noop("Ask the examiner to speak more quietly"),
    language_switch: gettext_noop("Continue in another language"),
    // What the examiner remembers on entering a node (ContextStrategy).
    reset: gettext_noop("Start afresh, forgetting earlier parts"),
    append: gettext_noop("Remember the whole conversation"),
    reset_with_summary: gettext_noop("Keep a summary of earlier parts"),
    // How the exam ends at an end node (EndType).
    normal: gettext_noop("Finished as planned"),
    timeout: gettext_noop("Time ran out"),
    terminated: gettext_noop("Stopped before the end"),
    technical_failure: gettext_noop("Ended by a technical problem"),
    // The kind of knowledge an evidence target shows (EvidenceDimension).
    knowledge_understanding: gettext_noop("Knowledge and understanding"),
    applied_problem_solving: gettext_noop("Applying knowledge to solve problems"),
    interpersonal_competence: gettext_noop("Communicating and working with others"),
    intrapersonal_quality: gettext_noop("Personal qualities such as confidence and self-awareness"),
    metacognitive: gettext_noop("Reflecting on one's own thinking"),
    // How the examiner follows up (FollowUpStyle).
    probing: gettext_noop("Dig deeper into the answer"),
    scaffolding: gettext_noop("Give hints step by step"),
    clarifying: gettext_noop("Ask what the candidate meant"),
    redirecting: gettext_noop("Steer back to the question"),
    free: gettext_noop("As the examiner sees fit"),
    // The kind of a node (NodeKind).
    question: gettext_noop("Exam question"),
    scenario: gettext_noop("Question about a case or situation"),
    task: gettext_noop("Task to work through"),
    discussion: gettext_noop("Open discussion of a topic"),
    warmup: gettext_noop("Welcome and warm-up"),
    wrapup: gettext_noop("Wrap-up before the end"),
    branch: gettext_noop("Fork in the exam, without a question"),
    identity_check: gettext_noop("Checking who the candidate is"),
    end: gettext_noop("End of the exam"),
    // How a refused request is answered (OnViolation).
    refuse_politely: gettext_noop("Politely say no"),
    redirect_to_question: gettext_noop("Say no briefly and return to the question"),
    // How a question is drawn from a pool (QuestionSelection).
    random_one: gettext_noop("One at random for each candidate"),
    // What the examiner does when something goes wrong (RecoveryAction, RecoveryEscalation).
    gentle_reprompt: gettext_noop("Gently ask again"),
    rephrase: gettext_noop("Ask in other words"),
    calm_support: gettext_noop("Calm and reassure the candidate"),
    pause_timer: gettext_noop("Stop the clock for a while"),
    technical_recovery: gettext_noop("Help with the technical problem"),
    retry: gettext_noop("Try the same again"),
    skip_node: gettext_noop("Move on to the next part"),
    pause_session: gettext_noop("Pause the whole exam"),
    terminate: gettext_noop("End the exam"),
    // What went wrong (RecoveryScenario).
    silence: gettext_noop("The candidate stays silent"),
    unclear_answer: gettext_noop("The answer is unclear"),
    off_topic: gettext_noop("The answer strays from the question"),
    anxiety: gettext_noop("The candidate is anxious"),
    interruption: gettext_noop("The candidate talks over the examiner"),
    network_issue: gettext_noop("The connection is poor"),
    repetition_loop: gettext_noop("The conversation goes round in circles"),
    stt_low_confidence: gettext_noop("Speech not recognised clearly"),
    // How open the questions are (StructureLevel).
    closed: gettext_noop("Closed questions"),
    "semi-structured": gettext_noop("Partly open questions"),
    open: gettext_noop("Open questions"),
    // The kind of a transition's condition (the condition's type).
    always: gettext_noop("Always, once the node is complete"),
    evidence_satisfied: gettext_noop("Once the targets are shown"),
    evidence_sufficient: gettext_noop("Once the targets are shown (old form)"),
    turn_count_reached: gettext_noop("After a number of answers"),
    time_elapsed: gettext_noop("After some time in the node"),
    candidate_command: gettext_noop("When the candidate asks for something"),
    policy_escalation: gettext_noop("When a problem goes on"),
  };

  // The "Add ..." button of a list of parts, by the list's name (a list entry's legend and its
  // "Remove ..." button are built from ITEMS with the entry's number).
  const ADD = {
    nodes: gettext_noop("Add node"),
    questionPools: gettext_noop("Add question pool"),
    learningOutcomes: gettext_noop("Add learning outcome"),
    externalDependencies: gettext_noop("Add outside resource"),
    evidenceTargets: gettext_noop("Add evidence target"),
    transitions: gettext_noop("Add transition"),
    recoveryHandlers: gettext_noop("Add recovery rule"),
    forbidden: gettext_noop("Add refused request"),
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

  return {
    label: (key) => lookup(LABELS, key),
    help: (key) => lookup(HELP, key),
    item: (listName) => lookup(ITEMS, listName),
    value: (value) => (Object.prototype.hasOwnProperty.call(VALUES, value) ? gettext(VALUES[value]) : null),
    add: (listName) => (Object.prototype.hasOwnProperty.call(ADD, listName) ? gettext(ADD[listName]) : null),
    gettext,
    LABELS,
    HELP,
    ITEMS,
    VALUES,
    ADD,
  };
});

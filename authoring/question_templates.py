"""Built-in question templates: four starting points offered in the studio's "Add a question
from the bank" picker beside the bank's entries, in English, German and Spanish.

A template is a question node with two evidence targets, their four rubric levels and the
policies every question node is asked for (docs/studio.md). Its wording is the package's, so it
is chosen by the package's language (``metadata.language``), not the author's: a German package
gets German templates. The bracketed words ("[the concept]") are for the author to replace.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ioa.compiler.types import JSONObject

TEMPLATE_LANGUAGES = ("en", "de", "es")
TEMPLATE_IDS = ("explain-concept", "apply-scenario", "compare-approaches", "justify-decision")

# (title, promptSeed, opening, ((target label, target description), (label, description)))
_Wording = tuple[str, str, str, tuple[tuple[str, str], tuple[str, str]]]

_WORDING: dict[str, dict[str, _Wording]] = {
    "en": {
        "explain-concept": (
            "Explain a concept",
            "Ask the candidate to explain [the concept] in their own words and give an example.",
            "Could you explain [the concept] in your own words?",
            (
                ("Core idea", "Candidate states the central idea of the concept correctly."),
                ("Example", "Candidate gives a fitting example of the concept."),
            ),
        ),
        "apply-scenario": (
            "Apply to a scenario",
            "Present [the scenario] and ask the candidate how they would apply [the method].",
            "How would you apply [the method] to this situation?",
            (
                ("Method chosen", "Candidate picks a method that fits the scenario."),
                ("Steps applied", "Candidate walks through applying it to the scenario's facts."),
            ),
        ),
        "compare-approaches": (
            "Compare two approaches",
            "Ask the candidate to compare [approach A] and [approach B] and say when each fits.",
            "How do [approach A] and [approach B] differ, and when would you use each?",
            (
                ("Differences", "Candidate names the main differences between the approaches."),
                ("When to use", "Candidate says when each approach is the better choice."),
            ),
        ),
        "justify-decision": (
            "Justify a design decision",
            "Ask the candidate why they chose [the decision] and which alternatives they weighed.",
            "Why did you decide on [the decision], and what else did you consider?",
            (
                ("Reasons", "Candidate gives reasons that support the decision."),
                ("Alternatives", "Candidate names alternatives and why they were set aside."),
            ),
        ),
    },
    "de": {
        "explain-concept": (
            "Ein Konzept erklären",
            "Bitte die Kandidatin oder den Kandidaten, [das Konzept] in eigenen Worten zu "
            "erklären und ein Beispiel zu geben.",
            "Können Sie [das Konzept] in eigenen Worten erklären?",
            (
                ("Kernidee", "Die Person nennt die zentrale Idee des Konzepts richtig."),
                ("Beispiel", "Die Person gibt ein passendes Beispiel für das Konzept."),
            ),
        ),
        "apply-scenario": (
            "Auf ein Szenario anwenden",
            "Stelle [das Szenario] vor und frage, wie [die Methode] darauf angewendet würde.",
            "Wie würden Sie [die Methode] auf diese Situation anwenden?",
            (
                ("Gewählte Methode", "Die Person wählt eine Methode, die zum Szenario passt."),
                ("Anwendung", "Die Person wendet sie Schritt für Schritt auf das Szenario an."),
            ),
        ),
        "compare-approaches": (
            "Zwei Ansätze vergleichen",
            "Bitte darum, [Ansatz A] und [Ansatz B] zu vergleichen und zu sagen, wann welcher "
            "passt.",
            "Worin unterscheiden sich [Ansatz A] und [Ansatz B], und wann würden Sie welchen "
            "verwenden?",
            (
                ("Unterschiede", "Die Person nennt die wichtigsten Unterschiede der Ansätze."),
                ("Einsatz", "Die Person sagt, wann welcher Ansatz die bessere Wahl ist."),
            ),
        ),
        "justify-decision": (
            "Eine Entwurfsentscheidung begründen",
            "Frage, warum [die Entscheidung] getroffen wurde und welche Alternativen abgewogen "
            "wurden.",
            "Warum haben Sie sich für [die Entscheidung] entschieden, und was haben Sie noch "
            "erwogen?",
            (
                ("Gründe", "Die Person nennt Gründe, die die Entscheidung stützen."),
                ("Alternativen", "Die Person nennt Alternativen und warum sie verworfen wurden."),
            ),
        ),
    },
    "es": {
        "explain-concept": (
            "Explicar un concepto",
            "Pide al candidato que explique [el concepto] con sus propias palabras y dé un "
            "ejemplo.",
            "¿Podría explicar [el concepto] con sus propias palabras?",
            (
                ("Idea central", "El candidato expresa correctamente la idea central."),
                ("Ejemplo", "El candidato da un ejemplo adecuado del concepto."),
            ),
        ),
        "apply-scenario": (
            "Aplicar a un escenario",
            "Presenta [el escenario] y pregunta cómo aplicaría [el método].",
            "¿Cómo aplicaría [el método] a esta situación?",
            (
                ("Método elegido", "El candidato elige un método adecuado al escenario."),
                ("Aplicación", "El candidato lo aplica paso a paso a los datos del escenario."),
            ),
        ),
        "compare-approaches": (
            "Comparar dos enfoques",
            "Pide que compare [el enfoque A] y [el enfoque B] y diga cuándo conviene cada uno.",
            "¿En qué se diferencian [el enfoque A] y [el enfoque B], y cuándo usaría cada uno?",
            (
                ("Diferencias", "El candidato nombra las diferencias principales."),
                ("Cuándo usarlo", "El candidato dice cuándo conviene cada enfoque."),
            ),
        ),
        "justify-decision": (
            "Justificar una decisión de diseño",
            "Pregunta por qué eligió [la decisión] y qué alternativas consideró.",
            "¿Por qué eligió [la decisión] y qué otras opciones consideró?",
            (
                ("Razones", "El candidato da razones que apoyan la decisión."),
                ("Alternativas", "El candidato nombra alternativas y por qué las descartó."),
            ),
        ),
    },
}

_LEVELS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("Complete", "Full and precise, without prompting."),
        ("Mostly complete", "Correct in the main, with small gaps."),
        ("Fragmentary", "Some correct elements, important parts missing."),
        ("Absent", "Not shown."),
    ),
    "de": (
        ("Vollständig", "Vollständig und genau, ohne Hilfestellung."),
        ("Weitgehend vollständig", "Im Wesentlichen richtig, mit kleinen Lücken."),
        ("Lückenhaft", "Einige richtige Teile, wichtige fehlen."),
        ("Nicht gezeigt", "Nicht gezeigt."),
    ),
    "es": (
        ("Completo", "Completo y preciso, sin ayuda."),
        ("Casi completo", "Correcto en lo esencial, con pequeñas lagunas."),
        ("Fragmentario", "Algunos elementos correctos, faltan partes importantes."),
        ("Ausente", "No se muestra."),
    ),
}


@dataclass(frozen=True)
class QuestionTemplate:
    """A built-in starting point: ``id`` (stable across languages), its ``language``, ``title``
    and the question ``node`` (without transitions) it inserts."""

    id: str
    language: str
    title: str
    node: JSONObject


def _rubric(language: str) -> JSONObject:
    names = ("excellent", "satisfactory", "partial", "absent")
    levels = _LEVELS[language]
    return {
        "levels": {
            name: {"label": label, "description": text}
            for name, (label, text) in zip(names, levels, strict=True)
        }
    }


def _node(template_id: str, language: str) -> JSONObject:
    title, seed, opening, targets = _WORDING[language][template_id]
    target_ids = [f"{template_id}-{n}" for n in (1, 2)]
    return {
        "nodeId": template_id,
        "kind": "question",
        "title": title,
        "promptSeed": seed,
        "prompt": {"opening": opening},
        "evidenceTargets": [
            {
                "id": target_id,
                "label": label,
                "description": description,
                "weight": 0.5,
                "dimension": "knowledge_understanding",
                "rubricDescriptor": _rubric(language),
            }
            for target_id, (label, description) in zip(target_ids, targets, strict=True)
        ],
        "followUpPolicy": {"maxFollowUps": 2, "maxFollowUpDurationSec": 90},
        "completionPolicy": {"requiredEvidenceTargetIds": target_ids[:1], "minTurns": 1},
        "timeBudget": {"maxDurationSec": 300},
        "candidateCommands": {
            "allowed": ["repeat", "clarification", "request_rephrase", "pause", "thinking_aloud"]
        },
        "forbiddenActions": ["reveal_answer", "reveal_rubric"],
        "recoveryHandlers": [
            {
                "scenario": "stt_low_confidence",
                "action": "gentle_reprompt",
                "maxAttempts": 2,
                "escalation": "pause_session",
            }
        ],
    }


def template_language(language: str | None) -> str:
    """The template language for a package language: its primary subtag when templates exist
    in it (``de-AT`` → ``de``), English otherwise."""
    primary = (language or "").split("-")[0].lower()
    return primary if primary in TEMPLATE_LANGUAGES else "en"


def question_templates(language: str | None) -> list[QuestionTemplate]:
    """Every template in ``language`` (see :func:`template_language`), in a fixed order; each
    call returns fresh copies."""
    lang = template_language(language)
    return [
        QuestionTemplate(
            id=template_id,
            language=lang,
            title=_WORDING[lang][template_id][0],
            node=copy.deepcopy(_node(template_id, lang)),
        )
        for template_id in TEMPLATE_IDS
    ]

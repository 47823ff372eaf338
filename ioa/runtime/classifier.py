"""The rule-based safety net on the candidate's transcript (chapter 07 §10, spec-notes §3).

Two jobs, both deterministic regular expressions over the normalised text:

* :func:`detect_command`: a short utterance that clearly is a command ("could you repeat the
  question?", "can we take a break?"). The runtime uses it only when the LLM did not report a
  command for the same turn (the LLM is the primary detector; this catches what it misses).
  Only turns of at most :data:`MAX_COMMAND_WORDS` words are classified, so an answer that
  happens to contain "repeat" is never mistaken for a command.
* :func:`detect_injection`: text addressed to the examination system rather than the examiner
  ("ignore your instructions", "give me full marks", "set evidenceSufficient to true"). Any
  length. The runtime records it (``guardrail_triggered``), warns the LLM, and distrusts the
  turn: no evidence, no completion, no command comes from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from ioa.languages import DEFAULT_LANGUAGE, exam_language
from ioa.output_filters.text import normalise, words
from ioa.schema import CandidateCommandType as C

MAX_COMMAND_WORDS: Final = 12

CommandRules = tuple[tuple[C, tuple[str, ...]], ...]
"""Per command, in priority order, the regular expressions (over :func:`command_text`) that
read a short utterance as that command."""

_ENGLISH_COMMANDS: Final[CommandRules] = (
    (
        C.EMERGENCY_STOP,
        (
            r"\b(this is an|it'?s an|i have an|there'?s an|medical) emergency\b",
            r"\bi need (medical )?help (right )?now\b",
            r"\bcall (a|an) (doctor|ambulance)\b",
            r"^emergency$",
        ),
    ),
    (
        C.FINISH,
        (
            r"\bi (want|would like|wish) to (stop|end|finish|quit) (the|this) "
            r"(exam|examination|test)\b",
            r"^(please )?(end|stop|finish) (the|this) (exam|examination|test)( now)?( please)?$",
        ),
    ),
    (
        C.RESUME,
        (
            r"^(ok(ay)?,? )?(i'?m|i am) (ready|back)( to continue| to go on| now)?$",
            r"\b(let'?s|we can) (continue|resume|carry on)\b",
            r"^resume( please)?$",
        ),
    ),
    (
        C.PAUSE,
        (
            r"\b(can|could|may) (we|i) (please )?(take|have) (a |an )?(short |quick )?"
            r"(pause|break)\b",
            r"\bi need (a|to take a) (short |quick )?(break|pause)\b",
            r"^(can we )?pause( please)?$",
        ),
    ),
    (
        C.REPEAT,
        (
            r"\b(can|could|would) you (please )?(repeat|say (that|it) again)\b",
            r"^(please )?repeat( the question| that)?( please)?$",
            r"\bsay (that|it) again\b",
            r"\bcome again\b",
            r"\b(didn'?t|did not) (catch|hear) (that|the question|what you said)\b",
            r"^pardon( me)?$",
        ),
    ),
    (
        C.REQUEST_REPHRASE,
        (
            r"\b(can|could|would) you (please )?(rephrase|reword)\b",
            r"\b(put|say|ask) (it|that|the question) (another|a different) way\b",
            r"^(please )?rephrase( the question| that)?( please)?$",
        ),
    ),
    (
        C.CLARIFICATION,
        (
            r"^what do you mean\b",
            r"\b(could|can) you (please )?clarify\b",
            r"^what does .{1,40} mean$",
            r"\bi (don'?t|do not) understand the question\b",
        ),
    ),
    (
        C.SLOW_DOWN,
        (
            r"\b(please )?slow down\b",
            r"\b(speak|talk) (a bit |a little )?(more )?slowly\b",
            r"\b(you'?re|you are) (talking|speaking) too fast\b",
        ),
    ),
    (
        C.SKIP,
        (
            r"\bskip (this|the) question\b",
            r"\bcan we skip\b",
            r"^(next question|move on)( please)?$",
        ),
    ),
    (
        C.REVISE_EARLIER_ANSWER,
        (
            r"\b(go|come) back to (my|the|an) (earlier|previous|last|first) (answer|question)\b",
            r"\b(correct|change|fix|revise|add to) (my|an|the) (earlier|previous) answer\b",
            r"\b(correct|change|fix|add to) (my|the) answer (to|for) the (previous|last|first"
            r"|earlier) (question|part)\b",
        ),
    ),
    (
        C.LANGUAGE_SWITCH,
        (
            r"\b(can|could|may) (we|i) (please )?(continue|go on|speak|answer|carry on|do "
            r"(this|it|the exam)) in (english|german|spanish|french|italian)\b",
            r"\b(switch|change) (the )?language\b",
        ),
    ),
    (
        C.THINKING_ALOUD,
        (
            r"^(let me think|i'?m thinking|i am thinking)( about it| aloud| out loud"
            r"| for a (moment|second))?$",
        ),
    ),
    (C.HELP, (r"^(help|i need help)( please)?$", r"\bhow does this (exam|examination) work\b")),
)

_GERMAN_COMMANDS: Final[CommandRules] = (
    (
        C.EMERGENCY_STOP,
        (
            r"\b(das ist ein|es ist ein|ich habe einen|medizinischer) notfall\b",
            r"\bich brauche (sofort|jetzt) (medizinische |ärztliche )?hilfe\b",
            r"\b(rufen sie|ruf) (einen|den) (arzt|notarzt|krankenwagen)\b",
            r"^notfall$",
        ),
    ),
    (
        C.FINISH,
        (
            r"\bich (möchte|will|würde gerne) (die|diese) prüfung (jetzt )?(beenden|abbrechen)\b",
            r"^(bitte )?(die |diese )?prüfung (jetzt )?beenden(,? bitte)?$",
        ),
    ),
    (
        C.RESUME,
        (
            r"^(ok(ay)?,? )?(ich bin|bin) (bereit|wieder da|zurück)( weiterzumachen| jetzt)?$",
            r"\b(lassen sie uns|wir können) (weitermachen|fortfahren)\b",
            r"^(weitermachen|fortfahren)(,? bitte)?$",
        ),
    ),
    (
        C.PAUSE,
        (
            r"\b(können|könnten|dürfen) (wir|ich) (bitte )?(eine )?(kurze |kleine )?pause "
            r"(machen|haben)\b",
            r"\bich brauche (eine )?(kurze |kleine )?pause\b",
            r"^(bitte )?(eine )?pause(,? bitte)?$",
        ),
    ),
    (
        C.REPEAT,
        (
            r"\b(können|könnten|würden) sie (mir )?(bitte )?(die frage|das|es|sie)? ?(bitte )?"
            r"(noch ?(ein)?mal )?wiederholen\b",
            r"^(bitte )?(die frage )?(noch ?(ein)?mal )?wiederholen(,? bitte)?$",
            r"^(wie bitte|noch ?(ein)?mal,? bitte|bitte noch ?(ein)?mal)$",
            r"\bich habe (das|die frage|sie) (akustisch )?nicht (gehört|verstanden)\b",
        ),
    ),
    (
        C.REQUEST_REPHRASE,
        (
            r"\b(können|könnten|würden) sie (die frage|das|es)? ?(bitte )?(anders|mit anderen "
            r"worten) (formulieren|sagen|ausdrücken|fragen)\b",
            r"\bumformulieren\b",
            r"^(bitte )?anders formulieren(,? bitte)?$",
        ),
    ),
    (
        C.CLARIFICATION,
        (
            r"^was meinen sie( damit)?\b",
            r"\b(können|könnten) sie (das )?(bitte )?(genauer )?(erklären|erläutern|präzisieren)\b",
            r"^was (bedeutet|heißt) .{1,40}$",
            r"\bich verstehe die frage nicht\b",
        ),
    ),
    (
        C.SLOW_DOWN,
        (
            r"\b(sprechen|reden) sie (bitte )?(etwas |ein bisschen )?langsamer\b",
            r"^(bitte )?(etwas )?langsamer(,? bitte)?$",
            r"\bsie sprechen (zu|sehr) schnell\b",
        ),
    ),
    (
        C.SKIP,
        (
            r"\b(diese|die) frage überspringen\b",
            r"\bkönnen wir (das |die frage |diese frage )?überspringen\b",
            r"^(nächste frage)(,? bitte)?$",
        ),
    ),
    (
        C.REVISE_EARLIER_ANSWER,
        (
            r"\b(meine|die|eine) (frühere|vorherige|letzte) antwort (korrigieren|ändern"
            r"|ergänzen)\b",
            r"\bzu (meiner|der|einer) (früheren|vorherigen|letzten) (antwort|frage) zurück\b",
        ),
    ),
    (
        C.LANGUAGE_SWITCH,
        (
            r"\b(können|könnten|dürfen) wir (bitte )?(auf|in) (englisch|spanisch|französisch)"
            r"( weitermachen| weiter| sprechen)?\b",
            r"\b(die )?sprache (wechseln|ändern)\b",
        ),
    ),
    (
        C.THINKING_ALOUD,
        (
            r"^(lassen sie mich (kurz )?(nach)?denken|ich denke (kurz )?nach"
            r"|ich überlege( kurz)?|moment,? ich überlege)$",
        ),
    ),
    (
        C.HELP,
        (r"^(hilfe|ich brauche hilfe)(,? bitte)?$", r"\bwie funktioniert (diese|die) prüfung\b"),
    ),
)

_SPANISH_COMMANDS: Final[CommandRules] = (
    (
        C.EMERGENCY_STOP,
        (
            r"\b(es una|tengo una|hay una) emergencia( médica)?\b",
            r"\bnecesito ayuda (médica )?(ya|ahora)( mismo)?\b",
            r"\bllame(n)? (a )?(un médico|una ambulancia)\b",
            r"^emergencia$",
        ),
    ),
    (
        C.FINISH,
        (
            r"\b(quiero|quisiera|deseo) (terminar|acabar|finalizar|dejar) (el|este) examen\b",
            r"^(por favor,? )?(terminar|finalizar|termine) (el|este) examen( ahora)?"
            r"(,? por favor)?$",
        ),
    ),
    (
        C.RESUME,
        (
            r"^(vale,? |ok(ay)?,? )?(ya )?(estoy) (listo|lista|preparado|preparada|de vuelta)"
            r"( para continuar| para seguir)?$",
            r"\b(podemos|vamos a) (continuar|seguir)\b",
            r"^(continuemos|sigamos)(,? por favor)?$",
        ),
    ),
    (
        C.PAUSE,
        (
            r"\b(podemos|podríamos|puedo) (hacer|tomar) (una )?(pequeña |breve )?pausa\b",
            r"\bnecesito (una )?(pequeña |breve )?pausa\b",
            r"^(una )?pausa(,? por favor)?$",
        ),
    ),
    (
        C.REPEAT,
        (
            r"\b(puede|podría|le importaría) (usted )?(repetir|repetirla|repetirlo|repetirme)\b",
            r"^(por favor,? )?repita( la pregunta| eso)?(,? por favor)?$",
            r"\bno (le |lo |la )?(he )?(oído|escuchado)\b",
            r"^(perdón|cómo dice|cómo)$",
        ),
    ),
    (
        C.REQUEST_REPHRASE,
        (
            r"\b(puede|podría) (usted )?(reformular|reformularla|reformularlo|decirlo de otra "
            r"(manera|forma)|preguntarlo de otra (manera|forma))\b",
            r"^(por favor,? )?reformule( la pregunta)?(,? por favor)?$",
        ),
    ),
    (
        C.CLARIFICATION,
        (
            r"^qué quiere decir\b",
            r"^a qué se refiere\b",
            r"\b(puede|podría) (usted )?(aclarar|aclararlo|aclarármelo|precisar)\b",
            r"^qué significa .{1,40}$",
            r"\bno entiendo la pregunta\b",
        ),
    ),
    (
        C.SLOW_DOWN,
        (
            r"\b(hable|puede hablar|podría hablar) (usted )?(un poco )?más despacio\b",
            r"^(un poco )?más despacio(,? por favor)?$",
            r"\bhabla (demasiado|muy) rápido\b",
        ),
    ),
    (
        C.SKIP,
        (
            r"\b(saltar|saltarnos|pasar) (esta|la) pregunta\b",
            r"\bpodemos (saltar|saltarnos|pasar)\b",
            r"^(siguiente pregunta|pasemos a la siguiente)(,? por favor)?$",
        ),
    ),
    (
        C.REVISE_EARLIER_ANSWER,
        (
            r"\b(corregir|cambiar|completar) (mi|una|la) respuesta anterior\b",
            r"\bvolver a (la|mi) (pregunta|respuesta) anterior\b",
        ),
    ),
    (
        C.LANGUAGE_SWITCH,
        (
            r"\b(podemos|podríamos|puedo|podría) (seguir|continuar|hablar|hacerlo) en "
            r"(inglés|alemán|francés)\b",
            r"\bcambiar (de|el) idioma\b",
        ),
    ),
    (
        C.THINKING_ALOUD,
        (r"^(déjeme pensar|déjame pensar|estoy pensando)( un momento| un poco)?$",),
    ),
    (
        C.HELP,
        (r"^(ayuda|necesito ayuda)(,? por favor)?$", r"\bcómo funciona (este|el) examen\b"),
    ),
)


@dataclass(frozen=True, slots=True)
class CommandVocabulary:
    """One language's command patterns, compiled."""

    language: str
    patterns: tuple[tuple[C, re.Pattern[str]], ...]
    """In priority order: the first command whose pattern matches wins."""
    any_command: re.Pattern[str]
    """All command patterns at once: one search rules most answers out before the ordered
    scan."""

    @classmethod
    def compile(cls, language: str, rules: CommandRules) -> CommandVocabulary:
        return cls(
            language=language,
            patterns=tuple(
                (command, re.compile("|".join(f"(?:{p})" for p in patterns)))
                for command, patterns in rules
            ),
            any_command=re.compile("|".join(f"(?:{p})" for _, ps in rules for p in ps)),
        )


VOCABULARIES: Final = MappingProxyType(
    {
        "en": CommandVocabulary.compile("en", _ENGLISH_COMMANDS),
        "de": CommandVocabulary.compile("de", _GERMAN_COMMANDS),
        "es": CommandVocabulary.compile("es", _SPANISH_COMMANDS),
    }
)
"""The command vocabulary per supported language (:data:`ioa.languages.SUPPORTED_LANGUAGES`):
a German exam reads "Können Sie die Frage wiederholen?", a Spanish one "¿Puede repetir la
pregunta?". Only the exam's language is read (a word of another language is an answer)."""

_INJECTION_PATTERNS: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\b(ignore|disregard|forget|override) (all |any |the |your |my |previous |prior "
        r"|above |earlier |those )*(instructions|prompts?|rules|guidelines|directives)\b",
        r"\b(system|developer) (prompt|message|instructions?|mode)\b",
        r"\byou are now\b",
        r"\bnew instructions?\b",
        r"\b(give|award|assign) me (full|maximum|max|top|the highest|perfect) "
        r"(marks?|score|points|grade)\b",
        r"\bmark (me|this|my answers?) (as )?(correct|excellent|complete|perfect)\b",
        r"\bevidence ?sufficient\b",
        r"\breport_observation\b",
        r"\bsignal ?type\b",
        r"\b(reveal|show|tell|read) (me )?(the |your )?(rubric|marking scheme|marking criteria"
        r"|grading criteria|answer key|model answer)\b",
        r"\bpretend (that )?(you are|you're|to be)\b",
        r"\b(jailbreak|dan mode)\b",
        r"</?(system|assistant|instructions?)>",
        r"^(system|assistant)\s*:",
        # German
        r"\b(ignoriere|ignorieren sie|vergiss|vergessen sie|missachte) (alle |deine |ihre |die "
        r"|bisherigen |vorherigen |obigen )*(anweisungen|regeln|instruktionen|vorgaben)\b",
        r"\b(gib|geben sie) mir (die )?(volle|maximale|höchste|beste) (punktzahl|punkte|note"
        r"|bewertung)\b",
        r"\b(zeig|zeigen sie|verrate|verraten sie|nenne|nennen sie) (mir )?(das |den |die )?"
        r"(bewertungsschema|bewertungskriterien|musterlösung|erwartungshorizont)\b",
        # Spanish
        r"\b(ignora|ignore|olvida|olvide) (todas |las |tus |sus |anteriores |previas )*"
        r"(instrucciones|reglas|normas)\b",
        r"\b(dame|deme|póngame|ponme) (la )?(nota máxima|máxima nota|máxima puntuación"
        r"|puntuación máxima|mejor nota)\b",
        r"\b(muéstrame|muéstreme|dime|dígame) (la |el )?(rúbrica|solución modelo"
        r"|criterios de evaluación)\b",
    )
)


@dataclass(frozen=True, slots=True)
class ConsentVocabulary:
    """One language's words for no and yes (read over :func:`command_text`), used by
    :mod:`ioa.runtime.agent_boundary`: a "no" always wins."""

    no_opening: re.Pattern[str]
    """An opening "no" (not "no idea")."""
    negated_wish: re.Pattern[str]
    """A negated wish: "I do not want to finish", "I'm not ready"."""
    keep_going: re.Pattern[str]
    """Wanting to go on: "I want to continue"."""
    yes: re.Pattern[str]
    """An opening "yes"."""


CONSENT_VOCABULARIES: Final = MappingProxyType(
    {
        "en": ConsentVocabulary(
            no_opening=re.compile(
                r"^(no|nope|nah|not (yet|now|really)|no,? thanks?( you)?|no way|absolutely not|"
                r"definitely not|of course not|cancel)\b(?!\s+(idea|clue)\b)"
            ),
            negated_wish=re.compile(
                r"\b(do not|don'?t|dont|does not|doesn'?t|did not|didn'?t|never|not|no longer"
                r"|won'?t|can'?t|cannot|shouldn'?t|wouldn'?t|rather not|i'?m not)\b(\s+\w+){0,3}?"
                r"\s+(want|wish|like|mean|meant|intend|ready|done|finished|finish|end|stop|quit"
                r"|skip|pause|leave|switch|change|move on|going to)\b"
            ),
            keep_going=re.compile(
                r"\b(i want to|i'?d like to|i wish to|let me|i'?ll|i will|please)\s+(continue"
                r"|carry on|keep going|go on|stay)\b|\b(keep going|carry on)\b"
            ),
            yes=re.compile(
                r"^(yes|yeah|yep|yup|sure|ok(ay)?|correct|confirm(ed)?|i confirm|i'?m sure"
                r"|i am sure|please do|go ahead|that'?s right|right)\b"
            ),
        ),
        "de": ConsentVocabulary(
            no_opening=re.compile(
                r"^(nein|nee|nö|noch nicht|jetzt nicht|lieber nicht|auf keinen fall|"
                r"keinesfalls|bloß nicht|abbrechen)\b(?!\s+(ahnung)\b)"
            ),
            negated_wish=re.compile(
                r"\b(ich (möchte|will|würde)( es| das| die prüfung)? (nicht|noch nicht|lieber "
                r"nicht)|ich bin (noch )?nicht (bereit|fertig)|nicht (beenden|aufhören|"
                r"überspringen|pausieren|abbrechen|wechseln))\b"
            ),
            keep_going=re.compile(
                r"\b(ich (möchte|will) (gerne |lieber )?(weitermachen|fortfahren|weiter)|"
                r"lassen sie mich (weitermachen|fortfahren)|bitte weiter(machen)?)\b"
            ),
            yes=re.compile(
                r"^(ja|jawohl|jep|genau|sicher|ok(ay)?|richtig|bestätigt|ich bestätige|ich bin "
                r"sicher|bitte beenden|einverstanden|gerne)\b"
            ),
        ),
        "es": ConsentVocabulary(
            no_opening=re.compile(
                r"^(no|todavía no|aún no|ahora no|de ninguna manera|para nada|mejor no|claro "
                r"que no|cancelar)\b(?!\s+(tengo ni idea|sé)\b)"
            ),
            negated_wish=re.compile(
                r"\b(no (quiero|deseo|quisiera|estoy listo|estoy lista|he terminado)|no "
                r"(terminar|parar|saltar|pausar))\b"
            ),
            keep_going=re.compile(
                r"\b((quiero|prefiero|quisiera|deseo) (continuar|seguir)|sigamos|continuemos)\b"
            ),
            yes=re.compile(
                r"^(sí|si|claro|vale|de acuerdo|ok(ay)?|correcto|confirmo|estoy seguro|estoy "
                r"segura|adelante|por supuesto)\b"
            ),
        ),
    }
)
"""The yes/no vocabulary per supported language."""


def consent_vocabulary(language: str = DEFAULT_LANGUAGE) -> ConsentVocabulary:
    """The yes/no words of the exam's ``language``."""
    return CONSENT_VOCABULARIES[exam_language(language)]


def command_text(text: str) -> str:
    """``text`` as the command patterns read it: normalised, without the opening ``¿``/``¡``
    and closing punctuation."""
    return normalise(text).lstrip("¿¡ ").rstrip("?!. ")


def detect_command(text: str, language: str = DEFAULT_LANGUAGE) -> C | None:
    """The command a short candidate utterance in the exam's ``language`` clearly is, or
    None."""
    if not text.strip() or len(words(text)) > MAX_COMMAND_WORDS:
        return None
    vocabulary = VOCABULARIES[exam_language(language)]
    normalised = command_text(text)
    if not vocabulary.any_command.search(normalised):
        return None
    for command, pattern in vocabulary.patterns:
        if pattern.search(normalised):
            return command
    return None


def detect_injection(text: str) -> str | None:
    """The matched phrase if ``text`` addresses the examination system, else None."""
    normalised = normalise(text)
    for pattern in _INJECTION_PATTERNS:
        match = pattern.search(normalised)
        if match:
            return match.group(0)
    return None

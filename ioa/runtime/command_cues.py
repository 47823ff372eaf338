"""The cue scorer of the rule-based command classifier (:mod:`ioa.runtime.classifier`).

The classifier's sentence rules are precise but narrow: they read the phrasings they were
written for. This module is the part that generalises. It reads a short utterance (already
limited to ``MAX_COMMAND_WORDS``) as evidence for and against each command, clause by clause
(:func:`clauses`: split at punctuation, remembering which clause was asked), after reading
loose spellings in their standard form (:func:`loosen`: "u", "pls", "brb", "no se") and
folding accents and umlauts on both sides (:func:`fold`: "koennen", "ueberspringen", "mas
despacio"), with
this knowledge per language (:data:`LEXICONS`):

* **cues** (``_EN_CUES``, ``_DE_CUES``, ``_ES_CUES``): what a command is made of: verbs,
  nouns and idioms with their stems and loose forms ("skip*", "pass", "next one", "move on",
  "überspring*", "lass ... aus", "me la salto", "brb", "come again", "didn't catch",
  "abgeben", "entregar"...). A cue is

  - **strong**: an idiom that is a command wherever the candidate says it ("be right back",
    "come again", "gather my thoughts", "was war nochmal die Frage");
  - **asked**: strong, but only in a question, with politeness or with the examiner addressed
    ("you're going too fast", "Sie sprechen zu schnell"; not "I'd go slower");
  - **framed**: a command when it stands in a clause of its own ("pass", "I'm finished", "I
    can't answer this one", "die lasse ich aus");
  - **weak**: an ordinary verb ("skip", "stop", "repeat", "pausieren", "parar") that needs,
    besides the frame, **request evidence**;
* the **frame** (``_EN_FRAME``, ``_EN_TAIL``...): the closed-class words a request is built
  from (modals and pronouns, "I'd like to", "is it ok if", "können wir", "lass uns",
  "¿podemos?", "please", "bitte", "porfa", time words, "this one", "the question", "die
  Frage", "la pregunta"...). A framed or weak cue counts only when every other word of its
  clause is such a word (either side: German and Spanish put the verb last; other cues of the
  same command count as frame: "abbreche und abgebe"). An exam answer brings content around
  the verb: a subject ("the algorithm skips", "Dijkstra salta"), a domain object ("we'd repeat
  the measurement", "pause the infusion"), a condition ("skip it if the new distance is not
  shorter"), a number; each is a word outside the frame, and it **vetoes** the cue. A negation
  before the cue ("I don't want to continue") vetoes it too, and so does another person in
  the clause ("he", "the patient": ``_OTHERS``), except for clarification;
* **request evidence** for weak cues: a request frame in the clause ("can we", "I want to",
  "would it be possible", "give me", "können Sie", "ich würde gern" but not the answer's
  conditional "ich würde", "quiero", "¿podemos?", "mejor"), politeness anywhere in the
  utterance ("please", "pls", "bitte", "porfa", "if that's ok", "wenn das geht", "si no le
  importa"), a question mark, giving up on the question ("I don't know", "keine Ahnung", "no
  sé"), or the bare short form: the cue opens its clause ("skip pls", "pass, sorry");
* **the rest of the turn**: a bare form, a framed cue without request evidence and any
  thinking aloud count only when every other clause is frame words too, or an apology
  ("sorry for the wait", "Entschuldigung für die Unterbrechung"): "Noch einmal: der Knoten
  ... kommt zuerst", "let me think, the heap is a binary tree" and "I'm done with the first
  part, now the second part is the heap" are answers;
* **a question the candidate answers themselves**: a question that asks nothing of the
  examiner (no request frame, no politeness), followed by a statement with content, is read
  as no command at all ("is it about the cost or the benefit? I'd say the cost", "what do you
  do next? you relax the edges"); a request with its reason after it is ("could we take a
  break? I have a headache").

Each accepted cue adds :data:`WEIGHTS` to its command; the highest total (at least 2) wins,
ties go by :data:`PRIORITY` (the more consequential first). Combinations: an emergency cue
wins over everything when the candidate is in the turn ("I feel really sick", "there's a
fire"; not "the fire alarm test is every Monday"); giving up on the question turns "go on"
into skip ("I don't know, can we go on?"), and so does going on to another question
("¿seguimos con otra?"), while going on with the exam itself is a resume ("weiter mit der
Prüfung": :data:`_GO_ON`); an acute danger of the candidate's own (their body, a person of
their household just hurt, their home: :data:`_ACUTE`) is an emergency, and outranks the stop
it is the reason for (the household's cue, :data:`_HOUSEHOLD`, names whose danger it is:
"the stairs", "he", "ella" beside it are about that person, and a past event or an all-clear
in the turn makes it a story); a wager on the answer ("I'd stake my life on it", "Hand ins
Feuer") signals confidence, and no emergency cue counts inside it (:data:`_WAGER`); "again" after a
state ("todo bien otra vez") asks for no repeat (:data:`_STATE`); revising needs an earlier
answer named ("my last answer", "Frage zwei", "la primera pregunta"); a language switch needs a
language named and a request; answer closings ("that's my answer", "das war's zu dieser
Frage", "esa es mi respuesta") are no finish or skip unless the exam itself is named.

Deterministic and cheap (about 25 µs a turn beside the sentence rules' ~50 µs): every pattern
is compiled once; each cue is tried, anchored, only at the word starts that begin with one of
its literal beginnings (:func:`beginnings`, derived from the parsed patterns, so no separate
keyword list can fall out of step with the cues; a dictionary look-up per word).
"""

from __future__ import annotations

import re
import re._parser as _sre_parser  # the pattern parser: literal beginnings of the cues
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

from ioa.schema import CandidateCommandType as C

Strength = Literal["strong", "asked", "framed", "weak"]

WEIGHTS: Final = MappingProxyType({"strong": 3, "asked": 3, "framed": 2, "weak": 2})
"""What an accepted cue adds to its command."""

PRIORITY: Final = (
    C.EMERGENCY_STOP,
    C.FINISH,
    C.REVISE_EARLIER_ANSWER,
    C.LANGUAGE_SWITCH,
    C.SKIP,
    C.PAUSE,
    C.RESUME,
    C.RAISE_HAND,
    C.REPORT_AUDIO_ISSUE,
    C.THINKING_ALOUD,
    C.REQUEST_REPHRASE,
    C.REPEAT,
    C.CHALLENGE_PREMISE,
    C.CLARIFICATION,
    C.SLOW_DOWN,
    C.VOLUME_UP,
    C.VOLUME_DOWN,
    C.HELP,
    C.SIGNAL_CONFIDENCE,
)
"""Ties between commands of the same score go to the earlier one."""

_DURATIONS: Final = MappingProxyType(
    {
        "en": "a an one two three five ten few couple of moment moments minute minutes min mins"
        " second seconds sec secs while bit little short quick",
        "de": "moment augenblick minute minuten sekunde sekunden kurz kurze kurzen eine einen ein"
        " paar zwei"
        " fünf zehn pause glas wasser",
        "es": "un una unos dos cinco diez momento momentito minuto minutos segundo segundos"
        " rato ratito",
    }
)
"""Duration words: allowed around a pause, a moment to think or a resume ("for 2 min")."""

# --- per language --------------------------------------------------------------------------------

_EN_FRAME = (
    "i we you me us my can could would will may might shall please pls just so ok okay alright"
    " right sorry well then now do dont does mind if is it its be possible fine to want wanna"
    " need like love prefer rather id wed ill im lets let going gonna have get take give go"
    " really actually maybe perhaps quickly hey yeah yes oh um uh hmm and but also kindly"
    " honestly would wouldnt cant couldnt how about what why instead think guess allowed"
    " there am are was ask a an got youre"
)
_EN_TAIL = (
    "this that it one ones the question questions part bit section topic exam test viva"
    " session interview assessment whole thing everything now here today then please pls"
    " thanks thank you for ok okay if possible thats is fine alright sorry again right on to"
    " with next later over out up me i mind dont do can we more time another different new"
    " following already first instead just go move get back ahead forward be in hand"
    " altogether entirely completely all carry continue going keep proceed something else"
    " whenever"
)
_DE_FRAME = (
    "ich wir sie mir mich uns können könnten darf dürfen dürften kann könnte möchte möchten"
    " würde würden will wollen wollte hätte hätten mag muss müsste lass lassen lasst bitte"
    " gern gerne lieber einfach mal doch vielleicht kurz jetzt hier dann nun also ja okay ok gut"
    " sorry entschuldigung na so äh ähm hm es das ist wäre sein in ordnung möglich wenn geht"
    " eigentlich noch erst schon auch wieder denn grad gerade und aber bin sind brauche"
    " bräuchte du kannst könntest würdest sag gib tut leid glaube denke schätze"
)
_DE_TAIL = (
    "die diese das dies es sie frage aufgabe teil thema hier jetzt bitte danke dann lieber"
    " gern gerne einfach mal doch wenn das geht okay ok in ordnung möglich noch einmal"
    " nochmal zur zu der den dem mit an auf nächsten nächste anderen andere weiter erst"
    " prüfung klausur sitzung ganze alles ich wir machen gehen nehmen kommen ist wäre"
    " vielleicht kurz bitte sorry also ja schon auch wieder heute damit hier stelle dieser"
    " diesem an um und weitermachen weitergehen übergehen springen fortfahren aus"
)
_ES_FRAME = (
    "yo me nos te le lo la se puedo podemos podría podríamos puede podrías puedes quiero"
    " quisiera querría me gustaría prefiero preferiría deseo necesito vamos a por favor porfa"
    " pues bueno vale mira mire oiga perdón perdone disculpe perdona lo siento ok okay sí"
    " entonces ya ahora es sería posible si importa importaría le usted un poco y pero que"
    " no creo mejor también tú dime dices dame puedes quieres listo dale"
)
_ES_TAIL = (
    "esta esa este ese la el lo esto eso pregunta parte tema examen prueba ahora ya aquí por"
    " favor porfa gracias si es posible puede se no le importa de momento otra otro"
    " siguiente próxima a al con para luego después más tarde el final favor vale perdón"
    " lo siento usted un una poco todo hoy que me nos y seguir continuar cuando quiera"
    " bien está"
)

_OTHERS: Final = MappingProxyType(
    {
        "en": r"\b(?:he|she|his|her|him|they|them|their|patients?|guests?|the [a-z]+s)\b",
        "de": r"\b(?:er|ihm|ihn|sein\w*|patient\w*|herr\w*|man|gäste)\b",
        "es": r"\b(?:ella|ellos|paciente\w*|señor\w*|clientes|huéspedes)\b",
    }
)
"""Another person in a clause: its cues are about them (an answer), not the candidate."""

_REQUEST: Final = MappingProxyType(
    {
        "en": (
            r"\b(?:can|could|would|will|may|might|shall|can'?t|couldn'?t) (?:we|i|you|u)\b"
            r"|\b(?:i|we)(?:'d| would)? (?:want|wanna|need|like|love|prefer|rather|wish)\b"
            r"|\b(?:i'?d|we'?d|i would) (?:like|love|prefer|rather)\b|\blet'?s\b|\blet (?:me|us)\b"
            r"|\bis it (?:ok|okay|alright|possible|fine)\b|\bwould it be\b|\bmind if\b"
            r"|\byou can\b|\bi'?m (?:going to|gonna)\b|^going to\b|\bi'?ll\b|\bhow about\b"
            r"|\bwhy don'?t we\b|\bgive me\b|^(?:want to|need|need to|got to|have to)\b"
        ),
        "de": (
            r"\b(?:können|könnten|dürfen|darf|kann|könnte|sollen|wollen) (?:wir|ich|sie)\b"
            r"|\b(?:ich|wir) (?:möchte|möchten|will|wollen|wollte|brauche|bräuchte|muss)\b"
            r"|\b(?:ich|wir) (?:würde|würden|hätte|hätten) (?:\w+ )?(?:gern|gerne|lieber)\b"
            r"|\blass(?:en|t)? (?:sie )?(?:uns|mich)\b"
            r"|\b(?:wäre|ist) es (?:möglich|okay|ok|in ordnung)\b"
            r"|\b(?:sie|ich|wir) (?:können|kann)\b"
            r"|^(?:\w+ )?(?:machen|gehen|nehmen|lassen) wir\b|\b(?:geben sie|gib) mir\b"
            r"|^(?:wäre|wären|könnte|könnten|dürfte|darf|kann|können|würde|würden)\b"
            r"|\b(?:kannst|könntest|würdest) du\b|\bgeht (?:das|es)\b|\bsag mir\b"
        ),
        "es": (
            r"\b(?:podemos|podríamos|puedo|podría|puede|puedes|podrías|se puede|quiero|quisiera"
            r"|querría|me gustaría|preferiría|prefiero|deseo|necesito|vamos a|le importa"
            r"|te importa|le importaría|te importaría|sería posible|es posible|mejor|d[ée]me|dame"
            r"|me lo dices|dime"
            r"|me dices)\b"
        ),
    }
)
"""A request frame in the clause before a weak cue."""

_POLITE: Final = MappingProxyType(
    {
        "en": r"\b(?:please|pls|plz|kindly)\b|\bif (?:that'?s|it'?s|that is|it is) (?:ok|okay"
        r"|alright|all right|possible|fine)\b|\bif you don'?t mind\b",
        "de": r"\bbitte\b|\bwenn (?:das|es) (?:geht|okay ist|ok ist|möglich ist|in ordnung ist)\b",
        "es": r"\b(?:por favor|porfa|porfi)\b|\bsi (?:no le importa|es posible|se puede|puede)\b",
    }
)

_NEGATION: Final = MappingProxyType(
    {
        "en": r"\b(?:don'?t|do not|not|never|no longer|won'?t|wouldn'?t)\b",
        "de": r"\b(?:nicht|nie|kein\w*)\b",
        "es": r"\b(?:no|nunca)\b",
    }
)
"""A negation before a cue in its clause: "I don't want to continue" asks for no resume."""

_GIVE_UP: Final = MappingProxyType(
    {
        "en": (
            r"\b(?:(?:don'?t|do not|dunno) (?:know|remember|have a clue)|no idea|no clue|not sure"
            r"|stuck|blank|haven'?t (?:studied|revised|learned)|didn'?t (?:study|revise|learn))\b"
        ),
        "de": (
            r"\b(?:keine ahnung|weiß (?:ich |es |das )?(?:leider )?nicht|nicht gelernt"
            r"|komme (?:da )?nicht (?:drauf|weiter)|blackout|hänge"
            r"|kriege? (?:ich )?(?:das |die |es )?(?:hier )?nicht hin)\b"
        ),
        "es": (
            r"\b(?:no (?:me )?(?:lo |la )?s[eé]|ni idea|no tengo (?:ni )?idea|en blanco"
            r"|no (?:he )?estudiado|no me acuerdo)\b"
        ),
    }
)
"""Giving up on the question: with a "go on" cue it is a skip."""

_CLOSING: Final = MappingProxyType(
    {
        "en": r"\b(?:that'?s|that is) (?:my answer|all (?:i have|i'?ve got) (?:to say )?on (?:this"
        r"|that))\b",
        "de": r"\b(?:das war'?s|das ist meine antwort)(?: von meiner seite| von mir)? (?:zu|bei)"
        r" (?:dieser|der) frage\b"
        r"|\bdas ist meine antwort\b",
        "es": r"\b(?:esa|esta|es) (?:es )?mi respuesta\b|\beso es todo (?:para|en) esta pregunta\b",
    }
)
"""An answer's closing: it ends an answer, not the exam."""

_EXAM: Final = MappingProxyType(
    {
        "en": r"\b(?:exam|examination|test|viva|assessment|session|whole thing)\b",
        "de": r"\b(?:prüfung|klausur|sitzung|das ganze)\b",
        "es": r"\b(?:examen|prueba|evaluación|sesión)\b",
    }
)

_LANGUAGE_NAMES = {
    "en": r"(?:english|german|spanish|french|italian|portuguese|turkish|catalan|polish|arabic"
    r"|dutch|russian|chinese|my (?:native|first|own|mother) (?:language|tongue))",
    "de": r"(?:englisch|deutsch|spanisch|französisch|italienisch|portugiesisch|türkisch"
    r"|katalanisch|polnisch|arabisch|niederländisch|russisch|meine muttersprache"
    r"|meine erstsprache)",
    "es": r"(?:inglés|ingles|alemán|aleman|francés|frances|español|castellano|italiano"
    r"|portugués|portugues|catalán|catalan|gallego|euskera|turco|árabe"
    r"|mi (?:lengua|idioma) (?:materna|nativo|natal)|mi (?:propio )?idioma)",
}

_BYSTANDER: Final = MappingProxyType(
    {
        "en": r"\b(?:someone|somebody|a (?:person|student|man|woman|guy)) (?:has )?(?:just"
        r"|here|next to me)(?: just)? (?:collapsed|fainted|passed out|stopped breathing)\b"
        r"|\b(?:someone|somebody) (?:has )?(?:collapsed|fainted|passed out) (?:here|in (?:the|my)"
        r" (?:room|hall|hallway|corridor|flat|house)|next to me)\b"
        r"|\bi(?:'m| am| think i'?m) (?:having|about to have|getting) (?:a )?(?:hypo|seizure"
        r"|asthma attack|panic attack)\b",
        "de": r"\b(?:hier|grad|gerade|eben) (?:ist )?(?:grad |gerade |eben )?(?:jemand|einer"
        r"|eine) (?:\w+ )?(?:umgekippt|zusammengebrochen|ohnmächtig geworden|bewusstlos)\b"
        r"|\bjemand ist (?:hier |grad |gerade |eben )+(?:umgekippt|zusammengebrochen"
        r"|ohnmächtig geworden|bewusstlos)\b|\bmir wird (?:gleich |grad |gerade )?schwarz vor"
        r" augen\b|\bich (?:kipp|kippe) (?:gleich )?um\b",
        "es": r"\balguien (?:se )?(?:acaba de |ha |se ha |se )?(?:desmay\w*|ca[ií]d[oa]|cay[oó]"
        r"|colaps\w*)(?: aqu[ií]| ac[aá]| en (?:la|el|mi) \w+)\b"
        r"|\balguien se acaba de (?:desmayar|caer)\b"
        r"|\bme (?:voy a|estoy por) desmayar\b|\bme estoy desmayando\b",
    }
)
"""Emergencies in the candidate's room or body beyond feeling ill: a person there who just
collapsed ("someone just collapsed in the hallway", "hier ist grad jemand umgekippt",
"alguien se acaba de desmayar aquí"), an attack of their own; "here", "just" or the room
anchors it, so "if someone collapsed you'd check the airway" stays an answer."""

_KIN: Final = MappingProxyType(
    {
        "en": r"(?:mum|mom|mother|dad|father|brother|sister|son|daughter|wife|husband|partner"
        r"|gran|granny|grandma|grandmother|grandad|grandpa|grandfather|nan|baby|child|kid"
        r"|flatmate|roommate|neighbou?r|boyfriend|girlfriend|aunt|uncle)",
        "de": r"(?:vater|mutter|mama|papa|oma|opa|großmutter|großvater|sohn|tochter|frau|mann"
        r"|kind|baby|bruder|schwester|freundin|freund|mitbewohner\w*|nachbar\w*|partner\w*)",
        "es": r"(?:madre|padre|mamá|papá|abuel[oa]|hij[oa]|herman[oa]|mujer|marido|pareja"
        r"|novi[oa]|bebé|niñ[oa]|compañer[oa] de piso|vecin[oa])",
    }
)
"""A person of the candidate's household ("my mum", "mein Vater", "mi abuela")."""

_HOUSEHOLD_WRITTEN: Final = MappingProxyType(
    {
        "en": r"(?<!\bif )(?<!\bwhen )(?<!\bwhether )\bmy (?:little |baby |big |older |younger"
        r" |elder |old )?KIN(?:'?s| has| is)? (?:just )?(?:fallen|collapsed|fainted|passed out"
        r"|blacked out|stopped breathing|had (?:a|an) (?:bad )?(?:fall|accident|fit|seizure"
        r"|stroke|heart attack)|hit (?:his|her|their) head|hurt (?:himself|herself|themselves)"
        r"|been (?:hurt|injured|knocked (?:down|over)|hit by a car|taken ill)|cut (?:himself"
        r"|herself|themselves) badly|burn(?:ed|t) (?:himself|herself|themselves)|gone into"
        r" labou?r)\b|(?<!\bif )(?<!\bwhen )\bmy (?:little |baby |big |older |younger |elder"
        r" |old )?KIN just (?:fell|collapsed|fainted|passed out|blacked out|had (?:a|an)"
        r" (?:fall|accident|fit|seizure|stroke|heart attack))\b|(?<!\bif )(?<!\bwhen )\bmy"
        r" KIN(?:'?s| is) (?:not breathing|unconscious|choking|bleeding|having (?:a|an) (?:fit"
        r"|seizure|stroke|heart attack|asthma attack))\b|\bmy KIN (?:isn'?t breathing|can'?t"
        r" breathe)\b",
        "de": r"(?<!\bwenn )(?<!\bfalls )(?<!\bob )\b(?:mein\w* (?:kleine\w* |große\w*"
        r" |alte\w* )?KIN|mama|papa|oma|opa) (?:ist(?: \w+){0,4}? (?:hingefallen|gefallen"
        r"|gestürzt|hingestürzt|runtergefallen|hinuntergefallen|heruntergefallen"
        r"|runtergestürzt|hinuntergestürzt|zusammengebrochen|zusammengeklappt|umgekippt"
        r"|kollabiert|ohnmächtig|bewusstlos|verunglückt)|hat sich (?:\w+ )?(?:verletzt"
        r"|den kopf angeschlagen|verbrannt|geschnitten)|hat (?:gerade |eben |grad )?(?:einen"
        r"|nen) (?:herzinfarkt|schlaganfall|anfall|krampfanfall|unfall)|atmet nicht"
        r"|blutet)\b",
        "es": r"(?<!\bsi )(?<!\bcuando )\b(?:(?:a )?mi KIN (?:se )?(?:acaba de (?:caer"
        r"|desmayar|desplomar|golpear|quemar)(?:se)?|ha (?:caído|desmayado|desplomado"
        r"|golpeado|quemado|cortado|colapsado|hecho (?:mucho )?daño|dado un golpe|tenido un"
        r" (?:infarto|ataque|accidente|derrame))|cayó|desmayó|desplomó|golpeó|colapsó|tuvo un"
        r" (?:infarto|ataque|accidente|derrame)|está (?:inconsciente|sangrando|convulsionando)"
        r"|no (?:respira|puede respirar)|está ahogando|ahoga)|a mi KIN le (?:ha dado|dio"
        r"|acaba de dar) un (?:infarto|ataque|derrame))\b",
    }
)
_HOUSEHOLD: Final = MappingProxyType(
    {lang: p.replace("KIN", _KIN[lang]) for lang, p in _HOUSEHOLD_WRITTEN.items()}
)
"""A person of the candidate's household just hurt, in any of its forms: a contraction or
a present perfect ("my mum's fallen down the stairs", "my grandad has had a fall"), "just"
with a past ("my dad just collapsed"), a state ("my baby is choking"); "meine Mama ist die
Treppe runtergefallen", "Papa ist umgekippt", "meine Oma hat sich schwer verletzt"; "mi
mamá se cayó", "mi madre se ha caído", "a mi padre le ha dado un infarto". The cue names
whose danger it is, so the other-person words beside it ("the stairs", "he isn't breathing",
"ella no responde") are about that person and veto nothing (:func:`household_danger`). A
condition ("if my mum has fallen") is no emergency, nor a past or repeated event: a turn
with a word of :data:`_PAST` ("last year", "a few times", "seitdem", "el año pasado")."""

_PAST: Final = MappingProxyType(
    {
        "en": r"\b(?:last (?:week|month|year|summer|winter|spring|autumn|time)|ago|years|when i"
        r" was|as a (?:child|kid)|twice|(?:a few|a couple of|several|many|three|four|five)"
        r" times|in the past|used to|once)\b",
        "de": r"\b(?:letzte\w*|vorige\w*|vergangene\w*|damals|früher|seitdem|einmal|mal"
        r"|gestern|vorgestern|als (?:ich|kind)|mehrmals|öfter|jahre\w*|vor (?:\w+ )?(?:jahren"
        r"|monaten|wochen|tagen))\b",
        "es": r"\b(?:el año pasado|la semana pasada|el mes pasado|el verano pasado|hace (?:\w+"
        r" )?(?:años|meses|semanas|días|tiempo)|de (?:pequeñ|niñ|chic)\w*|cuando (?:yo )?era"
        r"|una vez|dos veces|varias veces|muchas veces|ayer|anteayer|antes)\b",
    }
)
"""A past or repeated event: a household member's fall in a turn that says so is a story,
not an emergency now."""

_ALL_CLEAR: Final = MappingProxyType(
    {
        "en": r"\b(?:all (?:fine|good|ok|okay)|(?:everything|everyone)(?:'?s| is) (?:fine|ok"
        r"|okay|alright|all right|good)|(?:he|she)(?:'?s| is) (?:fine|ok|okay|alright|all right"
        r"|unhurt|not hurt)|they(?:'re| are) (?:fine|ok|okay|alright|all right|unhurt)"
        r"|nothing (?:happened|serious|broken)|no harm done)\b",
        "de": r"\b(?:alles (?:gut|okay|ok|in ordnung)|(?:ihm|ihr|uns) (?:geht'?s|geht es) gut"
        r"|(?:ist )?nichts passiert|nichts schlimmes|nicht schlimm)\b",
        "es": r"\b(?:todo bien|(?:pero|y|ya) (?:ya )?(?:está|están|estamos) bien|no (?:ha"
        r" pasado|pasó) nada|nada grave|no es nada)\b",
    }
)
"""An all-clear in the turn ("but he's fine", "aber alles gut", "pero está bien"): the
household member's fall is told, it is no emergency now."""

_ACUTE: Final = MappingProxyType(
    {
        "en": r"\bmy heart(?:'s| is) (?:racing|pounding)\b|\b(?:the room"
        r"|everything|my head)(?:'s| is) spinning\b|\bi(?:'m| am) (?:bleeding|blacking out)\b"
        r"|(?<!if )(?<!when )\b(?:there'?s|there is) (?:smoke|a gas leak|water everywhere)"
        r"(?= (?:in|here|everywhere|coming)\b|$)|\bi (?:can )?smell (?:gas|smoke|burning)\b"
        r"|\b(?:the|my|our) (?:house|flat|kitchen|room|apartment|building|home)(?:'?s| is"
        r"| has) (?:on fire|caught fire|filling with smoke|flooding)\b",
        "de": r"\b(?:ich )?(?:hab|habe) (?:\w+ )?herzrasen\b"
        r"|\bmein herz (?:rast|hämmert)\b|\b(?:mir )?dreht sich alles\b|\balles dreht sich\b"
        r"|\bich blute\b|\bes riecht (?:hier )?nach (?:gas|rauch|verbranntem)\b|\b(?:hier"
        r"|bei mir|überall) (?:ist )?(?:überall )?(?:rauch|qualm)\b|\b(?:wohnung|haus|küche"
        r"|zimmer) (?:steht )?in flammen\b",
        "es": r"\b(?:todo )?me da vueltas\b|\btodo (?:me )?da vueltas\b|\b(?:tengo|me ha dado)"
        r" taquicardia\b|\bel corazón (?:me )?(?:va|late) a mil\b|\bme va el corazón a mil\b"
        r"|\bestoy sangrando\b|\bvoy a vomitar\b|\bme falta el aire\b"
        r"|(?<!si )(?<!cuando )\bhay humo\b|\bhuele a (?:gas|quemado|humo)\b|\bmi (?:casa|piso"
        r"|cocina|habitación|cuarto|apartamento|departamento) (?:está en llamas|está ardiendo"
        r"|se está quemando|se quema|se incendia|se está incendiando|se está inundando)\b"
        r"|\bse (?:está quemando|quema|incendia|está incendiando) (?:mi|la) (?:casa|cocina"
        r"|piso|habitación|apartamento)\b",
    }
)
"""An acute danger that is the candidate's own, the reason a stop is an emergency: their
body ("my heart is racing", "mir dreht sich alles", "me va el corazón a mil"), a person of
their household just hurt (:data:`_HOUSEHOLD`), a danger in their home ("there's smoke in the
flat", "my flat's on fire", "es riecht nach Gas", "hay humo", "mi casa está en llamas"). It
counts as theirs (:data:`_ME`); a condition ("if there's smoke"), a past event ("my
grandmother fell last year") or a symptom named as a topic ("Herzrasen ist ein Symptom", "la
taquicardia es...") stays an answer."""

_WAGER: Final = MappingProxyType(
    {
        "en": r"\b(?:bet|stake|wager|put) (?:my (?:life|house|money|mortgage|last (?:euro|dollar"
        r"|pound|penny))|money|anything|everything)(?: on (?:it|that|this))?\b|\bswear on my"
        r" (?:life|mother'?s life)\b",
        "de": r"\b(?:meine )?hand (?:dafür |darauf |drauf |für )?(?:ins|in das) feuer\b"
        r"|\b(?:ver)?wett\w* (?:ich )?(?:mein (?:haus|leben|gehalt)|alles|drauf|darauf)\b"
        r"|\b(?:drauf|darauf) (?:würde ich )?wetten\b",
        "es": r"\b(?:pongo|pondría|pondria|meto|metería) la mano en el fuego\b|\bme juego (?:el"
        r" cuello|la vida|la cabeza|lo que (?:sea|quieras))\b|\b(?:apuesto|apostaría) (?:lo que"
        r" (?:sea|quieras)|la vida|mi vida|el cuello)\b",
    }
)
"""A wager on the answer ("I'd stake my life on that", "da lege ich meine Hand ins Feuer",
"pongo la mano en el fuego"): it signals confidence when it stands alone, and its "life",
"Feuer", "fuego" are a figure of speech: no emergency cue counts inside it."""

_GO_ON: Final = MappingProxyType(
    {
        "en": r"\b(?:go(?:ing)? on|carry(?:ing)? on|continu\w*|keep going|proceed|move on)"
        r"(?: \w+){0,3}? (?:to|with|onto) ",
        "de": r"\b(?:weiter\w*|fortfahren|fortsetzen)(?: \w+){0,2}? (?:mit|zu|zur) ",
        "es": r"\b(?:segu\w*|sig[au]\w*|continu\w*|retom\w*|pasamos|pasemos|vamos)(?: \w+){0,2}?"
        r" (?:con|a|al) ",
    }
)
_ONWARD_NEXT: Final = MappingProxyType(
    {
        "en": r"(?:the next|another|a different|a new|the following)(?: one| question| part"
        r"| topic)?\b",
        "de": r"(?:der |die |den |dem )?(?:nächste\w*|andere\w*)(?: frage| aufgabe)?\b",
        "es": r"(?:la |el )?(?:siguiente|próxim[oa]|otr[oa](?! vez\b))(?: pregunta| tema"
        r"| parte)?\b",
    }
)
_ONWARD_EXAM: Final = MappingProxyType(
    {
        "en": r"(?:the|this|my) (?:exam|test|viva|session|assessment|questions)\b",
        "de": r"(?:der|dieser) (?:prüfung|klausur|sitzung)\b",
        "es": r"(?:el|este|la|esta) (?:examen|test|prueba)\b",
    }
)
_EXAM_FIRST: Final = MappingProxyType(
    {
        "en": r"$^",
        "de": r"\bmit (?:der|dieser) (?:prüfung|klausur|sitzung)(?: \w+)? (?:weiter\w*"
        r"|fortfahren)\b",
        "es": r"$^",
    }
)
"""Going on (:data:`_GO_ON`, with its preposition) and what to: the next or another question
(:data:`_ONWARD_NEXT`) is a skip ("¿seguimos con otra?", "can we go on to the next one"), the
exam itself (:data:`_ONWARD_EXAM`, or German's "mit der Prüfung weiter",
:data:`_EXAM_FIRST`) a resume ("weiter mit der Prüfung", "carry on with the exam")."""

_STATE: Final = MappingProxyType(
    {
        "en": r"\b(?:fine|good|ok|okay|alright|better|well|working|works|back|normal"
        r"|connected|online)\s*$",
        "de": r"\b(?:gut|okay|ok|besser|normal|da|online|verbunden)\s*$",
        "es": r"\b(?:bien|mejor|bueno|ok|vale|normal|funciona|listo|lista|conectad[oa])\s*$",
    }
)
"""A state word just before "again" ("all good again", "todo bien otra vez"): the state is
back; nothing is asked to be repeated."""

CueSpec = tuple[C, Strength, str]

_EN_CUES: tuple[CueSpec, ...] = (
    # emergency: the candidate's own health or safety
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\b(?:feel|feeling|i'?m|i am) (?:really |very |so |quite |a bit )?(?:sick|ill|unwell"
        r"|faint|dizzy)\b|\bfire alarm\b|\bthere'?s a fire\b|\b(?:can'?t|cannot|can hardly)"
        r" breathe\b|\bgoing to (?:faint|throw up|be sick|pass out)\b|\bchest pains?\b",
    ),
    (C.EMERGENCY_STOP, "framed", r"\b(?:emergency|medical emergency)\b"),
    (C.EMERGENCY_STOP, "strong", _BYSTANDER["en"]),
    (C.EMERGENCY_STOP, "strong", _ACUTE["en"]),
    (C.EMERGENCY_STOP, "strong", _HOUSEHOLD["en"]),
    (C.SIGNAL_CONFIDENCE, "strong", _WAGER["en"]),
    # finish
    (
        C.FINISH,
        "framed",
        r"\b(?:i'?m|i am) (?:finished|done)(?: with (?:the |this |my )?(?:exam|test|viva|it"
        r"|everything|the whole thing))?\b|\bi (?:give up|quit)\b",
    ),
    (
        C.FINISH,
        "weak",
        r"\b(?:hand (?:it |this |everything |the exam |my exam )?in|submit|call it (?:a day|quits)"
        r"|wrap (?:it |things |this )?up|give up|quit|end|ending|stop|finish|terminate"
        r"|conclude|close)\b",
    ),
    # skip
    (
        C.SKIP,
        "weak",
        r"\b(?:skip\w*|pass|passing|move on|moving on|go on to|leave (?:this|that|it)|drop"
        r" (?:this|that|it)|next(?: one| question| part| please)?|(?:another|a different)"
        r" (?:one|question)|come back to (?:this|it|that) later)\b",
    ),
    (C.SKIP, "framed", r"\b(?:i'?m skipping|i skip|i'?ll skip|i'?m passing|i'?ll pass)\b"),
    (
        C.SKIP,
        "framed",
        r"\b(?:(?:don'?t|do not) think i can|can'?t|cannot|couldn'?t|not able to) answer"
        r"(?: (?:this|that|it))?(?: one| question)?\b|\b(?:rather|prefer) not (?:to )?answer\b",
    ),
    # resume
    (
        C.RESUME,
        "strong",
        r"\bwhere were we\b|\bback again\b|\bready when you are\b",
    ),
    (
        C.RESUME,
        "framed",
        r"\b(?:i'?m|i am|we'?re|we are) (?:back|ready|good to go|all set)\b|\b(?:ready|good to go"
        r"|all set)(?: to (?:go|continue|carry on|start))?(?: again)?\b",
    ),
    (
        C.RESUME,
        "weak",
        r"\b(?:continue|carry on|keep going|go on|resume|proceed|get going)\b",
    ),
    (C.RESUME, "framed", r"^back(?: again| now)?$"),
    # pause
    (
        C.PAUSE,
        "strong",
        r"\bbe right back\b|\bback in (?:a|one|two|five|ten|a few) (?:minute|min|sec|second)s?\b"
        r"|\bmy (?:phone|doorbell) is ringing\b|\b(?:someone|somebody|there'?s someone)(?:'s| is)?"
        r" at the door\b",
    ),
    (
        C.PAUSE,
        "weak",
        r"\b(?:pause|break|breather|time ?out|rest|step (?:away|out)|stop (?:for )?(?:a|one|two"
        r"|five|ten|a few) (?:moment|minute|min|sec|second)s?|(?:have|take|get) (?:a |one |two"
        r" |five |ten |a few |a couple of )(?:minute|min)s?|(?:give me|need) (?:two|five|ten|a few"
        r"|a couple of|\d+) (?:minutes|mins))\b",
    ),
    # thinking aloud
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:gather|collect|sort|order) (?:out )?my thoughts\b|\b(?:moment|second|sec|minute"
        r"|seconds|minutes|secs)s? (?:to think|before i answer)\b|\bthink about"
        r" (?:it|this|that) for a\b",
    ),
    (
        C.THINKING_ALOUD,
        "weak",
        r"\b(?:hang on|hold on|give me a (?:moment|second|sec)"
        r"|think(?: about (?:it|this|that))?)\b",
    ),
    # rephrase
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:rephrase|reword|reformulate)\w*|\b(?:put|say|ask|phrase|word|explain)(?: it| that"
        r"| this| the question)? (?:differently|another way|a different way|in other words"
        r"|in (?:simpler|plainer|easier|different) (?:words|terms)|more simply)\b",
    ),
    # repeat
    (
        C.REPEAT,
        "strong",
        r"\bcome again\b|\b(?:didn'?t|did not|couldn'?t|could not) (?:quite )?(?:catch|hear)\b"
        r"|\bsay (?:that |it |the question )?(?:again|once more|one more time)\b"
        r"|\bwhat was the question\b|\byou (?:cut|broke) (?:out|up)\b"
        r"|\bwhat did you (?:just )?(?:ask|say)\b",
    ),
    (
        C.REPEAT,
        "framed",
        r"\b(?:the )?(?:audio|sound|connection|line|video) (?:cut|broke|dropped|froze)(?: out| up"
        r"| off)?\b",
    ),
    (
        C.REPEAT,
        "weak",
        r"\b(?:repeat\w*|one more time|once more|again|read (?:it|that|the question)(?: out)?"
        r"(?: again)?)\b",
    ),
    # clarification
    (
        C.CLARIFICATION,
        "strong",
        r"\b(?:are|were) you asking\b|\b(?:is|was) (?:that|this|it|the question) asking\b"
        r"|\bthe question asking\b|\bjust to (?:check|clarify|confirm)\b|\bdo you mean\b"
        r"|\bwhat do you want me to (?:explain|say|talk about|focus on)\b|\b(?:do you want|should"
        r" i (?:give|explain|talk about|focus on|describe))\b.* or\b",
    ),
    (
        C.CLARIFICATION,
        "asked",
        r"\b(?:is|was) (?:the question|it|this|that) (?:about|asking)\b"
        r"|\b(?:which|what) part of the question\b"
        r"|\bshould i (?:focus on|talk about|explain|answer|describe)\b",
    ),
    (
        C.CLARIFICATION,
        "asked",
        r"\bwhat (?:exactly )?you (?:mean|'?re asking|are asking|want me to (?:say|explain))\b",
    ),
    # slow down
    (
        C.SLOW_DOWN,
        "asked",
        r"\b(?:talk|speak|go|read)\w* (?:a (?:bit|little) )?(?:more )?(?:slowly|slower)\b"
        r"|\b(?:too|so|pretty|quite|really|very) (?:fast|quickly)\b",
    ),
    (C.SLOW_DOWN, "weak", r"\bslow (?:it )?down\b"),
    (C.SLOW_DOWN, "asked", r"\b(?:a (?:bit|little) )?(?:slower|more slowly)\b"),
    (C.SLOW_DOWN, "asked", r"\b(?:not|don'?t (?:talk|speak|go|read)) (?:so|too) fast\b"),
    # revise: needs an earlier answer named (see _REVISE_REF)
    (
        C.REVISE_EARLIER_ANSWER,
        "strong",
        r"\b(?:correct|fix|change|revise|revisit|amend|redo|update|add to"
        r"|add (?:something|a point|more)|go back to|return to)\b",
    ),
    # language switch: needs a language named (see _LANGUAGE_NAMES)
    (C.LANGUAGE_SWITCH, "strong", r"\b(?:in|into|to) (?:LANG)\b"),
    # help
    (
        C.HELP,
        "strong",
        r"\bhow (?:does|do) (?:this|the exam|it|this exam|the format)(?: \w+)? works?\b|\bhow do"
        r" i use\b|\bwhere do i (?:type|click|press|write|put)\b|\bhow the exam works\b"
        r"|\bexplain the format\b|\bwhat (?:do|should) i do now\b|\bwhat am i (?:meant|supposed)"
        r" to do\b",
    ),
    # informal and typed forms met in the blind held-out set 4 (issue #31)
    (
        C.CLARIFICATION,
        "strong",
        r"\bwhat does \w+(?: \w+)? mean\b|\bis (?:the|this|that) question about\b",
    ),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:simpler|easier|another|different) way to (?:ask|say|put)\b",
    ),
    (
        C.FINISH,
        "strong",
        r"\b(?:don'?t|do not) want to answer any more(?: questions)?\b|\bno more questions\b",
    ),
    (
        C.RESUME,
        "strong",
        r"\b(?:i'?m|im|i am) (?:back|here again)\b|\bthanks? (?:you )?for waiting\b",
    ),
    (
        C.PAUSE,
        "weak",
        r"\bhold (?:it|things|everything) (?:here|there|for a (?:moment|minute|second))\b",
    ),
    (C.THINKING_ALOUD, "framed", r"^(?:still )?thinking$"),
    (
        C.HELP,
        "strong",
        r"\bwhat am i supposed to do\b|\bhow do i (?:send|submit|type|enter)\b"
        r"|\b(?:there'?s|theres|i see) no (?:send )?button\b",
    ),
    # blind held-out set 5 (issue #31): more ways to say the same requests
    (
        C.SKIP,
        "weak",
        r"\bleave (?:this|that|it)(?: question| one)? out\b|\b(?:a )?different (?:one|question)\b",
    ),
    (C.FINISH, "strong", r"\bdone with the whole (?:thing|exam|test)\b"),
    (C.REPEAT, "weak", r"\bonce more\b|\bread it (?:out )?again\b"),
    (
        # Asked: "in simpler words, a hash function maps ..." restates the candidate's answer.
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:with|in|using) (?:more easy|easier|simpler|more simple|plainer) words\b",
    ),
    (C.CLARIFICATION, "strong", r"\bdoes \w+ mean\b"),
    (C.PAUSE, "strong", r"\b(?:i'?ll|will) be right back\b"),
    (C.RESUME, "strong", r"\bready to (?:start again|continue|go on|carry on|keep going)\b"),
    (C.SLOW_DOWN, "asked", r"\b(?:talk|speak) (?:more )?slow\b"),
    (C.THINKING_ALOUD, "strong", r"\b(?:collecting|gathering|sorting) my thoughts\b"),
    (
        C.HELP,
        "strong",
        r"\b(?:talk|speak),? or (?:do i )?(?:type|write)\b|\bnot sure how this works\b",
    ),
    (C.REVISE_EARLIER_ANSWER, "strong", r"\bgot it wrong\b|\bwas wrong\b"),
    # the rest of the vocabulary (issue #31, blind set 7): the examiner's sound, the proctor,
    # a question the candidate thinks wrong, how sure they are
    (
        C.VOLUME_UP,
        "asked",
        r"\b(?:speak|talk) up\b|\b(?:turn|crank) (?:it |the volume |the sound |yourself )?up\b"
        r"|\b(?:volume|sound) up\b|\blouder\b|\b(?:raise|increase) the (?:volume|sound)\b",
    ),
    (
        C.VOLUME_UP,
        "strong",
        r"\b(?:you'?re|you are|it'?s|that'?s|your voice is|the (?:sound|audio|volume) is)"
        r" (?:very |really |so |too |a bit |quite |pretty |way too )+(?:quiet|low|soft)\b",
    ),
    (
        C.VOLUME_DOWN,
        "asked",
        r"\bturn (?:it |the volume |the sound |yourself )?down\b|\b(?:volume|sound) down\b"
        r"|\bquieter\b|\b(?:lower|reduce|decrease) the (?:volume|sound)\b",
    ),
    (
        C.VOLUME_DOWN,
        "strong",
        r"\b(?:you'?re|you are|it'?s|that'?s|your voice is|the (?:sound|audio|volume) is)"
        r" (?:very |really |so |too |a bit |quite |pretty |way too |a little )+loud\b",
    ),
    (
        C.REPORT_AUDIO_ISSUE,
        "strong",
        r"\b(?:can'?t|cannot|can barely|can hardly|can'?t really) (?:hear|understand) (?:you"
        r"|anything|a thing|the examiner)\b|\b(?:you|your voice|the (?:audio|sound|line"
        r"|connection)) (?:keeps? |is |are )(?:cutting|breaking|dropping) (?:out|up)\b"
        r"|\b(?:audio|sound|voice|connection) is (?:really |very |a bit |so )?(?:choppy|glitchy"
        r"|distorted|muffled|garbled|lagging|breaking up)\b|\b(?:lot of|lots of|so much) static\b"
        r"|\bno (?:sound|audio)\b|\b(?:my|the) (?:audio|sound|speakers?|headphones?) (?:is|are)"
        r" (?:not working|broken|dead)\b",
    ),
    (
        C.RAISE_HAND,
        "weak",
        r"\b(?:talk|speak) (?:to|with) (?:a |the |an |my |someone |somebody )?(?:real |actual"
        r" |human )?(?:proctor|invigilator|supervisor|human|person|staff|teacher|someone"
        r"|somebody)\b|\b(?:get )?(?:the )?(?:proctor|invigilator|supervisor)'?s? attention\b"
        r"|\b(?:call|get|need|want) (?:the|a|my) (?:proctor|invigilator|supervisor)\b",
    ),
    (
        C.RAISE_HAND,
        "strong",
        r"\braise (?:my|a) hand\b|\b(?:someone|somebody|anyone) (?:supervising|in charge"
        r"|from (?:the )?staff)\b",
    ),
    (
        C.CHALLENGE_PREMISE,
        "strong",
        r"\b(?:the|this|that|your) question (?:is|seems|might be|may be) (?:wrong|incorrect"
        r"|flawed|mistaken|misleading)\b|\b(?:mistake|error|typo) in (?:the|this|your) question\b"
        r"|\bpremise (?:of (?:the|this|your) question )?(?:is|seems) (?:wrong|false|incorrect"
        r"|flawed)\b|\b(?:disagree|don'?t agree|do not agree) with (?:the|this|that|your)"
        r" (?:premise|assumption|question)(?: (?:of|in|behind) (?:the|this|that|your) question"
        r"|(?! (?:of|in|behind|about)\b))\b|\bthe question (?:is based on|assumes) (?:a )?"
        r"(?:wrong|false|mistaken)\b",
    ),
    (
        C.SIGNAL_CONFIDENCE,
        "framed",
        r"\b(?:just so you know,? |for the record,? )?(?:i'?m|i am|i feel) (?:not )?(?:very"
        r" |really |fairly |pretty |quite |totally |completely |100 ?% |not very |not really"
        r" |not at all |not too )*(?:(?:confident|certain|unsure|uncertain)(?: about ANSWER)?"
        r"|sure about ANSWER)\b|\b(?:that'?s|it'?s|this is) (?:correct|right)\b".replace(
            "ANSWER", "(?:my answer|that answer|this answer|what i (?:just )?said)"
        ),
    ),
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\b(?:i'?m|i am) not feeling (?:well|good|ok|okay)\b|\bi (?:don'?t|do not) feel"
        r" (?:well|good|ok|okay)\b",
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\bthink(?:ing)? (?:out loud|aloud)\b|\bbear with me\b|\bthink (?:this|it|that)"
        r" through\b",
    ),
    (
        C.CLARIFICATION,
        "strong",
        r"\b(?:does|did) (?:the question|it|that|this) mean\b",
    ),
    (
        C.PAUSE,
        "strong",
        r"\b(?:need|have|got) to (?:get|grab|fetch) (?:some |a )?(?:water|drink|glass of water)\b",
    ),
    (
        C.HELP,
        "strong",
        r"\b(?:lost|confused|unsure) (?:with |about |on )?how (?:this|it|the exam) works\b",
    ),
)

_DE_CUES: tuple[CueSpec, ...] = (
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\bbrennt\b|\bfeuer(?:alarm)?\b|\bmir ist (?:total |ganz |so |sehr |richtig )?(?:schlecht"
        r"|übel|schwindlig|schwindelig)\b|\bmir geht'?s (?:gar |überhaupt )?nicht gut\b"
        r"|\b(?:krieg|kriege|bekomme) (?:kaum|keine) luft\b",
    ),
    (
        C.FINISH,
        "weak",
        r"\b(?:abgeben|abgebe|abbrechen|abbreche|beenden|abschließen|aufhören|aufgeben"
        r"|schluss machen)\b",
    ),
    (C.EMERGENCY_STOP, "framed", r"\bnotfall\b"),
    (C.EMERGENCY_STOP, "strong", _BYSTANDER["de"]),
    (C.EMERGENCY_STOP, "strong", _ACUTE["de"]),
    (C.EMERGENCY_STOP, "strong", _HOUSEHOLD["de"]),
    (C.SIGNAL_CONFIDENCE, "strong", _WAGER["de"]),
    (C.PAUSE, "strong", r"\b(?:mein (?:handy|telefon)|es) klingelt\b"),
    (
        C.FINISH,
        "framed",
        r"\b(?:ich bin|bin) (?:fertig|durch)(?: mit (?:der|dieser) prüfung)?\b|\bich gebe auf\b",
    ),
    (
        C.SKIP,
        "weak",
        r"\b(?:überspring\w*|auslass\w*|weglass\w*|skipp\w*|passe|übergehen|lass\w* (?:ich |wir )?"
        r"(?:die |das |sie |diese )?(?:lieber |einfach |mal )*aus|(?:zur|mit der|die) (?:nächsten?"
        r"|anderen?)(?: frage| aufgabe)?|nächste frage|weiter)\b",
    ),
    (
        C.SKIP,
        "framed",
        r"\b(?:(?:lasse|überspringe|überspring) ich|ich (?:lasse|überspringe))\b",
    ),
    (
        C.SKIP,
        "framed",
        r"\b(?:leider )?nicht beantworten\b",
    ),
    (C.RESUME, "strong", r"\bwo waren wir\b"),
    (
        C.RESUME,
        "framed",
        r"\b(?:ich bin|bin) (?:wieder |jetzt )*(?:da|zurück|bereit|so weit|soweit)\b"
        r"|\balles wieder gut\b|\bda bin ich (?:wieder|zurück)\b|\bbin (?:wieder|zurück) da\b",
    ),
    (C.RESUME, "weak", r"\b(?:weitermachen|fortfahren|weitergehen|machen wir weiter)\b"),
    (C.PAUSE, "strong", r"\bbin gleich (?:wieder )?(?:da|zurück)\b"),
    (C.PAUSE, "weak", r"\b(?:pause|pausieren|unterbrechen|unterbrechung|auszeit)\b"),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:meine )?gedanken (?:sortieren|ordnen|sammeln)\b|\b(?:zum nachdenken|um"
        r" nachzudenken|um zu überlegen)\b"
        r"|\b(?:zeit|sekunden|moment) (?:nehmen )?(?:bevor|zum)\b|\bsekunden zeit\b",
    ),
    (
        C.THINKING_ALOUD,
        "weak",
        r"\b(?:nachdenken|überlegen|moment|sekunde|augenblick)\b",
    ),
    (
        C.THINKING_ALOUD,
        "framed",
        r"\bich (?:überlege|denke) (?:noch|gerade|kurz)(?: nach)?\b",
    ),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\bum(?:zu)?formulier\w*|\b(?:sagen|formulieren|fragen|erklären) sie (?:das |es |die"
        r" frage )?(?:bitte |mal |doch |vielleicht |einfach )*anders\b|\b(?:anders|einfacher"
        r"|verständlicher) (?:formulieren|sagen|ausdrücken|fragen|stellen)\b|\b(?:mit|in)"
        r" (?:anderen|einfacheren|einfachen) worten\b|\bdas mal anders\b|\banders sagen\b",
    ),
    (
        C.REPEAT,
        "strong",
        r"\b(?:was|wie) war (?:(?:nochmal|noch ?mal|noch einmal|eigentlich|denn) )*die frage\b"
        r"|\bnicht (?:mitbekommen|verstanden|gehört)\b|\bwas haben sie (?:gerade |eben )?(?:gefragt"
        r"|gesagt)\b",
    ),
    (C.REPEAT, "weak", r"\b(?:wiederhol\w*|nochmal|noch ?(?:ein)?mal)\b"),
    (
        C.CLARIFICATION,
        "strong",
        r"\bfragen sie nach\b|\bmeinen sie\b|\bnur zur sicherheit\b|\bwas (?:genau )?soll ich"
        r" (?:da |hier )?(?:erklären|sagen|beschreiben)\b|\bwas heißt (?:denn |hier )?\S+ in"
        r" diesem zusammenhang\b",
    ),
    (
        C.CLARIFICATION,
        "asked",
        r"\bgeht es (?:hier |dabei |eher )?um\b.* oder\b|\bwelchen? teil der frage\b",
    ),
    (
        C.SLOW_DOWN,
        "asked",
        r"\blangsamer\b|\bzu schnell\b|\b(?:ziemlich|sehr|so|recht) schnell\b|\btempo\b",
    ),
    (C.SLOW_DOWN, "strong", r"\bmir (?:etwas |viel |ein bisschen |gerade )?zu schnell\b"),
    (
        C.REVISE_EARLIER_ANSWER,
        "strong",
        r"\b(?:korrigieren|ändern|überarbeiten|ergänzen|verbessern|berichtigen|vertan|falsch)\b",
    ),
    (C.LANGUAGE_SWITCH, "strong", r"\b(?:auf|in) (?:LANG)\b"),
    (
        C.HELP,
        "strong",
        r"\bwie läuft (?:das|die prüfung|diese prüfung)(?: hier)?(?: eigentlich)? ab\b|\bwo muss"
        r" ich (?:hier )?(?:klicken|drücken|tippen)\b|\bwie (?:die|diese) prüfung funktioniert\b"
        r"|\bsprechen oder tippen\b|\bwie geht das hier\b",
    ),
    # informal (du) and spoken forms met in the blind held-out set 4 (issue #31)
    (
        C.CLARIFICATION,
        "strong",
        r"\bmeinst du\b|\bsoll ich (?:die|den|das|eine|einen|ein) \w+ (?:\w+ )?oder\b",
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\blass(?:en)? (?:sie )?mich (?:\w+ )?nachdenken\b|\bsortier\w* (?:mal |kurz )?meine"
        r" gedanken\b",
    ),
    (
        C.HELP,
        "strong",
        r"\bwie (?:schicke|sende|schickt|sendet) (?:ich|man) (?:die |meine )?antwort\b|\bwas muss"
        r" ich (?:jetzt |hier )?(?:machen|tun)\b|\bkeinen (?:button|knopf)\b",
    ),
    (C.FINISH, "strong", r"\bkeine fragen mehr\b"),
    (C.FINISH, "framed", r"\bich höre (?:hier |jetzt )?auf\b"),
    (C.RESUME, "strong", r"\bweiter geht'?s\b"),
    (C.PAUSE, "weak", r"\banhalten\b"),
    # blind held-out set 5 (issue #31)
    (
        C.CLARIFICATION,
        "strong",
        r"\bist mit\b.*\bgemeint\b|\bwas (?:genau )?(?:ist|wird) (?:mit \S+ )?gemeint\b"
        r"|\bmit \S+ gemeint\b",
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:muss ich|lass(?:en)? (?:sie )?mich|darf ich) (?:\w+ )?(?:kurz |mal |noch )*"
        r"(?:überlegen|nachdenken)\b|\bsortiere? (?:\w+ )?meine gedanken\b|\bbevor ich antworte\b",
    ),
    (C.SLOW_DOWN, "asked", r"\blangsam(?:er)? (?:sprechen|reden)\b"),
    (
        C.RESUME,
        "strong",
        r"\bes kann weitergehen\b|\bwo wir aufgehört haben\b|\b(?:jetzt )?wieder bereit\b",
    ),
    (
        C.FINISH,
        "strong",
        r"\bich geb(?:e)? (?:jetzt |hier )?ab\b|\bfertig mit der prüfung\b",
    ),
    (C.SKIP, "weak", r"\b(?:eine|ne) andere(?: frage)?\b|\bzurückstellen\b"),
    (C.REPEAT, "strong", r"\bnicht aufgepasst\b"),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:mit|in) (?:anderen|einfacher\w*|leichter\w*) (?:worten|wörter\w*)\b",
    ),
    (C.HELP, "strong", r"\bwie (?:das|es) (?:hier )?funktioniert\b"),
    # the rest of the vocabulary (issue #31, blind set 7)
    (
        C.VOLUME_UP,
        "asked",
        r"\blauter\b|\blautstärke (?:\w+ )?(?:hoch|rauf|höher|erhöhen|aufdrehen|hochdrehen"
        r"|hochstellen)\b",
    ),
    (
        C.VOLUME_UP,
        "strong",
        r"\b(?:sie sind|das ist|es ist|ihre stimme ist|der ton ist) (?:mir )?(?:sehr |zu |so"
        r" |ziemlich |etwas |ein bisschen |echt |total )+leise\b",
    ),
    (
        C.VOLUME_DOWN,
        "asked",
        r"\bleiser\b|\blautstärke (?:\w+ )?(?:runter|herunter|niedriger|reduzieren|verringern"
        r"|senken|runterdrehen|runterstellen)\b",
    ),
    (
        C.VOLUME_DOWN,
        "strong",
        r"\b(?:sie sind|das ist|es ist|ihre stimme ist|der ton ist) (?:mir )?(?:sehr |zu |so"
        r" |ziemlich |etwas |ein bisschen |echt |total )+laut\b",
    ),
    (
        C.REPORT_AUDIO_ISSUE,
        "strong",
        r"\b(?:kann|könnte) sie (?:\w+ )?(?:nicht|kaum|schlecht) (?:\w+ )?(?:hören|verstehen)\b"
        r"|\bhöre? (?:sie |dich )?(?:gar |überhaupt )?(?:nichts|nix|kaum)\b|\b(?:ihre stimme"
        r"|der ton|das audio|die verbindung|das mikro\w*) (?:bricht|setzt|hängt|ist|ruckelt)"
        r"(?: \w+){0,3} (?:ab|aus|abgehackt|weg|gestört|verzerrt)\b|\bes rauscht\b"
        r"|\b(?:verstehe|höre) sie (?:kaum|schlecht|nicht)\b|\bkein ton\b",
    ),
    (
        C.RAISE_HAND,
        "weak",
        r"\bmit (?:der|einer|einem|dem|jemandem)(?: \w+)? (?:prüfungs)?(?:aufsicht\w*|betreuer\w*"
        r"|menschen|mensch|person|prüfer\w*|verantwortlichen) (?:sprechen|reden)\b"
        r"|\b(?:brauche|hole|holen|rufen|möchte) (?:die |eine )?(?:prüfungs)?aufsicht\b",
    ),
    (
        C.RAISE_HAND,
        "strong",
        r"\bich melde mich\b|\bhand heben\b|\bder (?:die |diese )?(?:prüfung|klausur)"
        r" (?:betreut|beaufsichtigt)\b",
    ),
    (
        C.CHALLENGE_PREMISE,
        "strong",
        r"\b(?:die|diese) frage (?:stimmt|ist)(?: so)? (?:nicht|falsch|fehlerhaft)\b"
        r"|\b(?:fehler|ungenauigkeit) in der frage\b|\bin der frage (?:ist|steckt) (?:ein"
        r" )?fehler\b|\b(?:annahme|voraussetzung|prämisse)(?: in der frage| der frage)?"
        r" (?:stimmt nicht|ist falsch|ist fehlerhaft)\b",
    ),
    (
        C.SIGNAL_CONFIDENCE,
        "framed",
        # "sicher" needs the answer named ("da", "bei der Antwort"): a bare "ich bin mir nicht
        # sicher" is a hedge, not a command
        (
            r"\b(?:(?:REF) (?:bin ich mir|ich bin mir)|(?:ich bin mir|bin mir|bin ich mir)"
            r" (?:REF)) (?:ADV)*(?:sicher|unsicher)\b|\b(?:ich bin mir|bin mir|bin ich mir)"
            r" (?:ADV)*unsicher\b|\bich bin (?:mir )?(?:ADV)*zuversichtlich\b|\bdass (?:das|es)"
            r" (?:stimmt|richtig ist)\b"
        )
        .replace("REF", "bei (?:der|dieser|meiner) antwort|da|dabei")
        .replace(
            "ADV",
            "nicht |total |ziemlich |sehr |ganz |echt |wirklich |so |überhaupt |absolut |100 ?% ",
        ),
    ),
    (C.EMERGENCY_STOP, "strong", r"\bpanikattacke\b"),
    (C.RESUME, "strong", r"\bdanke (?:fürs|für das|für ihr) warten\b"),
    (
        C.FINISH,
        "framed",
        r"\bdas war'?s (?:dann )?(?:von meiner seite|von mir|für heute)\b",
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\bdenk\w* (?:\w+ )?laut (?:nach)?\b|\blaut (?:nachdenken|nachzudenken|denken)\b",
    ),
    (
        C.HELP,
        "strong",
        r"\bwie (?:das|die prüfung|das hier|es)(?: hier)? (?:abläuft|funktioniert)\b|\bwie die"
        r" prüfung aufgebaut ist\b",
    ),
    (C.REPEAT, "weak", r"\b(?:noch ?(?:ein)?mal )?vorlesen\b"),
    (
        C.CLARIFICATION,
        "strong",
        r"\bworauf (?:die frage|sie|das) hinaus\w*\b|\bwas genau soll ich\b",
    ),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:einfacher|anders|verständlicher) (?:ausgedrückt|formuliert|gesagt)\b",
    ),
    (C.RESUME, "framed", r"\b(?:jetzt |dann |so )?geht'?s weiter\b"),
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\bmir geht es (?:gar |überhaupt )?nicht gut\b",
    ),
    (
        C.LANGUAGE_SWITCH,
        "strong",
        r"\b(?:LANG) (?:sprechen|reden|weitermachen|antworten)\b",
    ),
)

_ES_CUES: tuple[CueSpec, ...] = (
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\bme (?:encuentro|siento) (?:muy |bastante )?(?:mal|fatal)\b|\bme (?:estoy )?mareo\b"
        r"|\balarma de incendios\b|\bincendio\b|\bfuego\b|\bno puedo respirar\b",
    ),
    (
        C.FINISH,
        "weak",
        r"\b(?:entregar\w*|term[ií]n\w*|acab\w*|finaliz\w*|dejarlo|lo dejo|me rindo|dar por"
        r" (?:terminado|finalizado|acabado)|doy por (?:terminado|finalizado|acabado)|cerrar\w*"
        r"|abandonar)\b",
    ),
    (
        C.SKIP,
        "weak",
        r"\b(?:salt\w*|paso de (?:esta|esa)|paso|pasemos|pasamos|pasar|omitir\w*"
        r"|dej(?:ar|amos|emos)(?:la|lo)?"
        r"|(?:a|con) (?:la |el )?(?:siguiente|próxima|otra|otro)|siguiente)\b",
    ),
    (
        C.SKIP,
        "framed",
        r"\b(?:no creo que pueda|no puedo) (?:contestar|responder)\b",
    ),
    (C.SKIP, "strong", r"\bme (?:la|lo) (?:salto|paso|dejo)\b"),
    (C.EMERGENCY_STOP, "framed", r"\bemergencia\b"),
    (C.EMERGENCY_STOP, "strong", _BYSTANDER["es"]),
    (C.EMERGENCY_STOP, "strong", _ACUTE["es"]),
    (C.EMERGENCY_STOP, "strong", _HOUSEHOLD["es"]),
    (C.SIGNAL_CONFIDENCE, "strong", _WAGER["es"]),
    # the volume asked in the imperative, a clause of its own ("súbale", "suba un poco la voz",
    # "¿le subes un poquito?"; not "súbale la dosis al paciente")
    (
        C.VOLUME_UP,
        "strong",
        r"^(?:s[uú]b(?:a|ale|ele|anle|alo|elo)|le sub(?:es|e|en))(?: (?:un poco|un poquito"
        r"|tantito|m[aá]s))?(?: (?:el volumen|la voz|el sonido))?$",
    ),
    (C.VOLUME_UP, "framed", r"\bm[aá]s fuerte\b"),
    (C.VOLUME_DOWN, "strong", r"^menos volumen$"),
    (C.VOLUME_DOWN, "asked", r"\bse (?:oye|escucha) (?:demasiado|muy) (?:fuerte|alto)\b"),
    (C.REPORT_AUDIO_ISSUE, "framed", r"^me (?:oye|oyen|oyes|escucha|escuchan|escuchas)$"),
    (C.RESUME, "strong", r"\bya volví\b|\bya estoy\b|\bdónde estábamos\b"),
    (
        C.RESUME,
        "weak",
        r"\b(?:seguimos|continuamos|retomamos|retomar|reanudar|continuar|seguir|sigamos"
        r"|continuemos)\b",
    ),
    (
        C.PAUSE,
        "strong",
        r"\bahora vuelvo\b|\bvuelvo (?:enseguida|en (?:un|unos|dos|cinco|diez))\b"
        r"|\bhan llamado a la puerta\b|\bme est[aá] sonando el m[oó]vil\b"
        r"|\bllaman a la puerta\b",
    ),
    (
        C.PAUSE,
        "weak",
        r"\b(?:pausa|descanso|paramos|parar|pausar|detenernos)(?: (?:un|unos|dos|cinco|diez)"
        r" (?:minuto|minutos|momento|segundos))?\b",
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:ordenar|organizar|aclarar) (?:un poco )?mis ideas\b|\bpara pensar\b|\b(?:segundos"
        r"|minuto|momento) antes de (?:contestar|responder)\b|\bdéj[ae]me pensar\w*\b",
    ),
    (C.THINKING_ALOUD, "weak", r"\b(?:pensarlo|pensar|un momento|un segundo)\b"),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\breformul\w*|\bde otra (?:manera|forma)\b|\bcon (?:otras )?palabras (?:más )?"
        r"(?:sencillas|simples|fáciles)?\b",
    ),
    (
        C.REPEAT,
        "strong",
        r"\b(?:cuál|cual|cómo|como) era la pregunta\b|\bno (?:la |lo |le |te )?(?:pillé|pille"
        r"|escuché|escuche|oí|he oído|he escuchado|he entendido)\b|\bme la repite\b"
        r"|\bqué (?:me )?ha (?:preguntado|dicho)\b",
    ),
    (C.REPEAT, "framed", r"^(?:cómo|cómo dice|qué|perdón|mande|eh)$"),
    (
        C.CLARIFICATION,
        "asked",
        r"\bqué (?:quiere|quieres) decir\b|\ba qué te refieres\b",
    ),
    (C.REPEAT, "weak", r"\b(?:repit\w*|repet\w*|otra vez|de nuevo|una vez más)\b"),
    (
        C.CLARIFICATION,
        "strong",
        r"\bse refiere\b|\bme pregunta por\b|\bsolo para confirmar\b|\bqu[eé] tengo que explicar\b",
    ),
    (
        C.CLARIFICATION,
        "asked",
        r"\bqué parte de la pregunta\b|\bes sobre\b.* o\b",
    ),
    (
        C.SLOW_DOWN,
        "asked",
        r"\bmás despacio\b|\bmás lento\b|\bbajar (?:un poco )?el ritmo\b|\b(?:muy|bastante"
        r"|demasiado) (?:rápido|deprisa)\b",
    ),
    (
        C.REVISE_EARLIER_ANSWER,
        "strong",
        r"\b(?:corregir\w*|cambiar\w*|modificar|rectificar|me equivoqué|estaba mal|volver a"
        r"|añadir)\b",
    ),
    (C.LANGUAGE_SWITCH, "strong", r"\b(?:en|al|a) (?:LANG)\b"),
    (
        C.HELP,
        "strong",
        r"\bcómo (?:va|funciona) (?:el|este) examen\b|\bcómo funciona esto\b|\bdónde (?:le )?doy"
        r"\b|\bqu[eé] tengo que hacer(?: ahora| aquí)?(?:$|[?.!])|\bhablar o escribir\b"
        r"|\bdónde (?:tengo que |hay que )?(?:pulsar|pulso|hago clic|escribo)\b",
    ),
    # informal (tú) and spoken forms met in the blind held-out set 4 (issue #31)
    (
        C.CLARIFICATION,
        "strong",
        r"\bte refieres\b|\b(?:quieres|quiere) (?:la|el|una|un)\b.* o\b",
    ),
    (C.CLARIFICATION, "asked", r"^(?:eh |y |pero |perdón )?(?:qué|que|q) significa\b"),
    (
        C.PAUSE,
        "strong",
        r"\bme est[aá]n llamando\b|\by vuelvo\b|\bir al baño\b",
    ),
    (C.REVISE_EARLIER_ANSWER, "strong", r"\brehacer\b|\bdije algo mal\b"),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:ordenar|organizar|aclarar) (?:un poco )?(?:las|mis) ideas\b|\bpara pensar\w*\b",
    ),
    (C.THINKING_ALOUD, "framed", r"\bestoy pensando\b"),
    (C.THINKING_ALOUD, "weak", r"\bun seg\b"),
    (C.REQUEST_REPHRASE, "asked", r"\bm[aá]s (?:f[aá]cil|sencillo|claro)\b"),
    (C.SKIP, "weak", r"\botra pregunta\b"),
    (
        C.HELP,
        "strong",
        r"\bc[oó]mo (?:env[ií]o|mando|mandar|enviar) (?:mi |la )?respuesta\b"
        r"|\bno veo (?:ning[uú]n )?bot[oó]n\b",
    ),
    # blind held-out set 5 (issue #31)
    (C.SKIP, "strong", r"\bme (?:pones|pone|das|da|hace|haces) otra\b"),
    (
        C.FINISH,
        "strong",
        r"\b(?:lo|te lo|se lo) entrego\b|\bentrego el examen\b|\bhasta aquí llego\b"
        r"|\bno quiero (?:contestar|responder) más\b",
    ),
    (C.REPEAT, "strong", r"\bme perd[ií]\b"),
    (
        # Asked: "en palabras más simples, una función hash ..." restates the answer.
        C.REQUEST_REPHRASE,
        "asked",
        r"\bpalabras m[aá]s (?:simples?|sencillas?|f[aá]ciles)\b",
    ),
    (C.PAUSE, "strong", r"\b(?:ahorita|enseguida|ya) vuelvo\b"),
    (C.THINKING_ALOUD, "strong", r"\bordeno (?:un poco )?(?:las|mis) ideas\b"),
    (C.HELP, "strong", r"\bhablo o escribo\b"),
    # the rest of the vocabulary (issue #31, blind set 7)
    (
        C.VOLUME_UP,
        "asked",
        r"\b(?:sub\w*|aument\w*) (?:el|un poco el) volumen\b|\bm[aá]s (?:alto|fuerte)\b",
    ),
    (
        C.VOLUME_UP,
        "strong",
        r"^(?:se (?:le |te )?oye|se escucha|suena|est[aá]) (?:muy |demasiado |un poco )?"
        r"(?:bajo|bajito)\b|\bse (?:le|te) oye (?:muy |demasiado |un poco )?(?:bajo|bajito)\b",
    ),
    (
        C.VOLUME_DOWN,
        "asked",
        r"\b(?:baj\w*|reduc\w*) (?:el|un poco el) volumen\b|\b(?:lo|la) (?:puede|podría|puedes"
        r"|podrías) bajar\b|\bb[aá]j(?:elo|alo)\b|\bm[aá]s bajo\b",
    ),
    (
        C.VOLUME_DOWN,
        "strong",
        r"^(?:se (?:le |te )?oye|se escucha|suena) (?:muy |demasiado |un poco )?(?:alto"
        r"|fuerte)\b|\bse (?:le|te) oye (?:muy |demasiado |un poco )?(?:alto|fuerte)\b",
    ),
    (
        C.REPORT_AUDIO_ISSUE,
        "strong",
        r"\bno (?:le |te |lo |la )?(?:oigo|escucho|oímos)\b|\bno se (?:oye|escucha) (?:nada"
        r"|bien)\b|\bse (?:le |te )?corta (?:la voz|el audio|el sonido|la conexión)\b"
        r"|\bentrecortad[oa]\b|\bapenas (?:le |te )?(?:entiendo|oigo|escucho)\b"
        r"|\b(?:el audio|el sonido|el micro\w*) (?:falla|no funciona|se corta)\b",
    ),
    (
        C.RAISE_HAND,
        "weak",
        r"\bhablar con (?:el|la|un|una|algún|alguna)(?: \w+)? (?:supervisor\w*|vigilante"
        r"|responsable|persona|profesor\w*|examinador\w*|humano|encargad\w*)(?: de verdad"
        r"| real)?\b|\bnecesito (?:al|a la|a un|a una) (?:supervisor\w*|vigilante|responsable"
        r"|profesor\w*)\b",
    ),
    (
        C.RAISE_HAND,
        "strong",
        r"\blevant\w* la mano\b|\balguien (?:vigilando|supervisando|responsable|encargado)\b",
    ),
    (
        C.CHALLENGE_PREMISE,
        "strong",
        r"\b(?:la|esta|esa) pregunta (?:est[aá]|es) (?:mal|incorrecta|err[oó]nea|equivocada)\b"
        r"|\berror en la pregunta\b|\bla premisa (?:de la pregunta )?(?:es|est[aá])"
        r" (?:falsa|mal|incorrecta)\b|\b(?:no estoy de acuerdo|discrepo|no comparto)"
        r" (?:con )?(?:lo que (?:supone|asume|plantea) la pregunta|la premisa|el planteamiento"
        r"|la pregunta)\b",
    ),
    (
        C.SIGNAL_CONFIDENCE,
        "framed",
        # "seguro" needs the answer named ("de eso", "de esa respuesta"): a bare "no estoy
        # seguro" is a hedge, not a command
        (
            r"\b(?:de eso |de esto )(?:no )?estoy (?:ADV)*segur[oa]\b|\b(?:no )?estoy (?:ADV)*"
            r"segur[oa] de (?:REF)\b|\b(?:no )?estoy (?:ADV)*(?:convencid[oa]|insegur[oa])"
            r"(?: de (?:REF))?\b|\btengo (?:muchas |algunas |bastantes )?dudas (?:con|sobre|de)"
            r" (?:esta|esa|mi) respuesta\b|\bque (?:es|está) (?:correcto|bien)\b"
        )
        .replace("REF", "eso|esto|esa respuesta|mi respuesta|lo que dije")
        .replace("ADV", "muy |bastante |del todo |totalmente |completamente |nada |tan "),
    ),
    (
        C.THINKING_ALOUD,
        "strong",
        r"\b(?:pensar|pienso|pensando) en voz alta\b",
    ),
    (
        C.HELP,
        "strong",
        r"\bc[oó]mo (?:va|funciona) (?:esto|el examen|la prueba)\b|\bel formato del examen\b",
    ),
    (C.PAUSE, "weak", r"\binterrumpir\w*\b"),
    (
        C.FINISH,
        "framed",
        r"\b(?:ya )?(?:he|hemos) (?:terminado|acabado)\b|\bya (?:terminé|acabé)\b|\blo"
        r" (?:dejo|dejamos) aquí\b",
    ),
    (C.CLARIFICATION, "strong", r"\b(?:solo )?para asegurarme\b"),
    (C.RESUME, "strong", r"\bgracias por esperar\b"),
    (C.PAUSE, "strong", r"\b(?:están llamando|llaman|tocan) a la puerta\b"),
    (C.REPEAT, "weak", r"\bvuelve(?:s)? a (?:leer|decir|repetir)\w*\b"),
    (
        C.CLARIFICATION,
        "strong",
        r"\bqu[eé] (?:me )?est[aá] preguntando\b|\bqu[eé] es exactamente lo que\b",
    ),
    (
        C.REQUEST_REPHRASE,
        "asked",
        r"\b(?:manera|forma) m[aá]s (?:sencilla|simple|f[aá]cil) de (?:preguntar|decir"
        r"|plantear)\w*\b",
    ),
    (C.SLOW_DOWN, "asked", r"\bm[aá]s despacito\b"),
    (C.THINKING_ALOUD, "strong", r"\blo estoy pensando\b"),
    (C.SKIP, "framed", r"\b(?:prefiero|preferiría) no (?:contestar|responder)\b"),
    (C.SKIP, "weak", r"\b(?:a )?otra cosa\b"),
    (C.REVISE_EARLIER_ANSWER, "strong", r"\barregl\w*\b|\bcontest[eé] mal\b"),
    (
        C.EMERGENCY_STOP,
        "strong",
        r"\bno me (?:encuentro|siento) bien\b|\bataque de p[aá]nico\b|\bestoy mareado\b"
        r"|\bestoy mareada\b",
    ),
)

_REVISE_REF: Final = MappingProxyType(
    {
        "en": r"\b(?:my|the) (?:last|earlier|previous|first|second|other) (?:answer|question"
        r"|response|one)\b|\bwhat i said (?:about \w+(?: \w+)? )?(?:earlier|before)\b"
        r"|\bquestion (?:one|two|three|1|2|3)\b",
        "de": r"\b(?:meine|die|meiner|der|zur) (?:letzte|letzten|frühere|früheren|vorherige"
        r"|vorherigen|erste|ersten) (?:antwort|frage)\b|\bfrage (?:eins|zwei|drei|1|2|3)\b"
        r"|\bantwort von (?:vorhin|eben|vorher)\b|\bfrage (?:von )?(?:vorhin|eben|vorher|davor)\b"
        r"|\b(?:bei|zu|in) der (?:letzten|vorherigen|ersten)\b"
        r"|\bwas ich (?:vorhin|eben|vorher|davor) gesagt\b",
        "es": r"\b(?:mi|la) (?:última|ultima|anterior|primera) (?:respuesta|pregunta)\b|\bla"
        r" pregunta (?:uno|dos|tres|1|2|3)\b|\blo que (?:respondí|contesté|dije)(?: antes)?\b"
        r"|\bpregunta (?:de antes|anterior)\b|\bla de antes\b",
    }
)
"""Revising needs an earlier answer named besides the verb ("my last answer", "question two")."""


_ADDRESSEE: Final = MappingProxyType(
    {
        "en": r"\b(?:you(?:'re| are)? (?:talk|speak|go|read)\w*|you(?:'re| are) (?:too|so)"
        r"|(?:can|could|would|will) you)\b",
        "de": r"\b(?:sie|du|dich|dir)\b",
        "es": r"\busted\b|\b(?:habla|hablas|vas|puede|puedes|podría|podrías|quiere|dices|dime"
        r"|te|quieres)\b",
    }
)
"""The examiner addressed: "asked" cues (slow down, rephrase) need it or request evidence."""


def beginnings(pattern: str, length: int = 3) -> frozenset[str]:
    """The literal beginnings (up to ``length`` characters) a match of ``pattern`` can have:
    every match starts with one of them (a shorter one where the pattern's next step is no
    literal). Derived from the parsed pattern, so the lexicon needs no separate list."""
    return frozenset(text for text, _ in _expand(_sre_parser.parse(pattern), length))


_Prefixes = set[tuple[str, bool]]
"""Partial beginnings: (text, whether the text so far is exact and may be extended)."""


def _expand(items: Any, length: int) -> _Prefixes:
    frontier: _Prefixes = {("", True)}
    for item in items:
        grown: _Prefixes = set()
        for text, open_ in frontier:
            if not open_ or len(text) >= length:
                grown.add((text[:length], False))
                continue
            for more, exact in _expand_item(item, length - len(text)):
                joined = text + more
                grown.add((joined[:length], exact and len(joined) < length))
        frontier = grown
    return frontier


def _expand_item(item: Any, length: int) -> _Prefixes:
    op, argument = item
    name = str(op)
    if name == "LITERAL":
        return {(chr(argument), True)}
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return {("", True)}
    if name == "IN" and all(str(o) == "LITERAL" for o, _ in argument):
        return {(chr(code), True) for _, code in argument}
    if name == "SUBPATTERN":
        return _expand(argument[-1], length)
    if name == "BRANCH":
        return {prefix for branch in argument[1] for prefix in _expand(branch, length)}
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, _, body = argument
        once = {(text, False) for text, _ in _expand(body, length)}
        return once | {("", True)} if low == 0 else once
    return {("", False)}  # anything else (a class, any character): no literal beginning


_ME: Final = MappingProxyType(
    {
        "en": r"\b(?:i|i'?m|i'?ve|i'?ll|me|my|we|us|help|emergency|there'?s a fire)\b",
        "de": r"\b(?:ich|mir|mich|mein\w*|wir|uns|hilfe|notfall|(?:es|hier) brennt)\b",
        "es": r"\b(?:yo|me|mi|tengo|tenemos|estoy|nos|ayuda|emergencia|hay un incendio"
        r"|hay fuego)\b",
    }
)
"""The candidate in an emergency cue's turn: an emergency is theirs, not a topic (a bystander
emergency, :data:`_BYSTANDER`, is in their room: it counts as theirs)."""

_APOLOGY: Final = MappingProxyType(
    {
        "en": r"(?:sorry|apologies|excuse me|just so you know|for the record)\b",
        "de": r"(?:sorry|entschuldigung|entschuldigen sie|verzeihung|nur damit sie'?s? (?:es )?"
        r"wissen|nur zur info)\b",
        "es": r"(?:perdón|perdone|perdona|disculpe|disculpa|lo siento|para que lo sepa)\b",
    }
)
"""An apology clause ("sorry for the wait", "Entschuldigung für die Unterbrechung") goes with a
command as frame words do."""


_INVERTED: Final = MappingProxyType(
    {
        "en": r"(?:is there|are there|is it|can you|could you|would you|will you|do you|can we"
        r"|could we|can i|could i|may i)\b",
        "de": r"(?:gibt es|können sie|könnten sie|würden sie|kann ich|darf ich|können wir"
        r"|könnten wir|ist es|wäre es)\b",
        "es": r"(?:me |nos |lo |la )?(?:puede|podría|podrías|puedes|podemos|podríamos|puedo)\b",
    }
)
"""A clause that opens as a question ("is there a simpler way to ask that"): asked, even
when a spoken transcript or a typed turn has no question mark."""

_FOLDS: Final = MappingProxyType(
    {
        "en": (),
        "de": (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss")),
        "es": (("á", "a"), ("é", "e"), ("í", "i"), ("ó", "o"), ("ú", "u"), ("ü", "u")),
    }
)
"""Accents and umlauts as typed without them ("koennen", "ueberspringen", "weiss", "podria",
"mas despacio"): the cues and the text are both read folded ("él" is not read as "el": the
other-person words leave it out)."""


def fold(text: str, language: str) -> str:
    """``text`` without accents and umlauts, as the cues read it (:data:`_FOLDS`)."""
    if text.isascii():
        return text
    for letter, plain in _FOLDS[language]:
        text = text.replace(letter, plain)
    return text


@dataclass(frozen=True, slots=True)
class Cue:
    command: C
    strength: Strength
    pattern: re.Pattern[str]
    household: bool = False
    """The cue of a person of the candidate's household just hurt (:data:`_HOUSEHOLD`)."""


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's cues, frame words and evidence, compiled."""

    cues: tuple[Cue, ...]
    emergency: re.Pattern[str]
    """The emergency cues at once (:func:`mentions_emergency`)."""
    by_head: dict[str, tuple[int, ...]]
    """Per literal beginning (:func:`beginnings`), the numbers of the cues that may begin with
    it: each cue is tried, anchored, only at the words that begin so, instead of each
    scanning the whole clause."""
    frame: frozenset[str]
    tail: frozenset[str]
    durations: frozenset[str]
    request: re.Pattern[str]
    polite: re.Pattern[str]
    negation: re.Pattern[str]
    give_up: re.Pattern[str]
    closing: re.Pattern[str]
    exam: re.Pattern[str]
    others: re.Pattern[str]
    revise_ref: re.Pattern[str]
    addressee: re.Pattern[str]
    me: re.Pattern[str]
    apology: re.Pattern[str]
    inverted: re.Pattern[str]
    wager: re.Pattern[str]
    household: re.Pattern[str]
    """A person of the candidate's household just hurt (:data:`_HOUSEHOLD`)."""
    past: re.Pattern[str]
    """A past or repeated event (:data:`_PAST`), or an all-clear (:data:`_ALL_CLEAR`)."""
    onward_next: re.Pattern[str]
    """Going on to the next or another question (:data:`_GO_ON`, :data:`_ONWARD_NEXT`)."""
    onward_exam: re.Pattern[str]
    """Going on with the exam itself (:data:`_ONWARD_EXAM`, :data:`_EXAM_FIRST`)."""
    state: re.Pattern[str]

    @classmethod
    def compile(cls, language: str, cues: tuple[CueSpec, ...], frame: str, tail: str) -> Lexicon:
        names = _LANGUAGE_NAMES[language]

        def folded(pattern: str) -> re.Pattern[str]:
            return re.compile(fold(pattern, language))

        specs = [(c, s, fold(p.replace("LANG", names), language)) for c, s, p in cues]
        heads = [beginnings(p) for _, _, p in specs]
        frame, tail = fold(frame, language), fold(tail, language)
        return cls(
            cues=tuple(
                Cue(c, s, re.compile(p), household=p == fold(_HOUSEHOLD[language], language))
                for c, s, p in specs
            ),
            emergency=re.compile(
                "|".join(f"(?:{p})" for c, _, p in specs if c is C.EMERGENCY_STOP)
            ),
            by_head={
                head: tuple(n for n, starts in enumerate(heads) if head in starts)
                for head in sorted(frozenset().union(*heads))
            },
            frame=frozenset(frame.split()),
            tail=frozenset(tail.split()) | frozenset(frame.split()),
            durations=frozenset(fold(_DURATIONS[language], language).split()),
            request=folded(_REQUEST[language]),
            polite=folded(_POLITE[language]),
            negation=folded(_NEGATION[language]),
            give_up=folded(_GIVE_UP[language]),
            closing=folded(_CLOSING[language]),
            exam=folded(_EXAM[language]),
            others=folded(_OTHERS[language]),
            revise_ref=folded(_REVISE_REF[language]),
            addressee=folded(_ADDRESSEE[language]),
            me=folded(
                f"{_ME[language]}|{_BYSTANDER[language]}|{_ACUTE[language]}|{_HOUSEHOLD[language]}"
            ),
            apology=folded(_APOLOGY[language]),
            inverted=folded(_INVERTED[language]),
            wager=folded(_WAGER[language]),
            household=folded(_HOUSEHOLD[language]),
            past=folded(f"{_PAST[language]}|{_ALL_CLEAR[language]}"),
            onward_next=folded(_GO_ON[language] + _ONWARD_NEXT[language]),
            onward_exam=folded(
                f"{_GO_ON[language]}{_ONWARD_EXAM[language]}|{_EXAM_FIRST[language]}"
            ),
            state=folded(_STATE[language]),
        )

    def framed(self, words: list[str], command: C, before: bool, timed: bool = True) -> bool:
        """Whether every word is a frame word (request words before the cue, request or exam
        words after it; durations after a pause or a moment to think)."""
        allowed = self.tail  # the frame and the exam's words, on either side (word order)
        timed = timed and command in (C.PAUSE, C.THINKING_ALOUD, C.RESUME)
        return all(
            w.replace("'", "") in allowed
            or w in allowed
            or (timed and (w in self.durations or w.isdigit()))
            for w in words
        )


LEXICONS: Final = MappingProxyType(
    {
        "en": Lexicon.compile("en", _EN_CUES, _EN_FRAME, _EN_TAIL),
        "de": Lexicon.compile("de", _DE_CUES, _DE_FRAME, _DE_TAIL),
        "es": Lexicon.compile("es", _ES_CUES, _ES_FRAME, _ES_TAIL),
    }
)
"""The cue lexicon per supported language."""

_CLAUSE = re.compile(r"\s*(?:[,.;:!…]+|\?+|\s[-\u2013\u2014]+\s)\s*")
_DIGITS = re.compile(r"\d")


def clauses(text: str) -> list[tuple[str, bool]]:
    """``text`` (normalised) split at punctuation: (clause, whether it was asked as a
    question)."""
    out: list[tuple[str, bool]] = []
    position = 0
    for match in _CLAUSE.finditer(text):
        piece = text[position : match.start()].strip(" ¿¡\"'()")
        if piece:
            out.append((piece, "?" in match.group(0)))
        position = match.end()
    rest = text[position:].strip(" ¿¡\"'()")
    if rest:
        out.append((rest, False))
    return out


_LOOSE_SPELLINGS: Final = MappingProxyType(
    {
        "en": {
            "u": "you",
            "ur": "you're",
            "sry": "sorry",
            "q": "question",
            "gotta": "got to",
            "id like": "i'd like",
            "id rather": "i'd rather",
            "id prefer": "i'd prefer",
            "pls": "please",
            "plz": "please",
            "brb": "be right back",
            "gimme": "give me",
            "sec": "second",
            "im": "i'm",
            "dont": "don't",
            "cant": "can't",
            "didnt": "didn't",
            "wanna": "want to",
            "gonna": "going to",
        },
        "de": {"grad": "gerade", "hab": "habe", "glaub": "glaube", "nen": "einen", "ne": "eine"},
        "es": {
            "no se": "no sé",
            "porfi": "porfa",
            "por fa": "porfa",
            "xfa": "por favor",
            "q": "que",
        },
    }
)
"""Loose spellings read as their standard form before the cues ("u", "pls", "brb")."""

_LOOSE: Final = MappingProxyType(
    {
        language: re.compile(r"\b(?:" + "|".join(map(re.escape, spellings)) + r")\b")
        for language, spellings in _LOOSE_SPELLINGS.items()
    }
)


def loosen(text: str, language: str) -> str:
    """``text`` with loose spellings in their standard form (one pass)."""
    spellings = _LOOSE_SPELLINGS[language]
    return _LOOSE[language].sub(lambda match: spellings[match.group(0)], text)


def household_danger(text: str, language: str) -> bool:
    """Whether ``text`` (normalised) says a person of the candidate's household was just hurt
    (:data:`_HOUSEHOLD`, not a past or repeated event, no all-clear): the "he", "she", "ella"
    of such a turn is that person, and the emergency stays the candidate's."""
    lexicon = LEXICONS[language]
    said = fold(loosen(text, language), language)
    return bool(lexicon.household.search(said)) and not lexicon.past.search(said)


# --- a call for help: asked now, or described in an answer (issue #31) ----------------------------

SUMMONS: Final = MappingProxyType(
    {
        "en": r"\b(?:call|calling|calls|phone|ring|get)(?: for)?(?: me| us)? (?:an ambulance"
        r"|a doctor|a paramedic|the paramedics|911|999|112|(?:the )?emergency services)\b(?!')",
        "de": r"\b(?:ruf|rufe|rufen|ruft|hol|hole|holen|holt)(?: sie| du| ihr| ich| wir)?(?:"
        r" (?:bitte|mal|schnell|sofort|jetzt))*(?: mir| uns)? (?:einen|den|nen|die) (?:arzt"
        r"|notarzt|krankenwagen|rettungswagen|rettungsdienst|sanitäter)\b|\b(?:einen|den|nen"
        r"|die) (?:arzt|notarzt|krankenwagen|rettungswagen|rettungsdienst|sanitäter) (?:rufen"
        r"|holen|anrufen|alarmieren|verständigen)\b",
        "es": r"\b(?:llam\w*|pid\w*|ped\w*)(?: (?:ya|rápido|ahora|ahora mismo|urgente|enseguida"
        r"|inmediatamente))? (?:a |al )?(?:una ambulancia|un médico|un doctor|una médica|los"
        r" paramédicos|emergencias|urgencias|(?:el )?112|(?:el )?911)\b",
    }
)
"""A call for help: someone summoned ("call an ambulance", "rufen Sie einen Krankenwagen",
"kann jemand den Notarzt rufen", "llamen a una ambulancia"). The sentence rules read it as an
emergency only when it is asked now (:func:`summons_described`)."""

_ASKED_LEAD: Final = MappingProxyType(
    {
        "en": r"(?:(?:please|pls|plz|quick|quickly|now|hey|help|oh|god|my god|sorry|ok|okay|so"
        r"|um|uh|er|just|guys|right now) |(?:can|could|will|would|won'?t) (?:you|someone"
        r"|somebody|anyone|anybody|one of you) (?:please )?|(?:someone|somebody|anyone|anybody)"
        r" (?:please )?|i(?:'ve| have)? (?:need|have|got|gotta|must)(?: to)? |i'?ve got to"
        r" |i(?:'m| am) (?:going to |gonna )?|let me |go (?:and )?)*",
        "de": r"(?:(?:bitte|schnell|sofort|jetzt|hilfe|oh gott|gott|hallo|hey|entschuldigung"
        r"|sorry|also|äh|ähm|mal|doch|jemand|einer) |(?:kann|könnte|kannst|können|könnten"
        r"|würden|würdest)(?: (?:sie|du|ihr|jemand|einer))? |ich (?:muss|brauche|sollte"
        r" lieber) )*",
        "es": r"(?:(?:por favor|porfa|rápido|ya|ayuda|oiga|oigan|oye|perdón|perdone|dios"
        r"|dios mío|ay|eh|venga|alguien|que|usted|ustedes|me|nos) |(?:puede|pueden|podría"
        r"|podrían|puedes|podrías|podéis)(?: (?:alguien|usted|ustedes))? |(?:tengo|tenemos)"
        r" que |necesito )*",
    }
)
"""Per language, what may stand before a call for help in its clause when it is asked now:
nothing (the imperative opens the clause), a request to someone ("can someone", "kann
jemand", "¿alguien puede"), politeness and urgency ("please", "bitte schnell", "que
alguien"), or the candidate's own present need ("I need to", "ich muss", "tengo que"). Any
other word describes the call: a modal or a conditional ("I'd", "you should", "wir würden",
"man sollte"), a subject in a procedure's present ("then we call", "dann rufe ich"), an
infinitive's "to" ("the first thing is to call"), "hay que"."""

_DESCRIBED_FORM: Final = MappingProxyType(
    {
        "en": r"calls\b",
        "de": r"$^",
        "es": r"(?!(?:llam(?:a|e|en|ad|ar)|pid(?:e|a|an)|pedid|pedir)\b)",
    }
)
"""A form of the verb that only describes: the third person ("the first aider calls"), in
Spanish any form but the imperative and the infinitive ("llamaría", "llamamos", "llamo")."""

_INFINITIVE: Final = MappingProxyType(
    {
        "en": r"$^",
        "de": r"(?:einen|den|nen|die) ",
        "es": r"(?:llamar|pedir)\b",
    }
)
"""The infinitive of the call ("den Notarzt rufen", "llamar al 112"): asked only after a
request ("kann jemand", "¿alguien puede", "tengo que"); alone it is a step of a list
("Unfallstelle sichern, den Notarzt rufen", "hay que pedir ayuda, llamar al 112 y ...")."""

_STEP: Final = MappingProxyType(
    {
        "en": r"\b(?:first|firstly|then|next|after that|afterwards|secondly|finally|my answer"
        r"|the answer|(?:i'?d|i would) say|would be)\b",
        "de": r"\b(?:zuerst|erst|zunächst|als erstes|dann|danach|anschließend|als nächstes"
        r"|schließlich|meine antwort|die antwort|würde ich sagen|wäre)\b",
        "es": r"\b(?:primero|luego|después|en segundo lugar|finalmente|a continuación|mi"
        r" respuesta|la respuesta|diría|sería)\b",
    }
)
"""A step of a sequence around the call ("first I'd check ..., then call an ambulance",
"call the emergency services, then start CPR"), or the answer announced before it ("my
answer would be: call an ambulance"): the call is the answer's step."""


@dataclass(frozen=True, slots=True)
class _Summons:
    call: re.Pattern[str]
    asked_lead: re.Pattern[str]
    described_form: re.Pattern[str]
    infinitive: re.Pattern[str]
    step: re.Pattern[str]


_SUMMONS_READ: Final = MappingProxyType(
    {
        language: _Summons(
            call=re.compile(fold(SUMMONS[language], language)),
            asked_lead=re.compile(fold(_ASKED_LEAD[language], language)),
            described_form=re.compile(fold(_DESCRIBED_FORM[language], language)),
            infinitive=re.compile(fold(_INFINITIVE[language], language)),
            step=re.compile(fold(_STEP[language], language)),
        )
        for language in SUMMONS
    }
)


def summons_described(text: str, language: str) -> bool:
    """Whether ``text`` (normalised) calls for help only as a described step of an answer:
    it has a call for help (:data:`SUMMONS`), and none is asked now. A call is asked when
    only request words stand before it in its clause (:data:`_ASKED_LEAD`: "call an
    ambulance!", "can someone call an ambulance", "kann jemand einen Krankenwagen rufen",
    "que alguien llame a una ambulancia"), its verb is no describing form
    (:data:`_DESCRIBED_FORM`: "llamaría"), an infinitive has a request before it
    (:data:`_INFINITIVE`) and no step of a sequence or announced answer stands around it
    (:data:`_STEP`: "then", "dann", "luego", "my answer would be"); "I'd call an
    ambulance", "wir würden den Notarzt rufen" and "llamaría a una ambulancia" describe an
    answer's next step."""
    read = _SUMMONS_READ[language]
    said = fold(loosen(text, language), language)
    found = False
    for call in read.call.finditer(said):
        found = True
        before = said[: call.start()]
        lead = _CLAUSE.split(before)[-1].strip(" ¿¡\"'()")
        lead = f"{lead} " if lead else ""
        asked = (
            read.asked_lead.fullmatch(lead) is not None
            and not read.described_form.match(said, call.start())
            and not (not lead and read.infinitive.match(said, call.start()))
            and not read.step.search(before)
            and not read.step.search(said, call.end())
        )
        if asked:
            return False
    return found


def _past(lexicon: Lexicon, clause: str, others: list[str]) -> bool:
    """Whether the turn (``clause`` and the ``others``) tells a past or repeated event, or
    gives the all-clear (:data:`_PAST`, :data:`_ALL_CLEAR`)."""
    return any(lexicon.past.search(piece) for piece in (clause, *others))


def mentions_emergency(text: str, language: str) -> bool:
    """Whether ``text`` (normalised) has an emergency cue at all: only then can :func:`score`
    read an emergency (a cheap test before the whole scoring)."""
    return bool(LEXICONS[language].emergency.search(fold(loosen(text, language), language)))


_REPEATS: Final = re.compile(r"\b(\w+(?: \w+){0,2})(?: \1\b)+")
"""A spoken false start said again ("can we can we skip"): read once."""


def score(text: str, language: str, *, request_words: int | None = None) -> C | None:
    """The command the cues of ``text`` (normalised, short) add up to, or None.
    ``request_words`` (a turn over the sentence rules' length): only clauses of at most that
    many words, asked, polite or with a request frame, count ("could we hold it here, my laptop
    is about to die ...")."""
    lexicon = LEXICONS[language]
    text = _REPEATS.sub(r"\1", fold(loosen(text, language), language))
    polite = bool(lexicon.polite.search(text))
    give_up = bool(lexicon.give_up.search(text))
    totals: dict[C, int] = {}
    pieces = clauses(text)
    for index, (clause, asked) in enumerate(pieces):
        tries = _cue_tries(lexicon, clause)
        if not tries:
            continue
        about_others = bool(lexicon.others.search(clause))
        asked = asked or bool(lexicon.inverted.match(clause))
        if request_words is not None and (
            len(clause.split()) > request_words
            or not (asked or polite or lexicon.request.search(clause))
        ):
            continue
        answered = asked and _answered_after(lexicon, pieces, index, polite=polite)
        rest = [other for i, (other, _) in enumerate(pieces) if i != index]
        ends: dict[int, int] = {}  # per cue, where its last match ended (no overlaps)
        for number, start in tries:
            cue = lexicon.cues[number]
            if start < ends.get(number, 0) or (
                about_others and cue.command is not C.CLARIFICATION and not cue.household
            ):
                continue
            if answered and cue.command not in _WELFARE:
                continue  # a question the candidate answers themselves
            match = cue.pattern.match(clause, start)
            if match is None:
                continue
            ends[number] = max(match.end(), start + 1)
            if _accepts(
                lexicon,
                cue,
                clause,
                match,
                asked=asked,
                polite=polite,
                give_up=give_up,
                others=rest,
            ):
                totals[cue.command] = totals.get(cue.command, 0) + WEIGHTS[cue.strength]
    return _settle(lexicon, totals, text, polite=polite, give_up=give_up)


def _settle(
    lexicon: Lexicon, totals: dict[C, int], text: str, *, polite: bool, give_up: bool
) -> C | None:
    """The command the cue totals of ``text`` add up to, after the combinations (see the
    module docstring), or None."""
    if not totals:
        return None
    if C.EMERGENCY_STOP in totals and lexicon.me.search(text):
        return C.EMERGENCY_STOP  # the candidate's own ("the fire alarm test is on Monday": not)
    totals.pop(C.EMERGENCY_STOP, None)
    if C.REVISE_EARLIER_ANSWER in totals and not lexicon.revise_ref.search(text):
        del totals[C.REVISE_EARLIER_ANSWER]
    if C.LANGUAGE_SWITCH in totals:
        if polite or "?" in text or lexicon.request.search(text):
            totals[C.LANGUAGE_SWITCH] += 2  # a language asked for is the decisive cue
        else:
            del totals[C.LANGUAGE_SWITCH]
    if C.VOLUME_UP in totals and totals.pop(C.REPORT_AUDIO_ISSUE, 0):
        totals[C.VOLUME_UP] += 1  # "louder, I can barely hear you": the volume is what is asked
    if C.SLOW_DOWN in totals and totals.pop(C.REPEAT, 0):
        totals[C.SLOW_DOWN] += 1  # "say it again, slower": the pace is what is asked
    if (give_up or lexicon.onward_next.search(text)) and C.RESUME in totals:
        totals[C.SKIP] = totals.get(C.SKIP, 0) + totals.pop(C.RESUME)
    elif C.SKIP in totals and lexicon.onward_exam.search(text):
        totals[C.RESUME] = totals.get(C.RESUME, 0) + totals.pop(C.SKIP)
    if lexicon.closing.search(text) and not lexicon.exam.search(text):
        totals.pop(C.FINISH, None)
        totals.pop(C.SKIP, None)
    if not totals:
        return None
    best = max(totals.values())
    if best < 2:
        return None
    return next(c for c in PRIORITY if totals.get(c) == best)


_WORD_START: Final = re.compile(r"\b\w")

_NEGATION_KEEPS: Final = frozenset({C.REPEAT, C.HELP})
"""Commands a negation before the cue does not cancel: "I didn't get that, once more", "I
don't know how this works", "ich weiß nicht, wie das hier abläuft"."""

_WELFARE: Final = frozenset({C.RAISE_HAND, C.REPORT_AUDIO_ISSUE, C.EMERGENCY_STOP})
"""Commands a question asks for even when a statement follows it: the statement is the
reason ("is there someone supervising? I have a problem", "hello? I can't hear anything")."""


def _cue_tries(lexicon: Lexicon, clause: str) -> list[tuple[int, int]]:
    """(cue number, word start) where a cue may begin in ``clause``: the word starts with one
    of that cue's literal beginnings (:func:`beginnings`; a dictionary look-up per word)."""
    get = lexicon.by_head.get
    tries: list[tuple[int, int]] = []
    for word in _WORD_START.finditer(clause):
        start = word.start()
        for length in _HEAD_LENGTHS:
            numbers = get(clause[start : start + length])
            if numbers:
                tries += [(number, start) for number in numbers]
    return tries


_HEAD_LENGTHS: Final = (1, 2, 3)
"""The lengths of the literal beginnings (:func:`beginnings` with its default length)."""


def _answered_after(
    lexicon: Lexicon, pieces: list[tuple[str, bool]], index: int, *, polite: bool
) -> bool:
    """Whether the question at ``index`` is one the candidate answers themselves: it asks
    nothing of the examiner (no request frame, no politeness) and a statement with content
    follows ("is it about the cost or the benefit? I'd say the cost", "what do you do next?
    you relax the edges"). A request with its reason after ("could we take a break? I have a
    headache") is no such question."""
    question = " ".join(piece for piece, _ in pieces[: index + 1])
    if polite or lexicon.request.search(question):
        return False
    return any(
        not asked
        and not lexicon.apology.match(later)
        and not lexicon.framed(later.split(), C.SKIP, before=False, timed=False)
        for later, asked in pieces[index + 1 :]
    )


_ALONE_ONLY: Final = frozenset({C.THINKING_ALOUD, C.SIGNAL_CONFIDENCE})
"""Commands whose strong cues count only when the rest of the turn is frame words: "let me
think, the heap is a tree" and "it's Canberra, I'd bet my house on it" are answers."""


def _figurative(lexicon: Lexicon, cue: Cue, clause: str, match: re.Match[str]) -> bool:
    """Whether an emergency cue's match lies inside a wager on the answer (:data:`_WAGER`: "da
    lege ich meine Hand ins Feuer" names no fire), or a repeat cue's "again" follows a state
    (:data:`_STATE`: "todo bien otra vez" asks for nothing to be said again)."""
    if cue.command is C.EMERGENCY_STOP:
        return any(
            wager.start() <= match.start() and match.end() <= wager.end()
            for wager in lexicon.wager.finditer(clause)
        )
    if cue.command is C.REPEAT and cue.strength == "weak":
        return bool(lexicon.state.search(clause, 0, match.start()))
    return False


def _alone(lexicon: Lexicon, cue: Cue, others: list[str]) -> bool:
    """Whether every other clause of the turn is an apology or frame words (not an answer)."""
    return all(
        lexicon.apology.match(other)
        or lexicon.framed(
            cue.pattern.sub(" ", other).split(),
            cue.command,
            before=False,
            timed=cue.command in (C.PAUSE, C.THINKING_ALOUD),
        )
        for other in others
    )


def _accepts(
    lexicon: Lexicon,
    cue: Cue,
    clause: str,
    match: re.Match[str],
    *,
    asked: bool,
    polite: bool,
    give_up: bool,
    others: list[str],
) -> bool:
    """Whether one cue match counts (see the module docstring)."""
    before_text = clause[: match.start()]
    if lexicon.negation.search(before_text) and cue.command not in _NEGATION_KEEPS:
        return False
    if _figurative(lexicon, cue, clause, match):
        return False
    if cue.household and _past(lexicon, clause, others):
        return False
    if cue.strength == "strong":
        return cue.command not in _ALONE_ONLY or _alone(lexicon, cue, others)
    requested = asked or polite or bool(lexicon.request.search(clause))
    if cue.strength == "asked":  # the examiner asked, not "I would go slower"
        return asked or polite or bool(lexicon.addressee.search(clause))
    if _DIGITS.search(clause) and cue.command not in (C.PAUSE, C.THINKING_ALOUD):
        return False
    # other cues of the same command around this one are part of the request ("abbreche
    # und abgebe"), not content
    before = cue.pattern.sub(" ", before_text).split()
    after = cue.pattern.sub(" ", clause[match.end() :]).split()
    if not lexicon.framed(before, cue.command, before=True):
        return False
    if not lexicon.framed(after, cue.command, before=False):
        return False
    # whether the rest of the turn is frame words too (not "Noch einmal: der Knoten mit der
    # kleinsten Distanz kommt zuerst", "I'm done with the first part, now the second part...")
    if cue.command is C.EMERGENCY_STOP:
        return True  # safety first: "Notfall, ich brauche Hilfe"
    alone = _alone(lexicon, cue, others)
    if cue.command in (C.THINKING_ALOUD, C.SIGNAL_CONFIDENCE) and not alone:
        return False  # thinking aloud, then the answer: "let me think, the heap is a tree"
    if requested or give_up:
        return True
    if cue.strength == "framed":
        return alone
    return not before and alone  # the bare short form: "skip", "pass, sorry"

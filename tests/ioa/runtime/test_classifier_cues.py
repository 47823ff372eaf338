"""The classifier's cue scorer (ioa.runtime.command_cues, issue #31): the mechanisms that let the
rule-based classifier read commands in words it was not written for, and keep answers out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ioa.output_filters.text import normalise
from ioa.runtime.agent_boundary import candidate_command
from ioa.runtime.classifier import detect_command, rules_command
from ioa.runtime.command_cues import LEXICONS, beginnings, clauses, fold, loosen, score
from ioa.schema import CandidateCommandType as C


@pytest.mark.parametrize(
    ("language", "text", "command"),
    [
        # loose spellings and bare short forms
        ("en", "could u repeat that", C.REPEAT),
        ("en", "skip pls", C.SKIP),
        ("en", "pass, sorry", C.SKIP),
        ("en", "brb need to pause for 2 min", C.PAUSE),
        ("es", "pausa porfa, 2 min", C.PAUSE),
        # the verb last, object first (the frame is read on both sides)
        ("de", "Die lasse ich lieber aus, wenn das geht.", C.SKIP),
        ("es", "esta me la salto", C.SKIP),
        # a reason clause does not hide the command clause
        ("en", "I'm finished, I want to hand it in", C.FINISH),
        ("de", "kurze pause bitte, 2 min", C.PAUSE),
        # giving up on the question, then "next" / "go on", is a skip
        ("en", "I don't know this one, next", C.SKIP),
        ("es", "uf no se, pasemos a otra", C.SKIP),
        # idioms (strong cues)
        ("en", "give me a moment to think about this", C.THINKING_ALOUD),
        ("de", "was war nochmal die frage?", C.REPEAT),
        # a negated wish to go on is a wish to stop, not a "no"
        ("en", "I don't want to continue with the viva, please stop it here", C.FINISH),
        ("es", "no quiero seguir con el examen, por favor termínelo", C.FINISH),
        # an apology goes with a command as frame words do
        ("de", "Entschuldigung für die Unterbrechung, ich bin jetzt wieder bereit.", C.RESUME),
        ("en", "ok I'm back, sorry for the wait", C.RESUME),
        # safety first: an emergency word with anything beside it
        ("de", "notfall, ich brauche hilfe", C.EMERGENCY_STOP),
        # typed without accents, umlauts or apostrophes, and text-speak
        ("de", "koennen wir die frage ueberspringen", C.SKIP),
        ("de", "ich moechte aufhoeren", C.FINISH),
        ("es", "mas despacio porfa", C.SLOW_DOWN),
        ("es", "dejame pensar", C.THINKING_ALOUD),
        ("en", "sry can u repeat", C.REPEAT),
        ("en", "gotta pause for a min", C.PAUSE),
        # a request with its reason after it is no self-answered question
        ("de", "Wäre eine kurze Pause möglich? Ich bräuchte ein Glas Wasser.", C.PAUSE),
        ("en", "could we take a five minute break? I have a headache", C.PAUSE),
    ],
)
def test_commands_in_words_the_rules_were_not_written_for(
    language: str, text: str, command: C
) -> None:
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # a content word around the verb vetoes it: subject, domain object, condition, number
        ("en", "the algorithm skips settled vertices"),
        ("en", "we'd repeat the titration three times to be sure"),
        ("en", "skip it if the new distance is not shorter"),
        ("en", "pause the infusion if he becomes hypotensive"),
        ("de", "Wir würden die Messung wiederholen, um sicherzugehen."),
        ("es", "Dijkstra salta los vértices ya visitados."),
        # another person
        ("en", "I'd speak slowly and explain the plan to him"),
        # "asked" cues need a question, politeness or the examiner addressed
        ("de", "ich würde langsamer vorgehen"),
        ("es", "Si enfrías más despacio, obtienes cristales más grandes."),
        # a bare cue with content around it in the other clauses
        ("de", "Noch einmal: der Knoten mit der kleinsten Distanz kommt zuerst."),
        ("es", "un momento, el ECG muestra descenso del ST, así que no es un IAMCEST"),
        # an answer's closing is no finish or skip
        ("en", "I'm done, that's my answer"),
        ("es", "esa es mi respuesta"),
        # a language named without a request
        ("en", "in Spanish the word is the same"),
        # thinking aloud, then the answer, is the answer
        ("en", "let me think, the heap is a binary tree"),
        ("de", "ich überlege noch, ob ein heap besser ist"),
        # a framed command with an answer beside it
        ("en", "I'm done with the first part, now the second part is the heap"),
        # an emergency that is a topic, not the candidate's
        ("en", "the fire alarm test is every Monday"),
        # a German conditional is an answer's, not a request ("ich würde gern" is)
        ("de", "ich würde es pausieren"),
        # a question the candidate answers themselves
        ("en", "is it about the cost or the benefit? I'd say the cost matters more"),
        ("en", "where were we in the loop? at vertex C"),
        ("es", "¿es sobre el coste o el beneficio? yo diría el coste"),
        # the blind set 6: a definition, and the candidate restating their own answer
        ("en", "Code switching is when bilingual speakers change language mid-sentence."),
        ("en", "So in simpler words, a hash function maps any input to a fixed size output."),
    ],
)
def test_answers_with_command_words_stay_answers(language: str, text: str) -> None:
    assert candidate_command(text, language) is None


def test_an_emergency_of_the_candidate_wins_over_finish() -> None:
    said = "I need to stop right now, I feel really sick"
    assert detect_command(said, "en") is C.EMERGENCY_STOP
    assert detect_command("stop, there's a fire alarm going off, I have to leave now") is (
        C.EMERGENCY_STOP
    )
    # someone else's emergency is an answer
    assert detect_command("Es una emergencia, le daría aspirina enseguida.", "es") is None


def test_revising_needs_an_earlier_answer_named() -> None:
    assert score(normalise("can I correct my last answer?"), "en") is C.REVISE_EARLIER_ANSWER
    assert score(normalise("can I correct it?"), "en") is None


def test_priority_breaks_ties_between_commands() -> None:
    # "stop" reads as finish and "for a moment" only fits a pause: the pause wins
    assert score(normalise("can we stop for a moment"), "en") is C.PAUSE
    # finish and skip both weak: the more consequential wins a tie, and a confirmation follows
    assert score(normalise("can we stop"), "en") is C.FINISH


def test_clauses_split_at_punctuation_and_remember_questions() -> None:
    assert clauses(normalise("Hang on, my phone is ringing. Can we stop? brb")) == [
        ("hang on", False),
        ("my phone is ringing", False),
        ("can we stop", True),
        ("brb", False),
    ]


def test_accents_and_umlauts_are_folded_on_both_sides() -> None:
    assert fold("können überspringen weiß", "de") == "koennen ueberspringen weiss"
    assert fold("¿podría repetir más despacio?", "es") == "¿podria repetir mas despacio?"
    assert fold("résumé", "en") == "résumé"  # English keeps its letters


def test_loose_spellings_are_read_in_their_standard_form() -> None:
    assert loosen("could u repeat pls", "en") == "could you repeat please"
    assert loosen("brb", "en") == "be right back"
    assert loosen("uf no se", "es") == "uf no sé"
    assert loosen("upset", "en") == "upset"  # whole words only


@pytest.mark.parametrize("language", sorted(LEXICONS))
def test_every_cue_begins_with_one_of_the_literal_beginnings(language: str) -> None:
    """The gate that keeps the scorer cheap may never hide a cue: every cue's own beginnings
    are among the lexicon's, and a cue found anywhere begins at a gated word start."""
    lexicon = LEXICONS[language]
    for number, cue in enumerate(lexicon.cues):
        for head in beginnings(cue.pattern.pattern):
            assert number in lexicon.by_head[head]
    assert beginnings(r"\b(?:skip\w*|pass)(?: it)?") == {"ski", "pas"}
    assert beginnings(r"^(?:a )?x") == {"a ", "x"}  # after a repeat: cut short, never wrong
    assert "" not in lexicon.by_head  # every cue has a literal beginning: no word is skipped
    assert {len(head) for head in lexicon.by_head} <= {1, 2, 3}


def test_the_scorer_is_deterministic_and_fast_enough() -> None:
    import time

    said = "I think Dijkstra uses a priority queue and relaxes edges from the source"
    assert re.fullmatch(r"[a-z ]+", normalise(said))
    start = time.perf_counter()
    for _ in range(200):
        assert score(normalise(said), "en") is None
    assert (time.perf_counter() - start) / 200 < 0.002  # generous: ~25 µs on a quiet machine


def test_the_rules_tried_at_word_starts_read_what_a_full_search_reads() -> None:
    """The sentence rules are tried, anchored, only at the words that begin with one of their
    literal beginnings: the same commands as searching every pattern over the whole turn."""
    from ioa.runtime.classifier import VOCABULARIES, _described_call, _ruled

    def searched(language: str, core: str, said: str) -> C | None:
        vocabulary = VOCABULARIES[language]
        for command, pattern in vocabulary.patterns:
            if pattern.search(core):
                if command is C.EMERGENCY_STOP and (
                    vocabulary.not_the_candidate.search(core)
                    or _described_call(vocabulary, core, said, pattern)
                ):
                    continue
                return command
        return None

    sets = Path(__file__).parent / "command_set"
    for language in ("en", "de", "es"):
        vocabulary = VOCABULARIES[language]
        for name in ("", "_holdout", "_holdout2"):
            for line in (sets / f"{language}{name}.jsonl").read_text(encoding="utf-8").splitlines():
                text = json.loads(line)["text"]
                core, said = vocabulary.core(text), normalise(text)
                assert _ruled(vocabulary, core, said) is searched(language, core, said), core


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("somebody here just fainted, please stop the exam", "en"),
        ("someone has collapsed in my flat, I need to stop", "en"),
        ("I think I'm having a seizure, I have to stop", "en"),
        ("eben ist hier einer zusammengebrochen, bitte die Prüfung stoppen", "de"),
        ("mir wird gleich schwarz vor Augen, ich muss aufhören", "de"),
        ("alguien se ha desmayado en la sala, pare por favor", "es"),
        ("me voy a desmayar, tengo que parar", "es"),
    ],
)
def test_an_emergency_in_the_candidates_room_wins_over_the_stop_it_asks_for(
    text: str, language: str
) -> None:
    """Set 8 read "someone just collapsed in the hallway, stop the exam" as nothing and its
    German and Spanish sisters as a finish: a person in the candidate's room is their
    emergency (runtime semantics §5, blind sets 8 and 9)."""
    assert candidate_command(text, language) is C.EMERGENCY_STOP


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("If someone collapsed you would check the airway and call for help first.", "en"),
        ("The patient collapsed after the second dose and we started CPR.", "en"),
        ("Wenn jemand umkippt, bringt man ihn in die stabile Seitenlage.", "de"),
        ("Si alguien se desmaya, se le levantan las piernas y se comprueba la respiración.", "es"),
        ("súbale la dosis al paciente si la presión sigue baja", "es"),
        ("el ácido clorhídrico es más fuerte que el acético", "es"),
    ],
)
def test_a_collapse_or_a_volume_word_in_an_answer_is_no_command(text: str, language: str) -> None:
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        ("You're too quiet, I can barely hear you.", "en", C.VOLUME_UP),
        ("Apenas le oigo, suba un poco la voz.", "es", C.VOLUME_UP),
        ("Menos volumen.", "es", C.VOLUME_DOWN),
        ("¿Me oye?", "es", C.REPORT_AUDIO_ISSUE),
    ],
)
def test_the_volume_asked_with_a_sound_problem_is_the_volume(
    text: str, language: str, command: C
) -> None:
    """ "Louder, I can barely hear you" asks for the volume; the sound problem is its reason."""
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        # A request with its reason, longer than the cue scorer reads (blind set 10's misses).
        (
            "Sorry, could you go over the question once more? The line dropped for a second "
            "when my neighbour started drilling through the wall.",
            "en",
            C.REPEAT,
        ),
        (
            "Könnten Sie bitte etwas langsamer sprechen? Mein Deutsch ist nicht so gut und "
            "ich möchte wirklich alles von der Frage mitbekommen.",
            "de",
            C.SLOW_DOWN,
        ),
        (
            "¿Podemos hacer una pausa de cinco minutos? Me acaban de llamar del colegio de mi "
            "hijo y tengo que contestar ahora mismo, lo siento mucho.",
            "es",
            C.PAUSE,
        ),
    ],
)
def test_a_request_with_its_reason_is_read_sentence_by_sentence(
    text: str, language: str, command: C
) -> None:
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # quoted or reported requests are answers about what someone said
        (
            "In the dialogue the waiter asks: could you repeat that? Then the customer answers "
            "and the scene moves on to the kitchen where the chef is waiting.",
            "en",
        ),
        (
            "She said 'I need a break now' and so we stopped the infusion for ten minutes and "
            "checked her blood pressure before restarting it.",
            "en",
        ),
        (
            "Der Kellner fragt: Können Sie das wiederholen? Danach antwortet der Gast und die "
            "Szene wechselt in die Küche, wo der Koch schon wartet.",
            "de",
        ),
        # a fragment that trails off is no request
        (
            "Pause, pause... no, caesura, I mean the pause in the middle of the line in Beowulf.",
            "en",
        ),
    ],
)
def test_a_quoted_or_unclear_long_turn_is_no_command(text: str, language: str) -> None:
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("I don't need a break, thanks.", "en"),
        ("ich brauche keine Pause, danke", "de"),
        ("no necesito una pausa, gracias", "es"),
    ],
)
def test_a_candidate_who_needs_no_break_is_not_paused(text: str, language: str) -> None:
    # These paused the exam: the negated need was read as the request for a break.
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # the candidate's body, their household, their home: the reason a stop is asked for
        ("I need to stop, my heart is racing like mad", "en"),
        ("please end it here, everything is spinning", "en"),
        ("can we stop, I can smell gas in the house", "en"),
        ("stop the exam, my little brother just fell off the ladder", "en"),
        ("ich muss aufhören, meine Oma ist eben gestürzt", "de"),
        ("bitte abbrechen, mir dreht sich alles", "de"),
        ("wir müssen abbrechen, es riecht nach Rauch", "de"),
        ("paremos, hay humo en la cocina", "es"),
        ("tengo que dejarlo, me va el corazón a mil", "es"),
    ],
)
def test_an_acute_danger_as_the_reason_for_a_stop_is_an_emergency(text: str, language: str) -> None:
    """Blind set 12 read "stop everything please, the room is spinning" and "ich muss das
    abbrechen, mein Vater ist gerade zusammengebrochen" as a finish, "I have to stop, there's
    smoke in the flat" as a pause: a symptom of the candidate's, a person of their household
    just hurt, or a danger in their home is an emergency, and it outranks the stop."""
    assert candidate_command(text, language) is C.EMERGENCY_STOP


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("If the patient's heart is racing, check the pulse and do an ECG.", "en"),
        ("my grandmother fell last year and broke her hip, so falls matter to me", "en"),
        ("If there's smoke in the corridor you stay low and leave by the stairs.", "en"),
        ("Bei Rauchentwicklung verlässt man das Gebäude über die Treppe.", "de"),
        ("Herzrasen ist ein typisches Symptom einer Schilddrüsenüberfunktion.", "de"),
        ("meine Oma ist gestürzt und seitdem im Pflegeheim, deshalb interessiert mich das", "de"),
        ("si hay humo en la cocina hay que salir agachado", "es"),
        ("la taquicardia es un síntoma frecuente del hipertiroidismo", "es"),
    ],
)
def test_a_danger_or_a_symptom_as_a_topic_is_no_emergency(text: str, language: str) -> None:
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        # a wager on the answer signals confidence; its "fire" or "life" is a figure of speech
        ("I'd bet my house on that answer", "en", C.SIGNAL_CONFIDENCE),
        ("dafür würde ich meine Hand ins Feuer legen", "de", C.SIGNAL_CONFIDENCE),
        ("me juego el cuello a que es así", "es", C.SIGNAL_CONFIDENCE),
        # with the answer beside it, the turn is the answer
        ("Die Hauptstadt ist Canberra, da lege ich meine Hand ins Feuer", "de", None),
        ("la capital es Canberra, yo pondría la mano en el fuego", "es", None),
    ],
)
def test_a_wager_on_the_answer_is_confidence_not_an_emergency(
    text: str, language: str, command: C | None
) -> None:
    """Blind set 12 read "da leg ich meine Hand für ins Feuer" as an emergency (a fire)."""
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        # going on with the exam is resuming it; going on to another question is skipping
        ("so, weiter mit der Prüfung bitte", "de", C.RESUME),
        ("gut, machen wir mit der Prüfung weiter", "de", C.RESUME),
        ("¿continuamos con la siguiente?", "es", C.SKIP),
        ("paso, ¿seguimos con la próxima?", "es", C.SKIP),
    ],
)
def test_what_the_candidate_goes_on_to_decides_skip_or_resume(
    text: str, language: str, command: C
) -> None:
    """Blind set 12 read "erledigt, machen wir weiter mit der Prüfung" as a skip and "paso de
    esta, ¿seguimos con otra?" as a resume."""
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # "again" after a state says the state is back, it asks for nothing to be repeated
        ("listo, todo bien de nuevo, por favor", "es"),
        ("bueno, ya está bien otra vez, por favor", "es"),
        ("ok, it's ok again, please", "en"),
    ],
)
def test_again_after_a_state_is_no_repeat(text: str, language: str) -> None:
    """Blind set 12 read "ok todo bien otra vez, continúe por favor" as a repeat."""
    assert rules_command(text, language) is not C.REPEAT
    assert rules_command("¿puede decirlo otra vez?", "es") is C.REPEAT
    assert rules_command("sorry, again please", "en") is C.REPEAT


@pytest.mark.parametrize(
    "text",
    [
        "man kann die Aufgabe als Graphproblem umformulieren",
        "das lässt sich als Eigenwertproblem umformulieren, dann ist es einfach",
    ],
)
def test_rephrasing_in_an_answer_is_no_request_to_rephrase(text: str) -> None:
    """Blind set 12's false positive: "das kann man als lineares Optimierungsproblem
    umformulieren ..." was read as a request to rephrase; rephrasing is asked of the examiner
    (a question, politeness or the examiner addressed)."""
    assert candidate_command(text, "de") is None
    assert candidate_command("können Sie die Frage umformulieren?", "de") is C.REQUEST_REPHRASE


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # a contraction, a plural noun or a pronoun beside the household member: still theirs
        ("my mum's fallen down the stairs", "en"),
        ("My mom\u2019s fallen down the stairs, I have to go.", "en"),
        ("my dad's just collapsed and he isn't breathing", "en"),
        ("sorry, my grandad has had a fall in the garden", "en"),
        ("my son's hit his head on the stairs", "en"),
        ("my flat's on fire", "en"),
        ("the kitchen's caught fire, I have to go", "en"),
        ("meine Mama ist die Treppe runtergefallen", "de"),
        ("mein Vater ist zusammengebrochen, er atmet nicht", "de"),
        ("Papa ist umgekippt, ich muss sofort weg", "de"),
        ("meine Oma hat sich schwer verletzt", "de"),
        ("mi mamá se cayó por las escaleras", "es"),
        ("mi madre se ha caído, ella no responde", "es"),
        ("a mi padre le ha dado un infarto", "es"),
        ("mi casa está en llamas", "es"),
    ],
)
def test_a_household_member_just_hurt_is_an_emergency_in_any_form(text: str, language: str) -> None:
    """ "my mum's fallen down the stairs" was read as no command: "the stairs" counted as
    another person (the others' "the ...s", meant for "the patients"), and "he", "ella" or "le"
    about the candidate's own father or mother made the emergency someone else's. The household
    cue names whose danger it is; the participles and contractions of the class ("'s fallen",
    "has had a fall", "ist umgekippt", "se cayó", "le ha dado un infarto") are read."""
    assert candidate_command(text, language) is C.EMERGENCY_STOP


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # a condition, a past event or a habit stays an answer
        ("if my mum has fallen, you check whether she can stand up", "en"),
        ("my mum's fallen a few times, so falls matter to me", "en"),
        ("my grandmother fell last year and broke her hip", "en"),
        ("meine Oma ist gestürzt, seitdem ist sie im Heim", "de"),
        ("mein Vater ist letztes Jahr zusammengebrochen, daher kenne ich das", "de"),
        ("mi abuela se cayó el año pasado y se rompió la cadera", "es"),
        ("cuando mi padre se desmayó de pequeño lo llevamos al médico", "es"),
    ],
)
def test_a_household_fall_as_a_past_event_or_condition_is_no_emergency(
    text: str, language: str
) -> None:
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # a fall told with the all-clear: going on, not an emergency
        ("my son's fallen off the sofa but he's fine, let's carry on", "en"),
        ("Entschuldigung, mein Sohn ist vom Sofa gefallen, aber alles gut. Wo waren wir?", "de"),
        ("perdón, mi hijo se ha caído del sofá pero ya está bien, sigamos", "es"),
    ],
)
def test_a_household_fall_with_the_all_clear_is_no_emergency(text: str, language: str) -> None:
    """The first German training set labels "..., mein Sohn ist vom Sofa gefallen, aber alles
    gut. Wo waren wir?" a resume; the household cue without the all-clear read it as an
    emergency. Asking leave to go stays an emergency."""
    assert candidate_command(text, language) is C.RESUME
    assert candidate_command("my mum's fallen down the stairs, is it ok if I go?", "en") is (
        C.EMERGENCY_STOP
    )
    assert candidate_command("mi madre se ha caído, ¿está bien si paro?", "es") is (
        C.EMERGENCY_STOP
    )


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        # the answer named, then how sure the candidate is of it: the turn is the answer
        ("Mergesort, da bin ich mir ziemlich sicher.", "de", None),
        ("Quicksort, da bin ich mir sicher.", "de", None),
        ("Es ist Dijkstra, da bin ich mir ganz sicher.", "de", None),
        ("Ein binärer Heap, da bin ich mir sicher.", "de", None),
        ("Mergesort, I'm fairly sure of that.", "en", None),
        ("It's Dijkstra, I'm pretty confident about that.", "en", None),
        ("A binary heap, I'm fairly confident.", "en", None),
        ("Mergesort, de eso estoy bastante seguro.", "es", None),
        ("Es Dijkstra, estoy bastante segura.", "es", None),
        # how sure, alone or after an affirmation or a marker: a self-assessment
        ("da bin ich mir ziemlich sicher", "de", C.SIGNAL_CONFIDENCE),
        ("Zweifellos, da bin ich mir sicher.", "de", C.SIGNAL_CONFIDENCE),
        ("Der Ordnung halber: da bin ich mir ziemlich sicher.", "de", C.SIGNAL_CONFIDENCE),
        ("Absolutely, I'm sure of it.", "en", C.SIGNAL_CONFIDENCE),
        ("For what it's worth, I'm fairly sure of that.", "en", C.SIGNAL_CONFIDENCE),
        ("Definitivamente, de eso estoy seguro.", "es", C.SIGNAL_CONFIDENCE),
        ("Para que conste, de eso estoy bastante seguro.", "es", C.SIGNAL_CONFIDENCE),
    ],
)
def test_an_answer_with_how_sure_the_candidate_is_stays_an_answer(
    text: str, language: str, command: C | None
) -> None:
    """The learned stage read "Mergesort, da bin ich mir ziemlich sicher." (holdout 5) as
    confidence: it reads words, not which clause is the answer. A confidence reading counts
    only when no answer opens the turn, as the cue scorer's confidence cues count only alone."""
    assert candidate_command(text, language) is command


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # an answer's next step: the call described (a modal, a conditional, a subject in the
        # present of a procedure, a step of a sequence), not asked of anyone now
        ("I'd call an ambulance", "en"),
        ("First I'd check the scene is safe, then I'd call an ambulance.", "en"),
        ("I would call an ambulance straight away", "en"),
        ("you should call an ambulance", "en"),
        ("then we call an ambulance", "en"),
        ("then you call an ambulance and start CPR", "en"),
        ("the first thing is to call an ambulance", "en"),
        ("next I'd call a doctor", "en"),
        ("Check the scene is safe, then call an ambulance.", "en"),
        ("call the emergency services, then start CPR", "en"),
        ("my answer would be: call an ambulance", "en"),
        ("wir würden den Notarzt rufen", "de"),
        ("ich würde einen Krankenwagen rufen", "de"),
        ("dann rufen Sie den Notarzt", "de"),
        ("zuerst sichere ich die Unfallstelle, dann ruf den Notarzt", "de"),
        ("man sollte sofort den Rettungswagen rufen", "de"),
        ("llamaría a una ambulancia", "es"),
        ("primero compruebo que la zona es segura y luego llamaría a una ambulancia", "es"),
        ("hay que llamar a una ambulancia", "es"),
        ("luego llamamos a una ambulancia", "es"),
        ("después llamen a una ambulancia", "es"),
    ],
)
def test_a_call_for_help_described_in_an_answer_is_no_emergency(text: str, language: str) -> None:
    """ "I'd call an ambulance" (a first-aid scenario's next step) was read as the candidate's
    own emergency: the sentence rule read "call an ambulance" wherever it stood. A call for help
    is the candidate's emergency when it is asked now (it opens its clause, or only request
    words stand before it: "please", "can someone", "kann jemand", "que alguien"); described
    (a modal or a conditional, "you should", "wir würden", "llamaría", a subject in a
    procedure's present, a step of a sequence, "then", "dann", "luego") it is an answer."""
    assert candidate_command(text, language) is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # a present need: asked now, or needed now
        ("call an ambulance!", "en"),
        ("please call an ambulance", "en"),
        ("I need an ambulance", "en"),
        ("can someone call an ambulance, my chest hurts", "en"),
        ("could you call a doctor please, I feel awful", "en"),
        ("I need to call an ambulance, sorry", "en"),
        ("rufen Sie einen Krankenwagen!", "de"),
        ("ich brauche einen Krankenwagen", "de"),
        ("ich brauche sofort einen Notarzt", "de"),
        ("kann jemand einen Krankenwagen rufen, meine Brust tut weh", "de"),
        ("llamen a una ambulancia", "es"),
        ("necesito una ambulancia", "es"),
        ("necesito un médico, por favor", "es"),
        ("¿alguien puede llamar a una ambulancia? me duele el pecho", "es"),
        ("que alguien llame a una ambulancia", "es"),
    ],
)
def test_a_call_for_help_asked_now_is_an_emergency(text: str, language: str) -> None:
    assert candidate_command(text, language) is C.EMERGENCY_STOP


@pytest.mark.parametrize(
    ("text", "language", "command"),
    [
        # a number (or a formula) given as the answer, then how sure: the turn is the answer
        ("42, I'm sure of it", "en", None),
        ("17, I'm confident about that.", "en", None),
        ("1789, I'm fairly sure of that.", "en", None),
        ("Forty-two, I'm sure of it.", "en", None),
        ("42, da bin ich mir ziemlich sicher.", "de", None),
        ("Es sind 17, da bin ich sicher.", "de", None),
        ("1789, da bin ich mir sicher.", "de", None),
        ("O(n log n), da bin ich sicher", "de", None),
        ("Es 17, estoy seguro", "es", None),
        ("42, de eso estoy seguro.", "es", None),
        ("O(n log n), estoy bastante seguro.", "es", None),
        # a measure of certainty is no answer: how sure, said twice
        ("100%, I'm sure", "en", C.SIGNAL_CONFIDENCE),
        ("100 percent, I'm sure of it", "en", C.SIGNAL_CONFIDENCE),
        ("a hundred percent, I'm sure", "en", C.SIGNAL_CONFIDENCE),
        ("90%, I'm confident", "en", C.SIGNAL_CONFIDENCE),
        ("zu hundert Prozent, da bin ich sicher", "de", C.SIGNAL_CONFIDENCE),
        ("100 %, da bin ich sicher", "de", C.SIGNAL_CONFIDENCE),
        ("al cien por cien, estoy seguro", "es", C.SIGNAL_CONFIDENCE),
        ("100%, estoy seguro", "es", C.SIGNAL_CONFIDENCE),
    ],
)
def test_a_number_as_the_answer_with_how_sure_stays_an_answer(
    text: str, language: str, command: C | None
) -> None:
    """ "42, I'm sure of it" was read as confidence: numbers were no answer to
    :func:`ioa.runtime.classifier.answer_first`, so that "100%, I'm sure" stays a remark on
    certainty. A measure of certainty (a number with "percent", "Prozent", "por cien") is the
    remark; any other number or formula opening the turn is the answer."""
    assert candidate_command(text, language) is command

"""Small fixed vocabularies used by the output filters and the neutrality guardrail."""

from __future__ import annotations

from typing import Final


def _word_list(text: str) -> frozenset[str]:
    """The white-space separated words of a block of text."""
    return frozenset(text.split())


STOPWORDS: Final = _word_list(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can cannot could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other
    ought our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up upon
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves dont doesnt didnt isnt arent wasnt werent wont wouldnt couldnt shouldnt
    cant im ive id ill youre youve youd youll its lets thats whats theres heres one two three
    der die das den dem des ein eine einen einem einer eines und oder aber doch denn wenn als
    wie ob dass weil auch noch schon nur sehr so zu zum zur im in am an auf aus bei mit nach
    von vor für über unter um durch ohne gegen bis ist sind war waren sein bin bist seid hat
    haben hatte hatten wird werden wurde wurden kann können könnte könnten muss müssen soll
    sollen möchte möchten will wollen darf dürfen ich du er sie es wir ihr mich mir dich dir
    ihn ihm uns euch ihnen ihr ihre ihren ihrem ihrer sein seine seinen mein meine meinen
    dein deine unser unsere was wer wo wann warum welche welcher welches dies diese dieser
    dieses diesem diesen hier dort da jetzt nicht kein keine keinen man es gibt eins zwei drei
    el la los las un una unos unas y o pero porque si como que de del al a en con por para sin
    sobre entre hasta desde es son era eran ser estar está están esta este esto estos estas
    ese esa eso fue ha han he hemos había puede pueden podría podrían debe quiere quiero yo tú
    usted ustedes él ella nosotros me te se le les lo nos su sus mi mis tu tus qué quién dónde
    cuándo cómo cuál muy más menos ya aquí ahí no ni también todo todos uno dos tres
    """
)
"""Function words: never evidence of a topic, never a rubric leak on their own."""

PROCEDURAL_WORDS: Final = _word_list(
    """
    question questions answer answers answered explain explaining explanation tell telling
    describe describing description think thinking thought mean meaning meant example examples
    please continue continuing time take taking repeat repeating approach reasoning reason part
    parts move moving next go going say saying said little bit sure okay ok let thank thanks
    ready right now consider considering case cases situation detail details further elaborate
    clarify clarification understand walk step steps happen happens happened like would could
    might maybe perhaps view opinion agree disagree why how what start begin first second
    point points idea ideas way ways something anything everything else more less much many
    minute minutes moment pause stop exam examination assessment topic today well good fine
    see know knowing want wanted need needed try trying talk talking hear heard speak speaking
    slowly again earlier before later already still just also word words words sentence
    thing things work works working make makes made use uses used using give given show shown
    choose chose chosen pick picked compute find found get got put call called come back
    stay current present presented problem problems follow following hello welcome whenever
    whether ask asked asking add adding correct correcting last final end ending finished
    having trouble hearing clearly running
    frage fragen antwort antworten antwortet erklären erklärung beschreiben denken meinen
    bedeutet bedeutung beispiel bitte bitten fortfahren fahren fort zeit nehmen nehmen
    wiederholen wiederholung weiter weitermachen machen sagen gesagt bereit danke vielen dank
    moment pause prüfung prüfungsaufsicht aufsicht informiert unterbrochen warten einen kurz
    kurze kurzen innehalten halten inne eile überhaupt willkommen zurück problem technisches
    technische störung geduld selbstverständlich langsamer spreche sprechen hören deutlich
    hinweis wort worten eigenen formulieren anders leider möglich bleiben beenden bisherigen
    erhalten bleiben ja nein notiert ende gelegenheit frühere ergänzen korrigieren entschuldigung
    verstanden einmal letzten punkt beendet scheint geben gab brauchen sie kommt alle alles
    haben bescheid weiterzumachen jetzt genug fortzufahren frage
    kann gerade verstehen deshalb läuft einfach gut
    pregunta preguntas respuesta respuestas responder responda explicar describir pensar
    significa significado ejemplo favor continuar continúe continuemos sigamos seguir adelante
    tiempo tómese tomar repetir repita repetirlo reformule pausa hacemos hagamos gracias
    momento examen supervisor avisado avisarme avíseme espere esperar pausado bienvenido
    retomamos problema técnico paciencia ruego parece tenemos hemos tenido hablaré despacio
    oye oír bien ahora palabra palabras propias necesite disponible siento posible conservarán
    desea terminar terminado anotado final oportunidad completar corregir anteriores entendido
    podría último punto disculpe detengámonos unirá prisa ninguna breve todo cuando quiera
    lo hasta sí
    cuesta entenderle así corre esté listo simplemente vuelva hablar
    """
)
"""Words an examiner uses whatever the topic: they neither prove nor disprove topic drift."""

OFF_TOPIC_CUES: Final[tuple[str, ...]] = (
    "by the way",
    "off topic",
    "off the record",
    "unrelated",
    "weather",
    "football",
    "soccer",
    "basketball",
    "cricket",
    "sports",
    "politics",
    "political",
    "election",
    "religion",
    "religious",
    "celebrity",
    "your weekend",
    "your holiday",
    "your vacation",
    "your family",
    "your boyfriend",
    "your girlfriend",
    "your favourite",
    "your favorite",
    "favourite film",
    "favorite movie",
    "stock market",
    "recipe",
    "horoscope",
    "where do you live",
    "how old are you",
)
"""Phrases that introduce small talk or outside topics (OUT-003); ignored when the node's own
domain uses them (a scenario may well be about the weather)."""

REASSURANCE_PHRASES: Final[tuple[str, ...]] = (
    "you're doing great",
    "you are doing great",
    "you're doing well",
    "you are doing well",
    "doing really well",
    "good answer",
    "great answer",
    "excellent answer",
    "brilliant answer",
    "that's correct",
    "that is correct",
    "that's right",
    "that is right",
    "exactly right",
    "absolutely right",
    "spot on",
    "perfect answer",
    "well done",
    "excellent",
    "you're on the right track",
    "you are on the right track",
    "on the right track",
    "nailed it",
    "you've got it",
    "you have got it",
    "that's wrong",
    "that is wrong",
    "that's incorrect",
    "that is incorrect",
    "not quite right",
    "that's not right",
    "you're struggling",
    "you are struggling",
    "you should know this",
)
"""Assessment-relevant reassurance or discouragement (POL-008): telling or implying that an
answer is good, correct, wrong or weak. Procedural support ("Take your time") is fine."""

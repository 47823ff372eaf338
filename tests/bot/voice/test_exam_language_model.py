"""The exam's own language model for the offline recogniser (issue #17): a proper distribution
built from the package's text alone, loaded by PocketSphinx, and it hears the exam's answers
better than the general model."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from bot.voice.exam_language_model import GeneralModel, build, build_exam_models, sentences
from bot.voice.exam_text import EXAM_PHRASES, bias_recogniser, node_texts, package_texts
from ioa.schema import AssessmentPackage
from tests.factories import example_document


def _read_arpa(path: str) -> dict[int, dict[tuple[str, ...], tuple[float, float]]]:
    grams: dict[int, dict[tuple[str, ...], tuple[float, float]]] = {1: {}, 2: {}, 3: {}}
    order = 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("\\") and line.endswith("-grams:"):
            order = int(line[1])
            continue
        parts = line.split()
        if order and len(parts) > order:
            backoff = float(parts[order + 1]) if len(parts) > order + 1 else 0.0
            grams[order][tuple(parts[1 : order + 1])] = (10 ** float(parts[0]), 10**backoff)
    return grams


def _p(grams: dict[int, dict[tuple[str, ...], tuple[float, float]]], *gram: str) -> float:
    """P(last word | history) by the ARPA back-off rules."""
    if len(gram) == 1:
        return grams[1][gram][0]
    if gram in grams[len(gram)]:
        return grams[len(gram)][gram][0]
    history = grams[len(gram) - 1].get(gram[:-1], (0.0, 1.0))[1]
    return history * _p(grams, *gram[1:])


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    texts = package_texts(example_document())
    return build(texts, directory=str(tmp_path_factory.mktemp("lm")))


def test_the_text_is_the_packages_prose_and_the_exam_phrases() -> None:
    texts = package_texts(example_document())
    joined = " ".join(texts)
    assert "Dijkstra's algorithm finds shortest paths" in joined
    assert "bakery delivers" in joined
    assert set(EXAM_PHRASES) <= set(texts)
    assert not any(" " not in t.strip() for t in texts)  # no identifiers or enum values
    assert sentences(["Hello, Dr. Lee! It's O(V log V)."]) == [
        ["hello", "dr"],
        ["lee"],
        ["it's", "o", "v", "log", "v"],
    ]


def test_the_model_is_a_distribution(model) -> None:  # type: ignore[no-untyped-def]
    grams = _read_arpa(model.arpa_path)
    vocabulary = [g[0] for g in grams[1] if g[0] != "<s>"]
    assert math.isclose(sum(grams[1][(w,)][0] for w in vocabulary), 1.0, rel_tol=1e-3)
    for history in [("the",), ("<s>",), ("dijkstra's",), ("priority",)]:
        total = sum(_p(grams, *history, w) for w in vocabulary)
        assert math.isclose(total, 1.0, rel_tol=1e-3), (history, total)
    for history in [("<s>", "could"), ("the", "priority")]:
        total = sum(_p(grams, *history, w) for w in vocabulary)
        assert math.isclose(total, 1.0, rel_tol=1e-3), (history, total)
    # The exam's words are far more probable than in general English.
    general = GeneralModel.load().unigrams
    assert grams[1][("vertex",)][0] > 100 * general["vertex"]


def test_the_same_text_gives_the_same_model(model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    again = build(package_texts(example_document()), directory=str(tmp_path))
    assert again.name == model.name
    assert Path(again.arpa_path).read_bytes() == Path(model.arpa_path).read_bytes()
    other = build(
        ["Mitosis divides one cell into two."],
        directory=str(tmp_path),
    )
    assert other.name != model.name


def test_the_decoder_hears_the_exam_better_with_it(model) -> None:  # type: ignore[no-untyped-def]
    from pipecat.audio.utils import create_file_resampler

    from bot.voice.espeak import Voice, engine
    from bot.voice.offline_stt import DEFAULT_DECODER_OPTIONS, DecoderPool

    espeak = engine()
    answer = "a negative edge could invalidate a distance that was already settled"
    pcm = espeak.synthesize(answer + ".", Voice(name="en-us", rate_wpm=150))
    pcm16k = asyncio.run(create_file_resampler().resample(pcm, espeak.sample_rate, 16000))
    silence = bytes(16000)
    pool = DecoderPool(DEFAULT_DECODER_OPTIONS, 1)

    def errors(result: object) -> int:
        heard = getattr(result, "text", "").split()
        return sum(1 for word in answer.split() if word not in heard)

    general = pool.decode(silence + pcm16k + silence)
    biased = pool.decode(silence + pcm16k + silence, model)
    assert biased is not None
    # At least half the words the general model missed are heard with the exam's model.
    assert errors(biased) <= errors(general) // 2, (general, biased)
    # The pooled decoder goes back to the general model when asked (PocketSphinx's running
    # cepstral mean makes a repeat decode differ slightly, so compare the misses).
    again = pool.decode(silence + pcm16k + silence)
    assert errors(again) > errors(biased), (again, biased)


def test_words_the_dictionary_lacks_are_pronounced_by_espeak(model) -> None:  # type: ignore[no-untyped-def]
    from bot.voice.pronunciation import arpabet, pronounce

    pronounced = dict(model.pronunciations)
    assert pronounced["dijkstra"].split()[:2] == ["D", "EY"]
    assert pronounced["unvisited"] == "AH N V IH Z IH T IH D"
    assert "dijkstra" in {g[0] for g in _read_arpa(model.arpa_path)[1]}
    assert pronounce("vertex") == "V ER T EH K S"
    assert arpabet("tS'3:tS") == "CH ER CH"
    assert arpabet("b'Vq") is None  # a phoneme with no counterpart: left out, never guessed


def test_each_node_gets_its_own_text() -> None:
    document = example_document()
    by_node = node_texts(document)
    dijkstra = " ".join(by_node["q-dijkstra"])
    assert "Dijkstra's algorithm finds shortest paths" in dijkstra
    assert "bakery delivers" not in dijkstra  # another node's prose
    assert "bakery delivers" in " ".join(by_node["scn-delivery-routes"])
    assert "CS201 Oral Examination: Graph Algorithms" in by_node["q-dijkstra"]  # the metadata's
    assert set(EXAM_PHRASES) <= set(by_node["wrapup"])
    silent = {**document, "nodes": [{"nodeId": "bare", "kind": "end", "transitions": []}]}
    assert node_texts(silent) == {}  # no prose of its own: the package's model serves it


def test_an_answer_is_decoded_with_the_model_of_the_node_it_answers(tmp_path: Path) -> None:
    document = example_document()
    models = build_exam_models(
        package_texts(document), node_texts(document), directory=str(tmp_path)
    )
    assert set(models.nodes) == set(node_texts(document))
    assert models.for_node("q-dijkstra") is models.nodes["q-dijkstra"]
    assert models.for_node("q-dijkstra").name != models.for_node("scn-delivery-routes").name
    assert models.for_node(None) is models.package
    assert models.for_node("no-such-node") is models.package

    # The offline recogniser asks which node is current at each segment (bias_recogniser).
    from bot.voice.offline_stt import PocketsphinxSTTService

    package = AssessmentPackage.model_validate(document)
    dumped = package.model_dump(mode="json", by_alias=True, exclude_none=True)
    models = build_exam_models(package_texts(dumped), node_texts(dumped), directory=str(tmp_path))
    current: list[str | None] = [None]
    service = PocketsphinxSTTService()
    assert service.exam_model() is None  # before start: the general model
    bias_recogniser(service, package, lambda: current[0])
    asyncio.run(service.build_exam_models(directory=str(tmp_path)))
    assert service.exam_model() == models.package
    current[0] = "q-dijkstra"
    assert service.exam_model() == models.nodes["q-dijkstra"]
    current[0] = "scn-delivery-routes"
    assert service.exam_model() == models.nodes["scn-delivery-routes"]


def test_british_pronunciations_of_the_exam_words_become_variants(model) -> None:  # type: ignore[no-untyped-def]
    from bot.voice.offline_stt import DEFAULT_DECODER_OPTIONS, DecoderPool
    from bot.voice.pronunciation import accent_variants

    british = "AE L G AH R IH TH AH M"  # eSpeak NG en-gb; the US dictionary has "... ER IH DH ..."
    assert accent_variants("algorithm") == (british,)
    assert ("algorithm", british) in model.variants
    pool = DecoderPool(DEFAULT_DECODER_OPTIONS, 1)
    pool.decode(bytes(3200), model)  # the model's search is added on first use
    with pool.acquire() as decoder:
        spoken = [decoder.lookup_word(f"algorithm({n})") for n in range(2, 5)]
        us = decoder.lookup_word("algorithm")
        # A pronunciation the dictionary already has is not added again.
        assert ("vertices", decoder.lookup_word("vertices")) in model.variants
        assert decoder.lookup_word("vertices(2)") is None
    assert us is not None and us != british
    assert spoken.count(british) == 1, spoken  # once, as a variant: the US one stays


def test_an_exam_met_again_is_not_built_again(tmp_path: Path) -> None:
    """Every candidate of a published package asks for the same models: building them took
    about 0.75 s of CPU per session even with their files on disk (issue #30, Start time)."""
    document = example_document()
    texts, nodes = package_texts(document), node_texts(document)
    first = build_exam_models(texts, nodes, directory=str(tmp_path))
    assert build_exam_models(texts, nodes, directory=str(tmp_path)) is first
    # Files removed (a cleaned temporary directory): built again, the same models.
    Path(first.package.arpa_path).unlink()
    again = build_exam_models(texts, nodes, directory=str(tmp_path))
    assert again is not first and again == first
    assert Path(again.package.arpa_path).exists()
    # Another exam's text is another exam.
    other = build_exam_models(
        [*texts, "Explain Kruskal's algorithm."], nodes, directory=str(tmp_path)
    )
    assert other.package.name != first.package.name


def test_the_pipeline_starts_without_waiting_for_the_exams_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen before: the recogniser's start built the exam's models, and the pipeline (so the
    candidate's Start) waited for it: 0.9 s of the 1.6 s from the room's load to Start on a
    warm server (``bench/start_time.py``). Now the build runs behind the start; a segment
    decoded meanwhile waits for it and is decoded with the exam's model."""
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.workers.runner import WorkerRunner

    from bot.audio import build_vad_processor, input_audio_frames, pipeline_params, read_wav
    from bot.voice.offline_stt import PocketsphinxSTTService
    from tests.bot.voice.support import ANSWER, ControllerHook, spoken_wav

    monkeypatch.setenv("VIVA_STT_MODEL_DIR", str(tmp_path))  # a model never built before
    # Many words the dictionary lacks (each pronounced by eSpeak NG): a build that takes time.
    invented = [f"zorb{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}ix" for i in range(300)]
    texts = [*EXAM_PHRASES, *(" ".join(invented[i : i + 6]) + "." for i in range(0, 300, 6))]
    service = PocketsphinxSTTService()
    service.use_exam_text(texts)
    at_start: list[object] = []
    at_decode: list[object] = []
    heard = asyncio.Event()

    def reply(text: str, confidence: float | None) -> str:
        at_decode.append(service.exam_model())
        heard.set()
        return "Thank you."

    async def scenario() -> None:
        pcm, rate = read_wav(await spoken_wav(tmp_path / "answer.wav", ANSWER))
        worker = PipelineWorker(
            Pipeline([build_vad_processor(), service, ControllerHook(reply)]),
            params=pipeline_params(),
            idle_timeout_secs=None,
            enable_rtvi=False,
        )

        @worker.event_handler("on_pipeline_started")
        async def _started(worker: PipelineWorker, frame: object) -> None:
            at_start.append(service.exam_model())

        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        running = asyncio.create_task(runner.run())
        try:
            await worker.queue_frames(list(input_audio_frames(pcm, rate)))
            await asyncio.wait_for(heard.wait(), timeout=60)
        finally:
            await runner.cancel("done")
            await asyncio.wait_for(running, timeout=10)

    asyncio.run(scenario())
    assert at_start == [None], "the pipeline waited for the exam's models"
    assert at_decode and at_decode[0] is not None, "the answer was decoded without them"
    assert str(tmp_path) in at_decode[0].arpa_path  # type: ignore[attr-defined]

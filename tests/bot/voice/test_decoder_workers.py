"""PocketSphinx decodes in worker processes (``bot.voice.decoder_workers``, issue 15): the same
transcript as in the bot's process, every worker loaded by the warm-up, a worker that dies is
replaced and the segment still decoded, a failing decode is an error naming its cause."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from bot.voice.decoder_workers import DecoderProcesses, DecoderWorkerError
from bot.voice.espeak import engine
from bot.voice.exam_language_model import ExamLanguageModel, build
from bot.voice.exam_text import package_texts
from bot.voice.sphinx_decoder import DEFAULT_DECODER_OPTIONS, MODEL_SAMPLE_RATE, DecoderPool
from tests.bot.voice.support import ANSWER, ANSWER_VOICE
from tests.factories import example_document


@pytest.fixture(scope="module")
def answer() -> bytes:
    """The answer as eSpeak says it, at 16 kHz with silence around it."""
    from pipecat.audio.utils import create_file_resampler

    espeak = engine()
    pcm = espeak.synthesize(ANSWER, ANSWER_VOICE)
    pcm16k = asyncio.run(create_file_resampler().resample(pcm, espeak.sample_rate, 16000))
    silence = bytes(MODEL_SAMPLE_RATE)
    return silence + pcm16k + silence


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> ExamLanguageModel:
    texts = package_texts(example_document())
    return build(texts, directory=str(tmp_path_factory.mktemp("lm")))


@pytest.fixture
def workers() -> Iterator[DecoderProcesses]:
    pool = DecoderProcesses(DEFAULT_DECODER_OPTIONS, 2)
    yield pool
    pool.close()


def _new_children(before: set[int]) -> list[multiprocessing.process.BaseProcess]:
    return [child for child in multiprocessing.active_children() if child.pid not in before]


def test_a_worker_decodes_what_the_decoder_in_this_process_does(
    workers: DecoderProcesses, answer: bytes, model: ExamLanguageModel
) -> None:
    """Fresh decoders on both sides (PocketSphinx's running cepstral mean depends on what a
    decoder heard before): the transcripts are equal, word times and confidences included, with
    the general model and with the exam's (which crosses to the worker by its file's path)."""
    here = DecoderPool(DEFAULT_DECODER_OPTIONS, 1)
    expected = [here.decode(answer), here.decode(answer, model)]
    there = DecoderProcesses(DEFAULT_DECODER_OPTIONS, 1)
    try:
        heard = [there.decode(answer), there.decode(answer, model)]
    finally:
        there.close()
    assert heard == expected
    assert heard[1] is not None and "hundred" in heard[1].text.split()


def test_the_warm_up_loads_every_worker_before_it_returns(workers: DecoderProcesses) -> None:
    before = {child.pid for child in multiprocessing.active_children()}
    assert workers.loaded() == 0
    workers.warm_up()
    assert workers.loaded() == 2
    assert len(_new_children(before)) == 2
    workers.warm_up()  # nothing missing: no new worker
    assert len(_new_children(before)) == 2


def test_a_worker_that_dies_is_replaced_and_the_segment_decoded(
    workers: DecoderProcesses, answer: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    before = {child.pid for child in multiprocessing.active_children()}
    workers.warm_up()
    for child in _new_children(before):  # both die idle: the next decode starts a new one
        _kill(child)
    heard = workers.decode(answer)
    assert heard is not None and "hundred" in heard.text.split()
    assert workers.loaded() == 1 and len(_new_children(before)) == 1
    # One dies while it decodes a long answer (~3 s of decoding): decoded again on a new one.
    with ThreadPoolExecutor(1) as thread:
        decoding = thread.submit(workers.decode, answer * 6)
        time.sleep(1.0)
        (busy,) = _new_children(before)
        _kill(busy)
        heard = decoding.result(timeout=120)
    assert heard is not None and heard.text.split().count("hundred") >= 3
    assert "decoding the segment again on a new worker" in caplog.text
    assert workers.loaded() == 1 and busy not in _new_children(before)


def _kill(child: multiprocessing.process.BaseProcess) -> None:
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)


def test_a_failing_decode_is_an_error_and_the_worker_keeps_serving(
    workers: DecoderProcesses, answer: bytes, model: ExamLanguageModel, tmp_path: Path
) -> None:
    gone = replace(model, name="gone", arpa_path=str(tmp_path / "missing.arpa"))
    with pytest.raises(DecoderWorkerError, match="decoding failed in pocketsphinx-"):
        workers.decode(answer, gone)
    assert workers.loaded() == 1
    heard = workers.decode(answer)
    assert heard is not None and "hundred" in heard.text.split()
    assert workers.loaded() == 1

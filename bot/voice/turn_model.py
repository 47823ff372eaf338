"""The acoustic end-of-turn model: Pipecat's smart-turn v3 (docs/voice.md "End of a turn").

smart-turn v3 is a small Whisper-encoder classifier (ONNX, CPU) that hears the last up to 8 s
of a speaker's audio and gives the probability that they have finished their turn, from
intonation and rhythm as well as words, in 23 languages. Its weights ship inside the
``pipecat-ai`` wheel (``pipecat/audio/turn/smart_turn/data``): nothing is downloaded.

One model serves every session of a process (:func:`shared_turn_model`): an ONNX session takes
~30 MB, an inference ~40 ms on one core, and inferences run one at a time on a thread of their
own (onnxruntime releases the GIL while it computes), so the event loop never waits on one.
``VIVA_VOICE_TURN_MODEL=off`` turns it off; the end-of-turn policy then judges by the words
alone (``ioa.runtime.answer_end``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Final

import numpy as np
import onnxruntime as ort
import soxr
from pipecat.audio.turn.smart_turn._whisper_features import compute_whisper_log_mel_features

logger = logging.getLogger(__name__)

MODEL_SAMPLE_RATE: Final = 16000
MODEL_SECONDS: Final = 8
"""The model hears the last 8 s of the turn (shorter audio is padded with silence before)."""
MODEL_FILE: Final = "smart-turn-v3.2-cpu.onnx"
MODEL_PACKAGE: Final = "pipecat.audio.turn.smart_turn.data"


class TurnModel:
    """smart-turn v3 loaded once (module docstring)."""

    def __init__(self, path: str | None = None) -> None:
        model_path = path or str(resources.files(MODEL_PACKAGE).joinpath(MODEL_FILE))
        options = ort.SessionOptions()
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session: ort.InferenceSession = ort.InferenceSession(model_path, sess_options=options)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smart-turn")

    def probability_finished(self, pcm: bytes, sample_rate: int) -> float:
        """The probability (0-1) that the speaker of ``pcm`` (16-bit mono, ending with the
        silence after their last word) has finished their turn. Blocking: see :meth:`judge`."""
        audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
        if sample_rate != MODEL_SAMPLE_RATE:
            audio = soxr.resample(audio, sample_rate, MODEL_SAMPLE_RATE, quality="HQ")
        size = MODEL_SECONDS * MODEL_SAMPLE_RATE
        audio = audio[-size:]
        if len(audio) < size:
            audio = np.pad(audio, (size - len(audio), 0))
        features = compute_whisper_log_mel_features(audio, do_normalize=True)
        outputs = self._session.run(None, {"input_features": np.expand_dims(features, 0)})
        first = np.asarray(outputs[0]).reshape(-1)
        return float(min(1.0, max(0.0, float(first[0]))))

    async def judge(self, pcm: bytes, sample_rate: int) -> float:
        """:meth:`probability_finished` on the model's own thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, self.probability_finished, pcm, sample_rate
        )


_shared: TurnModel | None = None
_shared_failed = False
_shared_lock = threading.Lock()


def shared_turn_model(enabled: bool = True) -> TurnModel | None:
    """The process's :class:`TurnModel`, loaded on first use; None when ``enabled`` is false or
    the model cannot be loaded (logged once: the policy then judges by the words alone)."""
    global _shared, _shared_failed
    if not enabled:
        return None
    with _shared_lock:
        if _shared is None and not _shared_failed:
            try:
                _shared = TurnModel()
            except Exception:
                _shared_failed = True
                logger.exception("the smart-turn model could not be loaded; judging by words")
        return _shared

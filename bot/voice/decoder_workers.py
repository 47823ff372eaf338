"""PocketSphinx decoding in worker processes, so the bot's process keeps its GIL (issue 15).

``pocketsphinx.Decoder.process_raw`` and ``end_utt`` hold the GIL for the whole decode (0.2 to
1 times the audio's length): run in a thread of the bot's process, they stalled its event loop
(Silero VAD, the turn timers, audio output, every other session on that loop) for seconds, 7.5 s
for a 13.8-s answer on a loaded machine. :class:`DecoderProcesses` keeps each decoder in a worker
process of its own (a :class:`bot.voice.sphinx_decoder.DecoderPool` of one): the caller's thread
sends the segment's PCM and the exam's language model (a file on disk, by path) down a pipe and
waits for the transcript with the GIL released.

* Workers are started with ``spawn``, never ``fork`` (the web and Celery processes are
  multi-threaded). A worker imports this module, :mod:`bot.voice.sphinx_decoder`, numpy and
  pocketsphinx, and, as ``spawn`` does, the parent's ``__main__`` script, which must therefore
  keep its entry point under ``if __name__ == "__main__"``.
* :meth:`DecoderProcesses.warm_up` starts every worker and returns once each has loaded its
  decoder (~1 s in parallel), so the first answer waits for none.
* A worker that dies (killed, out of memory) is replaced and the segment decoded again on a new
  one; a second loss raises :class:`DecoderWorkerError`, as does a worker that does not answer
  within :func:`decode_timeout` (it is killed and replaced on next use): an error, never a hang.
* A worker ends when its pipe closes (its parent died) and is terminated when its parent exits
  (a daemon process); it ignores SIGINT, which a terminal sends the whole process group.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import queue
import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Final

from bot.voice.sphinx_decoder import MODEL_SAMPLE_RATE, DecoderPool, OfflineTranscript

if TYPE_CHECKING:
    from bot.voice.exam_language_model import ExamLanguageModel

logger = logging.getLogger(__name__)

READY_TIMEOUT_SECS: Final = 120.0
"""How long a new worker may take to start and load its decoder (~1 s; more under load)."""


def decode_timeout(pcm16k_bytes: int) -> float:
    """Seconds to wait for the decode of that much 16 kHz 16-bit audio: a minute plus four times
    the audio's length (a decode takes 0.2 to 1 times it)."""
    return 60.0 + 4 * pcm16k_bytes / (2 * MODEL_SAMPLE_RATE)


class DecoderWorkerError(RuntimeError):
    """A decoder worker could not load its decoder, failed a decode, died twice or hung."""


class _WorkerLost(Exception):
    """The worker's pipe closed mid-request: the process died."""


def _serve(connection: Connection, options: dict[str, object]) -> None:
    """A worker's life: load one decoder, answer ``ready``, then decode each ``(pcm, model)``
    request into ``("ok", transcript)`` or ``("error", message)`` until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pool = DecoderPool(options, 1)
        pool.warm_up()
    except Exception as error:
        connection.send(("error", f"cannot load PocketSphinx: {error!r}"))
        return
    connection.send(("ready", None))
    while True:
        try:
            pcm, model = connection.recv()
        except EOFError:
            return
        try:
            reply: tuple[str, object] = ("ok", pool.decode(pcm, model))
        except Exception as error:
            reply = ("error", f"{type(error).__name__}: {error}")
        connection.send(reply)


class _Worker:
    """One worker process and the parent's end of its pipe (one request at a time)."""

    def __init__(self, options: Mapping[str, object], name: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, dict(options)), name=name, daemon=True
        )
        try:
            self.process.start()
        finally:
            child.close()

    @property
    def alive(self) -> bool:
        return not self._connection.closed and self.process.is_alive()

    def wait_ready(self) -> None:
        """Block until the worker has loaded its decoder; raises :class:`DecoderWorkerError`."""
        try:
            status, detail = self._reply(READY_TIMEOUT_SECS)
        except _WorkerLost as lost:
            raise DecoderWorkerError(f"{lost} while loading its decoder") from lost
        if status != "ready":
            self.stop()
            raise DecoderWorkerError(f"{self.process.name}: {detail}")

    def decode(self, pcm16k: bytes, model: ExamLanguageModel | None) -> OfflineTranscript | None:
        """The worker's transcript of ``pcm16k``; :class:`_WorkerLost` if it died meanwhile."""
        try:
            self._connection.send((pcm16k, model))
        except OSError as error:
            self.stop()
            raise _WorkerLost(self._obituary()) from error
        status, detail = self._reply(decode_timeout(len(pcm16k)))
        if status != "ok":
            raise DecoderWorkerError(f"decoding failed in {self.process.name}: {detail}")
        assert detail is None or isinstance(detail, OfflineTranscript)
        return detail

    def _reply(self, timeout: float) -> tuple[str, Any]:
        """The worker's next message (Any: unpickled); kills a worker silent for ``timeout``."""
        try:
            if not self._connection.poll(timeout):
                self.stop()
                raise DecoderWorkerError(
                    f"{self.process.name} gave no answer in {timeout:.0f} s and was killed"
                )
            status, detail = self._connection.recv()
        except (EOFError, OSError) as error:
            self.stop()
            raise _WorkerLost(self._obituary()) from error
        return str(status), detail

    def _obituary(self) -> str:
        return (
            f"decoder worker {self.process.name} (pid {self.process.pid}) exited "
            f"(code {self.process.exitcode})"
        )

    def stop(self) -> None:
        """Close the pipe and end the process (killed if it still runs)."""
        self._connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(10)


class DecoderProcesses:
    """PocketSphinx decoders in ``max_decoders`` worker processes, shared by every STT service of
    the process: at most that many segments are decoded at once, one per worker. Same interface
    as :class:`bot.voice.sphinx_decoder.DecoderPool`; workers start on :meth:`warm_up` or when
    a decode finds none idle."""

    def __init__(self, options: Mapping[str, object], max_decoders: int) -> None:
        self.options = dict(options)
        self.max_decoders = max(1, max_decoders)
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = 0  # workers started or starting
        self._ready = 0
        self._lock = threading.Lock()
        self._warming = threading.Lock()
        self._names = itertools.count(1)

    def loaded(self) -> int:
        """How many workers have a decoder loaded."""
        with self._lock:
            return self._ready

    def warm_up(self) -> None:
        """Start the missing workers and return when every one has loaded its decoder (blocking;
        ~1 s); raises :class:`DecoderWorkerError` if one cannot."""
        with self._warming:
            for worker in self._start(self._reserve(self.max_decoders)):
                self._idle.put(worker)

    def close(self) -> None:
        """End the idle workers (a decode under way keeps its own; later decodes start new
        ones). Workers also end with the process."""
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            self._drop(worker)

    def decode(
        self, pcm16k: bytes, model: ExamLanguageModel | None = None
    ) -> OfflineTranscript | None:
        """Decode one utterance of 16 kHz 16-bit mono PCM in a worker; ``None`` if no word was
        heard. ``model``: the exam's language model (:mod:`bot.voice.exam_language_model`).
        Blocks the calling thread (not the GIL) while all workers are busy and while decoding."""
        if len(pcm16k) < 2:
            return None
        try:
            return self._decode_once(pcm16k, model)
        except _WorkerLost as lost:
            logger.warning("%s; decoding the segment again on a new worker", lost)
        try:
            return self._decode_once(pcm16k, model)
        except _WorkerLost as lost:
            raise DecoderWorkerError(f"two decoder workers died on one segment: {lost}") from lost

    def _decode_once(
        self, pcm16k: bytes, model: ExamLanguageModel | None
    ) -> OfflineTranscript | None:
        with self._acquire() as worker:
            return worker.decode(pcm16k, model)

    @contextmanager
    def _acquire(self) -> Iterator[_Worker]:
        """An idle worker for the caller alone (a new one while fewer than ``max_decoders``
        run); a worker that died or hung is dropped afterwards, freeing its slot."""
        worker = self._next_worker()
        try:
            yield worker
        finally:
            if worker.alive:
                self._idle.put(worker)
            else:
                self._drop(worker)

    def _drop(self, worker: _Worker) -> None:
        worker.stop()
        with self._lock:
            self._slots -= 1
            self._ready -= 1

    def _next_worker(self) -> _Worker:
        """An idle live worker (one that died idle is dropped), else a new one in a free slot,
        else the first to come back."""
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                pass
            else:
                if worker.alive:
                    return worker
                self._drop(worker)
                continue
            if self._reserve(1):
                return self._start(1)[0]
            try:  # all slots taken: wait for one to come back (or be freed by a lost worker)
                worker = self._idle.get(timeout=1.0)
            except queue.Empty:
                continue
            if worker.alive:
                return worker
            self._drop(worker)

    def _reserve(self, wanted: int) -> int:
        """Take up to ``wanted`` free worker slots; how many were taken."""
        with self._lock:
            count = max(0, min(wanted, self.max_decoders - self._slots))
            self._slots += count
            return count

    def _start(self, count: int) -> list[_Worker]:
        """Start ``count`` workers in reserved slots, in parallel, and wait until each has loaded
        its decoder; on a failure the slots are given back, the others kept idle, and raises."""
        workers: list[_Worker] = []
        failure: Exception | None = None
        try:
            for _ in range(count):
                workers.append(_Worker(self.options, f"pocketsphinx-{next(self._names)}"))
        except Exception as error:  # e.g. out of processes: report it as the pool's error
            failure = error
        ready: list[_Worker] = []
        for worker in workers:
            try:
                worker.wait_ready()
                ready.append(worker)
            except DecoderWorkerError as error:
                failure = failure or error
        with self._lock:
            self._slots -= count - len(ready)
            self._ready += len(ready)
        if failure is None:
            return ready
        for worker in ready:
            self._idle.put(worker)
        raise DecoderWorkerError(f"cannot start a decoder worker: {failure}") from failure

"""The retrieval process's poller: identity, in its own worker thread.

Polls are scheduled by stream time (every `poll_interval_s`, by the scheduler); a poll is
skipped, never queued, when the previous one is still running (back-pressure: identity lags,
the dialog never waits). Each poll writes who is present to the conversation log, settles a
name waiting for its speaker, and refreshes the keys of a confirmed match.

A person seen/heard steadily but matched by nobody is enrolled inside the poll, by
retrieval's enroller (the consent gate, identity/consent_gate.py, wired in runtime/build.py).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from egomem.identity.types import Identification, IdentityStatus
from egomem.retrieval.process import RetrievalProcess
from egomem.runtime.conversation_log import SOMEONE, ConversationLog
from egomem.runtime.dialog_loop import ProcessTimes
from egomem.runtime.names import NameLearner
from egomem.runtime.privacy_turns import PrivacyTurns
from egomem.runtime.timeline import Timeline
from egomem.runtime.unsure import UnsureMemory

logger = logging.getLogger(__name__)


class IdentityPoller:
    def __init__(
        self,
        retrieval: RetrievalProcess,
        log: ConversationLog,
        names: NameLearner,
        timeline: Timeline,
        times: ProcessTimes,
        *,
        learn: Callable[[Identification], object] | None = None,
        privacy: PrivacyTurns | None = None,
        unsure: UnsureMemory | None = None,
    ) -> None:
        self.unsure = unsure  # told each poll's identification (what a denial is about)
        self.privacy = privacy  # privacy hook: told who face and voice say each poll found
        self.retrieval, self.log, self.names, self.timeline, self.times = retrieval, log, names, timeline, times
        # Key refresh after a confirmed match (the identity layer's `learn`); None: keys stay as enrolled.
        self.learn = learn
        self._queue: queue.Queue[float | None] = queue.Queue(maxsize=1)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="egomem-retrieval", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """No more polls: the thread ends after the one in progress (`join` waits for it)."""
        self._queue.put(None)

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def request(self, t: float, *, wait: bool) -> None:
        """A poll at stream time `t`; `wait`: return when it is done (lockstep)."""
        if wait:
            self._done.clear()
            self._queue.put(t)
            self._done.wait()
            return
        try:
            self._queue.put_nowait(t)  # busy: skip this poll rather than queue it
        except queue.Full:
            self.timeline.add(t, "warning", text="identity poll skipped: previous poll still running")

    def _loop(self) -> None:
        while True:
            t = self._queue.get()
            if t is None:
                return
            t0 = time.perf_counter()
            try:
                self.poll(t)
            except Exception:  # a failed poll must not kill the process; the next one retries
                logger.exception("identity poll failed")
            finally:
                self.times.retrieval += time.perf_counter() - t0
                self._done.set()

    def poll(self, t: float) -> None:
        ident = self.retrieval.poll_once()
        if self.unsure is not None:
            self.unsure.observed(ident)
        if self.privacy is not None:  # privacy hook: who face and voice say it is
            self.privacy.observed(ident)
        current = self.retrieval.current_user()
        self.log.present(t, current, sighting(ident, self.retrieval.seen_as()))
        self.names.settle(t, current)
        if self.learn is not None and ident.user_id is not None and ident.user_id == current:
            self.learn(ident)  # key refresh only from confirmed (debounced) matches


def sighting(ident: Identification, seen_as: str | None) -> str | None:
    """Who one poll saw, before any debounce: the user the tracker took the observation for (`seen_as`:
    the match, an unsure person's held id, the user just enrolled for a newcomer); SOMEONE for a person
    it could not place yet; None when nobody was observable. What a turn's owner is checked against
    (MemoryRounds._turn_user)."""
    if seen_as is not None:
        return seen_as
    return None if ident.status == IdentityStatus.UNKNOWN else SOMEONE

"""The retrieval process and its Python API for a dialog integration.

proc = RetrievalProcess(store, identifier, window, enroller=...)
proc.subscribe(lambda ev: model.refresh_kv(ev.level, ev.text))
proc.start()                   # polls every config.poll_interval_s in a thread
proc.current_user(); proc.level1_chunk()
proc.on_model_text(token)      # feeds the <retr> parser; runs Level-2 when a query completes
proc.retrieve(["colleague"], ["tennis"], k=5)
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from egomem.config import RetrievalConfig
from egomem.errors import EgomemError, InputError, NotFoundError
from egomem.identity.types import Identification, Identifier, IdentityStatus
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder, default_encoder
from egomem.retrieval.events import EventBus, Listener, MemChunkUpdated
from egomem.retrieval.hybrid import search_episodes, search_user_memories
from egomem.retrieval.polling import Enroller, MediaWindow, PollPolicy, UserTracker
from egomem.retrieval.profile import FactScorer, ProfileRenderer
from egomem.retrieval.query_parser import RetrParser, split_terms
from egomem.retrieval.social import CandidateIndex, candidates_for, rank_candidates, render_level2
from egomem.retrieval.tokens import TokenCounter
from egomem.schemas import Episode, Fact, MemChunk
from egomem.store.base import MemoryStore

log = logging.getLogger(__name__)


class RetrievalProcess:
    def __init__(
        self,
        store: MemoryStore,
        identifier: Identifier | None = None,
        window: MediaWindow | None = None,
        *,
        enroller: Enroller | None = None,
        config: RetrievalConfig | None = None,
        policy: PollPolicy | None = None,
        encoder: TextEncoder | None = None,
        tokens: TokenCounter | None = None,
        scorer: FactScorer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.identifier = identifier
        self.window = window
        self.config = config or RetrievalConfig()
        self.clock = clock
        self.encoder = encoder or default_encoder()
        self.tokens: TokenCounter = tokens or self.encoder
        self.cache = EmbeddingCache(self.encoder)
        self.index = CandidateIndex(self.cache)
        self.renderer = ProfileRenderer(store, self.tokens, budget=self.config.level1_budget_tokens, scorer=scorer)
        self.tracker = UserTracker(policy or PollPolicy(), enroller)
        self.parser = RetrParser()
        self.events = EventBus()
        self._lock = threading.RLock()  # guards the current user and both chunks
        self._level1 = MemChunk(level=1, at=clock())
        self._level2 = MemChunk(level=2, at=clock())
        # Turns attributed by their own voice, (time, user id): people heard, for "Also here".
        self._speakers: deque[tuple[float, str]] = deque(maxlen=256)
        self._others: tuple[str, ...] = ()  # the other people named in the current Level-1 chunk
        # The person whose turn the dialog model is answering (None: the current user): a
        # `<retr>` query searches their people, not the Level-1 user's.
        self._addressee: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the API -------------------------------------------------------------------------
    def current_user(self) -> str | None:
        with self._lock:
            return self.tracker.current

    def seen_as(self) -> str | None:
        """Who the latest poll's observation was taken for, before any debounce (UserTracker.seen_as)."""
        with self._lock:
            return self.tracker.seen_as

    def others_present(self, at: float | None = None) -> tuple[str, ...]:
        """Other people than the current user heard within `presence_window_s` of `at` (turns
        attributed to them by voice), in order of appearance. Polls do not add anyone: a poll
        decides one person, and two polls in a row for another person make them current."""
        at = self.clock() if at is None else at
        since = at - self.config.presence_window_s
        with self._lock:
            heard = [u for t, u in self._speakers if since <= t <= at]
            return tuple(u for u in dict.fromkeys(heard) if u != self.tracker.current)

    def heard_speaker(self, user_id: str, at: float | None = None) -> None:
        """A user turn attributed to `user_id` by its voice: they are present and the dialog
        model is answering them. Level 1 names them when they are not the current user."""
        at = self.clock() if at is None else at
        with self._lock:
            self._speakers.append((at, user_id))
            self._addressee = user_id
        self._refresh_others(at)

    def answering(self, user_id: str | None) -> None:
        """The dialog model now answers `user_id` (None: the current user)."""
        with self._lock:
            self._addressee = user_id

    def level1_chunk(self) -> MemChunk:
        with self._lock:
            return self._level1

    def level2_chunk(self) -> MemChunk:
        with self._lock:
            return self._level2

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every MemChunkUpdated; returns an unsubscribe function."""
        return self.events.subscribe(listener)

    def on_model_text(self, token: str) -> list[MemChunk]:
        """Feed the dialog model's text channel; returns the Level-2 chunks it triggered."""
        return [self.retrieve(q.relation_words, q.keywords) for q in self.parser.feed(token)]

    def retrieve(self, relation_words: Sequence[str], keywords: Sequence[str], k: int | None = None) -> MemChunk:
        """Level-2 retrieval for the current user. Fills and emits the Level-2 chunk; an
        empty chunk (not emitted) when there is no user, no query, or no match."""
        rel = split_terms(",".join(relation_words)) if relation_words else []
        kws = split_terms(",".join(keywords)) if keywords else []
        k = self.config.top_k if k is None else k
        if k < 0:
            raise InputError(f"k must be >= 0, got {k}")
        with self._lock:
            user = self._addressee or self.tracker.current
            current = self.tracker.current
        at = self.clock()
        if user is None or not (rel or kws):
            return MemChunk(level=2, user_id=user, at=at)
        # Who else can hear the answer: sensitive facts stay out while anyone does.
        present = [p for p in (*self.others_present(at), current) if p is not None and p != user]
        cands = candidates_for(self.store, user, others_present=present)
        hits = rank_candidates(cands, rel, kws, self.index, k)
        chunk = render_level2(hits, self.tokens, self.config.level2_budget_tokens, user)
        chunk = chunk.model_copy(update={"at": at})
        with self._lock:
            if (self._addressee or self.tracker.current) != user:
                # The person changed while we searched: these are the previous person's people.
                return MemChunk(level=2, user_id=self.tracker.current, at=at)
            self._level2 = chunk
        used = [c.fact_id for c, _ in hits if c.fact_id]
        if used:
            try:
                self.store.mark_facts_used(used, at)
            except EgomemError:
                log.warning("could not record fact use", exc_info=True)
        if chunk.text:
            self.events.emit(MemChunkUpdated.of(chunk))
        return chunk

    def search(self, query: str, k: int = 5) -> list[tuple[Fact, float]]:
        """Hybrid (BM25 + dense) search over the current user's own memories."""
        user = self.current_user()
        return [] if user is None else search_user_memories(self.store, user, query, self.cache, k)

    def search_episodes(self, query: str, k: int = 5) -> list[tuple[Episode, float]]:
        return search_episodes(self.store, query, self.cache, k, user_id=self.current_user())

    # -- polling -------------------------------------------------------------------------
    def poll_once(self) -> Identification:
        """One poll: observe, identify, debounce, and on a user change emit Level 1."""
        at = self.clock()
        ident = Identification(IdentityStatus.UNKNOWN)
        if self.identifier is not None:
            audio = self.window.last_audio(self.config.window_s) if self.window else None
            frames = list(self.window.latest_frames(self.tracker.policy.frames_per_poll)) if self.window else []
            try:
                ident = self.identifier.identify(audio, frames)
            except EgomemError as exc:  # unusable media this poll: nobody observed
                log.info("identification failed this poll: %s", exc)
        self.observe(ident, at)
        return ident

    def observe(self, ident: Identification, at: float | None = None) -> None:
        """Apply one identification (what poll_once does after identifying)."""
        at = self.clock() if at is None else at
        with self._lock:
            changed = self.tracker.update(ident)
            if changed != UserTracker.NO_CHANGE:
                others = self.others_present(at)
                level1 = self.renderer.render(changed, at=at, others=others)
                self._level1, self._others, self._addressee = level1, others, None
                stale2 = self._level2.text != ""
                self._level2 = MemChunk(level=2, user_id=changed, at=at)
        if changed == UserTracker.NO_CHANGE:
            self._refresh_others(at)
            return
        if changed is not None:
            try:
                self.store.touch_user(changed, at)
            except NotFoundError:
                pass  # a visitor held in memory only (identity.consent_gate): nothing of them is stored
            except EgomemError:
                log.warning("could not record last_seen", exc_info=True)
        self.events.emit(MemChunkUpdated.of(level1))
        if stale2:
            self.events.emit(MemChunkUpdated.of(self._level2))

    def settled(self, person: str, user: str) -> None:
        """An unsure `person` was settled as `user` (identity.consent_gate.resolve_unsure): if they are
        the current user, they are now under that id, and Level 1 shows that user's memory."""
        with self._lock:
            changed = self.tracker.settled(person, user)
        if changed:
            self.refresh_level1()

    def _refresh_others(self, at: float) -> None:
        """Re-render Level 1 when the other people present are not those it names."""
        if self.others_present(at) != self._others:
            self.refresh_level1()

    def refresh_level1(self) -> bool:
        """Re-render the current user's profile (after memory writes, or when others come
        or go); emits only if it changed."""
        at = self.clock()
        others = self.others_present(at)
        with self._lock:
            self._others = others
            chunk = self.renderer.render(self.tracker.current, at=at, others=others)
            if chunk.text == self._level1.text:
                return False
            self._level1 = chunk
        self.events.emit(MemChunkUpdated.of(chunk))
        return True

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="egomem-retrieval-poll", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        interval = self.config.poll_interval_s
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:  # keep polling: one failure must not end identity tracking
                log.exception("poll failed")
            next_at += interval
            self._stop.wait(max(0.0, next_at - time.monotonic()))

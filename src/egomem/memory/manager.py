"""Turning one finished session into memory: extract, identify the user, update, record.

`MemoryManager.process` is the whole of it. Models run before the write transaction;
the user, keys, facts, relations and the episode are then written in one transaction.
A session that cannot be processed (nothing said, backend down, invalid answer) is
recorded as an episode with status `failed:<reason>` and its transcripts, so it can be
retried with `retry`, and memory is not touched.

A conversation of several people (a written transcript, a diarized recording) is stored
as one episode holding every speaker's turns, then `process(..., keep_episode=True)` runs
once per speaker on that speaker's turns: the episode is kept as stored, and what each
speaker said becomes their memory, linked to it (egomem_eval/conversation_memory.py).

A session whose speaker identity is UNSURE about (an Identification with status UNSURE, its
user_id the candidate) is written to the candidate only when the speaker says the candidate's
name; otherwise it is held (`held:identity unsure`: its transcripts, no participant, no memory
written) with the name said, if any, for the runtime to settle (runtime/unsure.py), which then
hands it over again for the person it was (`held_session`) or drops it (`drop_held`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from egomem.encoders import DLIB_FACE, RESEMBLYZER_VOICE
from egomem.errors import InputError, NotFoundError
from egomem.identity.types import Identification, IdentityStatus, linked_keys
from egomem.llm.base import LLMError, LLMProvider
from egomem.memory import held
from egomem.memory.about_person import Checked
from egomem.memory.config import MemoryConfig
from egomem.memory.extractor import ExtractResult, MemoryExtractor
from egomem.memory.held import HELD
from egomem.memory.items import ExtractedItem, SessionText, Turn, UpdatePlan
from egomem.memory.provenance import provenance
from egomem.memory.social import adopt_name, link_relation, same_name
from egomem.memory.truecase import truecase
from egomem.memory.updater import Applied, Encoder, MemoryUpdater
from egomem.privacy.sensitivity import asks_privacy
from egomem.schemas import Episode, Modality, Provenance
from egomem.store.base import MemoryStore

log = logging.getLogger(__name__)

_HOLD = "\x00hold"  # _speaker's answer for a session to hold

# The encoders whose keys a confirmed session adds (the ones perception uses).
FACE_MODEL = DLIB_FACE.name
VOICE_MODEL = RESEMBLYZER_VOICE.name


@dataclass
class SessionOutcome:
    episode_id: str
    ok: bool
    user_id: str | None = None
    reason: str = ""
    items: list[ExtractedItem] = field(default_factory=list)
    applied: Applied = field(default_factory=Applied)
    notes: list[str] = field(default_factory=list)
    # Items the post-check rewrote or dropped (about the assistant; a wish said as a liking).
    checked: list[Checked] = field(default_factory=list)
    held: bool = False  # identity unsure: stored as a held episode, nothing written to anyone
    held_name: str | None = None  # the name the held session's speaker gave, if any


class MemoryManager:
    def __init__(
        self,
        store: MemoryStore,
        provider: LLMProvider,
        encoder: Encoder,
        config: MemoryConfig | None = None,
        *,
        fallback: LLMProvider | None = None,
        update_provider: LLMProvider | None = None,
    ) -> None:
        """`fallback` (the rules backend, typically) answers a session the provider could
        not: unreachable, not JSON, cut off, wrong shape, an invalid plan. The episode
        records why (`done:fallback(<reason>)`). Without one, the session is recorded as
        `failed:<reason>` for `retry`."""
        self.store = store
        self.config = config or MemoryConfig()
        # The model with the rules as its supplement: what memory holds of a session in the end.
        self.combined = MemoryExtractor(
            provider,
            supplement=fallback,
            schema=self.config.extract_schema,
            gate=self.config.extract_gate,
            piece_words=self.config.model_piece_words,
        )
        # memory.model_pass = "after": the rules write the session (`process`) and the model's own items
        # follow in a second pass (`refine`); "inline" (or no model): one extraction before the one write.
        after = self.config.model_pass == "after" and fallback is not None and provider.name != fallback.name
        self.refiner = (
            MemoryExtractor(provider, schema=self.config.extract_schema, piece_words=self.config.model_piece_words)
            if after
            else None
        )
        # The update agent may be another backend than the extractor (config memory.update_agent).
        self.updater = MemoryUpdater(store, update_provider or provider, encoder, self.config)
        self._fallback = (
            (MemoryExtractor(fallback), MemoryUpdater(store, fallback, encoder, self.config)) if fallback else None
        )
        # Who makes the first write: with a model pass after it, the rules alone (no model call at all).
        self.extractor, self.first_updater = (
            self._fallback if after and self._fallback is not None else (self.combined, self.updater)
        )

    def process(
        self,
        session: SessionText,
        identification: Identification | None = None,
        *,
        keep_episode: bool = False,
        fall_back: Callable[[LLMError], bool] | None = None,
        commit_with: Callable[[SessionOutcome], None] | None = None,
        then_refine: bool = True,
    ) -> SessionOutcome:
        """Memory from one session. With `keep_episode`, the episode `session.episode_id` is
        already stored with all its turns (a conversation of several people; NotFoundError if
        not): it is left as it is, and a session that cannot be processed changes nothing.

        With memory.model_pass = "after", the rules write first and the model's pass (`refine`)
        follows here, its outcome merged into the one returned; the queue passes `then_refine=False`
        and runs that pass as a job of its own.

        For the memory-writing queue (memory/jobs.py): when `fall_back(error)` says no, a model
        that fails raises its LLMError and nothing is written (the job is retried later); the
        `commit_with` callback runs inside the transaction that writes the outcome (the job's
        completion), so the memory and the job commit together or not at all."""
        known = identification.user_id if identification and identification.status == IdentityStatus.KNOWN else None
        if keep_episode:
            self.store.get_episode(session.episode_id)
            if known is None:
                raise InputError("keep_episode needs the speaker identified (a known user)")

        commit = partial(self._commit, commit_with=commit_with)
        failed = partial(self._failed, session, known, keep_episode=keep_episode)
        if not session.user_turns():
            return commit(partial(failed, "empty session"))
        session = self._truecased(session)
        status = "done"
        try:
            extracted, user_id, plan = self._decide(self.extractor, self.first_updater, session, known, identification)
        except LLMError as exc:
            if fall_back is not None and not fall_back(exc):
                raise
            if self._fallback is None:
                return commit(partial(failed, exc.reason, exc.detail))
            log.warning("session %s: %s; falling back to %s", session.episode_id, exc, self._fallback[0].provider.name)
            status = f"done:fallback({exc.reason})"
            try:
                extracted, user_id, plan = self._decide(*self._fallback, session, known, identification)
            except LLMError as exc2:
                return commit(partial(failed, exc2.reason, exc2.detail))
        if user_id == _HOLD:
            name = next((it.text for it in extracted.items if it.kind == "name"), None)
            return commit(partial(self._held, session, identification, name))
        write = partial(self._write, session, identification, user_id, extracted, plan, status)
        first = commit(partial(write, keep_episode=keep_episode))
        if not then_refine or self.refiner is None or not first.ok or first.user_id is None:
            return first
        return merged(first, self.refine(session, first.user_id))

    def refine(
        self,
        session: SessionText,
        user_id: str,
        *,
        fall_back: Callable[[LLMError], bool] | None = None,
        commit_with: Callable[[SessionOutcome], None] | None = None,
    ) -> SessionOutcome:
        """The model's pass over a session the rules already wrote for `user_id` (memory.model_pass =
        "after"): its items go through the update agent against the memory as it is now, linked to the
        same episode. What the rules wrote stands: the episode, its summary and the user's name (the
        model may add a name only to a user who has none). Nothing is written when the episode is gone
        or no longer this user's ("forget me", a merge or split meanwhile): the outcome says why. A model
        that fails raises its LLMError unless `fall_back(error)` says this was the last attempt; then
        nothing is written and the outcome records it (the rules' memory stands)."""

        def commit(outcome: SessionOutcome, write: Callable[[], SessionOutcome] | None = None) -> SessionOutcome:
            return self._commit(write or (lambda: outcome), commit_with=commit_with)

        episode_id = session.episode_id
        if self.refiner is None:
            return commit(SessionOutcome(episode_id, True, user_id, notes=["no model pass configured"]))
        try:
            episode = self.store.get_episode(episode_id)
            user = self.store.get_user(user_id)
        except NotFoundError as exc:
            return commit(SessionOutcome(episode_id, True, None, notes=[f"model pass skipped: {exc}"]))
        if user_id not in episode.participants or not episode.status.startswith("done"):
            why = f"model pass skipped: the episode is {episode.status!r} with {episode.participants}"
            return commit(SessionOutcome(episode_id, True, None, notes=[why]))
        session = self._truecased(session)
        try:
            extracted = self.refiner.extract(session)
        except LLMError as exc:
            if fall_back is not None and not fall_back(exc):
                raise
            status, why = f"done:fallback({exc.reason})", f"model pass: {exc}"
            failed = SessionOutcome(
                episode_id, True, user_id, notes=[status, "model pass failed: the rules' memory stands"]
            )

            def record() -> SessionOutcome:  # the episode says why it holds only the rules' memory
                self.store.update_episode(episode.model_copy(update={"status": status}), cause=why)
                return failed

            return commit(failed, record)
        items = [
            it for it in extracted.items if it.kind != "summary" and not (it.kind == "name" and user.name is not None)
        ]
        extracted = replace(extracted, items=items)
        plan = self.updater.plan(user_id, user.name, items)
        ident = Identification(status=IdentityStatus.KNOWN, user_id=user_id)
        write = partial(self._write, session, ident, user_id, extracted, plan, "done", keep_episode=True)
        return commit(SessionOutcome(episode_id, True, user_id), write)

    def _commit(
        self, write: Callable[[], SessionOutcome], *, commit_with: Callable[[SessionOutcome], None] | None
    ) -> SessionOutcome:
        """`write()` in one transaction with `commit_with(outcome)` (the queue's job completion): both or neither."""
        with self.store.transaction():
            outcome = write()
            if commit_with is not None:
                commit_with(outcome)
            return outcome

    def adopt_name(self, user_id: str, name: str, *, cause: str) -> str:
        """A name the user said while the session is still open ("I'm Anna"), written now so the
        dialog knows it at once: memory's one write path for it, in one transaction (a placeholder
        of that name is merged, as `process` does). Returns what was done, for the report."""
        with self.store.transaction():
            return adopt_name(self.store, user_id, name, cause=cause)

    def extract(self, session: SessionText) -> tuple[ExtractResult, str]:
        """What `process` would extract from a session, with the same fallback, writing nothing:
        the items and the episode status it would record ("done" or "done:fallback(<reason>)").
        Raises LLMError when neither backend answers."""
        session = self._truecased(session)
        try:
            return self.combined.extract(session), "done"
        except LLMError as exc:
            if self._fallback is None:
                raise
            return self._fallback[0].extract(session), f"done:fallback({exc.reason})"

    def _decide(
        self,
        extractor: MemoryExtractor,
        updater: MemoryUpdater,
        session: SessionText,
        known: str | None,
        identification: Identification | None,
    ) -> tuple[ExtractResult, str | None, UpdatePlan]:
        """Extract and plan with one backend (reads the store, writes nothing)."""
        extracted = extractor.extract(session)
        name = next((it.text for it in extracted.items if it.kind == "name"), None)
        user_id = self._speaker(known, name, identification)
        if user_id == _HOLD:  # held: nothing is planned for anyone
            return extracted, user_id, UpdatePlan()
        user_name = self.store.get_user(user_id).name if user_id else name
        return extracted, user_id, updater.plan(user_id, user_name, extracted.items)

    def retry(self, episode_id: str, identification: Identification | None = None) -> SessionOutcome:
        """Process a failed episode again from its stored transcripts (one turn per line)."""
        ep = self.store.get_episode(episode_id)
        if identification is None and ep.participants:
            identification = Identification(status=IdentityStatus.KNOWN, user_id=ep.participants[0])
        return self.process(self.held_session(episode_id), identification)

    def held_session(self, episode_id: str) -> SessionText:
        """A stored episode's session again, from its transcripts (one turn per line), to process it
        for the person it turned out to be (a held one) or once more (a failed one)."""
        ep = self.store.get_episode(episode_id)
        turns = [Turn(speaker="user", text=t) for t in ep.user_transcript.splitlines() if t.strip()]
        turns += [Turn(speaker="assistant", text=t) for t in ep.assistant_transcript.splitlines() if t.strip()]
        return SessionText.dated(ep.start, ep.end, turns, episode_id=ep.id)

    def drop_held(self, episode_id: str, why: str) -> bool:
        """A held session whose speaker was never settled: its transcripts are deleted and the episode
        records why (the record stays). False when the episode is not held (settled meanwhile)."""
        return held.drop(self.store, episode_id, why)

    # -- internals -------------------------------------------------------------------
    def _truecased(self, session: SessionText) -> SessionText:
        """Restore case in the user's (ASR) turns for the names memory knows."""
        names = [u.name for u in self.store.list_users() if u.name]
        turns = [
            t.model_copy(update={"text": truecase(t.text, names)}) if t.speaker == "user" else t for t in session.turns
        ]
        return session.model_copy(update={"turns": turns, "known_names": names})

    def _speaker(self, known: str | None, name: str | None, ident: Identification | None) -> str | None:
        """Whose memory the session is. A self-introduction is identity evidence: the face/voice match
        (`known`) stands unless the speaker gives a name other than the matched user's ("I'm Sam" from
        someone matched as Alex). Then the session is another person's: the enrolled user of that name
        if there is exactly one, else a new person. Why not keep the match: a wrong match writes one
        person's life onto another (a merge), while a wrong split costs a name asked again and can be
        merged back (`egomem users merge`, undoable)."""
        if ident is not None and ident.status == IdentityStatus.UNSURE:
            # Only the candidate's own name settles it here; anything else is the runtime's to settle.
            said = None if ident.user_id is None or name is None else self.store.get_user(ident.user_id).name
            return ident.user_id if said is not None and name is not None and same_name(said, name) else _HOLD
        if known is None:
            return self._user_by_name(name, ident)
        said = None if name is None else self.store.get_user(known).name
        if name is None or said is None or same_name(said, name):
            return known
        others = [u for u in self.store.find_users_by_name(name) if not u.placeholder and u.id != known]
        log.warning("a speaker matched as %s introduced themselves as %s: not %s's session", said, name, said)
        return others[0].id if len(others) == 1 else None

    def _user_by_name(self, name: str | None, ident: Identification | None) -> str | None:
        """Without a face/voice match, a text-only session whose user says the name of exactly
        one real user is theirs; a new face or voice is always a new person."""
        if name is None or (ident is not None and ident.status == IdentityStatus.NEW):
            return None
        real = [u for u in self.store.find_users_by_name(name) if not u.placeholder]
        return real[0].id if len(real) == 1 else None

    def _write(
        self,
        session: SessionText,
        ident: Identification | None,
        user_id: str | None,
        extracted: ExtractResult,
        plan: UpdatePlan,
        status: str = "done",
        *,
        keep_episode: bool = False,
    ) -> SessionOutcome:
        cause = f"session {session.episode_id}"
        # What the post-check refused first: it is what a reader of the episode's log looks for.
        notes = [
            f"dropped '{c.item.text}': {c.why}"
            if c.replaced_by is None
            else f"rewrote '{c.item.text}' as '{c.replaced_by.text}': {c.why}"
            for c in extracted.checked
        ]
        notes += [f"dropped '{it.text}': {why}" for it, why in extracted.dropped]
        if status != "done":
            notes.append(status)
        if user_id is None:
            user_id = self.store.create_user(cause=f"{cause}: new person").id
            notes.append("new user")
            face, voice = linked_keys(ident.face, ident.voice) if ident is not None else (None, None)
            if face is not None:
                self.store.add_key(user_id, Modality.FACE, face.vector, FACE_MODEL, cause=cause)
            if voice is not None:
                self.store.add_key(user_id, Modality.VOICE, voice.vector, VOICE_MODEL, cause=cause)
        self.store.touch_user(user_id, session.end)
        summary = next((it.text for it in extracted.items if it.kind == "summary"), "")
        episode = self._episode(session, [user_id], status, summary)
        # What the checks refused is logged with the episode, so a reader sees why.
        ep_cause = "; ".join([cause, *notes[:10]])[:1000]
        if keep_episode:
            pass  # stored with every speaker's turns by the caller; this speaker's memory links to it
        elif self._exists(session.episode_id):
            self.store.update_episode(episode, cause=ep_cause)
        else:
            self.store.add_episode(episode, cause=ep_cause)
        for it in extracted.items:
            if it.kind == "name":
                notes.append(adopt_name(self.store, user_id, it.text, cause=cause))

        # Each item keeps the turns it was said in and the identity decision behind this user (a split moves by it).
        def origin(source_text: str) -> Provenance:
            return provenance(session, ident, source_text)

        # "Keep that between us" anywhere in the person's turns: the session's facts are private.
        private = any(t.speaker == "user" and asks_privacy(t.text) for t in session.turns)
        applied = self.updater.apply(
            user_id,
            extracted.items,
            plan,
            episode_id=session.episode_id,
            at=session.start,
            cause=cause,
            origin=origin,
            private=private,
        )
        for it in extracted.items:
            if it.kind == "relation":
                rel = link_relation(
                    self.store,
                    user_id,
                    it,
                    episode_id=session.episode_id,
                    at=session.start,
                    cause=cause,
                    origin=origin(it.source_text),
                )
                if rel is not None:
                    applied.ops.append(("ADD", rel.id, it.text))
        return SessionOutcome(session.episode_id, True, user_id, "", extracted.items, applied, notes, extracted.checked)

    def _held(self, session: SessionText, ident: Identification | None, name: str | None) -> SessionOutcome:
        """Store an unsure speaker's session as held: its transcripts only, nobody's memory."""
        candidate = None if ident is None else ident.user_id
        llr = "" if ident is None or ident.llr is None else f", fused LLR {ident.llr:.2f}"
        why = f"identity unsure (candidate {candidate}{llr})" + (f"; said the name {name}" if name else "")
        episode = self._episode(session, [], HELD)
        if self._exists(session.episode_id):
            self.store.update_episode(episode, cause=f"session {session.episode_id}: held: {why}")
        else:
            self.store.add_episode(episode, cause=f"session {session.episode_id}: held: {why}")
        return SessionOutcome(session.episode_id, True, None, "", notes=[f"held: {why}"], held=True, held_name=name)

    def _exists(self, episode_id: str) -> bool:
        try:
            self.store.get_episode(episode_id)
        except NotFoundError:
            return False
        return True

    def _episode(self, session: SessionText, participants: list[str], status: str, summary: str = "") -> Episode:
        return Episode(
            id=session.episode_id,
            start=session.start,
            end=session.end,
            participants=participants,
            user_transcript="\n".join(t.text.strip() for t in session.turns if t.speaker == "user" and t.text.strip()),
            assistant_transcript="\n".join(
                t.text.strip() for t in session.turns if t.speaker == "assistant" and t.text.strip()
            ),
            summary=summary,
            status=status,
        )

    def _failed(
        self, session: SessionText, user_id: str | None, reason: str, detail: str = "", *, keep_episode: bool = False
    ) -> SessionOutcome:
        if keep_episode:  # the stored conversation stays as it is; nothing of this speaker is written
            return SessionOutcome(session.episode_id, False, user_id, reason, notes=[detail] if detail else [])
        episode = self._episode(session, [user_id] if user_id else [], f"failed:{reason}")
        cause = f"session {session.episode_id}: failed: {reason}"
        if self._exists(session.episode_id):
            self.store.update_episode(episode, cause=cause)
        else:
            self.store.add_episode(episode, cause=cause)
        return SessionOutcome(session.episode_id, False, user_id, reason, notes=[detail] if detail else [])


def merged(first: SessionOutcome, second: SessionOutcome) -> SessionOutcome:
    """A session's first write with the model's pass that followed it, as one outcome."""
    return replace(
        first,
        items=[*first.items, *second.items],
        applied=Applied(ops=[*first.applied.ops, *second.applied.ops]),
        notes=[*first.notes, *(f"model pass: {n}" for n in second.notes)],
        checked=[*first.checked, *second.checked],
    )

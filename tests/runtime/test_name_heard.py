"""A name said during a session goes to the person the polls saw say it (runtime/names.py), judged by
each poll's own sighting in the conversation log, not by the debounced current user."""

from __future__ import annotations

from typing import Any

from egomem.runtime.conversation_log import SOMEONE, ConversationLog
from egomem.runtime.names import NameLearner
from egomem.runtime.timeline import Timeline
from egomem.store.sqlite import SQLiteStore

POLL_S = 2.0


class Manager:
    """Plumbing mock of MemoryManager.adopt_name: records who was named what."""

    def __init__(self) -> None:
        self.named: list[tuple[str, str]] = []

    def adopt_name(self, user: str, name: str, *, cause: str) -> str:
        self.named.append((user, name))
        return "added"


class Retrieval:
    """Plumbing mock of RetrievalProcess: a fixed current user."""

    def __init__(self, current: str | None) -> None:
        self.current = current

    def current_user(self) -> str | None:
        return self.current

    def refresh_level1(self) -> None:
        pass


class Unsure:
    """Plumbing mock of UnsureMemory: one person held unsure; the names they give are recorded."""

    def __init__(self, person: str) -> None:
        self.person = person
        self.names: list[tuple[str, str]] = []

    def is_unsure(self, user: str | None) -> bool:
        return user == self.person

    def named(self, user: str, name: str, t: float) -> None:
        self.names.append((user, name))

    def denied(self, *args: Any) -> None:
        return None


def _learner(
    store: SQLiteStore, current: str | None, polls: list[tuple[float, str | None]], unsure: Unsure | None = None
) -> tuple[NameLearner, Manager]:
    log = ConversationLog()
    for t, seen in polls:
        log.present(t, current, seen)
    manager = Manager()
    learner = NameLearner(
        store,
        manager,  # type: ignore[arg-type]
        Retrieval(current),  # type: ignore[arg-type]
        Timeline(),
        log,
        poll_interval_s=POLL_S,
        unsure=unsure,  # type: ignore[arg-type]
    )
    return learner, manager


def test_a_name_goes_to_the_current_user_when_the_polls_during_the_turn_saw_them(store: SQLiteStore) -> None:
    u = store.create_user().id
    learner, manager = _learner(store, u, [(10.0, u), (12.0, u)])
    learner.heard("Hi, I'm Anna.", 10.5, 12.5)
    assert manager.named == [(u, "Anna")]


def test_a_name_said_while_the_polls_saw_someone_else_waits_for_them(store: SQLiteStore) -> None:
    u, v = store.create_user().id, store.create_user().id
    # u is still current (debounced) but the poll during the turn saw v, who just walked in.
    learner, manager = _learner(store, u, [(10.0, u), (12.0, v)])
    learner.heard("Hi, I'm Anna.", 11.0, 12.5)
    assert manager.named == []
    learner.settle(14.0, v)  # v becomes current: the name is theirs
    assert manager.named == [(v, "Anna")]


def test_a_name_said_while_a_poll_saw_an_unplaced_person_waits(store: SQLiteStore) -> None:
    u = store.create_user().id
    learner, manager = _learner(store, u, [(10.0, u), (12.0, SOMEONE)])
    learner.heard("Hi, I'm Anna.", 11.0, 12.5)
    assert manager.named == []
    learner.settle(20.0, u)  # never anyone else: dropped after the wait, never written onto u
    learner.settle(22.0, "someone-new")
    assert manager.named == []


def test_an_unsure_persons_name_settles_who_they_are(store: SQLiteStore) -> None:
    held = store.create_user().id
    unsure = Unsure(held)
    # Before they were held the polls saw someone unplaced; once held, their own id.
    learner, manager = _learner(store, held, [(10.0, SOMEONE), (12.0, held)], unsure=unsure)
    learner.heard("Hi, I'm Anna.", 10.5, 12.5)
    assert manager.named == [] and unsure.names == [(held, "Anna")]


def test_an_unsure_persons_name_waits_when_a_poll_saw_someone_known(store: SQLiteStore) -> None:
    held, other = store.create_user().id, store.create_user().id
    unsure = Unsure(held)
    learner, manager = _learner(store, held, [(10.0, held), (12.0, other)], unsure=unsure)
    learner.heard("Hi, I'm Anna.", 10.5, 12.5)
    assert manager.named == [] and unsure.names == []

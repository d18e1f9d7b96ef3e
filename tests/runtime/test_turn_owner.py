"""Whose memory a session's turns go to (runtime/memory_rounds.py `_finish_session`): a turn its voice
did not move belongs to the person identity saw when it was said, not to the session's majority user.
A session can span two visits (the next person comes within the trigger's gap); writing the second
visitor's turns onto the first is a merge, the worst identity error.

The session is driven directly: presence polls and heard turns go into the agent's conversation log
as the identity poller and the dialog loop put them there. Plumbing mock, named as such: the scripted
ASR of test_session_close (never called here). The rounds, the rules extractor and the store are the
product's."""

from __future__ import annotations

from tests.runtime.test_session_close import ScriptedASR, agent_over_mocks

from egomem.runtime.conversation_log import SOMEONE, UNSURE_SPEAKER, Heard
from egomem.runtime.memory_rounds import turn_owner
from egomem.store.sqlite import SQLiteStore


def _facts(store: SQLiteStore, user_id: str) -> list[str]:
    return sorted(f.text.lower() for f in store.list_facts(user_id) if f.kind != "summary")


def test_a_session_spanning_two_visits_gives_each_visitor_their_own_turns(store: SQLiteStore) -> None:
    agent = agent_over_mocks(store, ScriptedASR(), lambda stream: None)
    oscar, robert = store.create_user("Oscar").id, store.create_user("Robert").id
    log = agent.memory.log
    # Oscar is seen from 2 s to 30 s, nobody at 32 s, Robert from 36 s (confirmed a poll or two after
    # he came in, so his first turn ends before the first poll that sees him).
    for t in range(2, 31, 2):
        log.present(float(t), oscar)
    log.present(32.0, None)
    log.present(34.0, oscar)  # identity still says the last person: not confirmed yet
    for t in range(36, 61, 2):
        log.present(float(t), robert)
    log.heard(Heard(5.0, 8.0, "I live in Manchester.", None))
    log.heard(Heard(12.0, 15.0, "I can't stand cucumber.", None))
    log.heard(Heard(33.0, 35.5, "I live in Portland.", None))
    log.heard(Heard(40.0, 43.0, "I work as a firefighter.", None))
    # Most of the session's polls saw Oscar (16 against 13): before, every turn went to him, and
    # Robert's "I live in Portland" replaced Oscar's Manchester.
    agent.memory._finish_session(1.0, 60.0)
    oscar_facts, robert_facts = _facts(store, oscar), _facts(store, robert)
    assert any("manchester" in f for f in oscar_facts) and any("cucumber" in f for f in oscar_facts)
    assert not any("portland" in f or "firefight" in f for f in oscar_facts), oscar_facts
    assert any("portland" in f for f in robert_facts) and any("firefight" in f for f in robert_facts)
    assert not any("manchester" in f or "cucumber" in f for f in robert_facts), robert_facts
    # Two episodes, each dated from its person's first turn to their last: Oscar's ends before Robert's.
    (ep_oscar,) = store.list_episodes(oscar)
    (ep_robert,) = store.list_episodes(robert)
    assert ep_oscar.end - ep_oscar.start == 10.0 and ep_robert.end - ep_robert.start == 10.0
    assert ep_oscar.end < ep_robert.start


def test_a_turn_with_no_identified_poll_stays_with_the_session_user(store: SQLiteStore) -> None:
    agent = agent_over_mocks(store, ScriptedASR(), lambda stream: None)
    anna = store.create_user("Anna").id
    log = agent.memory.log
    for t in range(2, 21, 2):
        log.present(float(t), anna if t < 12 else None)  # she is out of view from 12 s
    log.heard(Heard(4.0, 6.0, "I live in Lisbon.", None))
    log.heard(Heard(14.0, 16.0, "I work as a nurse.", None))  # no poll saw anyone: the session's user
    agent.memory._finish_session(1.0, 20.0)
    facts = _facts(store, anna)
    assert any("lisbon" in f for f in facts) and any("nurse" in f for f in facts), facts


# turn_owner: the polls (time, current user, sighting) during a turn and a few polls after it.
def test_a_visits_first_turn_goes_to_the_newcomer_not_to_who_just_left() -> None:
    # Oscar left; Robert is seen at 34 s but identity confirms him only at 36 s (debounce): the turn
    # (32.5-33.5 s) has one poll in time, whose current user is still Oscar.
    during = [(34.0, "oscar", "robert")]
    after = [*during, (36.0, "robert", "robert"), (38.0, "robert", "robert")]
    assert turn_owner(during, after) == "robert"


def test_a_newcomer_seen_as_someone_gets_the_user_enrolled_for_them() -> None:
    during = [(34.0, "oscar", SOMEONE)]
    after = [*during, (36.0, "u_new", "u_new"), (38.0, "u_new", "u_new")]
    assert turn_owner(during, after) == "u_new"


def test_someone_seen_who_never_becomes_current_is_unsure_not_the_current_user() -> None:
    # Robert seen once and gone (or only someone unknown, never enrolled): not Oscar's turn to keep.
    assert turn_owner([(34.0, "oscar", "robert")], [(34.0, "oscar", "robert"), (36.0, "oscar", None)]) == UNSURE_SPEAKER
    assert turn_owner([(34.0, "oscar", SOMEONE)], [(34.0, "oscar", SOMEONE), (36.0, "oscar", SOMEONE)]) == (
        UNSURE_SPEAKER
    )


def test_nobody_observable_keeps_the_current_user_and_no_poll_says_nothing() -> None:
    assert turn_owner([(14.0, "anna", None), (16.0, None, None)], []) == "anna"
    assert turn_owner([], []) is None


def test_a_stray_sighting_of_another_person_does_not_move_the_turn() -> None:
    # Two at the table: the camera catches Ben once, Anna stays current and is seen twice.
    during = [(2.0, "anna", "anna"), (4.0, "anna", "ben"), (6.0, "anna", "anna")]
    assert turn_owner(during, during) == "anna"


def test_a_turn_whose_speaker_the_polls_cannot_vouch_for_is_kept_out_of_memory(store: SQLiteStore) -> None:
    agent = agent_over_mocks(store, ScriptedASR(), lambda stream: None)
    oscar = store.create_user("Oscar").id
    robert = store.create_user("Robert").id
    log = agent.memory.log
    for t in range(2, 31, 2):
        log.present(float(t), oscar, oscar)
    log.present(32.0, oscar, None)  # he left; the current user stays until the absent polls run out
    log.present(34.0, oscar, robert)  # Robert came in, seen once, not confirmed
    log.present(36.0, oscar, None)
    log.heard(Heard(5.0, 8.0, "I live in Manchester.", None))
    log.heard(Heard(33.0, 34.5, "I live in Portland.", None))  # Robert's, while Oscar is current
    agent.memory._finish_session(1.0, 37.0)
    assert any("manchester" in f for f in _facts(store, oscar))
    assert not any("portland" in f for f in _facts(store, oscar) + _facts(store, robert))

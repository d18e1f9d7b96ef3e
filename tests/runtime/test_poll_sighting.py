"""What one poll saw, before the debounce, as the conversation log keeps it: the tracker's `seen_as`
(retrieval/polling.py) and the poller's `sighting` (runtime/identity_poller.py)."""

from __future__ import annotations

from egomem.identity.types import Identification, IdentityStatus
from egomem.retrieval.polling import PollPolicy, UserTracker
from egomem.runtime.conversation_log import SOMEONE
from egomem.runtime.identity_poller import sighting

KNOWN = IdentityStatus.KNOWN


class Enrols:
    """Plumbing mock of the identity layer's enroller and unsure holder: fixed ids."""

    def __init__(self, same: bool = True) -> None:
        self.same, self.n = same, 0

    def enroll_new(self, identification: Identification) -> str:
        self.n += 1
        return f"new{self.n}"

    def hold_unsure(self, identification: Identification) -> str:
        return "unsure1"

    def confirmed(self, person: str, user: str, identification: Identification) -> bool | None:
        return None if self.same else False


def test_a_match_is_its_user_even_while_another_is_current() -> None:
    tracker = UserTracker(PollPolicy())
    for _ in range(2):
        tracker.update(Identification(KNOWN, user_id="oscar"))
    tracker.update(Identification(KNOWN, user_id="robert"))
    assert tracker.current == "oscar" and tracker.seen_as == "robert"
    assert sighting(Identification(KNOWN, user_id="robert"), tracker.seen_as) == "robert"


def test_a_newcomer_is_someone_until_the_poll_that_enrols_them() -> None:
    tracker = UserTracker(PollPolicy(), Enrols())
    new = Identification(IdentityStatus.NEW)
    tracker.update(new)
    assert tracker.seen_as is None and sighting(new, tracker.seen_as) == SOMEONE
    tracker.update(new)
    assert tracker.current == "new1" and sighting(new, tracker.seen_as) == "new1"


def test_an_unsure_person_is_seen_as_their_held_id_at_every_poll_once_held() -> None:
    tracker = UserTracker(PollPolicy(), Enrols(same=True))
    unsure = Identification(IdentityStatus.UNSURE, user_id="ben")
    tracker.update(unsure)
    assert sighting(unsure, tracker.seen_as) == SOMEONE  # not held yet: someone, not Ben
    for _ in range(3):
        tracker.update(unsure)
        assert tracker.current == "unsure1" and sighting(unsure, tracker.seen_as) == "unsure1"
    tracker.update(Identification(KNOWN, user_id="ben"))  # the holder keeps them unsure: still the held id
    tracker.update(Identification(KNOWN, user_id="ben"))
    assert tracker.current == "unsure1" and tracker.seen_as == "unsure1"


def test_an_unsure_person_without_a_holder_is_someone() -> None:
    tracker = UserTracker(PollPolicy())
    unsure = Identification(IdentityStatus.UNSURE, user_id="ben")
    for _ in range(3):
        tracker.update(unsure)
        assert sighting(unsure, tracker.seen_as) == SOMEONE


def test_nobody_observable_is_no_sighting() -> None:
    tracker = UserTracker(PollPolicy())
    tracker.update(Identification(IdentityStatus.UNKNOWN))
    assert sighting(Identification(IdentityStatus.UNKNOWN), tracker.seen_as) is None

"""Turn evidence names who said it: the episode's participant whose name is the turn's speaker."""

from __future__ import annotations

from egomem.retrieval.ask import Asker
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.search import EpisodeTurn, encode_turns
from egomem.schemas import Episode
from egomem.store.base import MemoryStore


def test_turn_evidence_has_the_speaker_as_person(store: MemoryStore, encoder: TextEncoder) -> None:
    anna = store.create_user("Anna").id
    unnamed = store.create_user(None).id
    store.add_episode(
        Episode(
            start=1.0e9,
            end=1.0e9 + 60,
            participants=[anna],
            user_transcript=encode_turns(
                [
                    EpisodeTurn("Anna", "I got back from Lisbon, the tiles were beautiful."),
                    EpisodeTurn("Bob", "Lisbon!"),
                ]
            ),
        )
    )
    store.add_episode(
        Episode(start=2.0e9, end=2.0e9 + 60, participants=[unnamed], user_transcript="my bicycle has a flat tyre")
    )
    asker = Asker(store, EmbeddingCache(encoder))
    turns = [e for e in asker.ask("Who went to Lisbon?").evidence if e.kind == "turn"]
    by_speaker = {e.speaker: e for e in turns}
    assert by_speaker["Anna"].person_id == anna and by_speaker["Anna"].person == "Anna"
    assert by_speaker["Bob"].person_id is None  # not a participant: unknown, not guessed
    bike = [e for e in asker.ask("bicycle tyre").evidence if e.kind == "turn"]
    assert bike and bike[0].person_id == unnamed and bike[0].person is None  # known person, no name yet

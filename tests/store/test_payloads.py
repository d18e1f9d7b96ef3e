"""Hostile text (SQL-ish, placeholders, unicode, NUL) round-trips or is refused cleanly, on every backend."""

from __future__ import annotations

import pytest

from egomem.errors import StoreError
from egomem.schemas import Fact
from egomem.store.base import MemoryStore

PAYLOADS = [
    "Robert'); DROP TABLE users;--",
    "? ?? %s %(name)s %% $1",
    "Zoë 王小明 محمد 🙂‍↔️",
    "x" * 200,
    "' OR 1=1 --",
]


@pytest.mark.parametrize("text", PAYLOADS)
def test_hostile_text_round_trips(store: MemoryStore, text: str) -> None:
    u = store.create_user(text)
    assert store.get_user(u.id).name == text
    assert [x.id for x in store.find_users_by_name(text)] == [u.id]
    f = store.add_fact(Fact(user_id=u.id, text=text, source_text=text))
    assert store.get_fact(f.id).text == text
    assert len(store.list_users()) == 1  # nothing was injected


def test_nul_is_stored_or_refused_cleanly(store: MemoryStore, backend: str) -> None:
    u = store.create_user("Ana")
    try:
        f = store.add_fact(Fact(user_id=u.id, text="nul\x00inside"))
        assert backend == "sqlite" and store.get_fact(f.id).text == "nul\x00inside"
    except StoreError as exc:  # PostgreSQL text cannot hold NUL
        assert backend == "postgres" and "NUL" in str(exc)
    # A refused write leaves the store usable.
    assert store.rename_user(u.id, "Ana B").name == "Ana B"


def test_lone_surrogate_is_refused_cleanly(store: MemoryStore) -> None:
    u = store.create_user("Ana")
    with pytest.raises(StoreError, match="Unicode"):
        store.add_fact(Fact(user_id=u.id, text="lone \ud800 surrogate"))
    assert store.list_facts(u.id) == []
    assert store.rename_user(u.id, "Ana B").name == "Ana B"

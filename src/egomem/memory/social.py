"""Linking people named in conversation to the social graph.

A relation's convention (shared with retrieval): the edge (subject) -[word]-> (object)
reads "object is subject's <word>". "John is my colleague" from user U is U -colleague->
John; "I am Ana's boyfriend" is Ana -boyfriend-> U. A name that matches nobody becomes a
placeholder person, merged into the real user when they are met and say their name.
"""

from __future__ import annotations

from egomem.memory.items import ExtractedItem
from egomem.relations import EXCLUSIVE_RELATIONS as _EXCLUSIVE_GROUP
from egomem.schemas import Provenance, Relation, User
from egomem.store.base import MemoryStore


def _connected(store: MemoryStore, user_id: str) -> set[str]:
    ids: set[str] = set()
    for r in store.list_relations(user_id):
        ids.update(x for x in (r.subject_id, r.object_id) if x and x != user_id)
    return ids


def resolve_person(store: MemoryStore, user_id: str, name: str, *, cause: str) -> User:
    """The user `name` refers to, seen from `user_id`: an existing person of that name
    (one already linked to `user_id` first, then a real user over a placeholder), or a new
    placeholder person."""
    matches = [u for u in store.find_users_by_name(name) if u.id != user_id]
    if matches:
        linked = _connected(store, user_id)
        matches.sort(key=lambda u: (u.id not in linked, u.placeholder, u.created_at))
        return matches[0]
    return store.create_user(name, placeholder=True, cause=cause)


def link_relation(
    store: MemoryStore,
    user_id: str,
    item: ExtractedItem,
    *,
    episode_id: str,
    at: float,
    cause: str,
    origin: Provenance | None = None,
) -> Relation | None:
    """Write the relation `item` states (None, with a NOOP row, when it is already known).
    A retracted relation ("Anna is no longer my girlfriend") closes the matching edge and
    never creates a person. `origin`: a new edge's provenance (turns, identity decision)."""
    word = item.relation.lower().strip()
    if item.retract:
        _end_relation(store, user_id, item, word, episode_id=episode_id, at=at, cause=cause)
        return None
    own = store.get_user(user_id).name
    if own and item.person.split() and item.person.casefold().split() == own.casefold().split():
        # "Sophie's sister is Sophie": an extractor that put the speaker's own name in the other's
        # place (seen with the local model on a misheard name). It would make a stand-in person of
        # the speaker's name: a second "Sophie" beside the real one, or, merged into her when she
        # next says her name, a relation to herself. Kept out.
        store.log_noop("relation", f"item:{item.person}", user_id, {"item": item.text}, f"{cause}: names the speaker")
        return None
    other = resolve_person(store, user_id, item.person, cause=cause)
    subject, obj = (user_id, other.id) if item.user_is_subject else (other.id, user_id)
    for r in store.list_relations(user_id):
        if {r.subject_id, r.object_id} != {subject, obj}:
            continue
        if r.relation == word and r.subject_id == subject:
            # Said again in a later episode: repeated evidence strengthens the edge (once per episode).
            if episode_id not in {e.episode_id for e in store.relation_evidence(r.id)}:
                store.confirm_relation(
                    r.id,
                    episode_id=episode_id,
                    at=at,
                    source_text=item.source_text,
                    cause=f"{cause}: relation confirmed",
                )
            else:
                store.log_noop("relation", r.id, user_id, {"item": item.text}, f"{cause}: relation already known")
            return None
        if word in _EXCLUSIVE_GROUP and r.relation in _EXCLUSIVE_GROUP:
            store.close_relation(
                r.id,
                at=at,
                cause=f"{cause}: now {word}, no longer {r.relation}",
                contradicted=True,
                episode_id=episode_id,
                source_text=item.source_text,
            )
    rel = Relation(
        subject_id=subject,
        relation=word,
        object_id=obj,
        source_episode=episode_id,
        valid_from=at,
        **(origin.model_dump() if origin else {}),
    )
    return store.add_relation(rel, cause=f"{cause}: {item.source_text[:200]}")


def _end_relation(
    store: MemoryStore, user_id: str, item: ExtractedItem, word: str, *, episode_id: str, at: float, cause: str
) -> None:
    names = {u.id for u in store.find_users_by_name(item.person)}
    for r in store.list_relations(user_id):
        other = r.object_id if r.subject_id == user_id else r.subject_id
        named = other in names or (r.object_name or "").lower() == item.person.lower()
        if named and r.relation == word:
            why = f"{cause}: no longer {word}: {item.source_text[:200]}"
            store.close_relation(
                r.id, at=at, cause=why, contradicted=True, episode_id=episode_id, source_text=item.source_text
            )
            return
    store.log_noop("relation", f"item:{item.person}", user_id, {"item": item.text}, f"{cause}: ending of nothing known")


def same_name(known: str, said: str) -> bool:
    """Whether a name said is the known one: equal first names ignoring case, or one the start of the
    other with at least 3 letters (Sam / Samantha, Chris / Christopher: the usual short forms)."""
    a, b = (n.split()[0].casefold() if n.split() else "" for n in (known, said))
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 3 and long.startswith(short))


def adopt_name(store: MemoryStore, user_id: str, name: str, *, cause: str) -> str:
    """Record the name the user said. A placeholder of that name (someone talked about
    before being met) is merged into this user. Returns what was done, for the report."""
    user = store.get_user(user_id)
    placeholders = [u for u in store.find_users_by_name(name) if u.placeholder and u.id != user_id]
    done = []
    if user.name is None:
        store.rename_user(user_id, name, cause=cause)
        done.append("named")
    elif not same_name(user.name, name):
        store.log_noop("user", user_id, user_id, {"said": name, "known": user.name}, f"{cause}: name differs, kept")
        return "name differs"
    if len(placeholders) == 1:
        store.merge_users(user_id, placeholders[0].id, cause=f"{cause}: met {name}, placeholder merged")
        done.append("placeholder merged")
    elif len(placeholders) > 1:
        # Several unmet people share the name: merging needs more context than a name.
        store.log_noop("user", user_id, user_id, {"placeholders": [p.id for p in placeholders]}, f"{cause}: ambiguous")
        done.append("placeholders ambiguous")
    return ", ".join(done) or "name known"

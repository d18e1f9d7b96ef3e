"""The offline rule extractor: what it recognises, in both word orders, with negation."""

from __future__ import annotations

import pytest

from egomem.memory.items import ExtractedItem, SessionText, Turn
from egomem.memory.rules_extract import extract_rules

MON_8_MAY_2023 = 1683554160.0


def _items(*user: str, assistant: tuple[str, ...] = ()) -> list[ExtractedItem]:
    turns = [Turn(speaker="user", text=u) for u in user] + [Turn(speaker="assistant", text=a) for a in assistant]
    s = SessionText(episode_id="e", start=MON_8_MAY_2023, end=MON_8_MAY_2023 + 60, date="8 May 2023", turns=turns)
    return extract_rules(s).items


def _texts(*user: str) -> list[str]:
    return [i.text for i in _items(*user) if i.kind != "summary"]


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("Hi, I'm Maria.", "Maria"),
        ("my name is john", "John"),
        ("Please call me Bea.", "Bea"),
        ("I'm tired.", None),
        ("The name is Ryan.", "Ryan"),
        ("Hi, the name is Nora, by the way.", "Nora"),
        ("I forgot what the name is.", None),
    ],
)
def test_names(said: str, name: str | None) -> None:
    got = [i.text for i in _items(said) if i.kind == "name"]
    assert got == ([name] if name else [])


def test_preferences_with_negation() -> None:
    assert sorted(_texts("I love hiking but I don't like coffee.")) == ["dislikes coffee", "loves hiking"]
    assert _texts("I really hate jazz.") == ["dislikes jazz"]
    assert _texts("My favorite band is Queen.") == ["favorite band is Queen"]
    assert _texts("I love that!") == []  # a reaction, not a preference


def test_job_workplace_home() -> None:
    assert _texts("I work as a nurse at St Mary's hospital.") == ["works as a nurse", "works at St Mary's hospital"]
    assert _texts("I'm a software engineer.") == ["works as a software engineer"]
    assert _texts("I'm a big fan of jazz.") == []
    # Said as their work, any noun is the job (ASR often splits "firefighter"); unframed, not.
    assert _texts("For work, I'm a fire fighter.") == ["works as a fire fighter"]
    assert _texts("I'm a fighter.") == []
    assert _texts("I live in Lyon and I love it.") == ["lives in Lyon"]
    assert _texts("I moved to Paris last month.") == ["lives in Paris"]
    assert _texts("I'm from Brazil.") == ["is from Brazil"]


def test_relations_in_both_word_orders() -> None:
    rel = [(i.relation, i.person, i.user_is_subject) for i in _items("John is my colleague.") if i.kind == "relation"]
    assert rel == [("colleague", "John", True)]
    rel = [(i.relation, i.person) for i in _items("I went out with my sister Ana.") if i.kind == "relation"]
    assert rel == [("sister", "Ana")]
    rel = [
        (i.relation, i.person, i.user_is_subject) for i in _items("I am Ana's boyfriend now.") if i.kind == "relation"
    ]
    assert rel == [("boyfriend", "Ana", False)]
    assert [i.relation for i in _items("Tom and I are colleagues.") if i.kind == "relation"] == ["colleague"]
    assert [i.person for i in _items("I'm married to Sam.") if i.kind == "relation"] == ["Sam"]


def test_pets_allergies_birthdays_age_and_retractions() -> None:
    assert _texts("I have a dog named Rex.") == ["has a dog named Rex"]
    assert _texts("I'm allergic to peanuts.") == ["is allergic to peanuts"]
    assert _texts("My birthday is on 3 May.") == ["birthday is 3 May"]
    assert _texts("I'm 34.") == ["is 34 years old"]
    gone = [i for i in _items("I don't have a dog anymore.") if i.kind == "fact"]
    assert [(i.text, i.retract) for i in gone] == [("has a dog", True)]


def test_relative_dates_become_absolute() -> None:
    assert _texts("I went to a support group yesterday.") == ["went to a support group on 7 May 2023"]
    assert _texts("I ran a charity race last Saturday.") == ["ran a charity race on 6 May 2023"]


def test_provenance_summary_and_assistant_is_not_a_source() -> None:
    items = _items("I live in Porto.", assistant=("I live in the cloud and I love jazz.",))
    assert [i.text for i in items if i.kind != "summary"] == ["lives in Porto"]
    assert all(i.source_text == "I live in Porto." for i in items if i.kind != "summary")
    summary = [i for i in items if i.kind == "summary"]
    assert len(summary) == 1 and summary[0].text.startswith("On 8 May 2023,") and "lives in Porto" in summary[0].text


def test_empty_session_gives_nothing() -> None:
    assert _items() == []
    assert _items("   ") == []


def test_relation_named_before_a_pronoun_and_work_with() -> None:
    assert _texts("I work with Emily. She is my colleague.") == ["has a colleague named Emily"]
    assert _texts("I work with Emily she is my colleague") == ["has a colleague named Emily"]
    assert _texts("She is my colleague.") == []  # no name to attach it to
    assert _texts("I work with children.") == []  # lower-case: not a name


@pytest.mark.parametrize(
    ("said", "texts"),
    [
        # Forms read from the dev split's spoken conversations (the rules wrote nothing, or too much).
        ("I don't like traffic jams at all.", ["dislikes traffic jams"]),
        ("I'm working as a plumber at the moment.", ["works as a plumber"]),  # "at the moment" is no workplace
        ("I work at Google at the moment.", ["works at Google"]),
        ("I'm living in Lisbon these days.", ["lives in Lisbon"]),
        ("Tessa and I grew up together, she is my sister.", ["has a sister named Tessa"]),
        ("Mark and I met at school, he's my best friend.", ["has a best friend named Mark"]),
        ("These days I never play the piano.", ["plays the piano", "no longer plays the piano"]),
        ("I never smoke.", []),  # a plain "never" says no state ended
    ],
)
def test_forms_heard_on_the_dev_split(said: str, texts: list[str]) -> None:
    assert _texts(said) == texts

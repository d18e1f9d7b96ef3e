from __future__ import annotations

from egomem.retrieval.query_parser import MAX_TERMS, RetrParser, RetrQuery, parse_query


def feed_all(parser: RetrParser, tokens: list[str]) -> list[RetrQuery]:
    out: list[RetrQuery] = []
    for t in tokens:
        out.extend(parser.feed(t))
    return out


def test_paper_example_split_into_tiny_tokens() -> None:
    text = "Let me think. <retr>:\ncolleague\ntennis, sport<answer> Yes, John loves tennis."
    for size in (1, 2, 3, 7):
        p = RetrParser()
        qs = feed_all(p, [text[i : i + size] for i in range(0, len(text), size)])
        assert qs == [RetrQuery(["colleague"], ["tennis", "sport"])]
        assert not p.in_query


def test_groups_may_be_empty() -> None:
    assert parse_query(":\n\n<x>".replace("<x>", "")) == RetrQuery([], [])
    assert parse_query(":\n\nbirthday") == RetrQuery([], ["birthday"])
    assert parse_query(":\nmother\n") == RetrQuery(["mother"], [])
    p = RetrParser()
    assert feed_all(p, ["<retr>:\n\n<answer>"]) == [RetrQuery([], [])]


def test_thousands_of_commas_and_unicode() -> None:
    q = parse_query(":\n" + "," * 5000 + "\n" + ", ".join(f"w{i}" for i in range(500)) + ",,, Zoë ")
    assert q.relation_words == [] and len(q.keywords) == MAX_TERMS
    q = parse_query(":\nmère, 同事, Mère\nténis")
    assert q == RetrQuery(["mère", "同事"], ["ténis"])  # de-duplicated case-insensitively


def test_truncated_and_malformed_queries_are_dropped_not_raised() -> None:
    p = RetrParser(max_query_chars=100)
    assert feed_all(p, ["<retr>:\ncolleague\n", "x" * 200]) == []  # never closed, too long
    assert p.dropped == 1 and not p.in_query
    # a new <retr> before the old one closed: the first is dropped, the second parsed
    assert feed_all(p, ["<retr>:\nfoo", "<retr>:\nmother\ncake<answer>"]) == [RetrQuery(["mother"], ["cake"])]
    assert p.dropped == 2
    # <answer> without <retr>, stray angle brackets, non-text input
    assert feed_all(p, ["<answer>", "<ret", "x>", "<", "r"]) == []
    assert p.feed("") == [] and p.feed(None) == []  # type: ignore[arg-type]
    # two queries in one chunk
    two = p.feed("<retr>:\na\nb<answer><retr>:\nc\nd<answer>")
    assert two == [RetrQuery(["a"], ["b"]), RetrQuery(["c"], ["d"])]


def test_split_monologue_separates_the_query_from_what_is_said() -> None:
    from egomem.retrieval.query_parser import split_monologue

    said = "<retr>:\nsister\njazz<answer>She likes jazz."
    assert split_monologue(said) == ("<retr>:\nsister\njazz", "She likes jazz.")
    assert split_monologue("Hello there.") == (None, "Hello there.")
    assert split_monologue("<answer>") == ("", "")

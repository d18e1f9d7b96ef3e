"""The offline, deterministic memory extractor (the `rules` backend of the `extract` task).

It reads the user's own utterances sentence by sentence and recognises first-person
statements: the user's name ("I'm X", "my name is X", "call me X"), likes and dislikes
with negation, job and workplace, where they live or moved to, origin, relations to
named people in both word orders ("John is my colleague", "my colleague John", "I am
Ana's boyfriend"), pets, allergies, birthdays and age, and life events ("I went to ...
yesterday", with relative dates made absolute from the session date). It writes the
items in a canonical third-person form that memory/slots.py understands, and a short
dated summary. It never invents: every item quotes the utterance it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from egomem.memory.items import ExtractedItem, Extraction, SessionText

REL_WORDS = (
    "best friend|friend|colleague|coworker|co-worker|boss|manager|sister|brother|mother|mom|mum|father|dad|son|"
    "daughter|wife|husband|boyfriend|girlfriend|partner|fiancé|fiancée|fiance|fiancee|cousin|aunt|uncle|"
    "grandmother|grandma|grandfather|grandpa|neighbor|neighbour|roommate|flatmate|mentor|niece|nephew|"
    "teammate|classmate|ex"
)
_PLURAL_REL = {
    "friends": "friend",
    "colleagues": "colleague",
    "coworkers": "coworker",
    "neighbors": "neighbor",
    "neighbours": "neighbour",
    "roommates": "roommate",
    "cousins": "cousin",
    "classmates": "classmate",
    "teammates": "teammate",
    "married": "spouse",
    "dating": "partner",
    "engaged": "fiancé",
}
_NAME = r"([A-Z][a-zà-ÿ'-]+(?: [A-Z][a-zà-ÿ'-]+)?)"
_ANY_NAME = r"([A-Za-z][a-zà-ÿ'-]+)"
_NOT_NAMES = {
    "so", "not", "just", "really", "very", "glad", "happy", "sorry", "sure", "fine", "good", "great", "okay",
    "ok", "here", "back", "home", "going", "trying", "thinking", "doing", "feeling", "still", "also", "always",
    "actually", "tired", "busy", "excited", "afraid", "from", "at", "in", "a", "an", "the", "and", "but", "on",
    "working", "looking", "planning", "totally", "finally", "now", "too", "like", "well", "all", "into", "me",
    "it", "that", "this", "his", "her", "their", "new", "off", "out", "by", "with", "for", "to", "of",
}  # fmt: skip
_JOB_SUFFIX = re.compile(r"(?:er|or|ist|ian|ant|ent|ect|ive|ic|man|woman|nurse|chef|cook|doctor|student|pilot)$")
_NOT_JOBS = {"fan", "believer", "lover", "person", "fighter", "member", "part", "beginner", "mother", "father"}
_PETS = r"dog|cat|puppy|kitten|hamster|rabbit|bunny|bird|parrot|fish|turtle|snake|horse|guinea pig|lizard"
_EVENT_VERBS = (
    "went|visited|attended|started|joined|finished|graduated|got|bought|adopted|took|ran|signed up|met|won|"
    "painted|wrote|made|built|learned|learnt|volunteered|traveled|travelled|decided|received|celebrated|"
    "organized|organised|gave|became|tried|read|watched|saw|found|lost|spent|am planning|'m planning|plan|"
    "want|hope|have been|'ve been|am going|'m going|am thinking|'m thinking|am learning|'m learning|"
    "am taking|'m taking|am working on|'m working on|recently|just"
)
_THIRD_PERSON = {
    "'m planning": "is planning", "am planning": "is planning", "plan": "plans", "want": "wants",
    "hope": "hopes", "have been": "has been", "'ve been": "has been", "am going": "is going",
    "'m going": "is going", "am thinking": "is thinking", "'m thinking": "is thinking",
    "am learning": "is learning", "'m learning": "is learning", "am taking": "is taking",
    "'m taking": "is taking", "am working on": "is working on", "'m working on": "is working on",
}  # fmt: skip
_CUT = re.compile(
    r"\s+(?:because|but|since|so that|so|when|while|which|and i|and we|and it|though|although)\b.*$|\s+[–—-]\s.*$", re.I
)
_TRAIL = re.compile(
    r"\s+(?:a lot|so much|very much|too|as well|anymore|any more|now|lately|actually|recently|yesterday|today"
    r"|last (?:week|month|year|weekend)|this (?:week|month|year))$",
    re.I,
)
_PRONOUNS = {"she", "he", "they", "it", "this", "that", "you", "we", "i"}
_PRONOUN_OBJECTS = {"it", "that", "this", "you", "them", "those", "these", "how", "what", "when", "your", "him", "her"}


def _clean(obj: str, max_words: int = 8) -> str:
    obj = _CUT.sub("", obj.strip().rstrip(".!?,;:"))
    for _ in range(2):
        obj = _TRAIL.sub("", obj)
    words = obj.split()
    return " ".join(words[:max_words])


def _third_person(text: str) -> str:
    subs = [(r"\bmyself\b", "themselves"), (r"\bmy\b", "their"), (r"\bme\b", "them"), (r"\bmine\b", "theirs")]
    subs += [(r"\bI'm\b", "they're"), (r"\bI\b", "they"), (r"\bwe're\b", "they're"), (r"\bour\b", "their")]
    for pat, rep in subs:
        text = re.sub(pat, rep, text, flags=re.IGNORECASE)
    return text


def _relative_dates(text: str, day: datetime) -> str:
    def fmt(d: datetime) -> str:
        return f"{d.day} {d:%B %Y}"

    table = [
        (r"\byesterday\b", f"on {fmt(day - timedelta(days=1))}"),
        (r"\btoday\b", f"on {fmt(day)}"),
        (r"\btonight\b", f"on the night of {fmt(day)}"),
        (r"\btomorrow\b", f"on {fmt(day + timedelta(days=1))}"),
        (r"\blast week\b", f"in the week before {fmt(day)}"),
        (r"\blast weekend\b", f"on the weekend before {fmt(day)}"),
        (r"\bnext week\b", f"in the week after {fmt(day)}"),
        (r"\blast month\b", f"in {(day.replace(day=1) - timedelta(days=1)):%B %Y}"),
        (r"\blast year\b", f"in {day.year - 1}"),
        *(
            (rf"\b(?:last|this past) {name}\b", f"on {fmt(day - timedelta(days=(day.weekday() - i - 1) % 7 + 1))}")
            for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
        ),
        (r"\bthis year\b", f"in {day.year}"),
        (r"\bnext year\b", f"in {day.year + 1}"),
    ]
    for pat, rep in table:
        text = re.sub(pat, rep, text, flags=re.IGNORECASE)
    return text


def _sentences(text: str) -> Iterator[str]:
    text = text.replace("’", "'").replace("‘", "'")
    for s in re.split(r"(?<=[.!?;])\s+|\n+", text):
        s = s.strip()
        if s:
            yield s


class _Collector:
    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[ExtractedItem] = []

    def add(self, kind: str, text: str, importance: float, **extra: object) -> None:
        text = " ".join(text.split())
        if text:
            item = ExtractedItem.model_validate(
                {"kind": kind, "text": text, "source_text": self.source, "importance": importance, **extra}
            )
            self.items.append(item)


def _name(s: str, c: _Collector) -> bool:
    m = re.search(r"\bmy name(?: is|'s)\s+" + _ANY_NAME, s, re.IGNORECASE) or re.search(
        r"\b(?:call me|i go by)\s+" + _ANY_NAME, s, re.IGNORECASE
    )
    if m is None:
        m = re.search(r"\b(?:I'm|I am|this is)\s+" + _NAME + r"(?!'s)\b", s)
        if m and m.group(1).split()[0].lower() in _NOT_NAMES:
            m = None
    if m is None or m.group(1).lower() in _NOT_NAMES or m.group(1).endswith("'s"):
        return False
    name = " ".join(w[:1].upper() + w[1:] for w in m.group(1).split())
    c.add("name", name, 1.0)
    return True


def _relations(s: str, c: _Collector) -> bool:
    found = False
    for m in re.finditer(_NAME + r" is my (?:new |old |good |dear )?(" + REL_WORDS + r")\b", s):
        if m.group(1).split()[0].lower() in _PRONOUNS:
            continue  # "She is my colleague": the name is in the sentence before (see below)
        c.add("relation", f"has a {m.group(2)} named {m.group(1)}", 0.8, relation=m.group(2), person=m.group(1))
        found = True
    for m in re.finditer(r"\bmy (?:new |old |good |dear )?(" + REL_WORDS + r")(?:,)? " + _ANY_NAME + r"\b", s, re.I):
        person = m.group(2)
        if person.lower() in _NOT_NAMES or person.lower() in ("is", "was", "and", "who", "said", "has", "had"):
            continue
        person = person[:1].upper() + person[1:]
        rel = m.group(1).lower()
        c.add("relation", f"has a {rel} named {person}", 0.8, relation=rel, person=person)
        found = True
    for m in re.finditer(r"\bmy (" + REL_WORDS + r")'s name is " + _ANY_NAME, s, re.IGNORECASE):
        person = m.group(2)[:1].upper() + m.group(2)[1:]
        c.add("relation", f"has a {m.group(1).lower()} named {person}", 0.8, relation=m.group(1).lower(), person=person)
        found = True
    for m in re.finditer(r"\b(?:I'm|I am)(?: now)? " + _NAME + r"'s (?:new )?(" + REL_WORDS + r")\b", s):
        person, rel = m.group(1), m.group(2)
        c.add("relation", f"is {person}'s {rel}", 0.8, relation=rel, person=person, user_is_subject=False)
        found = True
    # "You know Emily? She is my colleague." / "I work with Emily. She's my colleague."
    for m in re.finditer(
        _NAME + r"[?.!,]?\s+(?:she|he|they)(?:'s| is| are) my (?:new |old |good |dear )?(" + REL_WORDS + r")\b", s, re.I
    ):
        person = m.group(1)
        if person.split()[-1].lower() in _NOT_NAMES or not person[:1].isupper():
            continue
        rel = m.group(2).lower()
        c.add("relation", f"has a {rel} named {person}", 0.8, relation=rel, person=person)
        found = True
    if not found:
        m4 = re.search(r"\b(?:I|i) (?:also )?work(?:ed)? (?:together )?with " + _NAME + r"\b", s)
        if m4 and m4.group(1).split()[0].lower() not in _NOT_NAMES:
            person = m4.group(1)
            c.add("relation", f"has a colleague named {person}", 0.7, relation="colleague", person=person)
            found = True
    m2 = re.search(_NAME + r" and I are (?:now )?(?:best )?(\w+)", s)
    if m2 and m2.group(2).lower() in _PLURAL_REL:
        rel = _PLURAL_REL[m2.group(2).lower()]
        c.add("relation", f"has a {rel} named {m2.group(1)}", 0.8, relation=rel, person=m2.group(1))
        found = True
    m3 = re.search(r"\b(?:I'm|I am) (?:now )?(married to|dating|engaged to) " + _NAME, s)
    if m3:
        rel = {"married to": "spouse", "dating": "partner", "engaged to": "fiancé"}[m3.group(1)]
        c.add("relation", f"has a {rel} named {m3.group(2)}", 0.8, relation=rel, person=m3.group(2))
        found = True
    return found


def _work_home(s: str, c: _Collector) -> bool:
    found = False
    job = re.search(r"\bi work as (?:an? )?([a-z][\w -]*?)(?= at | for | in |[,.;!?]|$)", s, re.IGNORECASE)
    if job is None:
        job = re.search(
            r"\b(?:i'm|i am) (?:now )?an? ([a-z][\w-]*(?: [a-z][\w-]*)?)(?= at | for | in |[,.;!?]|$)", s, re.I
        )
        if job and (job.group(1).split()[-1] in _NOT_JOBS or not _JOB_SUFFIX.search(job.group(1))):
            job = None
    if job:
        c.add("fact", f"works as a {_clean(job.group(1), 4)}", 0.7)
        found = True
    work = re.search(
        r"\bi(?:'m| am)? (?:now |currently |still )?(?:work|working)(?: as an? [\w -]+?)? (?:at|for) ([^,.;!?]+)",
        s,
        re.I,
    ) or re.search(r"\b(?:i'm|i am) an? [a-z][\w -]* (?:at|for) ([A-Z][^,.;!?]+)", s)
    if work:
        c.add("fact", f"works at {_clean(work.group(1), 5)}", 0.7)
        found = True
    quit_ = re.search(
        r"\bi (?:no longer|don't|do not) work (?:at|for) ([^,.;!?]+?)(?: anymore| any more)?[.!?]?$", s, re.I
    )
    if quit_ and not work:
        c.add("fact", f"works at {_clean(quit_.group(1), 5)}", 0.7, retract=True)
        found = True
    home = re.search(
        r"\bi (?:now |currently |still )?(?:live|am living|'m living) in ([^,.;!?]+)", s, re.IGNORECASE
    ) or re.search(r"\bi(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) to ([^,.;!?]+)", s, re.I)
    if home:
        c.add("fact", f"lives in {_clean(home.group(1), 5)}", 0.7)
        found = True
    origin = re.search(r"\b[Ii](?:'m| am| come) (?:originally )?from ([A-Z][^,.;!?]*)", s)
    if origin:
        c.add("fact", f"is from {_clean(origin.group(1), 5)}", 0.6)
        found = True
    return found


def _preferences(s: str, c: _Collector) -> bool:
    neg = re.search(
        r"\bi (?:really |just )?(?:don't|do not|never|didn't) (?:really )?(?:like|love|enjoy|care for) ([^,.;!?]+)",
        s,
        re.IGNORECASE,
    ) or re.search(r"\bi (?:really )?(?:hate|dislike|detest|can't stand|cannot stand) ([^,.;!?]+)", s, re.I)
    pos = re.search(
        r"\bi (?:really |absolutely |just |also |totally |still |do )?(?:like|love|enjoy|adore|prefer) ([^,.;!?]+)",
        s,
        re.IGNORECASE,
    )
    found = False
    for m, verb in ((neg, "dislikes"), (pos, "likes")):
        if m is None:
            continue
        if m is pos:  # keep the strength the user chose: love/adore/enjoy/prefer, not all "likes"
            said = re.search(r"\b(like|love|enjoy|adore|prefer)\b", m.group(0), re.I)
            verb = {"like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores", "prefer": "prefers"}[
                said.group(1).lower() if said else "like"
            ]
        obj = _clean(m.group(1), 6)
        if obj and obj.split()[0].lower() not in _PRONOUN_OBJECTS and not obj.lower().startswith(("to hear", "to see")):
            c.add("preference", f"{verb} {_third_person(obj)}", 0.5)
            found = True
    fav = re.search(r"\bmy favou?rite ([\w ]+?) (?:is|are) ([^,.;!?]+)", s, re.IGNORECASE)
    if fav:
        c.add("preference", f"favorite {fav.group(1).lower()} is {_clean(fav.group(2), 6)}", 0.5)
        found = True
    return found


def _body_and_animals(s: str, c: _Collector) -> bool:
    found = False
    pet = re.search(
        r"\bi (?:have|got|adopted|own) (?:a|an|two|three|\d+) (?:little |new |pet |sweet )?(" + _PETS + r")s?"
        r"(?:,? (?:named|called) " + _ANY_NAME + ")?",
        s,
        re.IGNORECASE,
    ) or re.search(r"\bmy (" + _PETS + r")(?:'s name is| is called| named) " + _ANY_NAME, s, re.IGNORECASE)
    if pet:
        kind = pet.group(1).lower()
        name = pet.group(2)
        c.add("fact", f"has a {kind} named {name[:1].upper() + name[1:]}" if name else f"has a {kind}", 0.6)
        found = True
    gone = re.search(r"\bi (?:don't|do not|no longer) (?:have|own) an? (" + _PETS + r"|car|bike)\b", s, re.IGNORECASE)
    if gone:
        c.add("fact", f"has a {gone.group(1).lower()}", 0.6, retract=True)
        found = True
    allergy = re.search(r"\bi(?:'m| am) (?:very |severely |really |deathly )?allergic to ([^,.;!?]+)", s, re.I)
    allergy2 = re.search(r"\bi have an? (\w+) allergy", s, re.IGNORECASE)
    if allergy or allergy2:
        what = _clean(allergy.group(1), 4) if allergy else (allergy2.group(1) if allergy2 else "")
        c.add("fact", f"is allergic to {what}", 0.9)
        found = True
    bday = re.search(r"\bmy birthday is (?:on )?([^,.;!?]+)", s, re.IGNORECASE) or re.search(
        r"\bi was born on ([^,.;!?]+)", s, re.IGNORECASE
    )
    if bday:
        c.add("fact", f"birthday is {_clean(bday.group(1), 5)}", 0.8)
        found = True
    age = re.search(r"\b(?:i'm|i am|i just turned) (\d{1,3})(?: years old)?\b", s, re.IGNORECASE)
    if age and 3 <= int(age.group(1)) <= 120:
        c.add("fact", f"is {age.group(1)} years old", 0.6)
        found = True
    return found


def _event(s: str, c: _Collector, day: datetime) -> None:
    m = re.match(
        r"^(?:(?:so|well|actually|yeah|yes|oh|and|but|also|guess what|btw)[,!]? )*(i|we)"
        r"(?: (?:just|recently|finally|also|actually|even))? (" + _EVENT_VERBS + r") (.+)$",
        s,
        re.IGNORECASE,
    )
    if m is None:
        return
    verb = m.group(2).lower()
    rest = _clean(_relative_dates(m.group(3), day), 16)
    if len(rest.split()) < 2:
        return
    verb = _THIRD_PERSON.get(verb, verb)
    text = f"{verb} {_third_person(rest)}"
    if m.group(1).lower() == "we":
        text += " with others"
    c.add("fact", text, 0.4)


def extract_rules(session: SessionText) -> Extraction:
    """Items from the user's own turns; the assistant's turns are context, never a source."""
    day = datetime.fromtimestamp(session.start, UTC)
    items: list[ExtractedItem] = []
    name: str | None = session.user_name
    for turn in session.user_turns():
        c = _Collector(turn.text.strip())
        for s in _sentences(turn.text):
            got_name = _name(s, c)
            structured = _relations(s, c)
            structured = _work_home(s, c) or structured
            structured = _body_and_animals(s, c) or structured
            structured = _preferences(s, c) or structured
            if not structured and not got_name:
                _event(s, c, day)
        for it in c.items:
            if it.kind == "name" and name is None:
                name = it.text
        items.extend(c.items)
    items = _dedupe(items)
    if session.user_turns():
        items.append(_summary(session, items, name))
    return Extraction(items=items)


def _dedupe(items: list[ExtractedItem]) -> list[ExtractedItem]:
    seen: set[tuple[str, str, bool]] = set()
    out = []
    for it in items:
        key = (it.kind, it.text.lower(), it.retract)
        if key not in seen:
            seen.add(key)
            out.append(it)
    return out


def _summary(session: SessionText, items: list[ExtractedItem], name: str | None) -> ExtractedItem:
    who = name or "the user"
    points = [it.text for it in items if it.kind in ("fact", "preference", "relation") and not it.retract][:6]
    if points:
        body = f"{who[:1].upper() + who[1:]}: " + "; ".join(points) + "."
    else:
        longest = sorted((s for t in session.user_turns() for s in _sentences(t.text)), key=len, reverse=True)[:2]
        body = f"{who[:1].upper() + who[1:]} said: " + " ".join(f'"{s}"' for s in longest)
    user_text = " ".join(t.text.strip() for t in session.user_turns())
    return ExtractedItem(
        kind="summary",
        text=f"On {session.date}, {who} talked with the assistant. {body}",
        source_text=user_text[:2000],
        importance=0.3,
    )

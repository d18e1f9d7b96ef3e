"""Rules for facts about the user: work, home, likes and dislikes, habits, pets, health,
dates, life events, and the changes and retractions of any of them.

A change ("now I live in Rome", "these days I work as a chef") is marked `change`, so
the update agent supersedes the old value; a retraction ("I quit my job at Acme", "I no
longer eat meat", "I stopped smoking") is marked `retract`, so it closes the old fact
instead of adding one. "we" speaks for the user too ("we moved to Lyon").
"""

from __future__ import annotations

import re
from datetime import datetime

from egomem.memory.rules_text import (
    FREQUENCY,
    INTENSIFIERS,
    LIKING_VERBS,
    Collector,
    clean_object,
    relative_dates,
    third_person,
    verb_phrase_3rd,
)
from egomem.memory.wishes import plan_in

_I = r"\b(?:i|we)"
# Where a job or object ends: a place, a reason, the sentence's end, or a time word ("I'm a nurse now").
_OBJ_END = r"(?= at | for | in |[,.;!?]|$| now\b| these days| nowadays| at the moment)"
_JOB_SUFFIX = re.compile(r"(?:er|or|ist|ian|ant|ent|ect|ive|ic|man|woman|nurse|chef|cook|doctor|student|pilot)$")
_NOT_JOBS = {"fan", "believer", "lover", "person", "fighter", "member", "part", "beginner", "mother", "father"}
_PETS = r"dog|cat|puppy|kitten|hamster|rabbit|bunny|bird|parrot|fish|turtle|snake|horse|guinea pig|lizard"
_PRONOUN_OBJECTS = {"it", "that", "this", "you", "them", "those", "these", "how", "what", "when", "your", "him", "her"}
_CHANGE = re.compile(
    r"\b(?:now|these days|nowadays|any ?more|no longer|since|switched|changed|recently|as of|starting)\b", re.I
)
# Jobs said with a verb: "I teach biology", "I drive a taxi", "I fix cars". Group 1, when
# present, goes into the role ("biology teacher"); the object lists are closed on purpose.
_JOB_VERBS: list[tuple[str, str]] = [
    (r"teach(?: ((?!(?:my|our|him|her|them|me|you|people|how|at|in|to|for|and|the)\b)[a-z]+))?", "{} teacher"),
    (r"drive an? (taxi|cab|bus|truck|lorry|van|ambulance|tram|train|forklift)", "{} driver"),
    (r"drive for (?:uber|lyft|a living)", "driver"),
    (r"(?:fix|repair) (?:cars|bikes|motorbikes|engines|trucks)", "mechanic"),
    (r"(?:fix|repair) (?:computers|laptops|phones)", "repair technician"),
    (r"cut hair", "hairdresser"),
    (r"(?:write|develop) (?:code|software)", "software developer"),
    (r"bake (?:bread|cakes|pastries) for a living", "baker"),
    (r"deliver (?:mail|post|letters|parcels|packages)", "delivery worker"),
]
# "For work, I'm a fire fighter": the speaker says it is their work, so any noun is the job (the
# suffix and not-a-job checks guard plain "I'm a ..." sentences, which are often not about work).
_WORK_FRAME = re.compile(r"\b(?:for work|for a living|by profession|by trade|professionally)\b", re.I)
_HOBBY = re.compile(r"\b(?:for fun|as a hobby|in my (?:free|spare) time|sometimes|on weekends|at weekends)\b", re.I)


def work(s: str, c: Collector) -> bool:
    found = False
    changed = bool(_CHANGE.search(s))
    job = re.search(r"\bi work (?:at|for|in) ([^,.;!?]+?) as an? ([a-z][\w -]*?)(?=[,.;!?]| and |$)", s, re.I)
    if job:
        c.add("fact", _works_as(clean_object(job.group(2), 4)), 0.7, change=changed)
        c.add("fact", f"works at {clean_object(job.group(1), 5)}", 0.7, change=changed)
        return True
    job = re.search(
        r"\bi(?:'m| am|'ve been| have been)? (?:now |currently |still )?work(?:ing)? as (?:an? )?([a-z][\w -]*?)"
        + _OBJ_END,
        s,
        re.I,
    )
    if job is None:
        job = re.search(rf"\b(?:i'm|i am) (?:now )?an? ([a-z][\w-]*(?: [a-z][\w-]*)?){_OBJ_END}", s, re.I)
        if job and not _WORK_FRAME.search(s) and not _looks_like_job(job.group(1)):
            job = None
    if job is None:
        # "I've become a dentist", "I became a nurse": a new job, so a change.
        job = re.search(
            r"\bi(?:'ve| have)? (?:just |recently |now )?(?:become|became) an? "
            rf"([a-z][\w-]*(?: [a-z][\w-]*)?){_OBJ_END}",
            s,
            re.I,
        )
        if job and not _WORK_FRAME.search(s) and not _looks_like_job(job.group(1)):
            job = None
        changed = changed or job is not None
    if job:
        c.add("fact", _works_as(clean_object(job.group(1), 4)), 0.7, change=changed)
        found = True
    elif not _HOBBY.search(s):
        found = _job_verb(s, c, changed)
    place = re.search(
        r"\bi(?:(?:'m| am|'ve been| have been)? (?:now |currently |still )?(?:work|working)|(?:'ve| have) worked)"
        r"(?: as an? [\w -]+?)? (?:at|for) ([^,.;!?]+)",
        s,
        re.I,
    ) or re.search(r"\b(?:I'm|I am) an? [a-z][\w -]* (?:at|for) ([A-Z][^,.;!?]+)", s)
    where = _without_duration(place.group(1)) if place else ""
    if where:
        c.add("fact", f"works at {clean_object(where, 5)}", 0.7, change=changed)
        found = True
    if re.search(r"\b(?:i'm|i am) (?:now )?retired\b|\bi (?:just )?retired\b", s, re.I):
        c.add("fact", "is retired", 0.7, change=True)
        found = True
    return found


# "for six years (now)", "for a while": how long, not where; cut from a workplace and
# refused as one ("I have worked for ten years" names no employer).
_DURATION = re.compile(
    r"(?:^|\s+for\s+)(?:(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|several|some|a few|\d+)\s+)?"
    r"(?:years?|months?|weeks?|days?|decades?|a while|ages|a long time|long)\b.*$",
    re.I,
)


# Where in the place, or since when: detail after the place itself ("London, not far from
# the river" said without punctuation by a lower-case ASR).
_PLACE_DETAIL = re.compile(
    r"\s+(?:not far from|near|close to|next to|right by|just outside|outside|by the|with (?:my|our)|for|since|"
    r"last|two|three|a few|about|a couple)\b.*$",
    re.I,
)


def _looks_like_job(noun: str) -> bool:
    return noun.split()[-1].lower() not in _NOT_JOBS and bool(_JOB_SUFFIX.search(noun.lower()))


def _without_duration(obj: str) -> str:
    """The workplace without how long; empty when the words say when, not where ("I'm working
    as a plumber at the moment")."""
    obj = _DURATION.sub("", obj.strip()).strip()
    return "" if _WHEN_NOT_WHERE.match(obj) else obj


# "at the moment", "at present", "at night": when, not a workplace.
_WHEN_NOT_WHERE = re.compile(
    r"(?:the )?(?:moment|present|minute|time being|same time|nights?|weekends?|the weekend|times|first|last)\b", re.I
)


def _works_as(role: str) -> str:
    return f"works as {'an' if role[:1].lower() in 'aeiou' else 'a'} {role}"


def _job_verb(s: str, c: Collector, changed: bool) -> bool:
    for verb, role in _JOB_VERBS:
        m = re.search(rf"\bi (?:now |currently |still )?{verb}(?=[,.;!?]|$| and | at | for | in | to )", s, re.I)
        if m is None:
            continue
        obj = m.group(1) if m.groups() else None
        name = role.format(obj.lower()) if obj else role.replace("{} ", "")
        c.add("fact", _works_as(name), 0.7, change=changed)
        return True
    return False


def home(s: str, c: Collector) -> bool:
    found = False
    live = re.search(
        rf"{_I}(?:'m|'re| am| are)? (?:now |currently |still |both )?(?:live|living) in ([^,.;!?]+)",
        s,
        re.I,
    )
    moved = re.search(
        rf"{_I}(?:'ve| have)? (?:just |recently |finally |now |all )?(?:moved|relocated)(?: back| over| here)?"
        r"(?: from (?P<old>[^,.;!?]+?))? to (?P<new>[^,.;!?]+)",
        s,
        re.I,
    )
    hit = live or moved
    if hit:
        place = _PLACE_DETAIL.sub("", hit.group(1) if live else hit.group("new"))
        c.add("fact", f"lives in {clean_object(place, 5)}", 0.7, change=bool(moved) or bool(_CHANGE.search(s)))
        found = True
    if moved and moved.group("old"):
        # "We moved from Lyon to Paris": Lyon is where they lived, not where they live.
        c.add("fact", f"lives in {clean_object(moved.group('old'), 5)}", 0.7, retract=True)
    if not hit:
        # "Home for me is Lyon", "my flat is in Lyon": a place needs its capital letter here.
        home_is = r"\b(?:home for (?:me|us) is|(?:my|our) (?:home|flat|house|apartment|place) is in)"
        where = re.search(rf"{home_is} ([A-Z][^,.;!?]*)", s, re.I)
        if where and where.group(1)[0].isupper():
            c.add("fact", f"lives in {clean_object(_PLACE_DETAIL.sub('', where.group(1)), 5)}", 0.6)
            found = True
    origin = re.search(r"\b[Ii](?:'m| am| come) (?:originally )?from ([A-Z][^,.;!?]*)", s)
    if origin:
        c.add("fact", f"is from {clean_object(origin.group(1), 5)}", 0.6)
        found = True
    return found


def goals(s: str, c: Collector, day: datetime | None = None) -> bool:
    """Wishes and plans, as facts, never as likings (memory/wishes.py): "I'd like to learn to
    play tennis too" -> "wants to learn to play tennis", "I'm going to try surfing next week"
    -> "is going to try surfing in the week after <date>"."""
    plan = plan_in(s, day)
    if plan is None:
        return False
    c.add("fact", plan, 0.6)
    return True


def preferences(s: str, c: Collector) -> bool:
    neg = re.search(
        r"\bi (?:really |just |absolutely |honestly )?(?:don't|do not|never|didn't) (?:really )?(?:like|love|enjoy|care for) ([^,.;!?]+)",  # noqa: E501
        s,
        re.IGNORECASE,
    ) or re.search(
        r"\bi (?:really |absolutely |just )?(?:hate|dislike|detest|loathe|despise|can't stand|cannot stand|can't bear)"
        r" ([^,.;!?]+)|\b(?:i'm|i am) not (?:a (?:big |huge )?fan of|into|big on) ([^,.;!?]+)",
        s,
        re.I,
    )
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
        obj = clean_object(next(g for g in m.groups() if g), 6)
        if obj and obj.split()[0].lower() not in _PRONOUN_OBJECTS and not obj.lower().startswith(("to hear", "to see")):
            c.add("preference", f"{verb} {third_person(obj)}", 0.5, change=bool(_CHANGE.search(s)))
            found = True
    passion = re.search(
        r"\b(?:one of my (?:passions|hobbies|favou?rite things) is|my (?:passion|hobby) is) ([^,.;!?]+)", s, re.I
    ) or re.search(r"^([^,.;!?]+?) (?:is|are) my favou?rite (?:thing|hobby|pastime)\b", s.strip(), re.I)
    obj = clean_object(passion.group(1), 6) if passion else ""
    if obj and obj.split()[0].lower() not in _PRONOUN_OBJECTS:
        c.add("preference", f"likes {third_person(obj)}", 0.5)
        found = True
    fav = re.search(r"\bmy favou?rite ([\w ]+?) (?:is|are) ([^,.;!?]+)", s, re.IGNORECASE)
    if fav:
        c.add("preference", f"favorite {fav.group(1).lower()} is {clean_object(fav.group(2), 6)}", 0.5)
        found = True
    return found


_ADVERB = r"(?:usually|always|often|normally|generally|regularly|typically)"


# A liking or a dislike is no habit ("I love fishing on Sundays").
_LIKING_VERB = rf"(?:{LIKING_VERBS}|hate|dislike|detest)\b"


def adverbial_when(when: str) -> bool:
    return re.fullmatch(_ADVERB, when, re.I) is not None


def habits(s: str, c: Collector) -> bool:
    """Habits: "every morning I go running", "on weekends I play chess", "I usually walk to work"."""
    lead = re.search(rf"\b({FREQUENCY}),? (?:i|we) (?:usually |often |always |normally )?([a-z][^,.;!?]+)", s, re.I)
    tail = re.search(rf"{_I} ((?!(?:am|was|were|'m|have been)\b)[a-z][^,.;!?]*?) ({FREQUENCY})\b", s, re.I)
    adverb = re.search(rf"{_I} (usually|always|often|normally|generally|regularly|typically) ([a-z][^,.;!?]+)", s, re.I)
    if lead:
        when_said, what = lead.group(1), lead.group(2)
    elif tail:
        when_said, what = tail.group(2), tail.group(1)
    elif adverb:
        when_said, what = adverb.group(1), adverb.group(2)
    else:
        return False
    when = when_said.lower()
    # "I usually swim on Sundays": the frequency is "on Sundays", the adverb is not the verb;
    # nor is an intensifier ("I really walk to work every day", not "reallies walk").
    what = re.sub(rf"^{_ADVERB} ", "", what.strip(), flags=re.I) if not adverbial_when(when) else what
    what = re.sub(rf"^(?:{INTENSIFIERS} )+", "", what.strip(), flags=re.I)
    what = clean_object(re.sub(rf"\s*\b(?:{FREQUENCY})\b", "", what, flags=re.I), 8)
    if len(what.split()) < 1 or what.split()[0].lower() in {"don't", "do", "never", "not", "can't", "am", "was"}:
        return False
    if re.match(_LIKING_VERB, what, re.I):
        return False  # "I love fishing on Sundays" is a liking: preferences() writes it, once
    adverbial = adverbial_when(when)
    when = when if adverbial else when_said[:1].lower() + when_said[1:]  # "on Sundays", "every week"
    text = f"{when} {verb_phrase_3rd(what)}" if adverbial else f"{verb_phrase_3rd(what)} {when}"
    c.add("fact", text, 0.5)
    return True


def retractions(s: str, c: Collector) -> bool:
    """What the user says has ended."""
    found = False
    quit_ = (
        re.search(
            r"\bi (?:just |recently |finally )?(?:quit|left|lost) my (?:old |previous |former )?(?:job|position) "
            r"(?:at|with|in) ([^,.;!?]+)",
            s,
            re.I,
        )
        or re.search(
            r"\b[Ii] (?:just |recently |finally )?(?:quit|left|resigned from|was fired from|got fired from|"
            r"was laid off from|got laid off from|retired from) ([A-Z][^,.;!?]*)",
            s,
        )
        or re.search(r"\bi (?:no longer|don't|do not) work (?:at|for) ([^,.;!?]+?)(?: any ?more)?[.!?]?$", s, re.I)
    )
    if quit_:
        c.add("fact", f"works at {clean_object(quit_.group(1), 5)}", 0.7, retract=True)
        found = True
    if re.search(r"\bi (?:just |recently |finally )?(?:quit|left|lost) my (?:old |previous |former )?job\b", s, re.I):
        # Whatever the job and workplace were, they have ended.
        c.add("fact", "works as their former job", 0.7, retract=True, retract_slot=True)
        if not quit_:
            c.add("fact", "works at their former workplace", 0.7, retract=True, retract_slot=True)
        found = True
    liked = re.search(
        rf"{_I} (?:no longer|don't|do not) (like|love|enjoy) ([^,.;!?]+?) any ?more\b|{_I} no longer (like|love|enjoy)"
        r" ([^,.;!?]+)",
        s,
        re.I,
    )
    if liked:
        verb, obj = (liked.group(1), liked.group(2)) if liked.group(1) else (liked.group(3), liked.group(4))
        what = clean_object(obj, 6)
        if what and what.split()[0].lower() not in _PRONOUN_OBJECTS:
            # The liking's slot (pref:<thing>) closes whatever verb stored it ("likes", "loves", "enjoys").
            c.add("preference", f"{verb.lower()}s {third_person(what)}", 0.5, retract=True)
            c.add("preference", f"no longer {verb.lower()}s {third_person(what)}", 0.4)
            return True
    # "I've lost interest in X": a liking has ended, whatever verb stored it (its slot closes).
    lost = re.search(
        rf"{_I}(?:'ve| have)? (?:kind of |sort of |completely )?lost (?:all )?interest in ([^,.;!?]+)", s, re.I
    )
    if lost:
        what = clean_object(lost.group(1), 6)
        if what and what.split()[0].lower() not in _PRONOUN_OBJECTS:
            c.add("preference", f"likes {third_person(what)}", 0.5, retract=True)
            c.add("preference", f"lost interest in {third_person(what)}", 0.4)
            return True
    gone = re.search(rf"{_I} (?:don't|do not|no longer) (?:have|own) an? (" + _PETS + r"|car|bike)\b", s, re.I)
    if gone:
        c.add("fact", f"has a {gone.group(1).lower()}", 0.6, retract=True)
        found = True
    not_job = re.search(r"\b(?:i'm|i am) (?:not|no longer) an? ([a-z][\w -]*?)(?: any ?more)?(?=[,.;!?]|$)", s, re.I)
    if not_job and re.search(r"\b(?:any ?more|no longer)\b", s, re.I):
        c.add("fact", _works_as(clean_object(not_job.group(1), 4)), 0.7, retract=True)
        found = True
    left = re.search(rf"{_I} (?:don't|do not|no longer) live in ([^,.;!?]+?)(?: any ?more)?(?=[,.;!?]|$)", s, re.I)
    if left and re.search(r"\b(?:any ?more|no longer)\b", s, re.I):
        c.add("fact", f"lives in {clean_object(left.group(1), 5)}", 0.7, retract=True)
        found = True
    if found:
        return True
    stopped = re.search(
        rf"{_I}(?:'ve| have)? (?:just |finally |recently |completely )?(?:stopped|quit|given up|gave up)(?: on)? "
        r"([a-z]+ing\b[^,.;!?]*)",
        s,
        re.I,
    )
    if stopped:
        what = third_person(clean_object(stopped.group(1), 6))
        c.add("fact", what, 0.6, retract=True)
        c.add("fact", f"stopped {what}", 0.5)
        return True
    no_more = (
        re.search(rf"{_I} (?:no longer|don't|do not|never) ([a-z][^,.;!?]*?) any ?more\b", s, re.I)
        or re.search(rf"{_I} no longer ([a-z][^,.;!?]*)", s, re.I)
        # "These days I never play the piano": never, now, is an ending.
        or (
            re.search(r"\b(?:these days|nowadays|now)\b", s, re.I)
            and re.search(rf"{_I} never ([a-z][^,.;!?]*)", s, re.I)
        )
    )
    if no_more and no_more.group(1).split()[0].lower() not in {"like", "love", "enjoy", "have", "work", "live", "know"}:
        what = clean_object(no_more.group(1), 6)
        c.add("fact", verb_phrase_3rd(what), 0.6, retract=True)
        c.add("fact", f"no longer {verb_phrase_3rd(what)}", 0.5)
        return True
    return False


def body(s: str, c: Collector) -> bool:
    found = False
    pet = re.search(
        rf"{_I} (?:have|got|adopted|own|'ve got|have got) (?:a|an|two|three|\d+) (?:little |new |pet |sweet )?("
        + _PETS
        + r")s?"
        r"(?:,? (?:named|called) ([A-Za-z][a-zà-ÿ'-]+))?",
        s,
        re.IGNORECASE,
    ) or re.search(
        r"\b(?:my|our) (" + _PETS + r")(?:'s name is| is called| named) ([A-Za-z][a-zà-ÿ'-]+)", s, re.IGNORECASE
    )
    if pet:
        kind, name = pet.group(1).lower(), pet.group(2)
        c.add("fact", f"has a {kind} named {name[:1].upper() + name[1:]}" if name else f"has a {kind}", 0.6)
        found = True
    allergy = re.search(r"\bi(?:'m| am) (?:very |severely |really |deathly )?allergic to ([^,.;!?]+)", s, re.I)
    allergy2 = re.search(r"\bi have an? (\w+) allergy", s, re.IGNORECASE)
    if allergy or allergy2:
        what = clean_object(allergy.group(1), 4) if allergy else (allergy2.group(1) if allergy2 else "")
        c.add("fact", f"is allergic to {what}", 0.9)
        found = True
    bday = re.search(r"\bmy birthday is (?:on )?([^,.;!?]+)", s, re.IGNORECASE) or re.search(
        r"\bi was born on ([^,.;!?]+)", s, re.IGNORECASE
    )
    if bday:
        c.add("fact", f"birthday is {clean_object(bday.group(1), 5)}", 0.8)
        found = True
    age = re.search(r"\b(?:i'm|i am|i just turned) (\d{1,3})(?: years old)?\b", s, re.IGNORECASE)
    if age and 3 <= int(age.group(1)) <= 120:
        c.add("fact", f"is {age.group(1)} years old", 0.6)
        found = True
    return found


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


def event(s: str, c: Collector, day: datetime) -> None:
    m = re.match(
        r"^(?:(?:so|well|actually|yeah|yes|oh|and|but|also|guess what|btw)[,!]? )*(i|we)"
        r"(?: (?:just|recently|finally|also|actually|even))? (" + _EVENT_VERBS + r") (.+)$",
        s,
        re.IGNORECASE,
    )
    if m is None:
        return
    verb = m.group(2).lower()
    rest = clean_object(relative_dates(m.group(3), day), 16)
    if len(rest.split()) < 2:
        return
    verb = _THIRD_PERSON.get(verb, verb)
    text = f"{verb} {third_person(rest)}"
    if m.group(1).lower() == "we":
        text += " with others"
    c.add("fact", text, 0.4)

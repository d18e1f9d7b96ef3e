"""Sentence templates, by kind, and their deterministic dev/test split.

A template's id is its kind plus a hash of its text, so the split does not depend on the
order of this file. Within each kind, templates are ordered by the hash of their id and
alternate between the dev and the test half, so each half has every kind and about half
of its phrasings. A scenario uses the templates of one half only.

Kinds marked in `NO_MEMORY` must not create any memory (small talk, questions, jokes).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

TEXTS: dict[str, tuple[str, ...]] = {
    "intro": (
        "Hi, my name is {name}.",
        "Hello, I'm {name}.",
        "{name} here.",
        "Call me {name}.",
        "Hello there, I am {name}, nice to meet you.",
        "My name's {name}.",
        "Hi! This is {name}.",
        "Good morning, {name} here, nice to meet you.",
        "Hey, I'm {name}. Pleased to meet you.",
        "The name is {name}.",
        "Everyone calls me {name}.",
        "Hi there, you can call me {name}.",
        "Hello! My name is {name}, by the way.",
        "Nice to meet you. I'm {name}.",
    ),
    "job_noun": (
        "I'm {job}.",
        "I work as {job}.",
        "I am {job} by profession.",
        "I've been {job} for ten years.",
        "For work, I'm {job}.",
        "My job? I'm {job}.",
        "I'm working as {job} at the moment.",
        "By trade I am {job}.",
    ),
    "job_verb": (
        "I {jobv}.",
        "For a living, I {jobv}.",
        "I {jobv}, that's my job.",
        "At work I {jobv}.",
        "Professionally, I {jobv}.",
        "I {jobv}, and I've done it for years.",
    ),
    "home": (
        "I live in {city}.",
        "My home is in {city}.",
        "I've lived in {city} for years.",
        "Home for me is {city}.",
        "My flat is in {city}.",
        "We live in {city}.",
        "I'm living in {city} these days.",
        "I have a small house in {city}.",
    ),
    "family": (
        "I have a {rel} called {rname}.",
        "My {rel}'s name is {rname}.",
        "I have a {rel} named {rname}.",
        "{rname} is my {rel}.",
        "We have a {rel}, {rname}.",
        "My {rel} is called {rname}.",
        "I've got a {rel}; {pos} name is {rname}.",
        "My {rel} {rname} is the best.",
    ),
    "relation": (
        "{other} is my {rel}.",
        "By the way, {other} is my {rel}.",
        "You'll meet {other} soon, {pron} is my {rel}.",
        "My {rel} is called {other}.",
        "I came here with my {rel} {other}.",
        "Let me introduce my {rel}, {other}.",
        "{other}, my {rel}, will talk to you next.",
        "You may know {other}. {Pron} is my {rel}.",
    ),
    "relation_colleague": (
        "{other} and I work together.",
        "I work with {other}, we share an office.",
        "{other} and I are colleagues.",
        "{other} is a colleague of mine.",
    ),
    "relation_friend": (
        "{other} and I have been friends for years.",
        "{other} is a good friend of mine.",
        "My best friend is {other}.",
        "{other} and I are friends.",
    ),
    "relation_sibling": (
        "{other} and I are siblings.",
        "{other} is my little {rel}.",
        "{other} is my older {rel}.",
        "{other} and I grew up together, {pron} is my {rel}.",
    ),
    "relation_neighbour": (
        "{other} lives next door to me.",
        "{other} and I are neighbours.",
        "{other} is my neighbour.",
        "My neighbour is {other}.",
    ),
    "relation_partner": (
        "{other} and I are married.",
        "I'm married to {other}.",
        "{other} is my {rel}.",
        "My {rel} is {other}.",
    ),
    "like": (
        "I love {like}.",
        "I really enjoy {like}.",
        "I'm a big fan of {like}.",
        "I'm really into {like}.",
        "{like} is my favourite thing.",
        "I absolutely love {like}.",
        "I'm crazy about {like}.",
        "Nothing makes me happier than {like}.",
        "I like {like} a lot.",
        "One of my passions is {like}.",
    ),
    "dislike": (
        "I hate {dislike}.",
        "I can't stand {dislike}.",
        "I really don't like {dislike}.",
        "I absolutely hate {dislike}.",
        "I really dislike {dislike}.",
        "I detest {dislike}.",
        "I can't bear {dislike}.",
        "I don't like {dislike} at all.",
    ),
    "habit": (
        "I {habit} {when}.",
        "{When}, I {habit}.",
        "I usually {habit} {when}.",
        "I always {habit} {when}.",
        "Every week I {habit}.",
        "I make a point to {habit} {when}.",
        "My routine is to {habit} {when}.",
        "I never miss a chance to {habit} {when}.",
    ),
    "smalltalk": (
        "What a lovely day.",
        "How are you today?",
        "It's quite cold this morning, isn't it?",
        "Thanks for listening.",
        "Sorry, I only have a minute.",
        "Can you hear me all right?",
        "That's interesting.",
        "Okay, see you later.",
        "I'm a bit tired today.",
        "I'm so glad the weekend is coming.",
        "Well, that's all for now.",
        "Anyway, let's keep going.",
        "It's nice to chat with you.",
        "Right, where was I?",
        "Thank you, that's very kind.",
        "Goodbye for now.",
    ),
    "question": (
        "Can you recommend a good book?",
        "Do you like {qlike}?",
        "Will it be sunny tomorrow?",
        "Who won the match last night?",
        "Where is the nearest post office?",
        "Does anyone here enjoy {qlike}?",
        "What do you think about {qlike}?",
        "Do you know a good place for {qlike}?",
        "What time is it?",
        "Is {qlike} popular around here?",
    ),
    "question_person": (
        "Have you met {qname}?",
        "Is {qname} coming today?",
        "Do you know {qname}?",
        "Did {qname} call you?",
        "Have you seen {qname} around?",
        "Do you know where {qname} lives?",
        "Has {qname} been here today?",
        "What do you think of {qname}?",
    ),
    "joke": (
        "My wife is a robot. Just kidding!",
        "I'm actually a secret agent. Ha, no, just joking.",
        "My cat is the real boss of the house, ha ha.",
        "I'm basically a professional couch potato, ha.",
        "My husband is a vampire, he never sees the sun. Just kidding.",
        "I'm the king of France, obviously. Only joking.",
    ),
    "greet_again": (
        "Hi again.",
        "Hello, it's me again.",
        "Good morning!",
        "Hey, I'm back.",
        "Hello again, how have you been?",
        "Hi, nice to see you again.",
    ),
    "change_job": (
        "I quit my job as {job}. These days I work as {job2}.",
        "I'm not {job} any more, I work as {job2} now.",
        "I left my old job, now I'm {job2}.",
        "Big news, I changed careers: I'm {job2} now.",
        "I gave up being {job}, these days I work as {job2}.",
        "I stopped working as {job}. I've become {job2}.",
    ),
    "move": (
        "We moved to {city2} last month.",
        "I just moved to {city2}.",
        "I don't live in {city} any more, I moved to {city2}.",
        "I've relocated to {city2}.",
        "My new home is in {city2}.",
        "We packed up and moved to {city2}.",
        "I live in {city2} now.",
        "I left {city} and moved to {city2}.",
    ),
    "retract_like": (
        "I don't like {like} any more.",
        "I've gone off {like} lately.",
        "I'm not into {like} these days.",
        "Honestly, I no longer enjoy {like}.",
        "I used to love {like}, but not any more.",
        "I've lost interest in {like}.",
    ),
    "retract_habit": (
        "I don't {habit} any more.",
        "I stopped {habit_ing}.",
        "I no longer {habit}.",
        "I quit {habit_ing} last month.",
        "I've given up {habit_ing}.",
        "These days I never {habit}.",
    ),
    "ask_like": (
        "Does my {rel} like {like}?",
        "Do you know if my {rel} likes {like}?",
        "Is my {rel} a fan of {like}?",
        "Does my {rel} enjoy {like}?",
    ),
    "ask_habit": (
        "Does my {rel} {habit}?",
        "Do you know whether my {rel} {habit3}?",
        "Is it true that my {rel} {habit3}?",
        "Tell me, does my {rel} {habit}?",
    ),
    "ask_home": (
        "Where does my {rel} live?",
        "Do you remember which city my {rel} lives in?",
        "Which town is my {rel} living in?",
        "Does my {rel} live in {city}?",
    ),
    "ask_job": (
        "What does my {rel} do for a living?",
        "What is my {rel}'s job?",
        "Do you know what my {rel} works as?",
        "Where does my {rel} work, what's the job?",
    ),
}
NO_MEMORY = frozenset({"smalltalk", "question", "question_person", "joke", "greet_again"})


@dataclass(frozen=True)
class Template:
    id: str
    kind: str
    text: str


def template_id(kind: str, text: str) -> str:
    return f"{kind}.{hashlib.sha1(text.encode()).hexdigest()[:8]}"


@cache
def all_templates() -> tuple[Template, ...]:
    return tuple(Template(template_id(k, t), k, t) for k, texts in TEXTS.items() for t in texts)


@cache
def split_of(template: Template) -> str:
    """'dev' or 'test': within its kind, the template's rank by the hash of its id, alternating."""
    same = sorted((t for t in all_templates() if t.kind == template.kind), key=lambda t: _hash(t.id))
    return "dev" if same.index(template) % 2 == 0 else "test"


def templates(split: str, kind: str) -> list[Template]:
    return [t for t in all_templates() if t.kind == kind and split_of(t) == split]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

"""`ask`: answer a question from memory by multi-round retrieval over the store.

1. **Resolve** the people the question names or implies (retrieval/ask_people.py) and its
   time expression (retrieval/timex.py), relative to `as_of` or the latest time memory
   holds; `as_of` also hides everything learnt or said after it.
2. **Round 1** searches episode turns and facts with the question (people's relation
   phrases replaced by their names) through the product's one search
   (retrieval/search.py, recipe `[ask] recipe`), inside the time window.
3. **Later rounds follow links** from the best evidence so far: facts of the people it
   names (entity links), the question again in episodes not yet found (an answer that
   spans sessions), for "when" questions the candidates that say when, and optionally
   the question plus the best item's words. Each search is a ranking; all rankings are
   fused by reciprocal rank (round 1 at weight 1, the others at their `[ask]` weights).
4. **Stop** when a round adds nothing to the best `[ask] evidence` items, when the best
   items hold enough of the question's terms (`enough_coverage`), or after `max_rounds`.
5. **Answer** with the configured LLM from the evidence (task `answer`), otherwise with the
   best evidence itself, saying so; also when the model's answer names nothing in the evidence
   or names the assistant as the person (retrieval/ask_grounding.py). Nothing is written to the store.

A question about someone memory does not know, or an empty store, gets the defined
empty result: `AskResult(empty=True, answer="I have nothing about ...")`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from egomem.config import AskConfig
from egomem.errors import ConfigError, EgomemError, InputError, NotFoundError
from egomem.llm.base import LLMError, LLMProvider
from egomem.privacy.sensitivity import decide, may_recall
from egomem.retrieval.ask_grounding import best_evidence, grounded, names_assistant
from egomem.retrieval.ask_people import People, resolve_people, search_text
from egomem.retrieval.ask_types import (
    AnswerEvidence,
    AnswerInput,
    AnswerOutput,
    AskResult,
    EvidenceItem,
    FactFusion,
    PersonRef,
    TimeWindow,
)
from egomem.retrieval.dense import EmbeddingCache
from egomem.retrieval.lexical import analyze
from egomem.retrieval.search import TurnCorpus, search_facts, speaker_user
from egomem.retrieval.search_config import RECIPES, SearchConfig, SearchFilters, TurnSearch
from egomem.retrieval.timex import asks_time, find_time, iso, mentions_time
from egomem.schemas import Episode, Fact, Sensitivity
from egomem.store.base import MemoryStore

MAX_QUESTION_CHARS = 1000
RRF_K = 60.0


def recipe_of(config: AskConfig) -> SearchConfig:
    recipe = RECIPES.get(config.recipe)
    if recipe is None:
        raise ConfigError(f"ask.recipe {config.recipe!r} is not a search recipe; one of {', '.join(RECIPES)}")
    return recipe


def latest_time(store: MemoryStore) -> float | None:
    """The latest time memory holds (episode ends, when facts became valid); None when empty."""
    times = [e.end for e in store.list_episodes()]
    for u in store.list_users():
        times += [f.valid_from for f in store.list_facts(u.id)]
    return max(times) if times else None


@dataclass
class _Run:
    """One question's rounds: every item found, and the rankings to fuse."""

    evidence_n: int
    fusion: FactFusion
    items: dict[str, EvidenceItem] = field(default_factory=dict)
    rankings: list[tuple[list[str], float]] = field(default_factory=list)
    people_searched: set[str] = field(default_factory=set)
    feedback_used: set[str] = field(default_factory=set)

    def add(self, found: Iterable[EvidenceItem], weight: float, round_no: int, via: str) -> None:
        if weight <= 0:
            return
        keys = []
        for it in found:
            if it.key not in self.items:
                self.items[it.key] = it.model_copy(update={"round": round_no, "via": via})
            keys.append(it.key)
        if keys:
            self.rankings.append((list(dict.fromkeys(keys)), weight))

    def ranked(self) -> list[EvidenceItem]:
        """All items, best first. Fusion is per kind (turns, facts, relations), each divided by
        the total weight of its kind's rankings: later rounds re-rank within a kind, and a kind
        searched more often does not crowd out the others. Facts and relations, the statements
        extraction wrote, are then scaled by `facts_weight` against the raw turns; the two
        are scaled alike, so "what does my sister like" still ranks her fact above the
        relation that only says who she is (scaling facts alone put the relation first); with
        `fold_facts` a fact whose source turn was found too gives that turn its place when it
        ranks higher, so one statement does not fill two evidence slots. (Adding the fact's score
        to the turn's measured far worse on LoCoMo dev: a person's facts all match a question a
        little, and lift their turns.)"""
        score: dict[str, float] = {}
        total: dict[str, float] = {}
        for keys, w in self.rankings:
            group = _group(self.items[keys[0]])
            total[group] = total.get(group, 0.0) + w
            for r, k in enumerate(keys):
                score[k] = score.get(k, 0.0) + w / (RRF_K + 1.0 + r)
        for k, v in score.items():
            group = _group(self.items[k])
            score[k] = v / total[group] * (1.0 if group == "turn" else self.fusion.facts_weight)
        if self.fusion.fold_facts:
            for k, it in self.items.items():
                source = f"turn:{it.episode_id}:{it.source_turn}"
                if it.kind == "fact" and it.source_turn is not None and k in score and source in score:
                    score[source] = max(score[source], score.pop(k))
        order = sorted(score, key=lambda k: -score[k])
        return [self.items[k].model_copy(update={"score": round(score[k], 6)}) for k in order]

    def top_keys(self) -> list[str]:
        return [it.key for it in self.ranked()[: self.evidence_n]]


class Asker:
    """Answers questions over one store. Reuse it for many questions: the turn index of
    the store's episodes is built once per `as_of` (pass `corpus` to share a prebuilt one)."""

    def __init__(
        self,
        store: MemoryStore,
        cache: EmbeddingCache,
        config: AskConfig | None = None,
        llm: LLMProvider | None = None,
        *,
        corpus: TurnCorpus | None = None,
        report: Callable[[str], None] | None = None,
        admins: Sequence[str] = (),
        fusion: FactFusion | None = None,
    ) -> None:
        self.store = store
        # People who may hear others' sensitive facts ([privacy] admins); a question with no asking
        # person (the operator's CLI or API key) is an admin's. Set per question in `ask`.
        self.admins = frozenset(admins)
        self._listener: tuple[str | None, bool] = (None, True)
        # Told each long step as it begins (`egomem ask` shows them: the LLM can take minutes).
        self.report: Callable[[str], None] = report or (lambda _text: None)
        self.cache = cache
        self.config = config or AskConfig()
        self.fusion = fusion or FactFusion(facts_weight=self.config.facts_weight, fold_facts=self.config.fold_facts)
        self.recipe = recipe_of(self.config)
        self.llm = llm
        self._corpora: dict[float | None, TurnCorpus] = {}
        self._turn_texts: dict[float | None, dict[str, list[tuple[int, str]]]] = {}
        if corpus is not None:
            self._corpora[None] = corpus

    # -- public -------------------------------------------------------------------------
    def ask(self, question: str, *, user_id: str | None = None, as_of: float | None = None) -> AskResult:
        q = " ".join(question.split())
        if not q:
            raise InputError("the question is empty")
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"the question is over {MAX_QUESTION_CHARS} characters")
        if user_id is not None:
            self.store.get_user(user_id)  # NotFoundError: a clear "no user" for an unknown id
        self._listener = (user_id, user_id is None or user_id in self.admins)
        result = AskResult(question=q, answer="", answered_by="none", as_of=as_of)
        if not self.store.list_users() and not self.store.list_episodes():
            return self._empty(result, "anything: memory is empty")
        ref = as_of if as_of is not None else latest_time(self.store)
        people = resolve_people(self.store, q, user_id)
        result.people, result.notes = people.found, list(people.notes)
        if people.missing and not people.others:
            return self._empty(result, " or ".join(dict.fromkeys(people.missing)))
        window = self._window(q, ref, as_of, people, result)
        run = _Run(self.config.evidence, self.fusion)
        query = search_text(q, people)
        self.report("searching memory (round 1)")
        self._round_one(run, query, people, user_id, window, as_of)
        if not run.items and window is not None and window.text != self._as_of_text(as_of):
            # Nothing in the question's time: say so, and search all the time memory allows.
            result.notes.append(f"nothing is dated '{window.text}'; searched all times instead")
            window = result.time = self._as_of_window(as_of)
            self._round_one(run, query, people, user_id, window, as_of)
        result.rounds, result.stopped = 1, "max rounds"
        for r in range(2, self.config.max_rounds + 1):
            if self._enough(run, query, people):
                result.stopped = "enough evidence"
                break
            before = run.top_keys()
            self.report(f"searching memory (round {r})")
            self._follow(run, r, q, query, people, window, as_of)
            result.rounds = r
            if run.top_keys() == before:
                result.stopped = "no new evidence"
                break
        else:
            if self.config.max_rounds > 1 and self._enough(run, query, people):
                result.stopped = "enough evidence"
        result.evidence = run.ranked()[: self.config.evidence]
        if not result.evidence:
            what = " or ".join(p.name or p.mention for p in people.found) or "that"
            return self._empty(result, what + (" in that time" if window else ""))
        if people.unknown and not people.others and not self._mentioned(people.unknown, result.evidence):
            return self._empty(result, " or ".join(people.unknown))
        self._answer(result, user_id)
        return result

    # -- time -------------------------------------------------------------------------
    def _window(
        self, q: str, ref: float | None, as_of: float | None, people: People, result: AskResult
    ) -> TimeWindow | None:
        found = find_time(q, ref)
        if found.unresolved:
            result.notes.append(f"could not resolve the time expression '{found.unresolved}'; ignored it")
        since, until, text = found.since, found.until, found.text
        if found.event:
            t = self._event_time(found.event, people, as_of)
            if t is None:
                result.notes.append(f"found nothing dating '{found.event_dir} {found.event}'; ignored it")
            else:
                text = f"{found.event_dir} {found.event}"
                since, until = (None, t) if found.event_dir == "before" else (t, None)
        if as_of is not None:
            until = as_of if until is None else min(until, as_of)
        if since is None and until is None:
            return None
        result.time = TimeWindow(text=text or self._as_of_text(as_of), since=since, until=until)
        return result.time

    @staticmethod
    def _as_of_text(as_of: float | None) -> str:
        return f"as of {iso(as_of)}"

    def _as_of_window(self, as_of: float | None) -> TimeWindow | None:
        return None if as_of is None else TimeWindow(text=self._as_of_text(as_of), until=as_of)

    def _event_time(self, event: str, people: People, as_of: float | None) -> float | None:
        """When the best evidence for `event` ("she moved") was said or learnt, if it holds
        most of the event's words."""
        terms = set(analyze(event))
        if not terms:
            return None
        hits = self._turns(event, None, as_of, limit=5) + self._facts(event, people, None, None, as_of, limit=5)
        for it in hits:
            if it.time is not None and len(terms & set(analyze(it.quote))) >= max(1, (len(terms) + 1) // 2):
                return it.time
        return None

    # -- rounds -----------------------------------------------------------------------
    def _round_one(
        self, run: _Run, query: str, people: People, user_id: str | None, window: TimeWindow | None, as_of: float | None
    ) -> None:
        run.add(self._turns(query, window, as_of), 1.0, 1, "question")
        ids = people.ids or ([user_id] if user_id else [])
        run.people_searched.update(ids)
        run.add(self._facts(query, people, ids or None, window, as_of), 1.0, 1, "question")
        for ref in people.found:
            if ref.relation and ref.relation != "self":
                run.add(self._relation_items(ref, user_id, as_of), 1.0, 1, f"person: {ref.mention}")

    def _follow(
        self,
        run: _Run,
        r: int,
        q: str,
        query: str,
        people: People,
        window: TimeWindow | None,
        as_of: float | None,
    ) -> None:
        cfg = self.config
        top = run.ranked()[: run.evidence_n]
        # Entity links: people the evidence names, whose facts were not searched yet.
        named = self._people_in(top, run.people_searched)
        for uid, name in named.items():
            run.people_searched.add(uid)
            facts = self._facts(query, people, [uid], window, as_of)
            run.add(facts, cfg.people_weight, r, f"person in evidence: {name}")
        # The question again, in episodes none of the best items come from.
        seen_eps = {it.episode_id for it in top if it.episode_id}
        if seen_eps and cfg.other_episodes_weight > 0:
            run.add(self._turns(query, window, as_of, exclude=seen_eps), cfg.other_episodes_weight, r, "other episodes")
        # "When ...?": among the candidates, those that say when.
        if r == 2 and cfg.time_weight > 0 and asks_time(q):
            dated = [it for it in run.ranked() if it.kind == "turn" and mentions_time(it.quote)]
            run.add(dated[: cfg.pool], cfg.time_weight, r, "says when")
        # Feedback: the question with the best item not used yet.
        if cfg.feedback_weight > 0:
            best = next((it for it in top if it.kind == "turn" and it.key not in run.feedback_used), None)
            if best is not None:
                run.feedback_used.add(best.key)
                # The source ranks first in its own feedback search, which keeps it on top (leaving it
                # out measured worse on LoCoMo dev: single-hop R@10 0.81 -> 0.54 on conversation 1).
                run.add(self._turns(f"{query} {best.quote}", window, as_of), cfg.feedback_weight, r, "feedback")

    def _enough(self, run: _Run, query: str, people: People) -> bool:
        if self.config.enough_coverage > 1.0:
            return False
        names = {t for p in people.found for t in analyze(p.name or "")}
        terms = set(analyze(query)) - names
        if not terms:
            return True
        held: set[str] = set()
        for it in run.ranked()[:3]:
            held.update(analyze(it.quote))
        return len(terms & held) / len(terms) >= self.config.enough_coverage

    # -- searches -----------------------------------------------------------------------
    def corpus(self, as_of: float | None) -> TurnCorpus:
        c = self._corpora.get(as_of)
        if c is None:
            c = self._corpora[as_of] = TurnCorpus(
                self.store, self.cache, self.recipe.turns or TurnSearch(), SearchFilters(until=as_of)
            )
        return c

    def _turns(
        self,
        query: str,
        window: TimeWindow | None,
        as_of: float | None,
        *,
        exclude: set[str] | None = None,
        limit: int | None = None,
    ) -> list[EvidenceItem]:
        if self.recipe.turns is None:
            return []
        corpus = self.corpus(as_of)
        limit = limit or self.config.pool
        filtered = window is not None or exclude is not None or as_of is not None
        out: list[EvidenceItem] = []
        names: dict[str, str] = {}  # user id -> name, for who said each turn
        for i, score in corpus.rank(query, len(corpus.units) if filtered else limit):
            u = corpus.units[i]
            ep = u.episode
            if exclude and ep.id in exclude:
                continue
            if as_of is not None and ep.start > as_of:
                continue
            if window is not None and not _overlaps(ep.start, ep.end, window):
                continue
            person_id, person = _who_said(self.store, ep, u.speaker, names)
            if not self._may_quote(u.text, person_id, ep.participants):
                continue
            out.append(
                EvidenceItem(
                    kind="turn" if u.turn_index is not None else "summary",
                    quote=u.text,
                    score=score,
                    round=1,
                    time=ep.start,
                    time_text=iso(ep.start),
                    speaker=u.speaker or None,
                    person_id=person_id,
                    person=person,
                    episode_id=ep.id,
                    turn_index=u.turn_index,
                )
            )
            if len(out) >= limit:
                break
        return out

    def _facts(
        self,
        query: str,
        people: People,
        ids: list[str] | None,
        window: TimeWindow | None,
        as_of: float | None,
        *,
        limit: int | None = None,
    ) -> list[EvidenceItem]:
        recipe = self.recipe.facts
        if recipe is None:
            return []
        users = {u.id: u.name for u in self.store.list_users()}
        pool: list[Fact] = []
        for uid in ids if ids is not None else list(users):
            pool += [f for f in self._facts_of(uid, as_of) if window is None or _in(f.valid_from, window)]
        out = []
        for hit in search_facts(pool, query, self.cache, recipe, limit or self.config.pool):
            f = hit.fact
            out.append(
                EvidenceItem(
                    kind="fact",
                    quote=f.text,
                    score=hit.score,
                    round=1,
                    time=f.valid_from,
                    time_text=iso(f.valid_from),
                    person_id=f.user_id,
                    person=users.get(f.user_id),
                    episode_id=f.source_episode,
                    fact_id=f.id,
                    source_turn=self._source_turn(f, as_of),
                )
            )
        return out

    def _source_turn(self, fact: Fact, as_of: float | None) -> int | None:
        """The turn of the fact's episode that holds the words it was extracted from."""
        quote = _norm(fact.source_text or "")
        if not fact.source_episode or not quote:
            return None
        texts = self._turn_texts.get(as_of)
        if texts is None:
            texts = self._turn_texts[as_of] = {}
            for u in self.corpus(as_of).units:
                if u.turn_index is not None and u.text.strip():
                    texts.setdefault(u.episode.id, []).append((u.turn_index, _norm(u.text)))
        turns = texts.get(fact.source_episode, [])
        return next((i for i, text in turns if quote in text or text in quote), None)

    def _may_quote(self, text: str, person_id: str | None, participants: list[str]) -> bool:
        """A turn's words are another person's sensitive words when they would be a sensitive fact: only
        the person who said them (or whose episode it is, when the speaker is unknown) or an admin hears them."""
        listener, admin = self._listener
        if admin or decide(text, text) == Sensitivity.NONE:
            return True
        owner = person_id or (participants[0] if len(participants) == 1 else None)
        return owner is not None and owner == listener

    def _facts_of(self, user_id: str, as_of: float | None) -> list[Fact]:
        """The facts the asker may hear: another person's sensitive facts only for an admin."""
        listener, admin = self._listener
        facts = self.store.list_facts(user_id, include_history=as_of is not None)
        return [
            f
            for f in facts
            if (as_of is None or (f.valid_from <= as_of and (f.valid_to is None or f.valid_to > as_of)))
            and may_recall(f.sensitivity, f.user_id, listener, admin=admin)
        ]

    def _relation_items(self, ref: PersonRef, user_id: str | None, as_of: float | None) -> list[EvidenceItem]:
        if user_id is None or ref.user_id is None:
            return []
        asker = self.store.get_user(user_id).name or "you"
        out = []
        for rel in self.store.list_relations(user_id, include_history=as_of is not None):
            if ref.user_id not in (rel.object_id, rel.subject_id) or (as_of is not None and rel.valid_from > as_of):
                continue
            if as_of is not None and rel.valid_to is not None and rel.valid_to <= as_of:
                continue
            quote = f"{ref.name} is {asker}'s {ref.relation}"
            out.append(
                EvidenceItem(
                    kind="relation",
                    quote=quote,
                    score=1.0,
                    round=1,
                    time=rel.valid_from,
                    time_text=iso(rel.valid_from),
                    person_id=ref.user_id,
                    person=ref.name,
                    episode_id=rel.source_episode,
                    relation_id=rel.id,
                )
            )
        return out

    def _people_in(self, items: list[EvidenceItem], searched: set[str]) -> dict[str, str]:
        """Known people whose names the items hold (or who said them), not searched yet."""
        out: dict[str, str] = {}
        users = [u for u in self.store.list_users() if u.name and u.id not in searched]
        if not users:
            return out
        text = " ".join(f"{it.speaker or ''} {it.quote}" for it in items).lower()
        words = set(text.replace("'s", " ").split())
        for u in users:
            assert u.name is not None
            first = u.name.split()[0].lower()
            if u.name.lower() in text or first in words:
                out[u.id] = u.name
        return out

    @staticmethod
    def _mentioned(words: list[str], items: list[EvidenceItem]) -> bool:
        text = " ".join(it.quote for it in items).lower()
        return any(w.lower() in text for w in words)

    # -- answers ------------------------------------------------------------------------
    def _empty(self, result: AskResult, what: str) -> AskResult:
        result.empty = True
        result.answer = f"I have nothing about {what}."
        result.answered_by = "none"
        result.evidence = []
        return result

    def _answer(self, result: AskResult, user_id: str | None) -> None:
        if self.llm is not None and self.config.llm and self.llm.name != "rules":
            self.report(f"asking the language model ({self.llm.name}) with {len(result.evidence)} evidence item(s)")
            try:
                out = self.llm.run("answer", self._answer_input(result, user_id), AnswerOutput)
            except LLMError as exc:
                result.notes.append(f"the language model did not answer ({exc.reason}); showing the best evidence")
            except EgomemError as exc:  # e.g. a prompt file missing for the provider's prompt version
                result.notes.append(f"the language model could not be asked ({exc}); showing the best evidence")
            else:
                answer = out.answer.strip() or "I don't know from memory."
                if grounded(answer, result.question, result.evidence):
                    result.answer, result.answered_by = answer, f"llm:{self.llm.name}"
                    return
                # Not from the evidence ("Assistant" for a question evidence #1 answers): the
                # best evidence itself, saying what the model said instead.
                why = "the assistant itself" if names_assistant(answer) else "nothing in the evidence"
                result.model_answer = answer
                result.notes.append(f'the language model answered "{_short(answer)}", which names {why}')
                best = best_evidence(result.evidence)
                result.answer = (
                    f'The language model\'s answer named {why}; the best evidence is: "{best.quote}"{_source(best)}.'
                )
                result.answered_by = "evidence"
                return
        best = best_evidence(result.evidence)
        result.answer = f'No language model answered; the best evidence is: "{best.quote}"{_source(best)}.'
        result.answered_by = "evidence"

    def _answer_input(self, result: AskResult, user_id: str | None) -> AnswerInput:
        asker = ""
        if user_id is not None:
            try:
                asker = self.store.get_user(user_id).name or ""
            except NotFoundError:
                asker = ""
        ev = [
            AnswerEvidence(n=i + 1, text=it.quote, who=it.person or it.speaker or "", when=(it.time_text or "")[:10])
            for i, it in enumerate(result.evidence)
        ]
        return AnswerInput(question=result.question, asking_user=asker, evidence=ev)


def _group(it: EvidenceItem) -> str:
    return "turn" if it.kind in ("turn", "summary") else it.kind


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _short(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _source(it: EvidenceItem) -> str:
    who = it.person or it.speaker
    parts = [p for p in (who, (it.time_text or "")[:10]) if p]
    return f" ({', '.join(parts)})" if parts else ""


def _overlaps(start: float, end: float, w: TimeWindow) -> bool:
    return (w.since is None or end >= w.since) and (w.until is None or start <= w.until)


def _in(t: float, w: TimeWindow) -> bool:
    return (w.since is None or t >= w.since) and (w.until is None or t <= w.until)


def _who_said(store: MemoryStore, ep: Episode, speaker: str, names: dict[str, str]) -> tuple[str | None, str | None]:
    """(person_id, person) of a turn: the participant who said it, when the speaker is one."""
    uid = speaker_user(store, ep, speaker, names) if speaker else None
    name = names.get(uid) if uid else None
    return uid, name if name != "user" else None

"""`egomem eval dialog`: a dialog model answers the memory turns of a script; an LLM judge scores them.

For every selected turn (level 1: the user's own profile; level 2: people they know) the
responder gets the session user's Level-1 MemChunk, then the user's words; when it emits a
`<retr>` query it gets a Level-2 MemChunk before its next token, as the agent does. Where the
MemChunks come from is the condition:

- `product` (the default): what the product remembers. The user's earlier chat sessions were
  written into a fresh store by the product's memory manager, and both chunks are the product's
  retrieval over that store: Level-1 its profile renderer, Level-2 its `retrieve` for the
  model's own query (`product_memory.py`). Nothing of the script's profile or gold facts is used.
- `clean` (an oracle): the script's profile in the product's layout (`data.layout.level1_text`),
  and at `<answer>` the turn's gold supporting facts (nothing for a level-1 turn).
- `noised` (an oracle with distractors): each oracle chunk also holds unrelated items: four
  facts of other users' profiles after the user's own facts in Level-1, three supporting facts
  of other users' turns shuffled into Level-2.

The judge always sees the script's truth (the clean oracle MemChunks), the user's words, the
reference answer and the model's answer: a product answer is scored against what is true of the
user, not against what the product happened to store. Audio noise is not modelled here: the
user's words are the script's text.

Only the selected turns are played, in script order, to a fresh responder per session and
condition (its conversation history holds those turns only); each turn under both
conditions in a row.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from egomem.dialog.base import DuplexModel, UserTurn
from egomem.llm.base import LLMProvider
from egomem.retrieval.process import RetrievalProcess
from egomem.retrieval.query_parser import CLOSE
from egomem.schemas import MemChunk
from egomem_training.data.layout import level1_text, level2_text
from egomem_training.data.script import Script, User
from egomem_training.eval.judge import JudgeInput, judge_turn
from egomem_training.eval.product_memory import ProductMemory, answer_with_retrieval
from egomem_training.eval.stats import bootstrap_mean, listed, wilson

CONDITIONS = ("product", "clean", "noised")
ORACLE = ("clean", "noised")
L1_DISTRACTORS = 4
L2_DISTRACTORS = 3


@dataclass(frozen=True)
class EvalTurn:
    session: str
    turn: int
    level: int
    user: User
    said: str
    reference: str
    facts: tuple[str, ...]


def select_turns(script: Script, levels: tuple[int, ...], per_level: int | None) -> list[EvalTurn]:
    """The memory turns of `levels`, at most `per_level` of each, taken round-robin over users
    (so a small set is not one person's), then put back in script order."""
    by_user: dict[tuple[int, str], list[EvalTurn]] = {}
    for s in script.sessions:
        for i, t in enumerate(s.turns):
            if t.level in levels:
                et = EvalTurn(s.id, i, t.level, script.user(s.user), t.user, t.assistant, tuple(t.facts))
                by_user.setdefault((t.level, s.user), []).append(et)
    chosen: list[EvalTurn] = []
    for level in levels:
        queues = [q for (lv, _), q in by_user.items() if lv == level]
        picked: list[EvalTurn] = []
        while any(queues) and (per_level is None or len(picked) < per_level):
            for q in queues:
                if q and (per_level is None or len(picked) < per_level):
                    picked.append(q.pop(0))
        chosen += picked
    order = {(s.id, i): n for n, (s, i) in enumerate((s, i) for s in script.sessions for i in range(len(s.turns)))}
    return sorted(chosen, key=lambda t: order[(t.session, t.turn)])


class _Noise:
    """Seeded distractors drawn from the rest of the script."""

    def __init__(self, script: Script, seed: int) -> None:
        self.script = script
        self.rng = random.Random(seed)
        self.l2_pool = [(s.user, f) for s in script.sessions for t in s.turns for f in t.facts]

    def level1(self, user: User) -> str:
        others = [f for u in self.script.users if u.id != user.id for f in u.profile.facts]
        # After the user's own facts: the chunk's start stays the clean one's, which a local model
        # evaluates once (its prompt cache).
        facts = list(user.profile.facts) + self.rng.sample(others, min(L1_DISTRACTORS, len(others)))
        return level1_text(user.model_copy(update={"profile": user.profile.model_copy(update={"facts": facts})}))

    def level2(self, user: User, facts: tuple[str, ...]) -> str:
        others = [f for uid, f in self.l2_pool if uid != user.id and f not in facts]
        mixed = list(facts) + self.rng.sample(others, min(L2_DISTRACTORS, len(others)))
        self.rng.shuffle(mixed)
        return level2_text(mixed)


def answer_turn(model: DuplexModel, said: str, user_id: str, level2: str) -> tuple[str, bool]:
    """The model's spoken answer, and whether it asked for a lookup; the Level-2 chunk is handed
    over when `<answer>` is emitted, as the agent's query parser does."""
    text, queried = "", False
    for tok in model.on_user_turn(UserTurn(said, 0.0, 0.0, user_id)):
        text += tok
        if not queried and CLOSE in text:
            queried = True
            model.on_memchunk(MemChunk(level=2, text=level2, user_id=user_id))
    answer = text.split(CLOSE, 1)[1] if queried else text
    return " ".join(answer.split()), queried


@dataclass
class TurnResult:
    condition: str
    session: str
    turn: int
    level: int
    said: str
    reference: str
    answer: str
    queried: bool
    answer_s: float
    fact_score: int | None = None
    answer_quality: int | None = None
    judge_failure: str = ""
    # What the answerer was given: its Level-1 chunk this session, the Level-2 chunk of its lookup ("" if none).
    level1_memory: str = ""
    level2_memory: str = ""


def run_eval(
    script: Script,
    responder: Callable[[], DuplexModel],
    judge: LLMProvider,
    *,
    turns: list[EvalTurn],
    conditions: tuple[str, ...] = ORACLE,
    seed: int = 0,
    progress: Callable[[TurnResult], None] | None = None,
    memory: ProductMemory | None = None,
) -> list[TurnResult]:
    """Each turn under every condition in a row (one responder per session and condition): the
    judge's prompts for one turn then differ only in the model's answer, and a local judge
    evaluates the shared prefix once (its prompt cache). The `product` condition needs `memory`."""
    if "product" in conditions and memory is None:
        raise ValueError("the product condition needs the product's memory")
    noise = _Noise(script, seed)
    results: list[TurnResult] = []
    models: dict[str, DuplexModel] = {}
    level1: dict[str, str] = {}
    proc: RetrievalProcess | None = None
    current = ""
    for t in turns:
        if t.session != current:
            current = t.session
            models = {cond: responder() for cond in conditions}
            for cond, model in models.items():
                if cond == "product":
                    assert memory is not None
                    proc = memory.retrieval(memory.before(t.session))
                    chunk = proc.level1_chunk()
                else:
                    l1 = noise.level1(t.user) if cond == "noised" else level1_text(t.user)
                    chunk = MemChunk(level=1, text=l1, user_id=t.user.id)
                level1[cond] = chunk.text
                model.on_memchunk(chunk)
        for cond, model in models.items():
            t0 = time.perf_counter()
            if cond == "product":
                assert proc is not None
                answer, queried, chunk2 = answer_with_retrieval(model, proc, t.said)
                l2 = chunk2.text if queried else ""
            else:
                l2 = noise.level2(t.user, t.facts) if cond == "noised" else level2_text(list(t.facts))
                answer, queried = answer_turn(model, t.said, t.user.id, l2)
            r = TurnResult(cond, t.session, t.turn, t.level, t.said, t.reference, answer, queried,
                           round(time.perf_counter() - t0, 3), level1_memory=level1[cond],
                           level2_memory=l2 if queried else "")  # fmt: skip
            _judge(judge, t, r)
            results.append(r)
            if progress is not None:
                progress(r)
    return results


def _judge(judge: LLMProvider, t: EvalTurn, r: TurnResult) -> None:
    """The judge scores against the script's truth (the clean oracle chunks), whatever the answerer saw."""
    item = JudgeInput(
        level1_memory=level1_text(t.user),
        level2_memory=level2_text(list(t.facts)),
        user_said=t.said,
        reference_answer=t.reference,
        model_answer=r.answer or "(silence)",
    )
    j = judge_turn(judge, item)
    if j.verdict is None:
        r.judge_failure = j.failure
    else:
        r.fact_score, r.answer_quality = j.verdict.fact_score, j.verdict.answer_quality


def summarise(results: list[TurnResult], seed: int = 0) -> dict[str, Any]:
    """Per level and condition: Fact Score with its Wilson 95 % interval, Answer Quality with a
    bootstrap 95 % interval (over the judged turns), judge failures, lookups asked."""
    table: dict[str, Any] = {}
    for level in sorted({r.level for r in results}):
        for cond in dict.fromkeys(r.condition for r in results):
            rows = [r for r in results if r.level == level and r.condition == cond]
            judged = [r for r in rows if r.fact_score is not None]
            facts = sum(int(r.fact_score or 0) for r in judged)
            quality = [float(r.answer_quality or 0) for r in judged]
            table[f"level{level}/{cond}"] = {
                "turns": len(rows),
                "judged": len(judged),
                "judge_failures": len(rows) - len(judged),
                "fact_score": facts / len(judged) if judged else None,
                "fact_score_ci95": listed(wilson(facts, len(judged))),
                "answer_quality": sum(quality) / len(quality) if quality else None,
                "answer_quality_ci95": listed(bootstrap_mean(quality, seed=seed)),
                "lookup_rate": sum(r.queried for r in rows) / len(rows) if rows else None,
                "answer_s_mean": sum(r.answer_s for r in rows) / len(rows) if rows else None,
            }
    return table


def as_records(results: list[TurnResult]) -> list[dict[str, Any]]:
    return [asdict(r) for r in results]

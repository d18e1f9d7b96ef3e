"""What the product would remember of a script: its chat sessions written into a fresh store by the
product's memory manager, and the MemChunks read back by the product's retrieval.

One store per script user (that user's robot). Before a session of the user is evaluated, every
earlier session of theirs that holds no memory turn (level 0 only: what was lived, not asked) and is
not memorised yet goes through `MemoryManager.process`, the manager the runtime builds
(`runtime.services.memory_manager`):

- a session with the robot (`other_speaker` unset): the user's lines are the user's turns and the
  assistant's lines the robot's, one session of the user; the first is a new face (the manager
  creates the person, nameless until the user says a name), the later ones that person;
- a conversation the robot heard (`other_speaker` set, LoCoMo): both people's turns kept in one
  episode, each speaker's own words through the manager (`egomem_eval.conversation_memory`, the
  product's path for a written conversation of several people, which labels speakers by name).

Sessions without a `start` are dated one day apart from `T0`. The Level-1 MemChunk is the product's
`RetrievalProcess` after the person was identified (the tracker's debounce runs as configured), and a
Level-2 MemChunk is what its `<retr>` parser and `retrieve` return for the model's own query
(`runtime.dialog_loop.dialog_step`, the agent's dialog step). Nothing of the script's profile, social
graph or gold facts reaches the store or the chunks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from egomem.config import Config
from egomem.dialog.base import DuplexModel, UserTurn
from egomem.identity.types import Identification, IdentityStatus
from egomem.llm.base import LLMProvider
from egomem.memory.items import SessionText
from egomem.memory.items import Turn as MemTurn
from egomem.memory.manager import MemoryManager, SessionOutcome
from egomem.retrieval.encoder import TextEncoder
from egomem.retrieval.process import RetrievalProcess
from egomem.retrieval.query_parser import split_monologue
from egomem.retrieval.search import EpisodeTurn
from egomem.runtime.dialog_loop import dialog_step
from egomem.runtime.services import memory_manager
from egomem.schemas import MemChunk
from egomem.store.sqlite import SQLiteStore
from egomem_eval.conversation_memory import memorize_conversation
from egomem_training.data.script import Script, Session, User

T0 = 1_700_000_000.0  # the first undated session (14 Nov 2023)
DAY = 86_400.0
SECONDS_PER_TURN = 60.0
CONFIRM_POLLS_MAX = 16  # observations of the same person before the tracker must have switched


def is_chat(session: Session) -> bool:
    """A session of things lived (no memory turn): what the product memorises before an evaluation."""
    return all(t.level == 0 for t in session.turns)


@dataclass
class UserMemory:
    """One script user's robot: its store, the person it knows the user as, and what was memorised."""

    user: User
    store: SQLiteStore
    manager: MemoryManager
    person: str | None = None  # the store's user id for the script user (None: nothing stored yet)
    sessions: int = 0
    outcomes: list[SessionOutcome] = field(default_factory=list)
    last_end: float = T0

    def memorise(self, session: Session, index: int) -> None:
        start = session.start if session.start is not None else T0 + index * DAY
        end = start + SECONDS_PER_TURN * 2 * len(session.turns)
        if session.other_speaker:
            self._heard(session, start)
        else:
            self._with_robot(session, start, end)
        self.sessions += 1
        self.last_end = max(self.last_end, end)

    def _with_robot(self, session: Session, start: float, end: float) -> None:
        turns: list[MemTurn] = []
        for t in session.turns:
            turns += [MemTurn(speaker="user", text=t.user), MemTurn(speaker="assistant", text=t.assistant)]
        text = SessionText.dated(start, end, turns)
        if self.person is None:  # a face the robot has not seen: a new person
            out = self.manager.process(text, Identification(status=IdentityStatus.NEW))
            self.person = out.user_id if out.ok else None
        else:
            out = self.manager.process(text, Identification(status=IdentityStatus.KNOWN, user_id=self.person))
        self.outcomes.append(out)

    def _heard(self, session: Session, start: float) -> None:
        other = session.other_speaker or ""
        turns = [
            EpisodeTurn(sp, x) for t in session.turns for sp, x in ((self.user.name, t.user), (other, t.assistant))
        ]
        done = memorize_conversation(self.manager, [(start, turns)], cause=f"eval-dialog: {session.id}")
        self.outcomes += done.outcomes
        if self.person is None:
            named = [u for u in self.store.find_users_by_name(self.user.name) if not u.placeholder]
            self.person = named[0].id if named else None

    def facts(self) -> int:
        return 0 if self.person is None else len(self.store.list_facts(self.person))

    def relations(self) -> int:
        return 0 if self.person is None else len(self.store.list_relations(self.person))


class ProductMemory:
    """The product's memory of every user of a script, built lazily in script order."""

    def __init__(self, script: Script, config: Config, llm: LLMProvider, encoder: TextEncoder,
                 *, max_sessions: int | None = None, report: Callable[[str], None] | None = None) -> None:  # fmt: skip
        self.script, self.config, self.llm, self.encoder = script, config, llm, encoder
        self.report = report or (lambda _text: None)  # told each session as it is memorised (a long step)
        self.max_sessions = max_sessions  # per user, the most recent ones before the evaluated session
        self._tmp = tempfile.TemporaryDirectory(prefix="egomem-eval-dialog-")
        self._users: dict[str, UserMemory] = {}
        self._done: set[str] = set()
        self._order = {s.id: n for n, s in enumerate(script.sessions)}

    def close(self) -> None:
        for m in self._users.values():
            m.store.close()
        self._tmp.cleanup()

    def user(self, user_id: str) -> UserMemory:
        if user_id not in self._users:
            store = SQLiteStore(Path(self._tmp.name) / f"{len(self._users)}.db")
            manager = memory_manager(self.config.memory, store, self.llm, self.encoder)
            self._users[user_id] = UserMemory(self.script.user(user_id), store, manager)
        return self._users[user_id]

    def before(self, session_id: str) -> UserMemory:
        """The user's memory once every earlier chat session of theirs is memorised."""
        target = self.script.sessions[self._order[session_id]]
        mem = self.user(target.user)
        todo = [
            (n, s)
            for n, s in enumerate(self.script.sessions[: self._order[session_id]])
            if s.user == target.user and is_chat(s) and s.id not in self._done
        ]
        if self.max_sessions is not None:
            skipped, todo = todo[: max(len(todo) - self.max_sessions, 0)], todo[-self.max_sessions :]
            self._done.update(s.id for _, s in skipped)
        for n, s in todo:
            self.report(f"eval-dialog: memorising {s.id} through the product")
            mem.memorise(s, n)
            self._done.add(s.id)
        return mem

    def retrieval(self, mem: UserMemory) -> RetrievalProcess:
        """The product's retrieval over the user's store, the user identified (as by face and voice)."""
        proc = RetrievalProcess(mem.store, config=self.config.retrieval, encoder=self.encoder,
                                clock=lambda: mem.last_end + DAY)  # fmt: skip
        if mem.person is not None:
            ident = Identification(status=IdentityStatus.KNOWN, user_id=mem.person)
            for _ in range(CONFIRM_POLLS_MAX):
                if proc.current_user() == mem.person:
                    break
                proc.observe(ident)
        return proc

    def summary(self) -> dict[str, object]:
        """What was memorised, per script user."""
        return {
            uid: {
                "sessions": m.sessions,
                "speaker_sessions_failed": sum(not o.ok for o in m.outcomes),
                "known_as": None if m.person is None else (m.store.get_user(m.person).name or "(no name)"),
                "facts": m.facts(),
                "relations": m.relations(),
            }
            for uid, m in self._users.items()
        }


def answer_with_retrieval(model: DuplexModel, proc: RetrievalProcess, said: str) -> tuple[str, bool, MemChunk]:
    """The model's spoken answer through the agent's dialog step (its `<retr>` query answered by the
    product's Level-2 retrieval before its next token), whether it asked, and the Level-2 chunk."""
    user = proc.current_user() or ""
    text = dialog_step(model, proc, model.on_user_turn(UserTurn(said, 0.0, 0.0, user)))
    query, spoken = split_monologue(text)
    return " ".join(spoken.split()), query is not None, proc.level2_chunk()

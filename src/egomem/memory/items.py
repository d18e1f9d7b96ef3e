"""The memory tasks' input and output schemas (the JSON an LLM must produce, and the
rule-based backend produces the same). Every extracted item carries its source utterance."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from egomem.schemas import day_text, new_id

ItemKind = Literal["name", "fact", "preference", "summary", "relation"]
OpName = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# How the assistant's lines read in the session text a model is given: the robot's words, never
# the person's (a model once summarised them as the user's: "Assistant talked about their job").
ASSISTANT_LABEL = "assistant (the robot, not the user)"
# Other people present in a conversation of several (each speaker's turns are processed in turn).
OTHER_LABEL = "other person (not the user)"
_LABELS = {"assistant": ASSISTANT_LABEL, "other": OTHER_LABEL}


class Turn(_Model):
    """One line of a session: the user's, the assistant's (the robot's own words, context only) or
    another person's (a conversation of several: context only). Serialised with the marked labels;
    either form validates."""

    speaker: Literal["user", "assistant", "other"]
    text: str
    start: float | None = None  # seconds (stream time), when known
    end: float | None = None

    @field_validator("speaker", mode="before")
    @classmethod
    def _unlabel(cls, v: object) -> object:
        return next((k for k, label in _LABELS.items() if v == label), v)

    @field_serializer("speaker")
    def _label(self, v: str) -> str:
        return _LABELS.get(v, v)


class SessionText(_Model):
    """Input of the `extract` task: one finished session of one user."""

    episode_id: str
    start: float
    end: float
    date: str = Field(description="the session's date, e.g. '8 May 2023'")
    turns: list[Turn]
    user_name: str | None = Field(default=None, description="the user's name if already known")
    # Names memory already knows (people met or talked about): evidence of a name in
    # lower-case ASR text. Not sent to a model (excluded from the payload).
    known_names: list[str] = Field(default_factory=list, exclude=True)

    @classmethod
    def dated(
        cls,
        start: float,
        end: float,
        turns: list[Turn],
        *,
        user_name: str | None = None,
        episode_id: str | None = None,
    ) -> SessionText:
        """The one way a session is assembled from its turns: dated by its start ('8 May 2023'),
        a new episode id unless it continues a stored one."""
        return cls(
            episode_id=episode_id or new_id("e"),
            start=start,
            end=end,
            date=day_text(start),
            turns=turns,
            user_name=user_name,
        )

    def user_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.speaker == "user" and t.text.strip()]


TEXT_CHARS = 1000  # the longest item text (a summary, mostly)


def clip(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` cut at a word boundary to at most `limit` characters, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip() + "…"


class ExtractedItem(_Model):
    kind: ItemKind
    # Third-person text without the subject ("lives in Paris"); for `name`, the name itself.
    text: str = Field(min_length=1, max_length=TEXT_CHARS)
    source_text: str = Field(min_length=1, description="the user's utterance the item comes from")
    # Relations: "John is my colleague" -> relation=colleague, person=John, user_is_subject=True
    # (read: person is the user's <relation>); "I am Ana's boyfriend" -> person=Ana,
    # relation=boyfriend, user_is_subject=False (the user is Ana's boyfriend).
    relation: str = ""
    person: str = ""
    user_is_subject: bool = True
    # The user says this no longer holds ("I don't have a car anymore"): retract, don't add.
    retract: bool = False
    # With `retract`: whatever the item's slot holds has ended ("I quit my job"), not one value.
    retract_slot: bool = False
    # The user says this replaced what held before ("now I live in Rome", "these days I
    # work as a chef"): the update agent supersedes the old fact of the slot.
    change: bool = False
    importance: float = Field(default=0.5, ge=0.0, le=1.0)


class Extraction(_Model):
    """Output of the `extract` task."""

    # Each item stands on its own provenance: the items a model wrote before it looped or ran
    # out of tokens are a shorter extraction, not a wrong one (llm/partial_json.py).
    PREFIX_IS_ANSWER: ClassVar[bool] = True
    items: list[ExtractedItem] = Field(default_factory=list)


class KnownFact(_Model):
    id: str
    kind: str
    text: str


class Candidate(_Model):
    """An item to decide on, with the current facts most similar to it (by embedding)."""

    index: int
    item: ExtractedItem
    similar: list[KnownFact] = Field(default_factory=list)
    similarity: list[float] = Field(default_factory=list)


class UpdateInput(_Model):
    """Input of the `update` task: the user's current memory and the new items."""

    user_name: str | None = None
    facts: list[KnownFact]
    candidates: list[Candidate]
    duplicate_cosine: float = Field(default=0.88, description="similarity at which an item repeats a fact")


class Decision(_Model):
    index: int = Field(description="the candidate's index")
    op: OpName
    target: str | None = Field(default=None, description="the existing fact id for UPDATE, DELETE and NOOP")
    text: str = Field(default="", description="final fact text for ADD/UPDATE (defaults to the item's text)")
    reason: str = ""


class UpdatePlan(_Model):
    """Output of the `update` task: one decision per candidate."""

    decisions: list[Decision] = Field(default_factory=list)

"""Configuration: defaults <- TOML file <- EGOMEM_* environment variables.

Nothing needs configuring for the embedded default. Product configuration is set from the
environment as `EGOMEM_<SECTION>__<KEY>` (double underscore): `EGOMEM_FACE__THRESHOLD=0.55`,
`EGOMEM_STORE__PROVIDER=postgres`, `EGOMEM_STORE__DSN=postgresql://...`; `EGOMEM_DATA_DIR` sets
the one top-level key. Every other `EGOMEM_*` variable is a process variable, read by the code
that needs it and listed in PROCESS_VARIABLES (docs/configuration.md); an `EGOMEM_*` variable
that is neither is ignored with a one-line warning naming the known ones.

The replaceable components (asr, llm, trigger, dialog, store) each have a provider
section, `{provider = "name", ...}`, validated against that provider's own config model
(egomem.providers); a provider registered before `load_config` is valid here too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from egomem import providers
from egomem.errors import ConfigError
from egomem.registry import ProviderConfig, error_message

log = logging.getLogger(__name__)

ENV_PREFIX = "EGOMEM_"

# The one list of process variables: read where they are used, never product configuration.
# (docs/configuration.md lists them too; tests/cli/test_env_variables.py runs a command with each set.)
PROCESS_VARIABLES: dict[str, str] = {
    "EGOMEM_CONFIG": "path of the TOML configuration file (as --config)",
    "EGOMEM_DATA_DIR": "where the memory store lives (as --data-dir; the data_dir key)",
    "EGOMEM_API_KEY": "a tenant's API key for `egomem client`, `ask` and `mcp` (as --key)",
    "EGOMEM_LLM_API_KEY": "the key of an OpenAI-compatible endpoint (the default llm/dialog api_key_env)",
    "EGOMEM_BENCH_DATA": "the benchmark and training data folder (as --data of `egomem bench`)",
    "EGOMEM_EVAL_API_KEY": "the judge endpoint's key for `egomem eval`",
    "EGOMEM_MIMI_WEIGHTS": "the local Mimi weights file for `egomem data`",
    "EGOMEM_PG_BIN": "PostgreSQL binaries for the restart test (tests/store)",
    "EGOMEM_PG_PORT": "port of the test PostgreSQL (scripts/postgres.sh)",
    "EGOMEM_PG_DIR": "data folder of the test PostgreSQL (scripts/postgres.sh)",
    "EGOMEM_PG_DB": "database of the test PostgreSQL (scripts/postgres.sh)",
    "EGOMEM_MASTER_KEY": "the master key of sealed identity keys under privacy.master_key = 'env' (base64 or hex)",
}
PROCESS_PREFIXES = ("EGOMEM_TEST_",)  # the test suite's own (EGOMEM_TEST_PG_DSN)


def default_data_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "egomem"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FaceConfig(_Section):
    # dlib's 128-d encoder: same person when L2 distance < threshold (calibrated in BENCHMARKS.md).
    # Below 1: the largest distance between two of 60 LFW faces (10 people) measured 0.97, so a
    # threshold of 1 or more would match every face to anyone.
    threshold: float = Field(default=0.6, gt=0.0, lt=1.0)
    upsample: int = Field(default=1, ge=0, le=3)
    min_face_px: int = Field(default=40, ge=8)
    max_keys_per_user: int = Field(default=8, ge=1)
    # Images whose longer side is below small_image_px are upsampled `upsample` times for HOG;
    # larger ones are detected on a copy downscaled to at most detect_max_px (boxes mapped back).
    small_image_px: int = Field(default=400, ge=16)
    detect_max_px: int = Field(default=800, ge=64)
    retry_upsample: bool = True  # one more, upsampled, detection pass before reporting "no face"
    num_jitters: int = Field(default=0, ge=0, le=10)
    # A new key is added when a confident match (distance < refresh_distance) is this far from every key.
    refresh_distance: float = Field(default=0.45, gt=0.0, lt=1.0)
    min_key_spread: float = Field(default=0.25, ge=0.0, lt=1.0)


class VoiceConfig(_Section):
    # On the s-normed score when snorm = true (else cosine). 2.95 = equal-error point on LibriSpeech
    # train-clean-100 halves, clean + 10 dB (python -m egomem_training.voice_threshold), not on the evaluated queries.
    threshold: float = 2.95
    snorm: bool = True
    snorm_top_n: int = Field(default=100, ge=1)
    # Less speech than this is "no speech". 0.3 s: the shortest piece length `bench speaker` measures
    # (docs/benchmarks/speaker.md gives pass@1 / EER per length bin).
    min_speech_s: float = Field(default=0.3, ge=0.0)
    # Speech shorter than this is "short": resemblyzer's window is 1.6 s, so a short segment is embedded
    # as short_embedding says ("repeat": tiled to fill the window) and judged against short_threshold
    # (None: the one threshold for all lengths).
    short_speech_s: float = Field(default=1.6, gt=0.0)
    short_threshold: float | None = None
    short_embedding: Literal["pad", "repeat", "window"] = "repeat"
    max_keys_per_user: int = Field(default=8, ge=1)
    vad_threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    denoise: bool = True  # spectral gating (noisereduce) before embedding
    denoise_below_snr_db: float = (
        15.0  # gate only windows estimated noisier than this (clean LibriSpeech pauses: 13-41 dB)
    )
    cohort_chunk_s: float = Field(default=0.5, gt=0.0)  # shipped cohort: band-limited chunks of this length
    min_enrolled_cohort: int = Field(default=20, ge=0)  # enrolled users' keys join the cohort from this many
    aggregate_polls: int = Field(default=3, ge=1)  # agreeing consecutive polls averaged into one voice
    refresh_score: float = 5.0  # s-normed voice score confident enough to add a key (threshold is 2.95)
    min_key_spread: float = Field(default=0.1, ge=0.0)  # cosine distance a new key must add


class IdentityConfig(_Section):
    # Who is this? Face and voice scores become calibrated log-likelihood ratios (identity/data/
    # calibration.json, `python -m egomem_training.calibration`), summed; the KNOWN / UNSURE / NEW
    # thresholds on that sum follow from these costs (identity/calibration.py `decision_thresholds`,
    # docs/configuration.md). A false merge writes one person's life onto another and shows it to
    # them; a false split asks a name again; UNSURE holds memory back and may ask.
    prior: float = Field(default=0.5, gt=0.0, lt=1.0)  # P(the person is the best-matching enrolled user)
    merge_cost: float = Field(default=20.0, gt=0.0)  # cost of KNOWN for someone else
    split_cost: float = Field(default=1.0, gt=0.0)  # cost of NEW for an enrolled user
    unsure_cost: float = Field(default=0.2, gt=0.0)  # cost of UNSURE (memory held back, maybe a question)
    # Memory of a person identity stays unsure about is held, not written to anyone (runtime/unsure.py);
    # never settled (by a name, the candidate's polls, or "someone new") it is dropped this long after.
    unsure_hold_s: float = Field(default=1800.0, gt=0.0)
    calibration_file: Path | None = None  # None: the shipped calibration.json


class RetrievalConfig(_Section):
    poll_interval_s: float = Field(default=2.0, gt=0.0)
    window_s: float = Field(default=3.0, gt=0.0)
    level1_budget_tokens: int = Field(default=512, ge=16)
    level2_budget_tokens: int = Field(default=256, ge=16)
    top_k: int = Field(default=5, ge=1)
    # Other people heard this recently (turns attributed by voice) are named in Level 1 ("Also here").
    presence_window_s: float = Field(default=10.0, ge=0.0)


class ServerConfig(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    store_face_thumbnails: bool = False


class RuntimeConfig(_Section):
    video_fps: float = Field(default=2.0, gt=0.0, le=30.0)  # frames kept from a recording or camera
    memory_interval_s: float = Field(default=10.0, gt=0.0)  # how often memory management runs
    session_margin_s: float = Field(default=3.0, ge=0.0)  # a session counts as finished this long after its end
    # Same identified person, shorter gap: one session. The trigger was trained on streams
    # where one person's next session starts 2.5-10 s later, so it splits a conversation at
    # a pause in which the assistant answers (typically 2-4 s of its speech); 5 s keeps
    # those together. Raised from 2 s when the demo's rewritten script showed such a split.
    session_merge_gap_s: float = Field(default=5.0, ge=0.0)
    buffer_s: float = Field(default=120.0, ge=10.0)  # stream history kept in memory
    # Several people: each finished user turn is matched by its own voice, and goes to another
    # enrolled person than the current user only when their s-normed score clears the voice
    # threshold by this margin and the current user's does not clear it (identity/attribution.py).
    # 1.0 lies halfway between the threshold (2.95) and the key-refresh score (5.0). None: off.
    turn_voice_margin: float | None = Field(default=1.0, ge=0.0)
    # People who follow each other with no pause share one VAD turn: each finished turn is cut
    # where its voice changes (perception.diarization.TurnSplitter: resemblyzer windows, average
    # linkage cut at this cosine distance), each piece transcribed and attributed on its own.
    # Chosen on dev data (bench real dev split, LibriSpeech pairs; docs/benchmarks/turn_split.md).
    # None: a turn is never split.
    turn_split_threshold: float | None = Field(default=0.3, gt=0.0, le=2.0)
    # A piece holds at least this much audio (resemblyzer's window is 1.6 s): enough for its own voice.
    turn_split_min_s: float = Field(default=1.6, gt=0.0)


class MemoryConfig(_Section):
    """Memory management: extraction, update, consolidation (EGOMEM_MEMORY__*)."""

    # Who decides ADD / UPDATE / DELETE / NOOP for extracted items. "rules": slots + embedding
    # duplicates (deterministic, tested). "llm": the configured language model, as in the
    # paper. The packaged 1.5B model extracts well but plans updates badly: it answers NOOP
    # for a user with no facts (dropping the item) and UPDATE of facts that do not exist, so
    # the rules decide unless a stronger model is configured.
    update_agent: Literal["rules", "llm"] = "rules"
    # What a language-model extractor writes (memory/compact.py): "full" items (kind, text, the
    # quoted source words) or "short" ones (short keys, the source sentence by its number: fewer
    # tokens out). Costs and quality of each: docs/benchmarks/xcost.md.
    extract_schema: Literal["full", "short"] = "full"
    # Skip the model for a session with nothing personal in it (memory/gate.py): the rules found
    # nothing and the user made no first-person statement.
    extract_gate: bool = False
    # A session longer than this many words (every speaker's) goes to the language model in pieces
    # no longer than it, their items joined (memory/pieces.py). 0: only a session whose prompt does
    # not fit the model's context is cut (the default: no cap was shown to help, docs/memory-queue.md).
    model_piece_words: int = Field(default=0, ge=0)
    # When a language-model extractor runs. "after": the rules write each session's memory at once
    # (a job of its own, seconds), and the model's pass over the same session follows as a second
    # job ("refine"), run by its own low-priority worker, whose items the update agent adds to what
    # the rules wrote (a repeat is a NOOP). "inline": the model extracts before the session's only
    # write. Why "after": on 2 cores the packaged 1.5B model takes 20-70 s per session (about 10
    # tokens/s out, docs/benchmarks/xcost.md), about 2 sessions a minute in conversation: inline,
    # memory fell 20 minutes behind a 10-minute stream (bench realtime). With "after", nothing is
    # remembered later than the rules can write it, and the model catches up when the robot is idle.
    model_pass: Literal["after", "inline"] = "after"

    # Cosine (MiniLM) at or above which a new item repeats an existing fact (NOOP), and at
    # which consolidation merges two current facts. Set conservatively on the hand-made pairs
    # of tests/memory/test_duplicate_threshold.py (not on LoCoMo): a false merge loses a fact,
    # a missed one only repeats it, and the key slots (home, job, likes) are matched by rules.
    duplicate_cosine: float = Field(default=0.88, gt=0.0, le=1.0)
    similar_top_k: int = Field(default=3, ge=1)  # similar facts shown to the update task per item
    # Memory strength (MemoryBank-style forgetting curve), see memory/strength.py.
    stability_days: float = Field(default=7.0, gt=0.0)
    # Consolidation: dialog summaries kept one by one; older ones fold into a running summary.
    keep_recent_summaries: int = Field(default=5, ge=1)
    running_summary_max_words: int = Field(default=200, ge=20)
    # Retention policy: None keeps everything forever. A number purges current facts whose
    # strength fell below it (never summaries of the last keep_recent_summaries sessions).
    retention_min_strength: float | None = Field(default=None, ge=0.0, le=1.0)
    # Sleep-time work (memory/sleep_time.py): consolidation and retention run when the device is
    # idle, at most once per `sleep_interval_s` per store (`egomem live`, and each tenant of
    # `egomem serve`); None: never on their own (`egomem consolidate` still runs them by hand).
    sleep_interval_s: float | None = Field(default=3600.0, gt=0.0)
    # Idle: nothing heard, said, seen or written for this long. A conversation session is closed
    # and written within session_merge_gap_s + session_margin_s + 2 x memory_interval_s of its
    # last turn, so the wait is never shorter than that (no session can be open then).
    sleep_idle_s: float = Field(default=600.0, ge=0.0)
    # The memory-writing queue (memory/jobs.py, docs/memory-queue.md). "embedded": a low-priority
    # worker thread in the process takes the jobs from the store's table. "fleet" (PostgreSQL store):
    # jobs go to procrastinate and `egomem worker` processes take them (runtime/fleet_queue.py).
    queue: Literal["embedded", "fleet"] = "embedded"
    # A model that fails: a transient failure (server down, slow) is retried this many attempts in
    # all, with an exponential backoff from queue_backoff_s; an answer that is not the JSON asked
    # for, queue_garbage_attempts (1: a greedy model answers the same again). Then the rules answer.
    queue_max_attempts: int = Field(default=3, ge=1)
    queue_garbage_attempts: int = Field(default=1, ge=1)
    queue_backoff_s: float = Field(default=5.0, gt=0.0)
    # A job held longer than this by a worker that may be gone is taken back (over any extraction).
    queue_lease_s: float = Field(default=900.0, gt=0.0)
    # The embedded worker waits while the stream loop runs more than this behind the stream clock.
    queue_yield_lag_s: float = Field(default=0.5, gt=0.0)


class RetentionConfig(_Section):
    """How long biometric keys are kept (EGOMEM_RETENTION__*), applied by the sleep-time schedule."""

    # A person's face / voice keys are deleted this many days after they were last seen (their
    # facts stay; they are then a stranger to the camera and microphone until met again). Default
    # 3 years, as BIPA's limit after the last interaction. None: kept while the person is.
    face_keys_days: float | None = Field(default=1095.0, gt=0.0)
    voice_keys_days: float | None = Field(default=1095.0, gt=0.0)
    # Keys held only in memory for people who have not agreed to be remembered (visitors):
    # "end_of_day" drops them at the first idle moment after local midnight; "keep": until restart.
    visitor_keys: Literal["end_of_day", "keep"] = "end_of_day"


class AskConfig(_Section):
    """`egomem ask`: multi-round retrieval over memory (retrieval/ask.py, docs/ask.md)."""

    recipe: str = "ask"  # a search recipe of retrieval/search_config.py RECIPES
    max_rounds: int = Field(default=3, ge=1, le=10)  # 1: single-shot search
    evidence: int = Field(default=10, ge=1, le=100)  # evidence items returned (and shown to the LLM)
    pool: int = Field(default=50, ge=10, le=2000)  # candidates each search of a round ranks
    # Stop after a round when the best 3 items hold this share of the question's terms
    # (above 1: never; the rounds also stop when one adds nothing to the top `evidence`).
    enough_coverage: float = Field(default=1.01, ge=0.0)
    # The later rounds' rankings, fused (RRF) with the first one at these weights (0: off).
    # Chosen on LoCoMo dev conversations (docs/benchmarks/locomo-qa.md); "other episodes" hurt there.
    other_episodes_weight: float = Field(default=0.0, ge=0.0)  # the question again, in episodes not yet found
    time_weight: float = Field(default=0.5, ge=0.0)  # "when" questions: turns that mention a time
    feedback_weight: float = Field(default=0.5, ge=0.0)  # the question plus the best item's words
    people_weight: float = Field(default=0.5, ge=0.0)  # facts of people named in the evidence
    # Extracted memory beside the raw turns (retrieval.ask_types.FactFusion): facts' and relations'
    # fused scores scaled against the turns' (0.5: after every turn of a round's pool), and a fact
    # whose source turn was found too folded into it (one statement, one evidence slot).
    facts_weight: float = Field(default=0.5, ge=0.0)
    fold_facts: bool = True
    llm: bool = True  # answer with the configured LLM (False: the best evidence itself)


class PrivacyConfig(_Section):
    """Consent and recall rules (egomem.privacy, docs/privacy.md)."""

    # ask | notice | implicit; None: by command (`ask` for live and serve, `implicit` for the
    # recordings a user owns: memorize, run, demo; egomem.privacy.consent.default_policy).
    consent: Literal["ask", "notice", "implicit"] | None = None
    # Users who may hear other people's sensitive facts through `ask` (ids).
    admins: list[str] = Field(default_factory=list)
    # Where the master key that wraps every person's data key comes from (store/crypto.py,
    # docs/privacy.md "Keys at rest"): "file" (default: master_key_file, else <data_dir>/master.key,
    # generated once with mode 0600 when the store is new), "env" (the variable master_key_env, base64
    # or hex), or a source a plugin registered (store.crypto.register_master_key_source, e.g. a KMS).
    master_key: str = "file"
    master_key_file: Path | None = None
    master_key_env: str = "EGOMEM_MASTER_KEY"


def _provider_field(kind: str) -> Any:
    return Field(default_factory=lambda: providers.section(kind))


# Keys that moved into a provider section: the old key -> what to write instead.
MOVED_KEYS = {
    ("runtime", "asr"): "asr.provider",
    ("runtime", "asr_model_dir"): "asr.model (with asr.provider = 'faster-whisper')",
    ("runtime", "trigger"): "trigger.provider",
    ("runtime", "dialog"): "dialog.provider (the endpoint settings go in [dialog] too)",
    ("store", "backend"): "store.provider",
    ("llm", "gguf_path"): "llm.model (with llm.provider = 'local')",
}
RENAMED_PROVIDERS = {("llm", "gguf"): "local (llm.model = the .gguf path)"}


class Config(_Section):
    data_dir: Path = Field(default_factory=default_data_dir)
    face: FaceConfig = Field(default_factory=FaceConfig)
    voice: VoiceConfig = Field(default_factory=VoiceConfig)
    identity: IdentityConfig = Field(default_factory=IdentityConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    ask: AskConfig = Field(default_factory=AskConfig)
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    # Provider sections: {provider = "name", ...that provider's own settings} (egomem.providers).
    asr: SerializeAsAny[ProviderConfig] = _provider_field("asr")
    llm: SerializeAsAny[ProviderConfig] = _provider_field("llm")
    trigger: SerializeAsAny[ProviderConfig] = _provider_field("trigger")
    dialog: SerializeAsAny[ProviderConfig] = _provider_field("dialog")
    store: SerializeAsAny[ProviderConfig] = _provider_field("store")
    tts: SerializeAsAny[ProviderConfig] = _provider_field("tts")  # the assistant's voice

    @model_validator(mode="before")
    @classmethod
    def _no_moved_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for (sec, key), instead in MOVED_KEYS.items():
                if isinstance(data.get(sec), dict) and key in data[sec]:
                    raise ConfigError(f"{sec}.{key} has moved: set {instead}")
            for (sec, old), new in RENAMED_PROVIDERS.items():
                if isinstance(data.get(sec), dict) and data[sec].get("provider") == old:
                    raise ConfigError(f"{sec}.provider = {old!r} is now {new}")
        return data

    @field_validator(*providers.DEFAULTS, mode="before")
    @classmethod
    def _provider_section(cls, value: Any, info: ValidationInfo) -> ProviderConfig:
        assert info.field_name is not None
        return providers.section(info.field_name, value)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "memory.db"


def _is_config_variable(key: str) -> bool:
    """EGOMEM_<SECTION>__<KEY>, or EGOMEM_<TOP-LEVEL KEY> (EGOMEM_DATA_DIR, a whole section as JSON)."""
    name = key[len(ENV_PREFIX) :]
    return "__" in name or name.lower() in Config.model_fields


def _is_process_variable(key: str) -> bool:
    return (key in PROCESS_VARIABLES and key != "EGOMEM_DATA_DIR") or key.startswith(PROCESS_PREFIXES)


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, raw in environ.items():
        if not key.startswith(ENV_PREFIX) or _is_process_variable(key) or not _is_config_variable(key):
            continue
        path = key[len(ENV_PREFIX) :].lower().split("__")
        value: Any = raw
        with contextlib.suppress(ValueError):  # numbers, booleans, lists arrive as JSON; else a string
            value = json.loads(raw)
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"environment variable {key} conflicts with another EGOMEM_ variable")
        node[path[-1]] = value
    return out


_warned: set[str] = set()


def _warn_unknown_variables(environ: dict[str, str], cfg: Config) -> None:
    """One line per unknown EGOMEM_* variable and process: a warning, not an error, because the
    environment is often not the user's to change (a shell profile, a service manager, another
    version's variables) and such a variable changes nothing; a misspelled setting with a double
    underscore is an error (its section has no such key)."""
    # A key variable the configuration itself names (llm.api_key_env = "EGOMEM_MY_KEY") is known.
    named = {getattr(getattr(cfg, kind), "api_key_env", None) for kind in providers.DEFAULTS}
    for key in sorted(environ):
        if not key.startswith(ENV_PREFIX) or key in _warned or key in named:
            continue
        if _is_process_variable(key) or _is_config_variable(key):
            continue
        _warned.add(key)
        log.warning(
            "egomem: warning: %s is not an egomem variable and is ignored: configuration is "
            "EGOMEM_<SECTION>__<KEY> (e.g. EGOMEM_FACE__THRESHOLD), process variables are %s",
            key,
            ", ".join(PROCESS_VARIABLES),
        )


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = _merge(merged[k], v)
        else:
            merged[k] = v
    return merged


def load_config(
    path: str | Path | None = None,
    data_dir: str | Path | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """Build the configuration. Raises ConfigError with a one-line reason."""
    env = dict(os.environ if environ is None else environ)
    raw: dict[str, Any] = {}
    file = path or env.get("EGOMEM_CONFIG")
    if file:
        p = Path(file)
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"config file not found: {p}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read config file {p}: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"malformed TOML in {p}: {exc}") from exc
    raw = _merge(raw, _env_overrides(env))
    if data_dir is not None:
        raw["data_dir"] = str(data_dir)
    raw.setdefault("data_dir", str(default_data_dir(env)))
    try:
        cfg = Config.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        msg = error_message(Config, first)
        var = ENV_PREFIX + "__".join(str(x) for x in first["loc"]).upper()
        from_env = sorted(k for k in env if k == var or k.startswith(var + "__"))
        source = f" (from {from_env[0]})" if from_env else ""
        raise ConfigError(f"invalid config value {where}{source}: {msg}") from exc
    _warn_unknown_variables(env, cfg)
    return cfg

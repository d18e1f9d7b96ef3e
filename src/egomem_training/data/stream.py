"""One training stream: voices, speech, plan, mix, augmentation, labels, tokens and samples.

Everything random comes from one generator seeded by (build seed, stream index), and
every choice is written into the stream's metadata, so a stream can be rebuilt and
audited from its row alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from egomem.media import SAMPLE_RATE
from egomem.memory.trigger.labels import session_labels
from egomem.stream.clock import STEP_S
from egomem_eval.voices import Voice
from egomem_training.data.audio import (
    AugmentChoice,
    AugmentConfig,
    LineCache,
    assign_voices,
    at_level,
    augment,
    draw_augmentation,
    mix,
)
from egomem_training.data.audio_tokens import AudioTokenizer
from egomem_training.data.layout import DIALOG_START, Sample, monologue, query_text, samples_for
from egomem_training.data.plan import LineTokens, SessionPlan, next_session_start, plan_record, plan_session
from egomem_training.data.script import Script, Session
from egomem_training.data.text_tokens import PAD, TextTokenizer


@dataclass
class BuiltStream:
    stream_id: str
    seed: list[int]
    text: np.ndarray  # (D,) int32 monologue
    listen_codes: np.ndarray  # (D, K) int16
    speak_codes: np.ndarray  # (D, K) int16
    labels: np.ndarray  # (D,) int8 trigger labels
    samples: list[Sample]
    meta: dict[str, Any]
    # kept for the picture and the tests, not written to the shards
    listen: np.ndarray
    listen_clean: np.ndarray
    speak: np.ndarray
    plan: list[SessionPlan]
    augmentation: AugmentChoice


def build_stream(
    index: int,
    seed: int,
    sessions: list[Session],
    script: Script,
    *,
    pool: list[Voice],
    lines: LineCache,
    text_tok: TextTokenizer,
    audio_tok: AudioTokenizer,
    augment_cfg: AugmentConfig,
    max_steps: int,
) -> BuiltStream:
    rng = np.random.default_rng([seed, index])
    users = list(dict.fromkeys(s.user for s in sessions))
    voice_of = assign_voices(rng, users, pool)
    budget = max_steps - DIALOG_START
    user_audio: dict[tuple[int, int], np.ndarray] = {}
    reply_audio: dict[tuple[int, int], np.ndarray] = {}
    facts: dict[tuple[int, int], list[str]] = {}
    plans: list[SessionPlan] = []
    levels: list[float] = []
    start = math.ceil(rng.uniform(0.5, 2.0) / STEP_S)
    text_busy = 0
    for i, sess in enumerate(sessions):
        if i and plans:
            start = next_session_start(rng, plans[-1], same_user=sess.user == plans[-1].user_id)
        if start >= budget:
            break  # the stream is full: later sessions are left out (metadata says how many)
        level = float(rng.uniform(-32.0, -20.0))  # how loud this user is at the microphone
        levels.append(level)
        toks: list[LineTokens] = []
        for k, turn in enumerate(sess.turns):
            user_audio[(i, k)] = at_level(lines.user(turn.user, voice_of[sess.user]), level)
            reply_audio[(i, k)] = lines.reply(turn.assistant)
            query = text_tok.encode(query_text(turn.retr)) if turn.retr is not None else []
            facts[(i, k)] = turn.facts
            toks.append(
                LineTokens(
                    turn.level,
                    user_audio[(i, k)].size,
                    reply_audio[(i, k)].size,
                    text_tok.encode(turn.assistant),
                    query,
                )
            )
        plan = plan_session(rng, i, sess.id, sess.user, toks, start, text_busy, augment_cfg.interrupt_p)
        text_busy = max([text_busy, *(t.text_end for t in plan.turns)])
        plans.append(plan)
    tail = rng.uniform(0.5, 2.0)
    steps = min(budget, math.ceil((plans[-1].end_s + tail) / STEP_S)) if plans else 0
    listen_clean, speak = mix(plans, user_audio, reply_audio, steps)
    choice = draw_augmentation(rng, augment_cfg)
    background, bg_meta = _background(rng, choice, script, pool, set(voice_of.values()), lines)
    listen = augment(rng, choice, listen_clean, speak, background)
    labels, spans = session_labels([(p.start * STEP_S, p.end_s) for p in plans], steps)
    text = monologue(plans, steps, text_tok.id_of(PAD))
    samples = samples_for(plans, {u.id: u for u in script.users}, facts, steps)
    meta = {
        "seed": [seed, index],
        "sessions": [s.id for s in sessions[: len(plans)]],
        "sessions_left_out": [s.id for s in sessions[len(plans) :]],
        "voices": {u: v.id for u, v in voice_of.items()},
        "assistant_voice": lines.assistant.name,
        "user_levels_db": levels,
        "augmentation": choice.record(),
        "background": bg_meta,
        "plan": plan_record(plans),
        "trigger_sessions": spans,
        "audio_tokenizer": audio_tok.name,
        "dialog_start": DIALOG_START,
    }
    return BuiltStream(
        stream_id=f"s{index:06d}",
        seed=[seed, index],
        text=text,
        listen_codes=audio_tok.encode(listen),
        speak_codes=audio_tok.encode(speak),
        labels=labels,
        samples=samples,
        meta=meta,
        listen=listen,
        listen_clean=listen_clean,
        speak=speak,
        plan=plans,
        augmentation=choice,
    )


def _background(
    rng: np.random.Generator,
    choice: AugmentChoice,
    script: Script,
    pool: list[Voice],
    used: set[Voice],
    lines: LineCache,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Other people talking: a pool voice no user of the stream has, saying three other
    lines of the script with 0.3 s pauses (rendered only when the draw asks for it)."""
    free = [v for v in pool if v not in used]
    if not choice.background or not free:
        return np.zeros(0, dtype=np.float32), {"voice": None, "lines": [], "no_free_voice": choice.background}
    voice = free[int(rng.integers(len(free)))]
    all_lines = [t.user for s in script.sessions for t in s.turns]
    picked = [all_lines[int(i)] for i in rng.integers(len(all_lines), size=3)]
    gap = np.zeros(int(0.3 * SAMPLE_RATE), dtype=np.float32)
    audio = np.concatenate([x for line in picked for x in (lines.user(line, voice), gap)])
    return audio, {"voice": voice.id, "lines": picked}

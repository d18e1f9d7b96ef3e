"""`egomem bench real`: the main job on real recordings of real people, against their truth.

Each recording of the annotation (`bench/data/real/recordings.json`: phone call, meeting excerpts,
TV interview, restaurant, stage clip, ...; the audio is read from the data root, never copied) is
run through what `egomem run` runs: `read_recording` + `replay` + `build_agent` + `EgoMem.run` in
lockstep, default configuration, into a fresh store of its own. Then, per recording and pooled
per split (dev/test are split by recording; never tune on test):

- WER of the product's transcribed turns against the reference transcript (only where the source
  gives one; `base_wer`: plain faster-whisper base, its own defaults but no sampling fallback, on the
  same audio);
- DER of the product's turns, each turn's speaker being the person it went to (pyannote.metrics,
  no collar, overlap scored);
- people found (users in memory) vs true speakers (>= 1 s of speech), merges (two true speakers in
  one person) and splits (one true speaker over two persons), see `_real_score.assign_people`;
- fact recall and precision, strict: a fact on the wrong person is false (`_real_score.score_facts`);
- memories about the assistant (facts or summaries whose subject is the assistant);
- dropped turns: reference turns that no transcript in any stored session overlaps;
- the most times one phrase repeats back to back in a transcribed turn (a Whisper loop);
- RTF: wall seconds of the run (models loaded beforehand) over the recording's length.

`--set store=shared` runs every recording, in the annotation's order, into one store instead, as
a lifelong memory meets them: each recording is scored on what it added, and `identity_across`
counts the merges and splits of true people over the whole run (a caller taken for a meeting
participant; AMI participant ids recur across the meeting excerpts).

Options: `--quick` (the recordings marked quick), `--set llm=rules` (any LLM provider; the
default is the configuration's), `--set split=dev|test`, `--set only=ID,ID`,
`--set annotation=FILE` (another annotation; its paths relative to the data root),
`--data DIR` (the data root; default `../shared/data`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.bench._real_data import RealRecording, load_recordings
from egomem.bench._real_score import (
    MIN_MATCH_S,
    HypTurn,
    Memory,
    assign_people,
    der,
    dropped_turns,
    held_dropped_turns,
    identity_across,
    memory_merges,
    merge_turns,
    repeated_phrase,
    score_facts,
    wer_counts,
)
from egomem.config import Config, load_config
from egomem.errors import InputError
from egomem.media import load_audio
from egomem.memory.assistant_subject import about_assistant
from egomem.memory.held import DROPPED
from egomem.perception.asr import normalise_text
from egomem.runtime.agent import UNKNOWN_VOICE, RunResult
from egomem.runtime.build import Models, Services, build_agent
from egomem.runtime.timeline import Timeline
from egomem.schemas import Episode, FactKind
from egomem.store.sqlite import SQLiteStore
from egomem.stream.sources import read_recording, replay


def _config(data: Path, llm: str | None) -> Config:
    # Default configuration: nothing from the caller's environment, only what --set names.
    return load_config(data_dir=data, environ={"EGOMEM_LLM__PROVIDER": llm} if llm else {})


def hyp_turns(
    heard: Sequence[tuple[float, float, str, str | None]],
    episodes: Sequence[Episode],
    origin: float,
    timeline: Timeline,
) -> list[HypTurn]:
    """The product's transcribed turns with the person each went to. A turn whose text is a line
    of a stored episode's transcript was kept, and went to that episode's participant; any other
    turn was dropped, and its person is whoever the agent took the speaker to be when heard."""
    lines: list[tuple[Episode, str]] = [
        (e, normalise_text(x)) for e in sorted(episodes, key=lambda e: e.start) for x in e.user_transcript.splitlines()
    ]
    used: set[int] = set()
    heard_user = {(round(ev.time, 2), ev.fields.get("text")): ev.fields.get("user") for ev in timeline.of_type("heard")}
    out: list[HypTurn] = []
    for s, e, text, who in sorted(heard, key=lambda h: h[0]):
        norm = normalise_text(text)
        hit = next(
            (
                i
                for i, (ep, x) in enumerate(lines)
                if i not in used and x == norm and ep.start - origin <= e + 1.0 and ep.end - origin >= s - 1.0
            ),
            None,
        )
        if hit is not None:
            used.add(hit)
            ep = lines[hit][0]
            out.append(HypTurn(s, e, text, ep.participants[0] if ep.participants else None, True))
        else:
            person = None if who == UNKNOWN_VOICE else who or heard_user.get((round(e, 2), text))
            held = any(
                ep.status == DROPPED and ep.start - origin <= e + 1.0 and ep.end - origin >= s - 1.0 for ep in episodes
            )
            out.append(HypTurn(s, e, text, person, False, unknown_voice=who == UNKNOWN_VOICE, held_dropped=held))
    return out


def memories(
    store: SQLiteStore, since: float = 0.0, heard: Iterable[str] = (), names_before: dict[str, str | None] | None = None
) -> tuple[list[Memory], list[str]]:
    """What was remembered from `since` (wall clock) on: names given since then (a user's name that
    differs from `names_before`), facts per person, fact-summaries and episode summaries; and the
    people found (users who are not placeholders, created since then or heard in `heard`). A fresh
    store: everything (`since` 0, no names before)."""
    out: list[Memory] = []
    people = []
    heard = set(heard)
    for u in store.list_users():
        if not u.placeholder and (u.created_at >= since or u.id in heard):
            people.append(u.id)
            if u.name and u.name != (names_before or {}).get(u.id):
                out.append(Memory(u.id, f"name {u.name}", "name"))
        for f in store.list_facts(u.id):
            if f.created_at >= since:
                out.append(Memory(u.id, f.text, "summary" if f.kind == FactKind.SUMMARY else str(f.kind)))
    for ep in store.list_episodes():
        if ep.summary.strip() and ep.created_at >= since:
            out.append(Memory(ep.participants[0] if ep.participants else None, ep.summary, "summary"))
    # An episode's summary is also kept as the person's summary fact: one memory, counted once.
    return list(dict.fromkeys(out)), people


def base_whisper_text(audio: Any, model: Any) -> str:
    """Plain faster-whisper on the whole recording, its own defaults (beam 5, no VAD, conditioned on
    previous text) but temperature 0 only: its default fallback samples from a generator CTranslate2
    seeds per thread, so the same file gave a WER of 0.235, 0.716 and 0.667 in three runs."""
    segments, _ = model.transcribe(audio, language="en", temperature=0.0)
    return " ".join(s.text.strip() for s in segments)


def score_recording(
    rec: RealRecording, result: RunResult, turns: list[HypTurn], mems: list[Memory], people: list[str]
) -> dict[str, Any]:
    speech: dict[str, float] = {}
    for t in rec.turns:
        speech[t.speaker] = speech.get(t.speaker, 0.0) + (t.end - t.start)
    true_speakers = sorted(s for s, v in speech.items() if v >= MIN_MATCH_S)
    pm = assign_people(rec.turns, turns, people)
    facts = score_facts(rec.facts, mems, pm.person_to_speaker)
    ref_turns = merge_turns(rec.turns)
    dropped = dropped_turns(ref_turns, turns)
    assistant = [m.text for m in mems if about_assistant(m.text)]
    d = der(rec.turns, turns, result.duration_s, rec.id)
    out: dict[str, Any] = {
        "split": rec.split,
        "kind": rec.kind,
        "duration_s": round(result.duration_s, 2),
        "wall_s": round(result.wall_s, 2),
        "rtf": round(result.wall_s / result.duration_s, 3) if result.duration_s else None,
        "der": round(d["der"], 4),
        "der_parts": {k: round(v, 3) for k, v in d.items()},
        "people_found": len(people),
        "people_true": len(true_speakers),
        "merges": pm.merges,
        "memory_merges": memory_merges(rec.turns, turns, people),
        "splits": pm.splits,
        "merged": pm.merged,
        "split_speakers": pm.split,
        "person_to_speaker": pm.person_to_speaker,
        "speaker_to_person": pm.speaker_to_person,
        "facts_annotated": facts.annotated,
        "facts_remembered": facts.remembered,
        "facts_found": facts.found,
        "facts_correct": facts.correct,
        "facts_wrong_person": facts.wrong_person,
        "fact_recall": facts.recall,
        "fact_precision": facts.precision,
        "false_facts": facts.false_facts,
        "missed_facts": facts.missed,
        "facts_from": rec.facts_from,
        "assistant_memories": len(assistant),
        "assistant_memory_texts": assistant,
        "ref_turns": len([t for t in ref_turns if t.end - t.start >= 0.5]),
        "dropped_turns": len(dropped),
        "dropped": [[round(t.start, 2), round(t.end, 2), t.speaker] for t in dropped],
        "dropped_held_turns": len(held_dropped_turns(dropped, turns)),
        "unknown_voice_turns": sum(t.unknown_voice for t in turns),
        "turns": [[round(t.start, 2), round(t.end, 2), t.person, t.kept, t.text] for t in turns],
        "sessions": len(result.sessions),
        "max_repeat": max((repeated_phrase(t.text) for t in turns), default=0),
        "memories": [[m.person, m.kind, m.text] for m in mems],
    }
    if rec.transcript_kind == "reference":
        edits, words = wer_counts([x.text for x in rec.transcript], [t.text for t in turns])
        out.update(wer_edits=edits, wer_words=words, wer=round(edits / words, 4) if words else None)
    return out


def run_one(rec: RealRecording, models: Models, cfg: Config, store: SQLiteStore) -> tuple[dict[str, Any], str]:
    """One recording through the main job into `store`; its scores (of what this recording added
    to the store), and the LLM that ran."""
    since = time.time()
    names_before = {u.id: u.name for u in store.list_users()}
    recording = read_recording(rec.path, fps=cfg.runtime.video_fps)
    timeline = Timeline()
    services = Services(cfg, store, models)
    agent = build_agent(services, timeline)
    ran = type(services.llm).__name__
    t0 = time.perf_counter()
    result = agent.run(replay(recording), lockstep=True)
    result.wall_s = time.perf_counter() - t0
    episodes = [e for e in store.list_episodes() if e.created_at >= since]
    turns = hyp_turns(result.heard, episodes, agent.wall_origin, timeline)
    mems, people = memories(store, since, {t.person for t in turns if t.person}, names_before)
    return score_recording(rec, result, turns, mems, people), ran


def pooled(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sums and ratios over recordings (WER and DER weighted by words and scored seconds)."""
    rs = list(per.values())
    if not rs:
        return {}

    def total(k: str) -> float:
        return float(sum(r.get(k) or 0 for r in rs))

    wer_words = total("wer_words")
    der_total = sum(r["der_parts"]["total"] for r in rs)
    return {
        "recordings": len(rs),
        "minutes": round(total("duration_s") / 60, 2),
        "wer": round(total("wer_edits") / wer_words, 4) if wer_words else None,
        "wer_recordings": sum("wer" in r for r in rs),
        "base_wer": round(total("base_wer_edits") / wer_words, 4)
        if wer_words and all("base_wer_edits" in r for r in rs if "wer" in r)
        else None,
        "der": round(sum(r["der"] * r["der_parts"]["total"] for r in rs) / der_total, 4) if der_total else None,
        "people_found": int(total("people_found")),
        "people_true": int(total("people_true")),
        "merges": int(total("merges")),
        "memory_merges": int(total("memory_merges")),
        "splits": int(total("splits")),
        "facts_annotated": int(total("facts_annotated")),
        "facts_remembered": int(total("facts_remembered")),
        "fact_recall": round(total("facts_found") / total("facts_annotated"), 4) if total("facts_annotated") else None,
        "fact_precision": round(total("facts_correct") / total("facts_remembered"), 4)
        if total("facts_remembered")
        else None,
        "assistant_memories": int(total("assistant_memories")),
        "dropped_turns": int(total("dropped_turns")),
        "dropped_held_turns": int(total("dropped_held_turns")),
        "ref_turns": int(total("ref_turns")),
        "max_repeat": max(r["max_repeat"] for r in rs),
        "rtf": round(total("wall_s") / total("duration_s"), 3) if total("duration_s") else None,
    }


def _select(recs: list[RealRecording], options: BenchOptions) -> list[RealRecording]:
    split = options.extra.get("split")
    if split and split not in ("dev", "test"):
        raise InputError(f"--set split must be dev or test, got {split!r}")
    only = [x for x in options.extra.get("only", "").split(",") if x]
    unknown = sorted(set(only) - {r.id for r in recs})
    if unknown:
        raise InputError(f"--set only: no recording {', '.join(unknown)}")
    out = [r for r in recs if (not split or r.split == split) and (not only or r.id in only)]
    if options.quick and not only:
        out = [r for r in out if r.quick]
    if not out:
        raise InputError("no recording selected")
    return out


def _fmt(v: Any) -> Any:
    return "-" if v is None else v


@register("real")
def run(options: BenchOptions) -> BenchResult:
    root = data_root(options)
    annotation = options.extra.get("annotation")
    recs = _select(load_recordings(root, Path(annotation) if annotation else None), options)
    llm = options.extra.get("llm")
    shared = options.extra.get("store", "fresh")
    if shared not in ("fresh", "shared"):
        raise InputError(f"--set store must be fresh or shared, got {shared!r}")
    per: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="egomem-bench-real-") as tmp:
        options.report("real: loading the models")
        models = Models(_config(Path(tmp) / "models", llm)).load_all()  # loading is not processing time
        base_model = None
        ran = ""
        store: SQLiteStore | None = None
        try:
            for i, rec in enumerate(recs, 1):
                options.report(f"real: recording {i} of {len(recs)}: {rec.id} ({rec.split}, {rec.kind})")
                data = Path(tmp) / ("shared" if shared == "shared" else rec.id)
                data.mkdir(exist_ok=True)
                if store is None:
                    store = SQLiteStore(data / "memory.db")
                try:
                    per[rec.id], ran = run_one(rec, models, _config(data, llm), store)
                finally:
                    if shared == "fresh":
                        store.close()
                        store = None
                if rec.transcript_kind == "reference":
                    if base_model is None:
                        from faster_whisper import WhisperModel

                        from egomem.perception.whisper import resolve_model_dir

                        base_model = WhisperModel(str(resolve_model_dir("base")), device="cpu", compute_type="int8")
                    text = base_whisper_text(load_audio(rec.path), base_model)
                    edits, words = wer_counts([x.text for x in rec.transcript], [text])
                    per[rec.id].update(base_wer_edits=edits, base_wer=round(edits / words, 4) if words else None)
        finally:
            if store is not None:
                store.close()
    splits = {s: pooled({k: v for k, v in per.items() if v["split"] == s}) for s in ("dev", "test")}
    metrics: dict[str, Any] = {
        "llm_provider": ran,
        "llm_asked": llm or "default",
        "store": "fresh per recording" if shared == "fresh" else "one store for all, in annotation order",
        "pooled": pooled(per),
        **{f"pooled_{s}": m for s, m in splits.items() if m},
        "recordings": per,
    }
    if shared == "shared":
        # Who is who over the whole run: a caller merged with a meeting participant shows here only.
        metrics["identity_across"] = identity_across(
            (r.id, per[r.id]["speaker_to_person"], r.global_speakers) for r in recs
        )
    header = [
        "recording", "split", "s", "wer", "base_wer", "der", "people", "merges", "splits",
        "facts R", "facts P", "assistant", "dropped (held)", "max_rep", "rtf",
    ]  # fmt: skip
    rows = [
        [
            k, r["split"], r["duration_s"], _fmt(r.get("wer")), _fmt(r.get("base_wer")), r["der"],
            f"{r['people_found']}/{r['people_true']}", r["merges"], r["splits"],
            _fmt(r["fact_recall"]), _fmt(r["fact_precision"]), r["assistant_memories"],
            f"{r['dropped_turns']}/{r['ref_turns']} ({r['dropped_held_turns']})", r["max_repeat"], r["rtf"],
        ]
        for k, r in per.items()
    ]  # fmt: skip
    prow = [
        [
            name, p["recordings"], p["minutes"], _fmt(p["wer"]), _fmt(p["base_wer"]), _fmt(p["der"]),
            f"{p['people_found']}/{p['people_true']}", p["merges"], p["splits"],
            _fmt(p["fact_recall"]), _fmt(p["fact_precision"]), p["assistant_memories"],
            f"{p['dropped_turns']}/{p['ref_turns']} ({p['dropped_held_turns']})", p["max_repeat"], p["rtf"],
        ]
        for name, p in (("all", metrics["pooled"]), *((s, m) for s, m in splits.items() if m))
    ]  # fmt: skip
    pheader = ["pooled", "n", "min", *header[3:]]
    return BenchResult(
        "real",
        metrics,
        tables=[
            (f"bench real: per recording (llm {ran}; {metrics['store']})", header, rows),
            ("bench real: pooled", pheader, prow),
        ],
        notes=[
            *(
                [
                    f"whole run in one store: {metrics['identity_across']['merges']} merges, "
                    f"{metrics['identity_across']['splits']} splits of true people (within and across recordings)"
                ]
                if shared == "shared"
                else []
            ),
            "wer only where the source gives a reference transcript; facts strict (a fact on the wrong person is "
            "false); people = found/true (true: >= 1 s of speech); dropped = reference turns with no transcript "
            "in any stored session / reference turns",
        ],
    )

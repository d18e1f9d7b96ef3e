"""Render BENCHMARKS.md from the committed results in benchmarks/results/NAME.json.

Every figure in BENCHMARKS.md comes from one of those files, written by
`egomem bench NAME --json benchmarks/results/NAME.json` (the envelope says which command,
commit, date and machine load). The paper's figures (EgoMem, arXiv 2509.11914) are kept
here, in PAPER, and always labelled as the paper's. A figure with no result file is shown
as "not re-measured yet", never carried over from an older text.

    python scripts/benchmarks_md.py           # rewrite BENCHMARKS.md
    python scripts/benchmarks_md.py --check   # `make benchmarks-check`: exit 1 when BENCHMARKS.md is out of
                                              # date, a result's commit is not in HEAD's history, or a
                                              # doc quotes a run of a result file other than the committed one

A result whose measured code (scripts/bench_provenance.py) changed since its run's commit
is marked stale, with the files that changed; one whose envelope was read after the run
(before provenance was taken at the start) says so.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_provenance import not_ancestors, staleness

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUTPUT = ROOT / "BENCHMARKS.md"
MISSING = "not re-measured yet"

# The paper's figures (EgoMem, arXiv 2509.11914), by what they measure.
PAPER: dict[str, str] = {
    "face_lfw": "0.984 (LFW)",
    "speaker_pass1": "0.958 raw / 0.965 s-norm",
    "speaker_eer": "0.89 %",
    "speaker_search": "< 0.1 s (GPU)",
    "face_frame": "0.2 s (GPU)",
    "textret_pass5": "0.960",
    "textret_latency": "< 0.1 s (GPU)",
    "trigger_jaccard": "0.992 clean / 0.989 noised",
    "trigger_f1": "0.986 clean / 0.982 noised",
    "trigger_time": "0.08 s (GPU)",
    "realtime_rtf": "21.7 frames/s vs 12.5 needed (GPU)",
}


@dataclass(frozen=True)
class Row:
    what: str
    bench: str
    paths: tuple[str, ...]  # dotted paths into the metrics ("BENCH:path" for another result); joined by " / "
    paper: str = "—"
    fmt: str = "{:.3f}"
    # What the result must say of itself (metrics key -> value) for its figures to be this row's: a
    # result of another protocol (an older format, another pace or model) shows as not re-measured.
    where: tuple[tuple[str, str], ...] = ()


# bench realtime's two protocols (docs/benchmarks/realtime.md): realtime.json the default (live, local
# LLM), realtime_rules.json the rules extractor's fallback rows (lockstep, seeds 0,1,2).
REALTIME_DEFAULT = (("pace", "live"), ("llm_provider", "local"))
REALTIME_RULES = (("pace", "lockstep"), ("llm_provider", "rules"))
# bench memorize: memorize.json the default (local LLM), memorize_rules.json the rules fallback.
MEMORIZE_DEFAULT = (("llm_provider", "local"),)
# bench serve with workers=2 store=postgres: serve_fleet_default.json the default (local LLM), serve_fleet.json rules.
FLEET_DEFAULT = (("llm_provider", "local"),)
FLEET_RESTART = (
    "restart.rows_lost_total",
    "restart.failed_total",
    "restart.retried_total",
    "restart.completed_total",
    "restart.all_workers_alive",
)

SUMMARY: tuple[Row, ...] = (
    # Real recordings of real people first: what a user's own recordings get (bench real, test split).
    Row(
        "real recordings, test split, default configuration: WER / plain faster-whisper base WER on the same audio",
        "real",
        ("pooled_test.wer", "pooled_test.base_wer"),
    ),
    Row(
        "real recordings, test split, default: DER / people found / true people / merges / splits",
        "real",
        (
            "pooled_test.der",
            "pooled_test.people_found",
            "pooled_test.people_true",
            "pooled_test.merges",
            "pooled_test.splits",
        ),
    ),
    Row(
        "real recordings, test split, default: fact recall / precision (strict) / memories about the assistant",
        "real",
        ("pooled_test.fact_recall", "pooled_test.fact_precision", "pooled_test.assistant_memories"),
    ),
    Row(
        "real recordings, test split, default: dropped turns / reference turns / longest repeat / RTF",
        "real",
        ("pooled_test.dropped_turns", "pooled_test.ref_turns", "pooled_test.max_repeat", "pooled_test.rtf"),
    ),
    Row(
        "real recordings, test split, rules extractor (fallback): fact recall / precision / dropped turns / RTF",
        "real_rules",
        ("pooled_test.fact_recall", "pooled_test.fact_precision", "pooled_test.dropped_turns", "pooled_test.rtf"),
    ),
    Row(
        "privacy: checks passed, SQLite / PostgreSQL (PostgreSQL fails the old-backup check by design:"
        " docs/privacy.md)",
        "privacy",
        ("passed.sqlite", "passed.postgres"),
    ),
    Row("face verification accuracy, deepface pairs (threshold 0.6)", "face", ("faces_deepface.accuracy",)),
    Row(
        "face verification accuracy, LFW 10×10 all pairs",
        "face",
        ("faces_lfw_subset_10x10.accuracy",),
        PAPER["face_lfw"],
    ),
    Row(
        "detect + embed + search, one 640×480 frame, wall / CPU ms",
        "face",
        ("frame_640x480_ms_p50", "frame_640x480_cpu_ms_p50"),
        PAPER["face_frame"],
        "{:.0f}",
    ),
    Row(
        "speaker pass@1 clean raw / s-norm fixed cohort / s-norm gallery cohort",
        "speaker",
        ("clean.raw.pass_at_1", "clean.fixed_cohort.pass_at_1", "clean.gallery_cohort.pass_at_1"),
        PAPER["speaker_pass1"],
    ),
    Row(
        "speaker EER, s-norm fixed cohort / gallery cohort",
        "speaker",
        ("clean.fixed_cohort.eer", "clean.gallery_cohort.eer"),
        PAPER["speaker_eer"],
        "{:.4f}",
    ),
    Row(
        "speaker pass@1 / EER at 10 dB SNR (fixed cohort, mean of noise draws)",
        "speaker",
        ("snr10.fixed_cohort.pass_at_1_mean", "snr10.fixed_cohort.eer_mean"),
    ),
    Row(
        "speaker pass@1 / EER, 0.5–1.5 s pieces, test utterances (gallery cohort)",
        "speaker",
        ("short.0_5_1_5.gallery_cohort.pass_at_1", "short.0_5_1_5.gallery_cohort.eer"),
    ),
    Row(
        "speaker pass@1 / EER, FSDD 8 kHz digits, test split (gallery cohort)",
        "speaker",
        ("fsdd.gallery_cohort.pass_at_1", "fsdd.gallery_cohort.eer"),
    ),
    Row(
        "identity, calibrated LLRs, test split (by identity): Cllr face / voice / fused (10 face+voice persons)",
        "fusion",
        ("face.cllr", "voice.cllr", "persons_fused.cllr"),
    ),
    Row(
        "identity, hard pairs (closest faces + closest voices), test split: EER face / voice / fused",
        "fusion",
        ("hard_face.eer", "hard_voice.eer", "hard_fused.eer"),
    ),
    Row(
        "identity, hard pairs, at the cost-derived thresholds: false-merge rate voice / fused; UNSURE of same, fused",
        "fusion",
        ("hard_voice.false_merge_rate", "hard_fused.false_merge_rate", "hard_fused.unsure_same_rate"),
    ),
    Row(
        "identity over days, test worlds (transcript mode, rules extractor): merges / split rate / misattributed facts",
        "identity",
        ("merges", "split_rate", "misattributed_fact_rate"),
        fmt="{:.4g}",
    ),
    Row(
        "identity over days, test worlds: asks per person-day / day-2 greeting by the right name / latency p50 (polls)",
        "identity",
        ("asks_per_person_day", "day2_right_rate", "latency_polls_p50"),
    ),
    Row("ASR WER / RTF, Whisper base (default)", "asr", ("whisper-base.wer", "whisper-base.rtf")),
    Row("ASR WER / RTF, Whisper tiny.en", "asr", ("whisper-tiny.en.wer", "whisper-tiny.en.rtf")),
    Row("ASR WER / RTF, pocketsphinx (fallback)", "asr", ("pocketsphinx.wer", "pocketsphinx.rtf")),
    Row("text retrieval pass@1 / pass@5", "textret", ("pass_at_1", "pass_at_5"), PAPER["textret_pass5"] + " (pass@5)"),
    Row(
        "text retrieval pass@1 / pass@5, paraphrases sharing no word + same-relation distractors",
        "textret",
        ("sets.new_paraphrase.pass_at_1", "sets.new_paraphrase.pass_at_5"),
    ),
    Row(
        "text retrieval latency p50 / p95, ms",
        "textret",
        ("latency_ms_p50", "latency_ms_p95"),
        PAPER["textret_latency"],
        "{:.1f}",
    ),
    Row(
        "LoCoMo evidence R@10, product search, test conv. 6–10 / dev conv. 1–5 (recipe chosen on dev)",
        "locomo",
        ("product.test_recall_at_10", "product.dev_recall_at_10"),
    ),
    Row("LoCoMo evidence R@10, multi-hop (cat. 1)", "locomo", ("product.recall_at_10_by_category.1",)),
    Row(
        "trigger Jaccard clean / noised (model)",
        "trigger",
        ("model.clean.jaccard", "model.noised.jaccard"),
        PAPER["trigger_jaccard"],
    ),
    Row(
        "trigger F1@5 clean / noised (model)",
        "trigger",
        ("model.clean.f1_at_5", "model.noised.f1_at_5"),
        PAPER["trigger_f1"],
    ),
    Row(
        "trigger F1@5 clean / noised, runtime-like streams only (model)",
        "trigger",
        ("model.by_condition.runtime.clean.f1_at_5", "model.by_condition.runtime.noised.f1_at_5"),
    ),
    Row(
        "trigger F1@5 clean / noised (rule baseline)", "trigger", ("baseline.clean.f1_at_5", "baseline.noised.f1_at_5")
    ),
    Row(
        "diarization DER no collar / ±0.25 s, held-out meetings (not used to choose settings): ours",
        "diarization",
        ("ours.heldout.der", "ours.heldout.der_collar_0_25"),
    ),
    Row(
        "diarization DER no collar / ±0.25 s, held-out meetings: silero + AHC 0.40 baseline",
        "diarization",
        ("threshold_clustering.heldout.der", "threshold_clustering.heldout.der_collar_0_25"),
    ),
    Row(
        "diarization DER no collar / ±0.25 s, held-out meetings: one speaker over our VAD",
        "diarization",
        ("ours_vad_single_speaker.heldout.der", "ours_vad_single_speaker.heldout.der_collar_0_25"),
    ),
    Row(
        "diarization DER no collar / ±0.25 s, the 10 meetings its settings were chosen on (ours; not a headline)",
        "diarization",
        ("ours.trn.der", "ours.trn.der_collar_0_25"),
    ),
    Row(
        "face–voice links, 4 real clips: wrong links / clips passing their checks / clips",
        "av",
        ("wrong_links", "checks_passed", "clips"),
    ),
    Row(
        "people found: interview / hamilton / restaurant / crowd",
        "av",
        (
            "people_found.visualvoice_interview",
            "people_found.av_hamilton_clip",
            "people_found.visualvoice_noisy_restaurant",
            "people_found.facenet_pytorch_crowd",
        ),
    ),
    Row("people analysis (tracks + voices + links) RTF wall / CPU", "av", ("rtf", "cpu_rtf"), fmt="{:.2f}"),
    Row("LoCoMo extraction precision / recall (rules, 272 sessions)", "extract", ("rules.precision", "rules.recall")),
    Row(
        "LoCoMo extraction, default (local LLM + rules), test conv. 6–10: precision [95 % CI] / recall [95 % CI]"
        " / sessions",
        "extract",
        ("local.precision", "local.precision_ci95", "local.recall", "local.recall_ci95", "local.sessions"),
    ),
    Row(
        "LoCoMo extraction, rules on the same sessions: precision [95 % CI] / recall [95 % CI]",
        "extract",
        (
            "rules_same_sessions.precision",
            "rules_same_sessions.precision_ci95",
            "rules_same_sessions.recall",
            "rules_same_sessions.recall_ci95",
        ),
    ),
    Row(
        "spoken conversations, test, local LLM from audio: fact recall / precision",
        "conversation",
        ("test.local.audio.fact_recall", "test.local.audio.fact_precision"),
    ),
    Row(
        "spoken conversations, test, local LLM from audio: relations / false memories per session",
        "conversation",
        ("test.local.audio.relation_recall", "test.local.audio.false_memories_per_session"),
    ),
    Row(
        "spoken conversations, test, local LLM from audio: Level-2 correct / greeting by name",
        "conversation",
        ("test.local.audio.level2_correct", "test.local.audio.greeting_by_name"),
    ),
    Row(
        "spoken conversations, test, local LLM: extraction CPU-s per session",
        "conversation",
        ("test.local.audio.extract_cpu_s_per_session",),
        fmt="{:.1f}",
    ),
    Row(
        "spoken conversations, dev (where rules and prompts are chosen), local LLM from audio: fact recall / "
        "precision / relations / false memories per session / merges",
        "conversation_dev",
        (
            "dev.local.audio.fact_recall",
            "dev.local.audio.fact_precision",
            "dev.local.audio.relation_recall",
            "dev.local.audio.false_memories_per_session",
            "dev.local.audio.merges",
        ),
    ),
    Row(
        "spoken conversations, test, rules from audio: fact recall / false memories per session",
        "conversation",
        ("test.rules.audio.fact_recall", "test.rules.audio.false_memories_per_session"),
    ),
    Row(
        "LoCoMo evidence R@10, test conv. 6–10: plain search of the raw turns / ask multi-round / ask single-shot"
        " (memory written by the rules extractor, not the default's local model: see its section)",
        "locomo-qa",
        ("locomo:product.test_recall_at_10", "multi_round.test.recall_at_10", "single_shot.test.recall_at_10"),
    ),
    Row(
        "ask, LoCoMo R@10 multi-hop (c1) multi-round / single-shot, test conv. 6–10 (rules' memory)",
        "locomo-qa",
        ("multi_round.test.recall_at_10_by_category.1", "single_shot.test.recall_at_10_by_category.1"),
    ),
    Row(
        "ask, LoCoMo answer token F1 with the local LLM [95 % interval] / best evidence's F1 / questions"
        " (test conv. 6–10, spread over the four categories)",
        "locomo-qa",
        ("answers.f1", "answers.f1_ci95", "answers.evidence_f1", "answers.questions"),
    ),
    Row(
        "memorize, default (local LLM): real-time factor / CPU-s per recorded minute",
        "memorize",
        ("rtf", "cpu_s_per_recorded_min"),
        fmt="{:.2f}",
        where=MEMORIZE_DEFAULT,
    ),
    Row(
        "memorize, default: stopped and resumed gives the same memory (people, facts) / the same episodes",
        "memorize",
        ("resume_same_memory", "resume_same_episodes"),
        where=MEMORIZE_DEFAULT,
    ),
    Row(
        "ask on the memorised recording (default), evidence hit@10: what was said / who / when / at a time",
        "memorize",
        ("ask.said.hit_at_k", "ask.who.hit_at_k", "ask.when.hit_at_k", "ask.at_time.hit_at_k"),
        fmt="{:.2f}",
        where=MEMORIZE_DEFAULT,
    ),
    Row(
        "ask on the memorised recording (default), best evidence right (no LLM): said / who / when / at a time",
        "memorize",
        ("ask.said.top1", "ask.who.top1", "ask.when.top1", "ask.at_time.top1"),
        fmt="{:.2f}",
        where=MEMORIZE_DEFAULT,
    ),
    Row(
        "memorize, rules extractor (fallback): RTF / CPU-s per recorded minute / resumed gives the same memory"
        " / ask who hit@10",
        "memorize_rules",
        ("rtf", "cpu_s_per_recorded_min", "resume_same_memory", "ask.who.hit_at_k"),
        fmt="{:.2f}",
        where=(("llm_provider", "rules"),),
    ),
    Row(
        "extraction cost per session, default (local 1.5B, memory passes on 1 thread; dev, 2 scenarios): model"
        " CPU-s / wall s /"
        " prompt tokens evaluated / tokens written",
        "xcost",
        (
            "rows.default.model_cpu_s_per_session",
            "rows.default.wall_s_mean",
            "rows.default.tokens_evaluated_per_session",
            "rows.default.tokens_out_per_session",
        ),
        fmt="{:.1f}",
    ),
    Row(
        "extraction cost per session, `llm.draft_tokens = 4` (prompt-lookup drafts; not the default): model CPU-s /"
        " wall s / tokens written",
        "xcost",
        (
            "rows.llm.draft_tokens=4.model_cpu_s_per_session",
            "rows.llm.draft_tokens=4.wall_s_mean",
            "rows.llm.draft_tokens=4.tokens_out_per_session",
        ),
        fmt="{:.1f}",
    ),
    Row(
        "extraction cost per session, `llm.memory_threads = 2` (the memory passes on 2 threads, the default before"
        " 2026-12-04): model CPU-s / wall s / tokens written",
        "xcost",
        (
            "rows.llm.memory_threads=2.model_cpu_s_per_session",
            "rows.llm.memory_threads=2.wall_s_mean",
            "rows.llm.memory_threads=2.tokens_out_per_session",
        ),
        fmt="{:.1f}",
    ),
    # bench eval-dialog: what the product remembered (its store, filled by its memory manager, read by its
    # retrieval) first; the oracle memory (the script's profile and gold facts) beside it, labelled.
    Row(
        "dialog Fact Score L1 / L2, product memory (rules extractor), template responder"
        " (1.5B Qwen judge: a weak judge)",
        "eval-dialog_template",
        ("table.level1/product.fact_score", "table.level2/product.fact_score"),
        fmt="{:.2f}",
        where=(("extractor", "rules"),),
    ),
    Row(
        "dialog Fact Score L1 / L2, oracle memory (the script's profile and gold facts), template responder"
        " (same judge)",
        "eval-dialog_template",
        ("table.level1/clean.fact_score", "table.level2/clean.fact_score"),
        fmt="{:.2f}",
    ),
    Row(
        "dialog Fact Score L1 / L2, product memory (rules extractor), cascaded on the 0.5B (1.5B judge of the"
        " answerer's family, Qwen: it may favour answers like its own)",
        "eval-dialog_cascaded",
        ("table.level1/product.fact_score", "table.level2/product.fact_score"),
        fmt="{:.2f}",
        where=(("extractor", "rules"),),
    ),
    Row(
        "dialog Fact Score L1 / L2, oracle memory, cascaded on the 0.5B (the same judge, of the answerer's family)",
        "eval-dialog_cascaded",
        ("table.level1/clean.fact_score", "table.level2/clean.fact_score"),
        fmt="{:.2f}",
    ),
    # bench realtime: the default configuration (local LLM) live, then the rules extractor in lockstep.
    Row(
        "realtime, live, default (local LLM): busy s per stream s of perception + dialog / CPU-s per stream s"
        " / perception lag max / p95, s",
        "realtime",
        (
            "pooled.rtf_perception_dialog",
            "pooled.cpu_s_per_stream_s",
            "pooled.perception_lag_s_max",
            "pooled.perception_lag_s_p95",
        ),
        PAPER["realtime_rtf"],
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, live, default: Level-1 correct-user latency p50 / p95, wall s (a missed visit counts whole)"
        " / missed visits",
        "realtime",
        (
            "pooled.level1_correct_latency_s_p50",
            "pooled.level1_correct_latency_s_p95",
            "pooled.level1_missed_visits",
        ),
        fmt="{:.1f}",
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, live, default: memory lag (the first write) p50 / p95 s / jobs waiting (both passes) at end"
        " of stream / after the drain / drain s / peak RSS MB",
        "realtime",
        (
            "pooled.memory_lag_s_p50",
            "pooled.memory_lag_s_p95",
            "pooled.memory_backlog_end_of_stream",
            "pooled.memory_backlog_after_drain",
            "pooled.drain_s",
            "peak_rss_mb",
        ),
        fmt="{:.0f}",
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, live, default: the model's pass after the rules' write (memory.model_pass = after): sessions"
        " refined / refine lag p50 / p95 s / refining backlog at end of stream",
        "realtime",
        (
            "pooled.sessions_refined",
            "pooled.refine_lag_s_p50",
            "pooled.refine_lag_s_p95",
            "pooled.refine_backlog_end_of_stream",
        ),
        fmt="{:.0f}",
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, live, default: the user turns written to memory / onto another person's user (all, by its"
        " voice) / onto a second user of the same person / script lines none was written from",
        "realtime",
        (
            "pooled.turns.written",
            "pooled.turns.wrong_person",
            "pooled.turns.wrong_person_by_voice",
            "pooled.turns.split",
            "pooled.turns.unwritten_lines",
        ),
        fmt="{:.0f}",
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, live, default: identity purity / fragmentation (people → users)",
        "realtime",
        ("pooled.identity.purity", "pooled.identity.fragmentation"),
        where=REALTIME_DEFAULT,
    ),
    Row(
        "realtime, lockstep, rules extractor (fallback): RTF / CPU-s per stream s / Level-1 latency p50 / p95,"
        " stream s / missed visits",
        "realtime_rules",
        (
            "rtf_overall",
            "pooled.cpu_s_per_stream_s",
            "pooled.level1_correct_latency_s_p50",
            "pooled.level1_correct_latency_s_p95",
            "pooled.level1_missed_visits",
        ),
        where=REALTIME_RULES,
    ),
    Row(
        "realtime, lockstep, rules extractor (fallback): identity purity / fragmentation",
        "realtime_rules",
        ("pooled.identity.purity", "pooled.identity.fragmentation"),
        where=REALTIME_RULES,
    ),
    Row(
        "identity search at 1M face keys on PostgreSQL, p50 / p95 ms / top-1 agreement (ef_search chosen on dev)",
        "store_1m",
        (
            "postgres_1000000_chosen_ident_p50_ms",
            "postgres_1000000_chosen_ident_p95_ms",
            "postgres_1000000_chosen_ident_top1_agree",
        ),
        fmt="{:.2f}",
    ),
    Row(
        "serve, default configuration (local LLM), one worker: devices at which it falls behind (lag p95 > 3 s)"
        " / lag p50 / p95 s at 1 device",
        "serve",
        ("falls_behind_at_devices", "by_devices.1.event_lag_s_p50", "by_devices.1.event_lag_s_p95"),
        fmt="{:.1f}",
        where=(("llm_provider", "local"),),
    ),
    Row(
        "fleet, default configuration (local LLM), 2 workers: enrolled through worker A, identified through B /"
        " real-time devices per worker (lag p95 ≤ 3 s)",
        "serve_fleet_default",
        ("cross_worker.b_recognises", "realtime_devices_per_worker"),
        where=FLEET_DEFAULT,
    ),
    Row(
        "fleet, default configuration: PostgreSQL killed (kill -9) mid-stream: committed rows lost / memory jobs"
        " and rounds failed, retried, written / workers alive",
        "serve_fleet_default",
        FLEET_RESTART,
        where=FLEET_DEFAULT,
    ),
    Row(
        "fleet, rules extractor (fallback rows): enrolled through worker A, identified through B / polls beyond"
        " the same worker's",
        "serve_fleet",
        ("cross_worker.b_recognises", "cross_worker.extra_polls_across_workers"),
    ),
    Row(
        "fleet, rules extractor: real-time devices per worker (lag p95 ≤ 3 s)",
        "serve_fleet",
        ("realtime_devices_per_worker",),
    ),
    Row(
        "fleet, rules extractor: PostgreSQL killed (kill -9) mid-stream: committed rows lost / memory jobs and"
        " rounds failed, retried, written / workers alive",
        "serve_fleet",
        FLEET_RESTART,
    ),
)

INTRO = """# Benchmarks

Generated by `make benchmarks-md` (scripts/benchmarks_md.py) from the result files in
`benchmarks/results/NAME.json`; do not edit by hand. Each result file was written by
`egomem bench NAME --json benchmarks/results/NAME.json` and records the command, the git
commit (and whether the tree had uncommitted changes), the date, the machine's load at
start and end, and the wall time; each section below repeats them. Figures labelled
*paper* are EgoMem's (arXiv 2509.11914), measured on a GPU and on the paper's own data.
"{missing}" marks a figure whose result file is not committed yet; "(stale)" one whose
measured code (the modules its run loaded, or for older files those its benchmark imports,
and their data files) changed after the
commit it ran on — its section names the files. An edit to a module's comments or docstrings
alone is no change of its code. Protocols and discussion:
`docs/benchmarks/<area>.md`.
""".replace("{missing}", MISSING)


def get(metrics: dict[str, Any], path: str) -> Any:
    """The value at a dotted path; a key may itself hold dots ("whisper-tiny.en.wer")."""
    if path in metrics:
        return metrics[path]
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:i])
        if isinstance(metrics.get(head), dict):
            found = get(metrics[head], ".".join(parts[i:]))
            if found is not None:
                return found
    return None


def fmt(v: Any, spec: str = "{:.3f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return spec.format(v)
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, float) for x in v):  # a 95 % interval
        return f"[{spec.format(v[0])}, {spec.format(v[1])}]"
    return str(v)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def stale_files(rec: dict[str, Any]) -> tuple[str, ...]:
    """The measured files that changed since the run's commit (empty: still current)."""
    loaded = rec.get("modules")
    modules = tuple(loaded) if isinstance(loaded, list) and loaded else None
    st = staleness(str(rec.get("benchmark")), (rec.get("git") or {}).get("commit"), modules)
    return st.changed if st is not None else ()


def _cpu(rec: dict[str, Any]) -> str:
    """ " (AMD EPYC; avx2, avx512f)": the CPU a run had, where its file names it (newer files)."""
    cpu = rec.get("cpu")
    if not isinstance(cpu, dict):
        return ""
    isa = ", ".join(cpu.get("isa") or []) or "no listed vector extensions"
    return f" ({cpu.get('model', '?')}; {isa})"


def provenance(rec: dict[str, Any]) -> str:
    git = rec.get("git") or {}
    commit = (git.get("commit") or "unknown")[:10]
    if git.get("dirty"):
        diff = git.get("diff_sha256")
        commit += f" with uncommitted changes (diff sha256 {diff[:12]})" if diff else " (uncommitted changes)"
    load = "/".join(fmt(x, "{:.2f}") for x in rec.get("load_start") or []) or "?"
    load_end = "/".join(fmt(x, "{:.2f}") for x in rec.get("load_end") or []) or "?"
    text = (
        f"`{rec.get('command', '?')}` — {rec.get('date_utc', '?')}, commit {commit}, "
        f"{rec.get('cpu_count', '?')} CPUs{_cpu(rec)}, load (1/5/15 min) {load} at start, {load_end} at end, "
        f"{fmt(rec.get('wall_s'), '{:.0f}')} s wall."
    )
    if git.get("taken") != "start":
        text += (
            " *Old envelope: the commit was read after the run, so it may postdate the code that ran"
            " (and the tree may have changed during the run).*"
        )
    changed = stale_files(rec)
    if changed:
        shown = ", ".join(f"`{c.removeprefix('src/')}`" for c in changed[:6])
        more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        text += f"\n\n**Stale**: {len(changed)} measured files changed since commit {commit[:10]}: {shown}{more}."
    return text


def _fits(rec: dict[str, Any], row: Row) -> bool:
    """Whether a result is of the protocol the row's figures are (its `where`)."""
    return all(str(rec["metrics"].get(k)) == v for k, v in row.where)


def summary(results: dict[str, dict[str, Any]]) -> str:
    rows = []
    for r in SUMMARY:
        where = [p.split(":", 1) if ":" in p else (r.bench, p) for p in r.paths]
        recs = {b: results.get(b) for b, _ in where}
        recs = {b: rec if rec is not None and _fits(rec, r) else None for b, rec in recs.items()}
        vals = [get(rec["metrics"], p) if (rec := recs[b]) is not None else None for b, p in where]
        ours = MISSING if all(v is None for v in vals) else " / ".join(fmt(v, r.fmt) for v in vals)
        if ours != MISSING and any(rec is not None and stale_files(rec) for rec in recs.values()):
            ours += " (stale)"
        # The commands that made the figures, as recorded (a --quick run shows as one).
        # (A result file is NAME.json or NAME_VARIANT.json; bench names have no "_".)
        commands = [
            rec["command"].split(" --json ")[0] if rec else f"egomem bench {b.split('_')[0]}" for b, rec in recs.items()
        ]
        rows.append([r.what, " + ".join(f"`{c}`" for c in commands), ours, r.paper])
    return "## Summary\n\n" + table(["what", "command", "ours", "paper"], rows)


def flatten(metrics: dict[str, Any], prefix: str = "", depth: int = 3) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in metrics.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and depth > 1:
            out += flatten(v, key + ".", depth - 1)
        elif not isinstance(v, dict | list):
            out.append((key, v))
    return out


def generic(rec: dict[str, Any]) -> str:
    rows = [[f"`{k}`", fmt(v, "{:.4g}")] for k, v in flatten(rec["metrics"])]
    return table(["metric", "value"], rows) if rows else "(no scalar metrics)"


def locomo(rec: dict[str, Any]) -> str:
    m = rec["metrics"]
    cats = ("1", "2", "3", "4")
    names = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
    header = [
        "recipe",
        "R@5",
        "R@10",
        "R@20",
        "R@10 dev 1–5",
        "R@10 test 6–10",
        *(f"R@10 c{c} {names[c]}" for c in cats),
    ]
    rows = []
    for name, s in [*m.get("ablations", {}).items(), ("**product**", m.get("product", {}))]:
        by = s.get("recall_at_10_by_category", {})
        rows.append(
            [
                name,
                *(
                    fmt(s.get(k))
                    for k in ("recall_at_5", "recall_at_10", "recall_at_20", "dev_recall_at_10", "test_recall_at_10")
                ),
            ]
            + [fmt(by.get(c)) for c in cats]
        )
    sel = m.get("selection", {})
    grid = table(["dev grid recipe", "R@10 dev"], [[k, fmt(v)] for k, v in sel.get("dev_recall_at_10", {}).items()])
    return (
        f"{m.get('questions')} questions of categories 1–4 in {m.get('conversations')} conversations, "
        "ingested through the product's store and answered by the product's search "
        "(`retrieval/search.py`, recipe `DEFAULT_TURNS`, the best of the dev grid below). "
        "Conversations 1–5 are the dev set (recipe choice), 6–10 the test set.\n\n"
        + table(header, rows)
        + f"\n\nRecipe choice on the dev conversations (chosen: `{sel.get('chosen')}`):\n\n"
        + grid
    )


def realtime(rec: dict[str, Any]) -> str:
    m = rec["metrics"]
    seeds = m.get("seeds") or {}
    keys: tuple[tuple[str, str], ...] = (
        ("rtf_overall", "RTF"),
        ("level1_correct_latency_s_p50", "correct-user latency p50 s"),
        ("level1_correct_latency_s_p95", "p95 s"),
        ("identity.purity", "purity"),
        ("identity.fragmentation", "fragmentation"),
        ("identity.wrong_switches", "wrong switches"),
        ("identity.users", "real users"),
        ("turns.wrong_person", "turns onto another person"),
        ("turns.split", "turns onto a second user"),
        ("turns.unwritten_lines", "script lines unwritten"),
    )
    live = m.get("pace") == "live"
    if live:
        keys += (
            ("rtf_perception_dialog", "perception + dialog busy / stream s"),
            ("cpu_s_per_stream_s", "CPU-s / stream s"),
            ("perception_lag_s_max", "perception lag max s"),
            ("memory_lag_s_p50", "memory lag p50 s"),
            ("memory_lag_s_p95", "p95 s"),
            ("memory_backlog_end_of_stream", "backlog at end"),
            ("memory_backlog_after_drain", "after drain"),
            ("drain_s", "drain s"),
            ("refine_lag_s_p50", "model pass lag p50 s"),
            ("refine_lag_s_p95", "p95 s"),
        )
    rows = [[f"seed {s}", *(fmt(get(v, k), "{:.3f}") for k, _ in keys)] for s, v in seeds.items()]
    if "pooled" in m:
        rows.append(["**pooled**", *(fmt(get(m["pooled"], k), "{:.3f}") for k, _ in keys)])
    if not rows:
        return generic(rec)
    axis = "wall seconds, live" if live else "stream seconds"
    return (
        "Every visit is mapped to the Level-1 user that held most of it; latency is the first frame of the "
        f"visit to the Level-1 MemChunk of that (correct) user ({axis}). Placeholders are not users.\n\n"
        + table(["run", *(label for _, label in keys)], rows)
        + "\n\nAll metrics:\n\n"
        + generic(rec)
    )


def trigger(rec: dict[str, Any]) -> str:
    m = rec["metrics"]
    conds = list((m.get("model") or {}).get("by_condition", {}))
    if not conds:
        return generic(rec)
    rows = []
    for c in [*conds, "pooled"]:
        cell = []
        for who in ("model", "baseline"):
            src = m.get(who, {})
            at = src if c == "pooled" else src.get("by_condition", {}).get(c, {})
            for part in ("clean", "noised"):
                cell.append(fmt(get(at, f"{part}.f1_at_5")))
        model = m["model"] if c == "pooled" else m["model"]["by_condition"][c]
        cell += [fmt(get(model, "clean.jaccard"), "{:.4f}"), fmt(get(model, "noised.jaccard"), "{:.4f}")]
        rows.append([f"**{c}**" if c == "pooled" else c, *cell])
    header = ["condition", "model F1@5 clean", "noised", "rules F1@5 clean", "noised", "model Jaccard clean", "noised"]
    return table(header, rows) + "\n\nAll metrics:\n\n" + generic(rec)


def eval_dialog(rec: dict[str, Any]) -> str:
    """`egomem eval dialog` (docs/eval.md): one row per level and condition, with 95 % intervals."""
    m = rec["metrics"]

    def ci(v: Any, spec: str) -> str:
        return "—" if not v else f"[{fmt(v[0], spec)}, {fmt(v[1], spec)}]"

    rows = [
        [key, fmt(r["turns"]), fmt(r["judged"]), fmt(r["fact_score"], "{:.2f}"), ci(r["fact_score_ci95"], "{:.2f}"),
         fmt(r["answer_quality"], "{:.1f}"), ci(r["answer_quality_ci95"], "{:.1f}"), fmt(r["lookup_rate"], "{:.2f}")]
        for key, r in m["table"].items()
    ]  # fmt: skip
    head = ["level / condition", "turns", "judged", "Fact Score", "Wilson 95 %", "Answer Quality", "bootstrap 95 %"]
    # What filled the answerer's memory, and the judge's family beside the figures (older results lack both).
    memory = (
        f"`product` rows: the product's store filled by the {m['extractor']} extractor, read by its retrieval; "
        if m.get("extractor")
        else ""
    )
    memory += "`clean` / `noised` rows: oracle memory (the script's profile and gold facts). "
    limitation = f"Judge: {m['judge_limitation']}. " if m.get("judge_limitation") else ""
    return (
        f"Responder: {m['answered_by']}. Judge: {m['judge']} — **{m['judge_note'] or 'judge not labelled'}**. "
        f"{limitation}{memory}"
        f"{m['turns_selected']} turns × {len(m['conditions'])} conditions; {m['turns_judged']} judged, "
        f"{m['judge_failures']} judge failures. Scripts: `{m['scripts']}` (docs/eval.md).\n\n"
        + table([*head, "lookup rate"], rows)
    )


def serve_fleet(rec: dict[str, Any]) -> str:
    m = rec["metrics"]
    cross = m.get("cross_worker") or {}
    rows = [[f"`{k}`", fmt(v, "{:.2f}")] for k, v in cross.items()]
    devices = [
        [
            n,
            *(fmt(d.get(k), "{:.2f}") for k in ("event_lag_s_p50", "event_lag_s_p95", "done_after_end_s_max")),
            str(d.get("sessions_completed")),
            fmt(d.get("keeps_up")),
        ]
        for n, d in (m.get("by_devices") or {}).items()
    ]
    out = (
        f"{m.get('workers')} `egomem serve` workers on one PostgreSQL schema, LLM `{m.get('llm_provider')}`.\n\n"
        "**Cross-worker enrolment** (day 1 streamed to worker A; day 2 to worker B from the moment A's first "
        "face key is committed; the same-worker control streams day 2 to A afterwards):\n\n"
        + table(["metric", "value"], rows)
        + "\n\n**Devices on one worker** (day 2, real-time pace):\n\n"
        + table(["devices", "lag p50 s", "lag p95 s", "END→done s", "completed", "real time"], devices)
    )
    restart = m.get("restart")
    if restart:
        lines = [[f"`{k}`", fmt(v, "{:.2f}")] for k, v in flatten(restart, depth=2)]
        lines += [[f"`{k}`", "; ".join(str(x) for x in v) or "—"] for k, v in restart.items() if isinstance(v, list)]
        how = (
            "`kill -9` of the postmaster, `pg_ctl start`, crash recovery"
            if "kill_to_ready_s" in restart
            else "`pg_ctl restart -m fast`"
        )
        out += f"\n\n**PostgreSQL restarted mid-stream** ({how}):\n\n" + table(["metric", "value"], lines)
    return out


def conversation(rec: dict[str, Any]) -> str:
    """One row per split, extractor and variant that ran (split -> extractor -> variant -> metrics);
    the columns are the metrics the bench recorded, in its order (no second list to keep in step)."""
    m = rec["metrics"]
    runs = [
        (split, ext, variant, got)
        for split in ("dev", "test")
        for ext, variants in (m.get(split) or {}).items()
        for variant, got in variants.items()
    ]
    if not runs:
        return "(no scenario ran)\n\n" + generic(rec)
    columns = list(dict.fromkeys(k for *_, got in runs for k in got))
    rows = [[split, ext, variant, *(fmt(got.get(k), "{:.3f}") for k in columns)] for split, ext, variant, got in runs]
    return table(["split", "extractor", "variant", *columns], rows) + "\n\n" + generic(rec)


LAYOUTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "conversation": conversation,
    "conversation_dev": conversation,
    "serve_fleet": serve_fleet,
    "serve_fleet_default": serve_fleet,
    "locomo": locomo,
    "realtime": realtime,
    "realtime_rules": realtime,
    "trigger": trigger,
    "eval-dialog_template": eval_dialog,
    "eval-dialog_cascaded": eval_dialog,
}
ORDER = (
    "real",
    "real_rules",
    "face",
    "speaker",
    "fusion",
    "identity",
    "privacy",
    "asr",
    "textret",
    "locomo",
    "locomo-qa",
    "trigger",
    "diarization",
    "av",
    "extract",
    "conversation",
    "conversation_dev",
    "store",
    "realtime",
    "realtime_rules",
    "memorize",
    "serve",
    "serve_fleet",
    "serve_fleet_default",
)


def load_results(root: Path = RESULTS) -> dict[str, dict[str, Any]]:
    out = {}
    for f in sorted(root.glob("*.json")):
        rec = json.loads(f.read_text())
        if not isinstance(rec, dict) or "metrics" not in rec:
            raise SystemExit(f"{f}: not a result file (no envelope with 'metrics'); re-run with --json")
        out[f.stem] = rec
    return out


def render(results: dict[str, dict[str, Any]]) -> str:
    parts = [INTRO.strip(), summary(results)]
    names = [n for n in ORDER if n in results] + sorted(n for n in results if n not in ORDER)
    for name in names:
        rec = results[name]
        body = LAYOUTS.get(name, generic)(rec)
        bench = rec.get("benchmark", name)
        title = f"`egomem bench {name}`" if bench == name else f"`egomem bench {bench}`: {name}"
        parts.append(f"## {title}\n\n{provenance(rec)}\n\n{body}")
    missing = [n for n in ORDER if n not in results]
    if missing:
        parts.append(
            "## Not re-measured yet\n\n" + ", ".join(f"`{n}`" for n in missing) + ": no committed result file."
        )
    return "\n\n".join(parts) + "\n"


# A doc quoting a committed run: the result file and, in the same sentence, its commit.
_QUOTED_FILE = re.compile(r"benchmarks/results/([\w.-]+)\.json")
_QUOTED_COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z(`*])")


def old_quotes(results: dict[str, dict[str, Any]], root: Path = ROOT) -> list[str]:
    """Sentences of the docs that quote a run of `benchmarks/results/NAME.json` at a commit
    other than the committed result's: figures copied from a run that the file no longer holds,
    which nothing re-renders (the docs should point at BENCHMARKS.md, quote the current run, or
    call the old one what it is without naming the file as its source)."""
    out = []
    for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for first, paragraph in _paragraphs(lines):
            for sentence in _SENTENCE_END.split(paragraph):
                for name in _QUOTED_FILE.findall(sentence):
                    now = str((results.get(name) or {}).get("git", {}).get("commit") or "")
                    for commit in _QUOTED_COMMIT.findall(sentence):
                        if name in results and not now.startswith(commit):
                            line = first + next(k for k, t in enumerate(lines[first:]) if name in t)
                            where = f"{path.relative_to(root)}:{line + 1}"
                            out.append(f"{where}: quotes {name}.json at {commit}; the committed run is {now[:10]}")
    return out


def _paragraphs(lines: list[str]) -> list[tuple[int, str]]:
    """(index of its first line, its text on one line) for each run of non-blank lines."""
    out: list[tuple[int, str]] = []
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            out.append((start, " ".join(lines[start:i])))
            start = None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail when BENCHMARKS.md differs from the results")
    args = ap.parse_args(argv)
    results = load_results()
    text = render(results)
    if args.check:
        bad = not_ancestors({name: (rec.get("git") or {}).get("commit") for name, rec in results.items()})
        for line in bad:
            print(f"benchmarks/results/{line}", file=sys.stderr)
        quotes = old_quotes(results)
        for line in quotes:
            print(line, file=sys.stderr)
        bad += quotes
        if OUTPUT.read_text() != text:
            print("BENCHMARKS.md is out of date: run `make benchmarks-md`", file=sys.stderr)
            return 1
        return 1 if bad else 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

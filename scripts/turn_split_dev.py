"""Where `runtime.turn_split_threshold` comes from, part 1: LibriSpeech turns of two speakers with no
gap, and of one speaker, through the product's `TurnSplitter` at several thresholds (run from the
repository root; reads ../shared/data/speech_librispeech_test_other_10spk). Part 2 is `egomem bench
real --set split=dev` at the chosen threshold (docs/benchmarks/turn_split.md).

`--real`: instead, the dev recordings of `bench real` (never its test split) through the product's
`TurnDetector` (default settings) and `TurnSplitter`, no ASR: per threshold, the VAD turns' speaker
changes (consecutive truth turns of two people, 1 s of speech or more on each side, inside one VAD
turn) cut within 0.75 s, cuts that are near no change, and pieces still holding two people's speech
(1 s or more each).

Each turn: utterance 0 of speaker A then utterance 1 of speaker B (every ordered pair of the 10
speakers, 90 turns) or utterance 0 then 1 of one speaker (10 turns), each utterance's leading and
trailing silence cut (Silero), each cut to at most `--max-s` seconds so a turn stays under the turn
detector's 30 s. Reported per threshold: two-speaker turns cut within 1 s of the change, extra cuts,
one-speaker turns cut (false splits), and the seconds of splitting per second of audio.

    PYTHONPATH=src .venv/bin/python scripts/turn_split_dev.py [--max-s 8] [--thresholds 0.25,0.3,...] [--real]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from egomem.media import SAMPLE_RATE
from egomem.perception.diarization import Diarizer, TurnSplitter
from egomem.perception.voice import VoiceEncoder

DATA = Path("../shared/data/speech_librispeech_test_other_10spk")


def trimmed(encoder: VoiceEncoder, path: Path, max_s: float) -> np.ndarray:
    audio, sr = sf.read(str(path), dtype="float32")
    assert sr == SAMPLE_RATE
    segs = encoder.vad.segments(audio)
    a = audio[int(segs[0].start * SAMPLE_RATE) : int(segs[-1].end * SAMPLE_RATE)] if segs else audio
    return a[: int(max_s * SAMPLE_RATE)]


def _speech_of(span: tuple[float, float], truth: list[tuple[float, float, str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for s, e, who in truth:
        o = min(span[1], e) - max(span[0], s)
        if o > 0:
            out[who] = out.get(who, 0.0) + o
    return out


def real_dev(encoder: VoiceEncoder, thresholds: list[float], min_piece_s: float) -> None:
    from egomem.bench._real_data import load_recordings
    from egomem.dialog.turns import TurnDetector
    from egomem.media import load_audio
    from egomem_eval.data import data_root

    recs = [r for r in load_recordings(data_root(None)) if r.split == "dev"]
    jobs = []  # (turn start in the stream, turn audio origin, audio, truth, changes inside)
    for rec in recs:
        truth = sorted((t.start, t.end, t.speaker) for t in rec.turns)
        audio = load_audio(rec.path)
        det = TurnDetector(encoder.vad)
        utts = [u for i in range(0, audio.size, 1280) for u in det.feed(audio[i : i + 1280])] + det.flush()
        for u in utts:
            inside = [t for t in truth if t[1] > u.start and t[0] < u.end]
            changes = [
                (a[1] + b[0]) / 2
                for a, b in itertools.pairwise(inside)
                if a[2] != b[2]
                and u.start < (a[1] + b[0]) / 2 < u.end
                and _speech_of((u.start, (a[1] + b[0]) / 2), truth).get(a[2], 0.0) >= 1.0
                and _speech_of(((a[1] + b[0]) / 2, u.end), truth).get(b[2], 0.0) >= 1.0
            ]
            jobs.append((max(u.start - det.pad_s, 0.0), u.audio, truth, changes))
    n_changes = sum(len(c) for *_, c in jobs)
    print(f"{len(recs)} dev recordings, {len(jobs)} VAD turns, {n_changes} speaker changes inside them")
    print("threshold | changes cut (0.75 s) | cuts near no change | pieces holding 2 people | pieces")
    for thr in thresholds:
        splitter = TurnSplitter(Diarizer(encoder), threshold=thr, min_piece_s=min_piece_s)
        hit = stray = mixed = pieces = 0
        for origin, audio, truth, changes in jobs:
            spans = [(origin + s, origin + e) for s, e in splitter.split(audio)]
            cuts = [s for s, _ in spans[1:]]
            hit += sum(any(abs(c - x) <= 0.75 for x in cuts) for c in changes)
            stray += sum(not any(abs(c - x) <= 0.75 for c in changes) for x in cuts)
            mixed += sum(sum(v >= 1.0 for v in _speech_of(sp, truth).values()) >= 2 for sp in spans)
            pieces += len(spans)
        print(f"{thr:.2f} | {hit}/{n_changes} | {stray} | {mixed} | {pieces}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-s", type=float, default=8.0)
    ap.add_argument("--thresholds", default="0.25,0.3,0.35,0.4,0.45,0.5")
    ap.add_argument("--min-piece-s", type=float, default=1.6)
    ap.add_argument("--real", action="store_true")
    args = ap.parse_args()
    encoder = VoiceEncoder()
    encoder.load()
    if args.real:
        real_dev(encoder, [float(x) for x in args.thresholds.split(",")], args.min_piece_s)
        return
    diarizer = Diarizer(encoder)
    speakers = sorted(p.name for p in DATA.iterdir() if p.is_dir())
    utts = {s: sorted((DATA / s).glob("*.flac")) for s in speakers}
    first = {s: trimmed(encoder, utts[s][0], args.max_s) for s in speakers}
    second = {s: trimmed(encoder, utts[s][1], args.max_s) for s in speakers}
    two = [(first[a], second[b]) for a in speakers for b in speakers if a != b]
    one = [(first[a], second[a]) for a in speakers]
    print(f"{len(two)} two-speaker turns, {len(one)} one-speaker turns, pieces >= {args.min_piece_s} s")
    print("threshold | 2-spk cut near change | extra cuts | 1-spk turns cut | cpu s per audio s")
    for thr in [float(x) for x in args.thresholds.split(",")]:
        splitter = TurnSplitter(diarizer, threshold=thr, min_piece_s=args.min_piece_s)
        near = extra = false = 0
        cpu = audio_s = 0.0
        for a, b in two:
            t0 = time.process_time()
            pieces = splitter.split(np.concatenate([a, b]))
            cpu += time.process_time() - t0
            audio_s += (a.size + b.size) / SAMPLE_RATE
            cuts = [s for s, _ in pieces[1:]]
            change = a.size / SAMPLE_RATE
            hit = any(abs(c - change) <= 1.0 for c in cuts)
            near += hit
            extra += len(cuts) - (1 if hit else 0)
        for a, b in one:
            t0 = time.process_time()
            pieces = splitter.split(np.concatenate([a, b]))
            cpu += time.process_time() - t0
            audio_s += (a.size + b.size) / SAMPLE_RATE
            false += len(pieces) > 1
        print(f"{thr:.2f} | {near}/{len(two)} | {extra} | {false}/{len(one)} | {cpu / audio_s:.4f}")


if __name__ == "__main__":
    main()

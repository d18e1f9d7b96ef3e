"""Build the shipped impostor cohort for s-norm (`python -m egomem_training.voice_cohort`).

The cohort must look like the queries it normalises: short polls, sometimes noisy,
sometimes band-limited. A cohort of full-length clean clips makes short-clip s-norm
worse, so it is built from `chunk_s` chunks of speech from speakers we never
evaluate on (pyannote's AMI-style debug meetings and FSDD's 6 speakers), each chunk
in one of several conditions (clean, telephone band, white noise at 5-20 dB), all
passed through the same VAD + gating + level pipeline as live queries. The runtime
loads the result with `egomem.identity.cohort.load_cohort`.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

import egomem.identity
from egomem.errors import InputError
from egomem.identity.cohort import COHORT_FILE
from egomem.perception.audio import SAMPLE_RATE, add_noise, load_audio
from egomem.perception.voice import VoiceEncoder, band_limit, estimate_snr_db
from egomem_eval.data import data_root

SHIPPED = Path(egomem.identity.__file__).parent / "data" / COHORT_FILE


def _rttm_turns(rttm: Path) -> list[tuple[str, str, float, float]]:
    """(file id, speaker, start, end) for each SPEAKER line."""
    out = []
    for line in rttm.read_text().splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "SPEAKER":
            out.append((f[1], f[7], float(f[3]), float(f[3]) + float(f[4])))
    return out


def build(data_root: Path, out: Path, chunk_s: float = 0.5, per_speaker: int = 12, seed: int = 0) -> int:
    """Compute the cohort from pyannote debug meetings + FSDD under `data_root`; returns its size."""
    rng = np.random.default_rng(seed)
    enc = VoiceEncoder()
    pieces: dict[str, list[np.ndarray]] = {}
    meet = data_root / "speech_pyannote_diarization" / "debug_meetings"
    audio_cache: dict[str, np.ndarray] = {}
    n = int(chunk_s * SAMPLE_RATE)
    for rttm in sorted(meet.glob("*.rttm")):
        for uri, spk, s, e in _rttm_turns(rttm):
            wav = meet / f"{uri}.wav"
            if not wav.is_file():
                continue
            if uri not in audio_cache:
                audio_cache[uri] = load_audio(wav)
            seg = audio_cache[uri][int(s * SAMPLE_RATE) : int(e * SAMPLE_RATE)]
            for i in range(0, seg.size - n + 1, n):
                pieces.setdefault(f"ami:{spk}", []).append(seg[i : i + n])
    fsdd = data_root / "speech_fsdd_subset"
    with open(fsdd / "manifest.csv", newline="") as f:
        for row in csv.DictReader(f):
            pieces.setdefault(f"fsdd:{row['speaker']}", []).append(load_audio(fsdd / row["path"]))
    vecs, names = [], []
    conditions = ["clean", "band", "snr20", "snr10", "snr5"]
    for spk in sorted(pieces):
        chosen = rng.permutation(len(pieces[spk]))[:per_speaker]
        for j, i in enumerate(chosen.tolist()):
            x = pieces[spk][i]
            cond = conditions[j % len(conditions)]
            if cond == "band":
                x = band_limit(x)
            elif cond.startswith("snr"):
                # Pad with a little silence so the pipeline sees noise-only context, as in a live poll.
                pad = np.zeros(int(0.3 * SAMPLE_RATE), np.float32)
                x = add_noise(np.concatenate([pad, x, pad]), float(cond[3:]), rng)
            voiced, rest = enc.speech(x)
            if voiced.size < 0.2 * SAMPLE_RATE:
                voiced = x  # the cohort wants the voice even where VAD is strict
            vecs.append(enc.embed_speech(enc.clean(voiced, rest if rest.size else x, estimate_snr_db(x))))
            names.append(f"{spk}|{cond}")
    if not vecs:
        raise InputError(f"no cohort audio found under {data_root}")
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, vectors=np.stack(vecs).astype(np.float16), names=np.array(names))
    return len(vecs)


def main() -> None:
    ap = argparse.ArgumentParser(description="Build the shipped s-norm voice cohort.")
    ap.add_argument("--data", type=Path, default=None, help="the shared data folder (default: the data root)")
    ap.add_argument("--out", type=Path, default=SHIPPED)
    ap.add_argument("--chunk-s", type=float, default=0.5)
    ap.add_argument("--per-speaker", type=int, default=12)
    a = ap.parse_args()
    print(build(a.data or data_root(), a.out, a.chunk_s, a.per_speaker), "cohort vectors written to", a.out)


if __name__ == "__main__":
    main()

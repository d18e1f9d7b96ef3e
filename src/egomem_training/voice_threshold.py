"""Calibrate the voice threshold on a set disjoint from the evaluation queries.

    python -m egomem_training.voice_threshold [--data DIR]

Protocol: each utterance of a one-utterance-per-speaker folder (default
speech_librispeech_train_clean_100_1utt) is cut in two; the first half is enrolled, the
second half is a query, clean and with white noise at 10 dB. The threshold printed is
the equal-error point of the s-normed scores pooled over both conditions. These
speakers are distractors in `bench speaker` but their halves are never its queries.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from egomem.config import Config
from egomem.identity.identifier import PersonIdentifier
from egomem.perception.audio import add_noise, load_audio
from egomem.store.sqlite import SQLiteStore
from egomem_eval.data import data_root
from egomem_eval.identity.labelled import AUDIO_EXT, load_set
from egomem_eval.identity.metrics import eer

CALIBRATION_SET = "speech_librispeech_train_clean_100_1utt"


def calibrate(root: Path, snr_db: float = 10.0, seed: int = 7) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    items = load_set(root, AUDIO_EXT).items
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "cal.db")
        ident = PersonIdentifier(store, Config(data_dir=Path(tmp)))
        enc = ident.voice_encoder
        queries: list[tuple[str, np.ndarray]] = []
        for p, _ in items:
            a = load_audio(p)
            first, second = a[: a.size // 2], a[a.size // 2 :]
            obs = enc.observe(first)
            if obs is None:
                continue
            queries.append((ident.enroll(None, voice=obs), second))
        scores, labels = [], []
        users = sorted(ident.voice_index.user_ids)
        for uid, q in queries:
            for x in (q, add_noise(q, snr_db, rng)):
                obs = enc.observe(x)
                if obs is None:
                    continue
                got = {m.user_id: m.value for m in ident.voice_scores(obs.vector, k_users=len(users))}
                for u in users:
                    scores.append(got[u])
                    labels.append(u == uid)
        store.close()
    s, y = np.asarray(scores), np.asarray(labels)
    ths = np.unique(s)
    frr = np.array([np.mean(s[y] < t) for t in ths])
    far = np.array([np.mean(s[~y] >= t) for t in ths])
    i = int(np.argmin(np.abs(frr - far)))
    return {"threshold": float(ths[i]), "eer": eer(s, y), "trials": float(s.size), "speakers": float(len(users))}


def main() -> None:
    ap = argparse.ArgumentParser(description="Calibrate the s-normed voice threshold.")
    ap.add_argument("--data", type=Path, default=None, help=f"default: {CALIBRATION_SET} under the data root")
    data = ap.parse_args().data or data_root(dataset=CALIBRATION_SET)
    print(calibrate(data))


if __name__ == "__main__":
    main()

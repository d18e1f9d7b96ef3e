"""Same/different-person trials for identity calibration (`python -m egomem_training.calibration`)
and `bench fusion`, split by identity into train / dev / test.

Split: within each stratum (a data set, and for speakers their sex where the manifest gives it),
identities sorted by a hash of their name go to train, dev, test, train, dev, test, ... so no
person is in two splits and each split gets both sexes.

Faces (faces_lfw_subset_10x10, faces_deepface, faces_face_recognition, faces_faceapi_bbt; photos
of several people left out): every image embedded by the product's FaceEncoder; trials are every
pair of images of one data set and split, scored by L2 distance (a query against one key).

Voices (speech_librispeech_test_other_10spk, 10 speakers x 10 utterances; and the 40 one-utterance
speakers of speech_librispeech_train_clean_100_1utt): a split's speakers are enrolled in a
PersonIdentifier gallery (test-other: the first 3 utterances; one-utterance speakers: the first
half), and queried with the rest: whole utterances (long) and speech pieces of 0.3-1.5 s cut as in
`bench speaker` (short, at most PIECES_PER_UTTERANCE per utterance), each clean and with white
noise at 10 dB. A trial is one query against one enrolled user, scored with the product's s-normed
`voice_scores`, so the score is exactly what the identifier sees.

Embeddings are cached (an .npz per modality under the cache folder, keyed by the encoder config):
the second run embeds nothing.
"""

from __future__ import annotations

import csv
import hashlib
import json
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from egomem.config import Config
from egomem.identity.identifier import PersonIdentifier
from egomem.identity.types import VoiceObservation
from egomem.perception.audio import add_noise, load_audio
from egomem.perception.face import FaceEncoder, load_image
from egomem.perception.voice import VoiceEncoder
from egomem.store.sqlite import SQLiteStore
from egomem_eval.identity.labelled import AUDIO_EXT, IMAGE_EXT, load_set

SPLITS = ("train", "dev", "test")
FACE_SETS = ("faces_lfw_subset_10x10", "faces_deepface", "faces_face_recognition", "faces_faceapi_bbt")
VOICE_EVAL_SET = "speech_librispeech_test_other_10spk"
VOICE_ONE_UTT_SET = "speech_librispeech_train_clean_100_1utt"
ENROLL_UTTERANCES = 3
PIECES_PER_UTTERANCE = 2
SNR_DB = 10.0


@dataclass
class Trials:
    """Scored trials of one modality and split; `a`/`b` name the query's and the key's identity."""

    score: np.ndarray
    same: np.ndarray
    a: list[str]
    b: list[str]
    speech_s: np.ndarray = field(default_factory=lambda: np.zeros(0))  # voice: seconds of speech of the query
    noisy: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # voice: 10 dB white noise added

    def subset(self, keep: np.ndarray) -> Trials:
        idx = np.flatnonzero(keep)
        return Trials(
            self.score[idx],
            self.same[idx],
            [self.a[i] for i in idx],
            [self.b[i] for i in idx],
            self.speech_s[idx] if self.speech_s.size else self.speech_s,
            self.noisy[idx] if self.noisy.size else self.noisy,
        )


def split_identities(strata: dict[str, list[str]]) -> dict[str, str]:
    """identity -> split, cycling train/dev/test through each stratum in hash order."""
    out: dict[str, str] = {}
    for ids in strata.values():
        ordered = sorted(set(ids), key=lambda n: hashlib.sha1(n.encode()).hexdigest())
        for i, ident in enumerate(ordered):
            out[ident] = SPLITS[i % len(SPLITS)]
    return out


class EmbeddingCache:
    """name -> vector (and seconds of speech), saved as one .npz."""

    SAVE_EVERY = 50  # new items between saves: an interrupted run keeps most of its work

    def __init__(self, path: Path, dim: int) -> None:
        self.path = path
        self.dim = dim
        self.items: dict[str, tuple[np.ndarray | None, float]] = {}
        self.dirty = 0
        if path.is_file():
            with np.load(path, allow_pickle=False) as z:
                for name, vec, sec in zip(z["names"], z["vectors"], z["seconds"], strict=True):
                    self.items[str(name)] = (None if np.isnan(vec).all() else vec.astype(np.float32), float(sec))

    def get(self, name: str, compute: Callable[[], tuple[np.ndarray | None, float]]) -> tuple[np.ndarray | None, float]:
        if name not in self.items:
            self.items[name] = compute()
            self.dirty += 1
            if self.dirty >= self.SAVE_EVERY:
                self.save()
        return self.items[name]

    def save(self) -> None:
        if not self.dirty:
            return
        dim = self.dim
        names = sorted(self.items)
        blank = np.full(dim, np.nan, np.float32)
        vecs = np.stack([v if (v := self.items[n][0]) is not None else blank for n in names])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, names=np.array(names), vectors=vecs.astype(np.float32), seconds=[self.items[n][1] for n in names])
        tmp.replace(self.path)
        self.dirty = 0


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "egomem-identity-trials"


def _cache(cache_dir: Path, kind: str, section: object, dim: int) -> EmbeddingCache:
    key = hashlib.sha1(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return EmbeddingCache(cache_dir / f"{kind}-{key}.npz", dim)


# -- faces ----------------------------------------------------------------------------------------
@dataclass
class FaceImage:
    dataset: str
    identity: str  # "<dataset>/<name>", unique across sets
    path: Path
    vector: np.ndarray


def face_images(cfg: Config, data: Path, cache_dir: Path, sets: Iterable[str] = FACE_SETS) -> list[FaceImage]:
    """Every single-person image of the face sets with a detected face, embedded (cached)."""
    enc = FaceEncoder(cfg.face)
    cache = _cache(cache_dir, "face", cfg.face.model_dump(), 128)
    out: list[FaceImage] = []
    for name in sets:
        root = data / name
        if not root.is_dir():
            continue
        for path, ident in load_set(root, IMAGE_EXT).items:
            if "|" in ident:  # several people in the photo
                continue

            def compute(p: Path = path) -> tuple[np.ndarray | None, float]:
                obs = enc.observe(load_image(p))
                return (obs.vector if obs is not None else None), 0.0

            vec, _ = cache.get(f"{name}/{path.relative_to(root)}", compute)
            if vec is not None:
                out.append(FaceImage(name, f"{name}/{ident}", path, vec))
    cache.save()
    return out


def face_splits(images: list[FaceImage]) -> dict[str, str]:
    strata: dict[str, list[str]] = {}
    for im in images:
        strata.setdefault(im.dataset, []).append(im.identity)
    return split_identities(strata)


def face_trials(images: list[FaceImage], split_of: dict[str, str], split: str) -> Trials:
    """Every pair of images of one data set in `split`, scored by L2 distance."""
    scores: list[float] = []
    same: list[bool] = []
    a: list[str] = []
    b: list[str] = []
    chosen = [im for im in images if split_of[im.identity] == split]
    for i, x in enumerate(chosen):
        for y in chosen[i + 1 :]:
            if x.dataset != y.dataset:  # one person may be in two sets under two names
                continue
            scores.append(float(np.linalg.norm(x.vector - y.vector)))
            same.append(x.identity == y.identity)
            a.append(x.identity)
            b.append(y.identity)
    return Trials(np.asarray(scores), np.asarray(same, bool), a, b)


# -- voices ---------------------------------------------------------------------------------------
@dataclass
class Speaker:
    name: str  # "<dataset>/<id>"
    sex: str
    enroll: list[tuple[str, np.ndarray]]  # (cache name, audio)
    queries: list[tuple[str, np.ndarray]]


def _sexes(root: Path) -> dict[str, str]:
    p = root / "manifest.csv"
    if not p.is_file():
        return {}
    with open(p, newline="") as f:
        return {r["speaker_id"]: r.get("sex", "") for r in csv.DictReader(f)}


def speakers(data: Path) -> list[Speaker]:
    """Speakers of both LibriSpeech sets with their enrolment and query audio."""
    out: list[Speaker] = []
    root = data / VOICE_EVAL_SET
    if root.is_dir():
        sex = _sexes(root)
        by: dict[str, list[Path]] = {}
        for p, spk in load_set(root, AUDIO_EXT).items:
            by.setdefault(spk, []).append(p)
        for spk, paths in by.items():
            audio = [(f"{VOICE_EVAL_SET}/{p.name}", load_audio(p)) for p in paths]
            out.append(
                Speaker(
                    f"{VOICE_EVAL_SET}/{spk}", sex.get(spk, ""), audio[:ENROLL_UTTERANCES], audio[ENROLL_UTTERANCES:]
                )
            )
    root = data / VOICE_ONE_UTT_SET
    if root.is_dir():
        sex = _sexes(root)
        for p, spk in load_set(root, AUDIO_EXT).items:
            a = load_audio(p)
            half = a.size // 2
            out.append(
                Speaker(
                    f"{VOICE_ONE_UTT_SET}/{spk}",
                    sex.get(spk, ""),
                    [(f"{VOICE_ONE_UTT_SET}/{p.name}#1", a[:half])],
                    [(f"{VOICE_ONE_UTT_SET}/{p.name}#2", a[half:])],
                )
            )
    return out


def voice_splits(spks: list[Speaker]) -> dict[str, str]:
    strata: dict[str, list[str]] = {}
    for s in spks:
        strata.setdefault(f"{s.name.split('/')[0]}:{s.sex}", []).append(s.name)
    return split_identities(strata)


def _query_audio(enc: VoiceEncoder, name: str, audio: np.ndarray) -> list[tuple[str, np.ndarray, bool]]:
    """(cache name, audio, noisy) for the whole utterance and its first short pieces, clean and at 10 dB."""
    from egomem_eval.identity.pieces import speech_pieces

    seed = zlib.crc32(name.encode())
    pieces = speech_pieces(enc, audio, np.random.default_rng(seed))[:PIECES_PER_UTTERANCE]
    clean = [(name, audio)] + [(f"{name}@piece{i}", p) for i, (_, p) in enumerate(pieces)]
    out: list[tuple[str, np.ndarray, bool]] = []
    for j, (n, a) in enumerate(clean):
        out.append((n, a, False))
        out.append((f"{n}@snr{SNR_DB:g}", add_noise(a, SNR_DB, np.random.default_rng(seed + j)), True))
    return out


def voice_trials(cfg: Config, spks: list[Speaker], split_of: dict[str, str], split: str, cache_dir: Path) -> Trials:
    """The split's speakers enrolled in one gallery; every query scored against every enrolled user."""
    enc = VoiceEncoder(cfg.voice)
    cache = _cache(cache_dir, "voice", cfg.voice.model_dump(), 256)

    def observe(name: str, audio: np.ndarray) -> VoiceObservation | None:
        def compute() -> tuple[np.ndarray | None, float]:
            obs = enc.observe(audio)
            return (obs.vector, obs.speech_s) if obs is not None else (None, 0.0)

        vec, sec = cache.get(name, compute)
        return VoiceObservation(vector=vec, speech_s=sec) if vec is not None else None

    chosen = [s for s in spks if split_of[s.name] == split]
    scores: list[float] = []
    same: list[bool] = []
    a: list[str] = []
    b: list[str] = []
    secs: list[float] = []
    noisy: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "trials.db")
        try:
            ident = PersonIdentifier(store, cfg, voice_encoder=enc)
            users: dict[str, str] = {}
            with store.transaction():
                for s in chosen:
                    for n, audio in s.enroll:
                        obs = observe(n, audio)
                        if obs is not None:
                            users[s.name] = ident.enroll(users.get(s.name), voice=obs, condition="enroll")
            by_user = {u: n for n, u in users.items()}
            for s in chosen:
                for n, audio in s.queries:
                    for qn, qa, is_noisy in _query_audio(enc, n, audio):
                        obs = observe(qn, qa)
                        if obs is None:
                            continue
                        for m in ident.voice_scores(obs.vector, k_users=len(users), speech_s=obs.speech_s):
                            scores.append(m.value)
                            same.append(by_user[m.user_id] == s.name)
                            a.append(s.name)
                            b.append(by_user[m.user_id])
                            secs.append(obs.speech_s)
                            noisy.append(is_noisy)
        finally:
            store.close()
            cache.save()
    return Trials(np.asarray(scores), np.asarray(same, bool), a, b, np.asarray(secs), np.asarray(noisy, bool))

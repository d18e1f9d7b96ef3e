"""Face keys for scale benchmarks built from real dlib descriptors, so that a million keys keep
the neighbourhood structure of faces rather than of isotropic noise.

The real descriptors are those of every photo in the labelled face sets under the data root
(faces_lfw_subset_10x10, faces_deepface, faces_faceapi_bbt, faces_face_recognition: ~200
photos of ~40 people), or of the one set `--data` names. A synthetic person is a random
point between the descriptors of two different real people (t ~ U(0, 1)) plus Gaussian
jitter of JITTER per dimension (~0.23 in L2); a query is that person's key plus the same
jitter again, about as far as another photo of the same person (dlib's same-person
distances are ~0.3-0.5, its threshold 0.6).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from egomem.errors import InputError
from egomem.perception.face import FaceEncoder, load_image
from egomem_eval.identity.labelled import IMAGE_EXT, load_set

FACE_SETS = ("faces_lfw_subset_10x10", "faces_deepface", "faces_faceapi_bbt", "faces_face_recognition")
JITTER = 0.02


def real_descriptors(data: Path, sets: tuple[str, ...] = FACE_SETS) -> tuple[np.ndarray, list[str]]:
    """(descriptors (m, 128) float32, identity of each) of every single-person photo with a face."""
    enc = FaceEncoder()
    vectors, people = [], []
    folders = [data / name for name in sets if (data / name).is_dir()] or [data]  # --data: one set itself
    for folder in folders:
        name = folder.name
        for path, who in load_set(folder, IMAGE_EXT).items:
            if "|" in who:  # several people in the photo
                continue
            obs = enc.observe(load_image(path))
            if obs is not None:
                vectors.append(obs.vector)
                people.append(f"{name}:{who}")
    if len(set(people)) < 2:
        raise InputError(f"need face photos of at least two people under {data} ({', '.join(sets)})")
    return np.stack(vectors).astype(np.float32), people


def synthetic_people(descriptors: np.ndarray, people: list[str], n: int, rng: np.random.Generator) -> np.ndarray:
    """n face keys (n, 128): each between two real people's descriptors, jittered."""
    who = np.asarray(people)
    a = rng.integers(0, len(who), n)
    b = rng.integers(0, len(who), n)
    same = who[a] == who[b]
    while same.any():  # two different people
        b[same] = rng.integers(0, len(who), int(same.sum()))
        same = who[a] == who[b]
    t = rng.random((n, 1), dtype=np.float32)
    keys = descriptors[a] + t * (descriptors[b] - descriptors[a])
    keys += rng.normal(0, JITTER, keys.shape).astype(np.float32)
    return keys.astype(np.float32)


def query_near(key: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Another observation of the person whose key this is."""
    return (key + rng.normal(0, JITTER, key.shape)).astype(np.float32)

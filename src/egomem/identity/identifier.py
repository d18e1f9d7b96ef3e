"""PersonIdentifier: who is in front of the camera and who is speaking.

Built from a FaceEncoder, a VoiceEncoder, one key index per modality and the s-norm
cohort. `identify` is what the retrieval loop calls every poll. The key index is chosen
by the store's capabilities (identity/store_index.py): where the database searches
vectors itself (PostgreSQL + pgvector) every search asks it, so keys enrolled or deleted
by another worker count on the next poll; elsewhere (SQLite) the keys are held in a
KeyIndex in the process, which `enroll`, `refresh`, `remove_user` and `sync` keep in
step with the store; `identify` reloads it when a merge or split of people moved keys
(`follow_repairs`, store/ops/repair.py), wherever that ran.

Decisions:
- face: best user by L2 distance; a match when distance < config.face.threshold;
- voice: best users by cosine, rescored with adaptive s-norm; a match when the
  s-normed score > config.voice.threshold (cosine when snorm is off);
- polls: consecutive voice embeddings that agree (cosine > AGGREGATE_MIN_COS) are
  averaged, weighted by seconds of speech, over the last config.voice.aggregate_polls
  polls, so one noisy poll does not decide alone;
- fusion (identity/calibration.py): each modality's score becomes a calibrated log-likelihood
  ratio (same vs different person); a user's fused LLR is their sum, so a face that does not
  match is evidence against a voice match. The best user is KNOWN when the fused LLR clears the
  threshold derived from the costs in config.identity, NEW below the lower one (or with no
  candidate), UNSURE between. Nothing observed (no face, no speech) is UNKNOWN.
  The per-modality thresholds above still gate key refresh and cross-modal enrolment.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from egomem.config import Config
from egomem.errors import InputError
from egomem.identity.calibration import (
    Calibration,
    DecisionCosts,
    decision_thresholds,
    fuse,
    load_calibration,
    logit,
)
from egomem.identity.cohort import load_cohort
from egomem.identity.index import KeySearch
from egomem.identity.snorm import CohortStats, SNorm, snorm, top_n_stats
from egomem.identity.store_index import key_index
from egomem.identity.types import FaceObservation, Identification, IdentityStatus, VoiceObservation
from egomem.perception.face import FACE_DIM, FACE_MODEL, FaceEncoder
from egomem.perception.voice import VOICE_DIM, VOICE_MODEL, VoiceEncoder
from egomem.schemas import IdentityKey, Modality
from egomem.store.base import MemoryStore

AGGREGATE_MIN_COS = 0.6  # two polls this similar are taken to be the same voice
VOICE_CANDIDATES = 10  # users rescored with s-norm per query
FACE_CONF_SCALE = 0.05  # L2 margin giving confidence ~0.73
VOICE_CONF_SCALE = 1.0  # s-norm margin giving confidence ~0.73
MAX_FRAMES = 2  # newest frames tried for a face per poll


@dataclass
class Match:
    user_id: str
    value: float  # L2 distance (face) or score (voice)
    confidence: float


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


class FacesInView:
    """The faces of one moment's frames, detected once and only when first asked for: detection is
    the cost, and several questions about one moment (each voice of a split turn) share it."""

    def __init__(self, detect: Callable[[], list[FaceObservation]]) -> None:
        self._detect = detect
        self._faces: list[FaceObservation] | None = None

    def faces(self) -> list[FaceObservation]:
        if self._faces is None:
            self._faces = self._detect()
        return self._faces


class PersonIdentifier:
    """Implements egomem.identity.types.Identifier over a MemoryStore."""

    def __init__(
        self,
        store: MemoryStore,
        config: Config | None = None,
        *,
        face_encoder: FaceEncoder | None = None,
        voice_encoder: VoiceEncoder | None = None,
        cohort: np.ndarray | None = None,
        calibration: Calibration | None = None,
        auto_refresh: bool = False,
    ) -> None:
        self.store = store
        self.config = config or Config()
        self.face_encoder = face_encoder or FaceEncoder(self.config.face)
        self.voice_encoder = voice_encoder or VoiceEncoder(self.config.voice)
        self.auto_refresh = auto_refresh  # identify() then calls learn() on each result (writes keys)
        self.face_index: KeySearch = key_index(store, Modality.FACE, FACE_MODEL, FACE_DIM, "l2")
        self.voice_index: KeySearch = key_index(store, Modality.VOICE, VOICE_MODEL, VOICE_DIM, "cosine")
        self.calibration = calibration or load_calibration(self.config.identity.calibration_file)
        self.thresholds  # noqa: B018 -- bad costs fail here, at construction, not at the first poll
        self._snorm = SNorm(load_cohort() if cohort is None else cohort, self.config.voice.snorm_top_n)
        # s-norm statistics of enrolled voice keys, valid while the voice index's version is `_stats_version`.
        self._key_stats: dict[int, CohortStats] = {}
        self._stats_version: object = None
        self._lock = threading.RLock()
        self._polls: deque[VoiceObservation] = deque(maxlen=max(1, self.config.voice.aggregate_polls))
        self._repairs_seen = store.repairs.version()
        self.sync()

    # -- index <-> store --------------------------------------------------------------------
    def sync(self) -> None:
        """Reload every key from the store into an in-process index (users deleted elsewhere drop out);
        an index that searches the store has nothing to load and only forgets its caches."""
        with self._lock:
            for index, modality, model in (
                (self.face_index, Modality.FACE, FACE_MODEL),
                (self.voice_index, Modality.VOICE, VOICE_MODEL),
            ):
                index.clear()
                if index.holds_keys:
                    index.add_many(_items(self.store.list_keys(modality), model))
            self._key_stats.clear()  # the enrolled-users part of the cohort changed

    def follow_repairs(self) -> bool:
        """Reload the keys when a merge or split (or its undo) moved keys between people since the last
        look, in this process or another (the CLI, the REST API): one small query per poll. Returns
        whether it reloaded."""
        seen = self.store.repairs.version()
        if seen == self._repairs_seen:
            return False
        self._repairs_seen = seen
        self.sync()
        return True

    def remove_user(self, user_id: str) -> None:
        """Drop a (deleted) user's keys from the index; the store is not touched."""
        with self._lock:
            self.face_index.remove_user(user_id)
            self.voice_index.remove_user(user_id)
            self._key_stats.clear()
            self._polls.clear()

    def enroll(
        self,
        user_id: str | None,
        face: FaceObservation | None = None,
        voice: VoiceObservation | None = None,
        *,
        condition: str = "",
        name: str | None = None,
    ) -> str:
        """Add keys for a user (created when user_id is None); returns the user id."""
        if face is None and voice is None:
            raise InputError("enrollment needs a face or a voice observation")
        # Validate before writing anything, so a bad vector never leaves half an enrollment.
        if face is not None:
            self.face_index.prep(face.vector)
        if voice is not None:
            self.voice_index.prep(voice.vector)
        with self._lock, self.store.transaction():
            uid = user_id or self.store.create_user(name, cause="enrolled by identity").id
            if face is not None:
                self._add_key(uid, Modality.FACE, face.vector, condition)
            if voice is not None:
                self._add_key(uid, Modality.VOICE, voice.vector, condition)
        return uid

    def _add_key(self, user_id: str, modality: Modality, vector: np.ndarray, condition: str) -> None:
        model, index = (FACE_MODEL, self.face_index) if modality == Modality.FACE else (VOICE_MODEL, self.voice_index)
        key = self.store.add_key(
            user_id, modality, np.asarray(vector, np.float32), model, condition=condition, cause="identity key"
        )
        index.add(user_id, int(key.id or 0), key.vector)
        self._key_stats.clear()

    def refresh(self, user_id: str, modality: Modality, vector: np.ndarray, *, condition: str = "") -> bool:
        """Add a key from a confident match when it adds diversity; keep at most max_keys_per_user.

        The set stays diverse: when over the bound, the key closest to another key (the most
        redundant one) is deleted. Returns True when a key was added."""
        face = modality == Modality.FACE
        cfg_spread = self.config.face.min_key_spread if face else self.config.voice.min_key_spread
        max_keys = self.config.face.max_keys_per_user if face else self.config.voice.max_keys_per_user
        index = self.face_index if face else self.voice_index
        with self._lock:
            keys = index.keys_of(user_id)
            if not keys:
                return False
            v = np.asarray(vector, np.float32).reshape(-1)
            if not face:
                v = v / (float(np.linalg.norm(v)) or 1.0)
            if min(_dist(v, k, face) for _, k in keys) < cfg_spread:
                return False
            self._add_key(user_id, modality, v, condition)
            keys = index.keys_of(user_id)
            while len(keys) > max_keys:
                vecs = np.stack([k for _, k in keys])
                nearest = [
                    min(_dist(vecs[i], vecs[j], face) for j in range(len(keys)) if j != i) for i in range(len(keys))
                ]
                drop = keys[int(np.argmin(nearest))][0]
                self.store.delete_key(drop, cause="identity key refresh: most redundant key")
                index.remove_keys({drop})
                self._key_stats.clear()
                keys = index.keys_of(user_id)
            return True

    # -- matching -------------------------------------------------------------------------------
    def match_face(self, obs: FaceObservation) -> list[Match]:
        thr = self.config.face.threshold
        return [
            Match(h.user_id, h.value, _logistic((thr - h.value) / FACE_CONF_SCALE))
            for h in self.face_index.search(obs.vector, k_users=5)
        ]

    def voice_threshold(self, speech_s: float) -> float:
        """The voice decision threshold for a query with `speech_s` seconds of speech: short queries
        (under config.voice.short_speech_s) score lower against the same speaker's keys, so they get
        their own threshold (chosen on a development split, see docs/benchmarks/speaker.md)."""
        v = self.config.voice
        if v.short_threshold is not None and speech_s < v.short_speech_s:
            return v.short_threshold
        return v.threshold

    def voice_scores(
        self, vector: np.ndarray, k_users: int = VOICE_CANDIDATES, *, speech_s: float | None = None
    ) -> list[Match]:
        """The `k_users` best candidate users with their (s-normed) voice score, best first; confidences
        are taken against the threshold for `speech_s` seconds of speech (the long one when None)."""
        with self._lock:
            idx = self.voice_index
            hits = idx.search(vector, k_users=k_users)
            if not hits:
                return []
            if not self.config.voice.snorm:
                thr = self.config.voice.threshold  # cosine: the short threshold is an s-norm one
                return [Match(h.user_id, h.value, _logistic((h.value - thr) / 0.05)) for h in hits]
            version = idx.version()
            if version != self._stats_version:  # keys were added or removed: the impostor cohorts changed
                self._key_stats.clear()
                self._stats_version = version
            # Enrolled users' keys join the cohort: only the top_n closest of them can enter top-N statistics.
            use_enrolled = idx.has_users(self.config.voice.min_enrolled_cohort)
            top_n = self._snorm.top_n
            q_cohort = self._snorm.cohort_scores(vector)
            thr = self.config.voice.threshold if speech_s is None else self.voice_threshold(speech_s)
            out = []
            for h in hits:
                others = idx.top_values(vector, top_n, h.user_id) if use_enrolled else np.zeros(0, np.float32)
                qs = top_n_stats(np.concatenate([q_cohort, others.astype(np.float32)]), top_n)
                ks = self._key_stat(h.key_id, h.user_id, use_enrolled)
                if ks is None:
                    continue
                s = snorm(h.value, qs, ks)
                out.append(Match(h.user_id, s, _logistic((s - thr) / VOICE_CONF_SCALE)))
            return sorted(out, key=lambda m: -m.value)

    def _key_stat(self, key_id: int, user_id: str, use_enrolled: bool) -> CohortStats | None:
        st = self._key_stats.get(key_id)
        if st is None:
            row = next((v for k, v in self.voice_index.keys_of(user_id) if k == key_id), None)
            if row is None:  # deleted (by another worker) since the search found it
                return None
            extra = self.voice_index.top_values(row, self._snorm.top_n, user_id) if use_enrolled else None
            st = self._snorm.stats(row, extra)
            self._key_stats[key_id] = st
        return st

    def observe(
        self, audio: np.ndarray | None, frames: Sequence[np.ndarray]
    ) -> tuple[FaceObservation | None, VoiceObservation | None]:
        face = None
        for i, frame in enumerate(list(frames)[::-1][:MAX_FRAMES]):
            face = self.face_encoder.observe(frame, frame_index=len(frames) - 1 - i)
            if face is not None:
                break
        voice = self.voice_encoder.observe(audio) if audio is not None and np.asarray(audio).size else None
        return face, voice

    def aggregate(self, voice: VoiceObservation) -> VoiceObservation:
        """Average this poll's voice with the previous agreeing polls (weights: seconds of speech)."""
        with self._lock:
            if self._polls and float(self._polls[-1].vector @ voice.vector) < AGGREGATE_MIN_COS:
                self._polls.clear()  # a different voice: start over
            self._polls.append(voice)
            w = np.array([p.speech_s for p in self._polls])
            v = np.sum([p.vector * wi for p, wi in zip(self._polls, w, strict=True)], axis=0)
            v = v / (float(np.linalg.norm(v)) or 1.0)
            return VoiceObservation(vector=v.astype(np.float32), speech_s=float(w.sum()))

    def identify(self, audio: np.ndarray | None, frames: Sequence[np.ndarray]) -> Identification:
        self.follow_repairs()
        face, voice = self.observe(audio, frames)
        if voice is None:
            with self._lock:
                self._polls.clear()
        result = self.decide(face, self.aggregate(voice) if voice is not None else None)
        if self.auto_refresh:
            self.learn(result)
        return result

    def learn(self, result: Identification, *, condition: str = "refresh") -> list[Modality]:
        """Key refresh from a confident match: add the observation as a key when it is both confidently
        this user (face distance < refresh_distance, voice score > refresh_score) and unlike the user's
        keys (a new condition). Returns the modalities that got a key."""
        added: list[Modality] = []
        if result.status != IdentityStatus.KNOWN or result.user_id is None:
            return added
        fd, vs = result.face_distance, result.voice_score
        uid = result.user_id
        # Learn one modality only when the other, if observed, does not contradict the match:
        # a voice matched while the face says "someone else" must not become this user's key.
        face_disagrees = result.face is not None and (fd is None or fd >= self.config.face.threshold)
        voice_disagrees = (
            result.voice is not None and vs is not None and vs < self.voice_threshold(result.voice.speech_s)
        )
        if face_disagrees and self.face_index.keys_of(uid):
            return added
        if voice_disagrees and self.voice_index.keys_of(uid):
            return added
        face_ok = result.face is not None and fd is not None and fd < self.config.face.refresh_distance
        if face_ok and result.face and self.refresh(uid, Modality.FACE, result.face.vector, condition=condition):
            added.append(Modality.FACE)
        # Keys are learnt from long speech only: a short segment's embedding is noisier and would make a
        # poor key (it is still good enough to be recognised against long keys).
        long_voice = result.voice is not None and result.voice.speech_s >= self.config.voice.short_speech_s
        voice_ok = long_voice and vs is not None and vs > self.config.voice.refresh_score
        if voice_ok and result.voice and self.refresh(uid, Modality.VOICE, result.voice.vector, condition=condition):
            added.append(Modality.VOICE)
        # Cross-modal enrollment: someone known confidently by face who is heard, but has no voice
        # key yet (first met silently, or the voice came too late at enrollment), gets one — when
        # that voice matches nobody else. The same the other way round for a face.
        voice_new = long_voice and not self.voice_index.keys_of(uid)
        if face_ok and voice_new and result.voice and not self._voice_taken(result.voice):
            self.enroll(uid, voice=result.voice, condition="cross-modal")
            added.append(Modality.VOICE)
        face_new = result.face is not None and not self.face_index.keys_of(uid)
        if voice_ok and face_new and result.face and not self._face_taken(result.face):
            self.enroll(uid, face=result.face, condition="cross-modal")
            added.append(Modality.FACE)
        return added

    def _voice_taken(self, voice: VoiceObservation) -> bool:
        thr = self.voice_threshold(voice.speech_s)
        return any(m.value > thr for m in self.voice_scores(voice.vector, speech_s=voice.speech_s))

    def _face_taken(self, face: FaceObservation) -> bool:
        return any(m.value < self.config.face.threshold for m in self.match_face(face))

    def decide(self, face: FaceObservation | None, voice: VoiceObservation | None) -> Identification:
        """Fuse face and voice evidence into one Identification (no store writes).

        Each candidate user's fused LLR is the sum of its calibrated face and voice LLRs (a modality
        counts when it was observed and the user has keys of it); the best user is KNOWN at or above
        the cost-derived `known_llr`, NEW at or below `new_llr` (or when nobody is a candidate), and
        UNSURE between. A voice heard with no face seen is thereby never KNOWN as a user who has a
        face key unless the voice alone clears `known_llr`."""
        if face is None and voice is None:
            return Identification(IdentityStatus.UNKNOWN, rule="nothing observed")
        fm = self.match_face(face) if face is not None else []
        vm = self.voice_scores(voice.vector, speech_s=voice.speech_s) if voice is not None else []
        evidence = self._evidence(face, voice, fm, vm)
        if not evidence:
            return Identification(IdentityStatus.NEW, face=face, voice=voice, rule="no enrolled candidate")
        fused = {u: fuse(fl, vl) for u, (fl, vl, _, _) in evidence.items()}
        prior = logit(self.config.identity.prior)
        cands = [(u, _logistic(x + prior)) for u, x in sorted(fused.items(), key=lambda kv: -kv[1])]
        uid = cands[0][0]
        f_llr, v_llr, f_dist, v_score = evidence[uid]
        known_llr, new_llr = self.thresholds
        x = fused[uid]
        about = dict(face=face, voice=voice, candidates=cands, face_llr=f_llr, voice_llr=v_llr, llr=x)
        about.update(face_distance=f_dist, voice_score=v_score)  # the best candidate's, whatever the outcome
        if x >= known_llr:
            only = "face" if v_llr is None else "voice" if f_llr is None else "face+voice"
            return Identification(
                IdentityStatus.KNOWN,
                user_id=uid,
                rule=f"fused LLR {x:.2f} >= known {known_llr:.2f} ({only})",
                **about,  # type: ignore[arg-type]
            )
        if x <= new_llr:
            return Identification(IdentityStatus.NEW, rule=f"best fused LLR {x:.2f} <= new {new_llr:.2f}", **about)  # type: ignore[arg-type]
        rule = f"fused LLR {x:.2f} between new {new_llr:.2f} and known {known_llr:.2f}"
        if face is None and self.face_index.keys_of(uid):
            rule += ": voice only, the candidate has a face"
        return Identification(IdentityStatus.UNSURE, rule=rule, **about)  # type: ignore[arg-type]

    def faces_in(self, frames: Sequence[np.ndarray]) -> list[FaceObservation]:
        """Every face of `frames` (not only each frame's primary one)."""
        return [f for i, img in enumerate(frames) for f in self.face_encoder.observe_all(img, frame_index=i)]

    def face_llr_in_view(self, user_id: str, view: FacesInView) -> float | None:
        """The calibrated face LLR that `user_id` is in view: the best over every face in `view`
        (not only the primary one: two people at the table are both in view). None when no face is
        in view or the user has no face key (no face evidence either way); the faces are not looked
        for then."""
        with self._lock:
            keys = [k for _, k in self.face_index.keys_of(user_id)]
        if not keys:
            return None
        faces = view.faces()
        if not faces:
            return None
        best = min(_dist(f.vector, k, True) for f in faces for k in keys)
        return self.calibration.face.llr(best)

    def has_voice_key(self, user_id: str) -> bool:
        """Whether the user has a voice key to be told apart by (a user met by face whose voice was too
        like someone else's to be given one has none)."""
        with self._lock:
            return bool(self.voice_index.keys_of(user_id))

    @property
    def thresholds(self) -> tuple[float, float]:
        """(known_llr, new_llr) from the configured costs and prior."""
        c = self.config.identity
        return decision_thresholds(DecisionCosts(c.prior, c.merge_cost, c.split_cost, c.unsure_cost))

    def _evidence(
        self, face: FaceObservation | None, voice: VoiceObservation | None, fm: list[Match], vm: list[Match]
    ) -> dict[str, tuple[float | None, float | None, float | None, float | None]]:
        """user -> (face LLR, voice LLR, face distance, voice score) for every candidate either
        modality found. A candidate of one modality who has keys of the other, observed, modality
        but was not among its hits gets that modality's evidence too (the face distance exactly;
        the voice score bounded by the lowest score among the hits): a face that does not match
        counts against a voice candidate and the other way round."""
        cal = self.calibration
        face_d = {m.user_id: m.value for m in fm}
        voice_s = {m.user_id: m.value for m in vm}
        out: dict[str, tuple[float | None, float | None, float | None, float | None]] = {}
        for uid in dict.fromkeys([*face_d, *voice_s]):
            fd: float | None = None
            vs: float | None = None
            if face is not None:
                fd = face_d.get(uid)
                if fd is None:
                    keys = self.face_index.keys_of(uid)
                    fd = min((_dist(face.vector, k, True) for _, k in keys), default=None)
            if voice is not None:
                vs = voice_s.get(uid)
                if vs is None and vm and len(vm) >= VOICE_CANDIDATES and self.voice_index.keys_of(uid):
                    vs = min(voice_s.values())
            f_llr = cal.face.llr(fd) if fd is not None else None
            v_llr = (
                cal.voice(voice.speech_s, self.config.voice.short_speech_s).llr(vs)
                if vs is not None and voice is not None
                else None
            )
            out[uid] = (f_llr, v_llr, fd, vs)
        return out


def _dist(a: np.ndarray, b: np.ndarray, l2: bool) -> float:
    return float(np.linalg.norm(a - b)) if l2 else 1.0 - float(a @ b)


def _items(keys: list[IdentityKey], model: str) -> list[tuple[str, int, list[float]]]:
    return [(k.user_id, int(k.id or 0), k.vector) for k in keys if k.model == model]

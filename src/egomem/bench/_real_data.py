"""The recordings of `bench real` and their truth, from an annotation file.

The annotation (`bench/data/real/recordings.json` by default) lists each recording by its path
under the data root, with its split (dev/test, by recording), where who-spoke-when comes from
(an RTTM, a pyAudioAnalysis `.segments` file, or turns written in the annotation), a transcript
(an STM file or lines in the annotation; `transcript_kind` "reference" when it is the source's
own, "corrected" when it was made here from Whisper's output), and the facts each person states.
The audio itself is never copied: it is read from the data root (`egomem_eval.data.data_root`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from egomem.bench._real_score import RefFact, RefTurn
from egomem.bench.diarization import read_rttm, read_segments
from egomem.errors import InputError

SPLITS = ("dev", "test")
TRANSCRIPT_KINDS = ("reference", "corrected", "none")


@dataclass
class TranscriptLine:
    start: float
    end: float
    speaker: str
    text: str


@dataclass
class RealRecording:
    id: str
    path: Path
    split: str
    kind: str
    source: str
    turns: list[RefTurn]
    speakers: dict[str, str]  # reference label -> who (a name or a description)
    transcript: list[TranscriptLine] = field(default_factory=list)
    transcript_kind: str = "none"
    facts_from: str = ""
    facts: list[RefFact] = field(default_factory=list)
    quick: bool = False
    notes: str = ""
    # Speaker labels name the same person in every recording (AMI participant ids), not just in this one.
    global_speakers: bool = False


def default_annotation() -> Path:
    return Path(str(resources.files("egomem.bench") / "data" / "real" / "recordings.json"))


def read_stm(path: Path, names: dict[str, str]) -> list[TranscriptLine]:
    """An STM file (`uri channel speaker start end text`); `names` maps its speaker names to
    the reference labels of the recording's turns."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        p = line.split(maxsplit=5)
        if len(p) < 6 or line.startswith(";;"):
            continue
        out.append(TranscriptLine(float(p[3]), float(p[4]), names.get(p[2], p[2]), p[5]))
    return out


def _turns(rec: dict[str, Any], root: Path) -> list[RefTurn]:
    if "rttm" in rec:
        by_uri = read_rttm(root / rec["rttm"])
        uri = rec.get("uri") or Path(rec["path"]).stem
        if uri not in by_uri:
            raise InputError(f"{rec['rttm']}: no turns for {uri!r}")
        return [RefTurn(s, e, spk) for s, e, spk in by_uri[uri]]
    if "segments" in rec:
        return [RefTurn(s, e, spk) for s, e, spk in read_segments(root / rec["segments"])]
    if "turns" in rec:
        return [RefTurn(float(s), float(e), str(spk)) for s, e, spk in rec["turns"]]
    raise InputError(f"recording {rec.get('id')!r}: no turns (rttm, segments or turns)")


def _transcript(rec: dict[str, Any], root: Path) -> list[TranscriptLine]:
    if "stm" in rec:
        return read_stm(root / rec["stm"], rec.get("stm_speakers", {}))
    return [TranscriptLine(float(s), float(e), str(spk), str(x)) for s, e, spk, x in rec.get("transcript", [])]


def parse_recording(rec: dict[str, Any], root: Path) -> RealRecording:
    """One annotation entry, checked: a clear error names the recording and what is wrong."""
    rid = rec.get("id")
    if not rid or "path" not in rec:
        raise InputError(f"annotation entry without id or path: {str(rec)[:80]}")
    if rec.get("split") not in SPLITS:
        raise InputError(f"recording {rid!r}: split must be one of {SPLITS}, got {rec.get('split')!r}")
    kind = rec.get("transcript_kind", "none")
    if kind not in TRANSCRIPT_KINDS:
        raise InputError(f"recording {rid!r}: transcript_kind must be one of {TRANSCRIPT_KINDS}")
    turns = _turns(rec, root)
    speakers = {str(k): str(v) for k, v in rec.get("speakers", {}).items()}
    labels = {t.speaker for t in turns}
    facts = [RefFact(str(f["person"]), str(f["text"]), tuple(f["keywords"])) for f in rec.get("facts", [])]
    unknown = sorted({f.person for f in facts} - labels)
    if unknown:
        raise InputError(f"recording {rid!r}: facts owned by {unknown}, who never speak in its turns")
    return RealRecording(
        id=str(rid),
        path=root / rec["path"],
        split=rec["split"],
        kind=str(rec.get("kind", "")),
        source=str(rec.get("source", "")),
        turns=turns,
        speakers=speakers or {s: s for s in sorted(labels)},
        transcript=_transcript(rec, root),
        transcript_kind=kind,
        facts_from=str(rec.get("facts_from", "")),
        facts=facts,
        quick=bool(rec.get("quick", False)),
        global_speakers=bool(rec.get("global_speakers", False)),
        notes=str(rec.get("notes", "")),
    )


def load_recordings(root: Path, annotation: Path | None = None) -> list[RealRecording]:
    """Every recording of the annotation, with its audio present under `root`."""
    path = annotation or default_annotation()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the annotation {path}: {exc}") from exc
    try:
        recs = [parse_recording(r, root) for r in doc.get("recordings", [])]
    except OSError as exc:  # a turns or transcript file missing: the data root is not the one meant
        raise InputError(f"cannot read the recordings' truth under the data root {root} (--data DIR): {exc}") from exc
    if not recs:
        raise InputError(f"{path}: no recordings")
    ids = [r.id for r in recs]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: a recording id appears twice")
    missing = [str(r.path) for r in recs if not r.path.is_file()]
    if missing:
        raise InputError(f"audio not found under the data root {root}: {', '.join(missing[:3])}")
    return recs

"""`egomem bench av`: face tracks and face-voice links on four real clips, by the product's analysis
(`egomem.perception.people.PeopleAnalyzer`, default configuration, the same as `egomem people`).

Checks per clip:
- `visualvoice_interview` (split-screen TV interview): 2 tracks; the voice linked to the talking
  face or left open, never to the other one.
- `av_hamilton_clip` (a performance with cut-aways): both reference stills matched, each to a track
  of the right person (and no track given a wrong name); a link, if made, goes to the performer.
- `visualvoice_noisy_restaurant` (one man talking in restaurant babble): exactly one person.
- `facenet_pytorch_crowd` (people walking towards the camera, no speech): the track count is stable
  (5 fps and 10 fps sampling give counts within 1 of each other), no link, no one heard.

Ground truth was set by looking at the frames (written to PNG every 0.2-1 s and viewed; for the
interview, mouth crops of both faces every 0.2 s), never from the system's output:
- interview: the guest on the right talks through the whole clip; the host on the left talks over
  him in about 0-9 s and 15.2-17.2 s and keeps his lips closed (smiling, listening) in about
  9.6-15.0 s. A voice cluster belongs to the person whose talking spans cover most of its speech;
  the diarizer's one cluster over the whole clip is the guest's (17.5 s vs ~11 s for the host).
- hamilton: Lin-Manuel Miranda is on stage at the right of the frame in 0.85-1.6 s (small) and in
  close-up in 3.6-7.9 s, rapping throughout (the voice); Alex Lacamoire is the pianist at the
  left edge in 0.85-1.6 s (a ~26 px face; in 1.7-3.5 s he is in profile, which HOG cannot see);
  8.0-10 s is the audience, where one young man at the left (laughing) is a third face.
- restaurant: one man, talking to someone off screen; the voice is his.
- crowd: no one speaks.

JSON: per clip the counts (tracks, voices, links, people), every decision (a link with its
verdict, or an open voice with the abstention's reason), the checks; top level `wrong_links`
(total over the clips), `people_found` per clip, `checks_passed`, RTF (wall and CPU, model loading
left out) and the load average at start and end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from egomem.bench import BenchOptions, BenchResult, data_root, register
from egomem.errors import InputError
from egomem.perception.people import PeopleAnalyzer, PeopleConfig, PeopleReport
from egomem.perception.people.tracks import FaceTrack

INTERVIEW = "visualvoice_interview/interview.mp4"
HAMILTON = "av_hamilton_clip/short_hamilton_clip.mp4"
RESTAURANT = "visualvoice_noisy_restaurant/noisy_restaurant.mp4"
CROWD = "facenet_pytorch_crowd/video.mp4"
HAMILTON_REFS = {
    "lin-manuel-miranda": "av_hamilton_clip/lin-manuel-miranda.png",
    "alex-lacamoire": "av_hamilton_clip/alex-lacamoire.png",
}

# Who talks when (seconds), from the frames (see the module docstring).
INTERVIEW_TALK = {"guest": [(0.0, 17.6)], "host": [(0.0, 9.0), (15.2, 17.2)]}


def interview_person(tr: FaceTrack, width: int) -> str:
    """The host sits in the left half of the split screen, the guest in the right half."""
    x = float(np.mean([(d.box.left + d.box.right) / 2 for d in tr.detections]))
    return "host" if x < width / 2 else "guest"


def hamilton_person(tr: FaceTrack, width: int) -> str:
    """Each detection's person by when and where it is (see the module docstring); the track's by majority."""
    votes: dict[str, int] = {}
    for d in tr.detections:
        x = (d.box.left + d.box.right) / 2
        if d.t < 1.7:
            who = "lin-manuel-miranda" if x > width / 2 else "alex-lacamoire"
        elif d.t < 8.0:
            who = "lin-manuel-miranda"
        else:
            who = "audience"
        votes[who] = votes.get(who, 0) + 1
    return max(votes, key=lambda k: votes[k])


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def voice_owner(report: PeopleReport, voice: int, talk: dict[str, list[tuple[float, float]]]) -> str | None:
    spans = [(t.start, t.end) for t in report.diarization.turns if t.speaker == voice]
    cover = {who: _overlap(spans, s) for who, s in talk.items()}
    best = max(cover, key=lambda k: cover[k])
    return best if cover[best] > 0 else None


def decisions(
    report: PeopleReport, person_of: Mapping[int, str], owner_of: Mapping[int, str | None]
) -> list[dict[str, Any]]:
    """One entry per voice: linked (with the verdict against the ground truth) or open (with the reason)."""
    out: list[dict[str, Any]] = []
    reasons = {a.voice: a.reason for a in report.decision.abstentions}
    for v in sorted(report.diarization.speaking_time()):
        lk = next((lk for lk in report.decision.links if lk.voice == v), None)
        if lk is None:
            out.append({"voice": v, "decision": "open", "owner": owner_of.get(v), "reason": reasons.get(v, "")})
            continue
        who = person_of[lk.track]
        out.append({
            "voice": v, "decision": "linked", "track": lk.track, "track_person": who, "owner": owner_of.get(v),
            "confidence": round(lk.confidence, 4), "verdict": "correct" if who == owner_of.get(v) else "wrong",
            "support_windows": len(lk.evidence.support), "against_windows": len(lk.evidence.against),
        })  # fmt: skip
    return out


def _frame_width(path: Path) -> int:
    import av

    with av.open(str(path)) as c:
        return int(c.streams.video[0].codec_context.width)


def _summary(report: PeopleReport, person_of: dict[int, str], decs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "duration_s": round(report.duration_s, 3),
        "tracks": len(report.tracks),
        "track_people": {str(k): v for k, v in sorted(person_of.items())},
        "voices": len(report.diarization.speaking_time()),
        "links": len(report.decision.links),
        "people_found": len(report.people),
        "people": [
            {
                "kind": p.kind,
                "tracks": p.tracks,
                "voice": p.voice,
                "name": p.name,
                "seen_s": p.seen_s,
                "heard_s": p.heard_s,
            }
            for p in report.people
        ],
        "decisions": decs,
        "wrong_links": sum(d.get("verdict") == "wrong" for d in decs),
        "names": {str(k): {"name": n, "distance": round(d, 4)} for k, (n, d) in sorted(report.names.items())},
        "rtf": round(report.timing.rtf, 4),
        "cpu_rtf": round(report.timing.cpu_rtf, 4),
        "wall_s": round(report.timing.wall_s, 3),
        "loadavg_start": report.timing.loadavg_start,
        "tracker": report.to_dict()["tracker"],
        "evidence": report.decision.to_dict(),
    }


def run_interview(an: PeopleAnalyzer, root: Path) -> dict[str, Any]:
    path = root / INTERVIEW
    rep = an.analyze(path)
    width = _frame_width(path)
    person_of = {tr.id: interview_person(tr, width) for tr in rep.tracks}
    owner_of = {v: voice_owner(rep, v, INTERVIEW_TALK) for v in rep.diarization.speaking_time()}
    decs = decisions(rep, person_of, owner_of)
    out = _summary(rep, person_of, decs)
    sides = sorted(person_of.values())
    out["checks"] = {
        "two_tracks": len(rep.tracks) == 2 and sides == ["guest", "host"],
        "talking_face_linked_or_open": all(d["decision"] == "open" or d["verdict"] == "correct" for d in decs),
    }
    return out


def run_hamilton(an: PeopleAnalyzer, root: Path) -> dict[str, Any]:
    path = root / HAMILTON
    rep = an.analyze(path, references={n: root / p for n, p in HAMILTON_REFS.items()})
    width = _frame_width(path)
    person_of = {tr.id: hamilton_person(tr, width) for tr in rep.tracks}
    owner_of = {v: "lin-manuel-miranda" for v in rep.diarization.speaking_time()}
    decs = decisions(rep, person_of, owner_of)
    out = _summary(rep, person_of, decs)
    named = {name: [t for t, (n, _) in rep.names.items() if n == name] for name in HAMILTON_REFS}
    wrong_names = [t for t, (n, _) in rep.names.items() if person_of[t] != n]
    out["named_people"] = sorted({n for n, _ in rep.names.values()})
    out["wrong_names"] = len(wrong_names)
    out["checks"] = {
        "both_stills_matched": all(any(person_of[t] == name for t in ts) for name, ts in named.items()),
        "no_wrong_name": not wrong_names,
        "two_named_people": sum(1 for p in rep.people if p.name) == 2,
        "no_wrong_link": out["wrong_links"] == 0,
    }
    return out


def run_restaurant(an: PeopleAnalyzer, root: Path) -> dict[str, Any]:
    rep = an.analyze(root / RESTAURANT)
    person_of = {tr.id: "man" for tr in rep.tracks}  # one person is ever on screen
    owner_of = {v: "man" for v in rep.diarization.speaking_time()}
    decs = decisions(rep, person_of, owner_of)
    out = _summary(rep, person_of, decs)
    out["checks"] = {"exactly_one_person": len(rep.people) == 1, "no_wrong_link": out["wrong_links"] == 0}
    return out


def run_crowd(an: PeopleAnalyzer, root: Path) -> dict[str, Any]:
    rep = an.analyze(root / CROWD)
    out = _summary(rep, {tr.id: f"person{tr.id}" for tr in rep.tracks}, decisions(rep, {}, {}))
    dense = PeopleAnalyzer(
        replace(an.config, tracker=replace(an.config.tracker, fps=2 * an.config.tracker.fps)),
        an.encoder, an.diarizer, an.mouth,
    )  # fmt: skip
    rep10 = dense.analyze(root / CROWD)
    out["tracks_at_double_fps"] = len(rep10.tracks)
    out["fps"], out["double_fps"] = rep.fps, rep10.fps
    out["max_faces_in_a_frame"] = _max_concurrent(rep.tracks)
    out["checks"] = {
        "track_count_stable": abs(len(rep.tracks) - len(rep10.tracks)) <= 1,
        "no_link": not rep.decision.links,
        "no_one_heard": not any(p.kind == "heard" for p in rep.people),
    }
    return out


def _max_concurrent(tracks: list[FaceTrack]) -> int:
    counts: dict[float, int] = {}
    for tr in tracks:
        for t in tr.times:
            counts[round(t, 3)] = counts.get(round(t, 3), 0) + 1
    return max(counts.values(), default=0)


CLIPS = {
    "visualvoice_interview": run_interview,
    "av_hamilton_clip": run_hamilton,
    "visualvoice_noisy_restaurant": run_restaurant,
    "facenet_pytorch_crowd": run_crowd,
}


@register("av")
def run(options: BenchOptions) -> BenchResult:
    root = data_root(options)
    wanted = [c.strip() for c in options.extra.get("clips", ",".join(CLIPS)).split(",") if c.strip()]
    unknown = [c for c in wanted if c not in CLIPS]
    if unknown:
        raise InputError(f"unknown clip(s) {', '.join(unknown)}; known: {', '.join(CLIPS)}")
    missing = [c for c in wanted if not (root / c).is_dir()]
    if missing:
        raise InputError(f"{root}: missing data folder(s) {', '.join(missing)}")
    an = PeopleAnalyzer(PeopleConfig())
    t0 = time.perf_counter()
    an.load()
    load_s = time.perf_counter() - t0
    load_start = list(os.getloadavg())
    per_clip = {name: CLIPS[name](an, root) for name in wanted}
    load_end = list(os.getloadavg())
    dur = sum(c["duration_s"] for c in per_clip.values())
    metrics: dict[str, Any] = {
        "wrong_links": sum(c["wrong_links"] for c in per_clip.values()),
        "people_found": {k: c["people_found"] for k, c in per_clip.items()},
        "checks_passed": sum(all(c["checks"].values()) for c in per_clip.values()),
        "clips": len(per_clip),
        "rtf": sum(c["wall_s"] for c in per_clip.values()) / dur if dur else float("nan"),
        "cpu_rtf": sum(c["cpu_rtf"] * c["duration_s"] for c in per_clip.values()) / dur if dur else float("nan"),
        "model_load_s": round(load_s, 3),
        "loadavg_start": load_start,
        "loadavg_end": load_end,
        "cpu_count": os.cpu_count(),
        **per_clip,
    }
    rows = [
        [
            name, c["tracks"], c["voices"], c["links"], c["people_found"], c["wrong_links"],
            "; ".join(f"{k}={'yes' if v else 'NO'}" for k, v in c["checks"].items()), c["rtf"], c["cpu_rtf"],
        ]
        for name, c in per_clip.items()
    ]  # fmt: skip
    dec_rows = [
        [name, d["voice"], d["decision"], d.get("track", ""), d.get("verdict", ""), d.get("confidence", ""),
         d.get("reason", "")]
        for name, c in per_clip.items() for d in c["decisions"]
    ]  # fmt: skip
    header = ["clip", "tracks", "voices", "links", "people", "wrong", "checks", "rtf", "cpu_rtf"]
    tables = [
        ("Face tracks and face-voice links", header, rows),
        ("Decisions per voice", ["clip", "voice", "decision", "track", "verdict", "confidence", "reason"], dec_rows),
    ]
    notes = [
        f"wrong links in total: {metrics['wrong_links']}",
        f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end on {os.cpu_count()} CPUs",
    ]
    return BenchResult("av", metrics, tables, notes)

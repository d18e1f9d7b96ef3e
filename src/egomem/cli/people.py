"""`egomem people CLIP`: who was seen and heard in a recording, with the evidence for each link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np

from egomem.errors import InputError
from egomem.perception.people.report import FaceLookup
from egomem.schemas import Modality
from egomem.store.base import MemoryStore


def _refs(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise InputError(f"--ref expects NAME=IMAGE, got {item!r}")
        out[name.strip()] = path.strip()
    return out


def _span(a: float, b: float) -> str:
    return f"{a:.1f}-{b:.1f} s"


def describe(report: object) -> list[str]:
    """The report as lines of text: a summary line, then each person with the evidence behind them."""
    from egomem.perception.people.report import PeopleReport

    assert isinstance(report, PeopleReport)
    d = report.to_dict()
    tracks = {t["id"]: t for t in d["tracks"]}
    voices = {v["id"]: v for v in d["voices"]}
    lines = [
        f"{Path(report.source).name}: {report.duration_s:.1f} s, {_n(len(tracks), 'face track')}, "
        f"{_n(len(voices), 'voice')}, {_n(len(d['links']), 'link')}, {_n(len(report.people), 'person', 'people')} "
        f"(analysed in {report.timing.wall_s:.1f} s, RTF {report.timing.rtf:.2f})"
    ]
    lines += [f"warning: {w}" for w in report.warnings]
    abst_t = {a["track"]: a for a in d["abstentions"] if a["track"] is not None}
    abst_v = {a["voice"]: a for a in d["abstentions"] if a["voice"] is not None}
    links = {lk["track"]: lk for lk in d["links"]}
    for p in report.people:
        who = f" {p.name} (face distance {p.name_distance:.2f})" if p.name else ""
        parts = []
        for t in p.tracks:
            tr = tracks[t]
            parts.append(f"track {t} ({_span(tr['start_s'], tr['end_s'])}, {tr['visible_s']:.1f} s on screen)")
        if p.voice is not None:
            parts.append(f"voice {p.voice} ({voices[p.voice]['speech_s']:.1f} s of speech)")
        lines.append(f"person {p.id}: {p.kind}{who}: " + " + ".join(parts))
        if p.tracks and p.tracks[0] in links:
            e = links[p.tracks[0]]["evidence"]
            at = ", ".join(f"{x:.0f}" for x in e["support_at_s"])
            lines.append(
                f"  linked, confidence {e['confidence']:.2f}: lips moved alone while the voice spoke in "
                f"{e['support_windows']} windows ({at} s), still in {e['against_windows']}, ambiguous in "
                f"{e['ambiguous_windows']}, too small to read in {e['unmeasured_windows']}; "
                f"{e['cooccurrence_s']:.1f} s alone on screen with only this voice"
            )
        elif p.tracks and p.tracks[0] in abst_t:
            lines.append(f"  not linked to voice {abst_t[p.tracks[0]]['voice']}: {abst_t[p.tracks[0]]['reason']}")
        elif p.voice is not None and p.voice in abst_v:
            lines.append(f"  not linked: {abst_v[p.voice]['reason']}")
        for e in (e for e in d["pairs"] if p.tracks and e["track"] == p.tracks[0] and p.voice is None):
            lines.append(
                f"  evidence with voice {e['voice']}: lips moved alone while it spoke in {e['support_windows']} "
                f"windows, still in {e['against_windows']}, ambiguous in {e['ambiguous_windows']}, too small to read "
                f"in {e['unmeasured_windows']}"
            )
    return lines


def memory_lookup(store: MemoryStore, threshold: float) -> FaceLookup:
    """A lookup naming a face track after the remembered person whose face key is nearest,
    closer than the product's face threshold (unnamed people by their user id)."""

    def lookup(vec: np.ndarray) -> tuple[str, float] | None:
        hits = store.nearest_keys(Modality.FACE, vec, k=1)
        if not hits or hits[0].distance >= threshold:
            return None
        user = store.get_user(hits[0].user_id)
        return (user.name or user.id, hits[0].distance)

    return lookup


def report_people(recording: str, store: MemoryStore, face_threshold: float) -> tuple[list[str], dict[str, Any]]:
    """`egomem run --people`: the people seen and heard in the recording, named from memory, as
    lines of text and as the report's JSON (with all the evidence, as `egomem people --json`)."""
    from egomem.perception.people import PeopleAnalyzer

    analyzer = PeopleAnalyzer()
    analyzer.load()
    report = analyzer.analyze(recording, lookup=memory_lookup(store, face_threshold))
    return describe(report), report.to_dict()


def _n(k: int, one: str, many: str | None = None) -> str:
    return f"{k} {one if k == 1 else many or one + 's'}"


@click.command()
@click.argument("clip", type=click.Path(dir_okay=False))
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the report (with all evidence) as JSON."
)
@click.option("--ref", "refs", multiple=True, metavar="NAME=IMAGE", help="A reference still naming a face.")
@click.option("--fps", type=float, default=5.0, show_default=True, help="Frames sampled per second.")
@click.option("--start", "start_s", type=float, help="Analyse from this second.")
@click.option("--end", "end_s", type=float, help="Analyse up to this second.")
def people(
    clip: str, json_path: str | None, refs: tuple[str, ...], fps: float, start_s: float | None, end_s: float | None
) -> None:
    """Who is seen and heard in a recording: face tracks, voices, and face-voice links with their evidence."""
    from dataclasses import replace

    from egomem.perception.people import PeopleConfig, analyze_people

    config = PeopleConfig()
    config = replace(config, tracker=replace(config.tracker, fps=fps))
    report = analyze_people(clip, references=_refs(refs), start_s=start_s, end_s=end_s, config=config)
    for line in describe(report):
        click.echo(line)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
        click.echo(f"report written to {json_path}")

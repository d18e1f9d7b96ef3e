"""Render the demo's recordings: real face photos + synthesised speech, as small mp4s.

Run once by a developer (needs Debian's festival with the cmu_us_slt_arctic_hts and
kal_diphone voices); the output is committed so `make demo` needs no TTS:

    python scripts/make_demo_assets.py --shared ../shared/data

The photos are real (ageitgey/face_recognition examples, MIT; see ATTRIBUTION.md);
the voices are Festival's. The lines are ordinary phrasing (names said as "I'm Emily",
"John here"; a job said with "working as"; a move said as "we moved"), not lines picked
for an ASR or for the extraction rules. Emily and John are the scenario's names, not the
names of the people in the photos.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from egomem.bench.convo.render import Voice, frame_for, silence, synthesize, temp_dir, write_mp4
from egomem.perception.audio import SAMPLE_RATE

OUT = Path(__file__).resolve().parents[1] / "src" / "egomem" / "runtime" / "demo_assets"

PEOPLE = {
    "Emily": {"voice": "cmu_us_slt_arctic_hts", "photos": ["rose_leslie/img1.jpg", "rose_leslie/img2.jpg"]},
    "John": {"voice": "ked_diphone", "photos": ["kit_harington/john1.jpeg"]},
}

# (who, photo index, [utterances]); a float = nobody there for that many seconds.
# Ordinary phrasing, as people talk: nothing here was chosen for what an ASR hears or
# for what an extractor rule matches (the lines of the first demo were; see git history).
DAYS: dict[str, list[tuple[str, int, list[str]] | float]] = {
    "day1": [
        3.0,
        (
            "Emily",
            0,
            [
                "Hi there! I'm Emily.",
                "I've been working as a nurse at the city hospital for six years now.",
                "I live in London, not far from the river.",
                "On weekends I usually go hiking in the hills.",
            ],
        ),
        6.0,
        (
            "John",
            0,
            [
                "Hey, John here.",
                "I'm a doctor at the same hospital, so Emily is my colleague.",
                "I played tennis this morning before my shift.",
                "I really love playing tennis.",
            ],
        ),
        3.0,
    ],
    "day2": [
        2.0,
        (
            "Emily",
            1,
            [
                "Good morning!",
                "Do any of my colleagues play tennis?",
                "I'd like to learn to play tennis too.",
                "Oh, and we moved to Paris last month.",
            ],
        ),
        3.0,
    ],
}
TURN_GAP_S = 2.5  # pause after each utterance, where the assistant answers


def render(day: str, shared: Path) -> dict[str, object]:
    audio: list[np.ndarray] = []
    spans: list[tuple[float, float, np.ndarray]] = []
    script = []
    t = 0.0
    with temp_dir() as tmp:
        for part in DAYS[day]:
            if isinstance(part, float):
                audio.append(silence(part))
                spans.append((t, t + part, frame_for(None)))
                t += part
                continue
            who, idx, lines = part
            person = PEOPLE[who]
            photo = shared / "faces_face_recognition" / str(person["photos"][idx])
            voice = Voice("festival", str(person["voice"]), "")
            t0 = t
            for line in lines:
                speech = synthesize(line, voice, Path(tmp))
                script.append({"t": round(t, 2), "who": who, "text": line})
                audio += [speech, silence(TURN_GAP_S)]
                t += speech.size / SAMPLE_RATE + TURN_GAP_S
            spans.append((t0, t, frame_for(photo)))
    path = OUT / f"{day}.mp4"
    write_mp4(path, np.concatenate(audio), spans, preset="veryslow")  # committed: smallest file
    return {"file": path.name, "duration_s": round(t, 2), "script": script}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {day: render(day, args.shared) for day in DAYS}
    (OUT / "scenario.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()

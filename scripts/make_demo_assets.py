"""Render the demo's recordings: real face photos + synthesised speech, as small mp4s.

Run once by a developer (needs Debian's festival with the cmu_us_slt_arctic_hts and
kal_diphone voices); the output is committed so `make demo` needs no TTS:

    python scripts/make_demo_assets.py --shared ../shared/data

The photos are real (ageitgey/face_recognition examples, MIT; see ATTRIBUTION.md);
the voices are Festival's. The lines were chosen so that the offline default ASR
(pocketsphinx) hears them; e.g. it hears "Emily" at the start of a sentence in these
voices as "family", so John says "I work with Emily. She is my colleague.".
Emily and John are the scenario's names, not the names of the people in the photos.
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

# (who, photo index, [utterances]); None = nobody there for that many seconds.
DAYS: dict[str, list[tuple[str, int, list[str]] | float]] = {
    "day1": [
        3.0,
        ("Emily", 0, ["Hi, my name is Emily.", "I am a nurse at the hospital.", "I live in London.", "I love hiking."]),
        6.0,
        (
            "John",
            0,
            [
                "Hello, my name is John.",
                "I played tennis this morning.",
                "I love tennis.",
                "I work with Emily. She is my colleague.",
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
                "Good morning.",
                "Do any of my colleagues love tennis?",
                "I want to learn tennis too.",
                "I just moved to Paris.",
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

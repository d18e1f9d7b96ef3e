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
import subprocess
import tempfile
from pathlib import Path

import av
import numpy as np
from PIL import Image

from egomem.perception.audio import SAMPLE_RATE, load_audio

OUT = Path(__file__).resolve().parents[1] / "src" / "egomem" / "runtime" / "demo_assets"
W, H, FPS = 640, 480, 2

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


def tts(text: str, voice: str, tmp: Path) -> np.ndarray:
    wav = tmp / "u.wav"
    subprocess.run(["text2wave", "-eval", f"(voice_{voice})", "-o", str(wav)], input=text.encode(), check=True)
    return load_audio(wav)


def frame_for(photo: Path | None) -> np.ndarray:
    canvas = Image.new("RGB", (W, H), (96, 96, 96))
    if photo is not None:
        img = Image.open(photo).convert("RGB")
        img.thumbnail((W - 80, H - 60))
        canvas.paste(img, ((W - img.width) // 2, (H - img.height) // 2))
    return np.asarray(canvas)


def render(day: str, shared: Path, tmp: Path) -> dict[str, object]:
    audio: list[np.ndarray] = []
    spans: list[tuple[float, float, np.ndarray]] = []
    script = []
    t = 0.0
    for part in DAYS[day]:
        if isinstance(part, float):
            audio.append(np.zeros(int(part * SAMPLE_RATE), np.float32))
            spans.append((t, t + part, frame_for(None)))
            t += part
            continue
        who, idx, lines = part
        person = PEOPLE[who]
        photo = shared / "faces_face_recognition" / str(person["photos"][idx])  # type: ignore[index]
        t0 = t
        for line in lines:
            speech = tts(line, str(person["voice"]), tmp)
            script.append({"t": round(t, 2), "who": who, "text": line})
            audio += [speech, np.zeros(int(TURN_GAP_S * SAMPLE_RATE), np.float32)]
            t += speech.size / SAMPLE_RATE + TURN_GAP_S
        spans.append((t0, t, frame_for(photo)))
    pcm = np.concatenate(audio)
    path = OUT / f"{day}.mp4"
    with av.open(str(path), "w") as out:
        vs = out.add_stream("libx264", rate=FPS)
        vs.width, vs.height, vs.pix_fmt = W, H, "yuv420p"
        vs.options = {"crf": "30", "preset": "veryslow"}
        as_ = out.add_stream("aac", rate=SAMPLE_RATE)
        as_.layout = "mono"
        as_.bit_rate = 96_000  # near-transparent: the ASR should hear what was said
        for i in range(int(np.ceil(t * FPS))):
            ft = i / FPS
            img = next((f for a, b, f in spans if a <= ft < b), spans[-1][2])
            for pkt in vs.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(pkt)
        for pkt in vs.encode():
            out.mux(pkt)
        for i in range(0, pcm.size, 1024):
            chunk = pcm[i : i + 1024][None, :]
            af = av.AudioFrame.from_ndarray(chunk, format="flt", layout="mono")
            af.sample_rate = SAMPLE_RATE
            af.pts = i
            for pkt in as_.encode(af):
                out.mux(pkt)
        for pkt in as_.encode():
            out.mux(pkt)
    return {"file": path.name, "duration_s": round(t, 2), "script": script}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        meta = {day: render(day, args.shared, Path(tmp)) for day in DAYS}
    (OUT / "scenario.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()

"""Rebuild near_pair.json from ../shared/data with the product's encoders (run from the repository root):

    PYTHONPATH=src python tests/data/identity/make_near_pair.py [SPEAKER_A SPEAKER_B]

Person A: face Ariel_Sharon_0001 (key) / Ariel_Sharon_0002 (query), LFW; voice LibriSpeech test-other speaker
A (first 3 utterances enrolled, the 4th a query). Person B: face Hugo_Chavez_0009 (L2 0.638 from A's key: just
past the 0.6 face threshold, inside the old 0.7 veto margin); voice LibriSpeech speaker B, a male voice that the
s-normed score puts over the voice threshold against A.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from egomem.perception.audio import load_audio
from egomem.perception.face import FaceEncoder, load_image
from egomem.perception.voice import VoiceEncoder

DATA = Path("../shared/data")
LFW = DATA / "faces_lfw_subset_10x10" / "images"
OTHER = DATA / "speech_librispeech_test_other_10spk"
ONE = DATA / "speech_librispeech_train_clean_100_1utt" / "audio"


def main() -> None:
    a, b = (sys.argv[1:3] + ["3005", "163"][len(sys.argv[1:3]) :])[:2]
    fe, ve = FaceEncoder(), VoiceEncoder()

    def face(name: str) -> list[float]:
        obs = fe.observe(load_image(LFW / name.rsplit("_", 1)[0] / f"{name}.jpg"))
        assert obs is not None
        return [round(float(x), 6) for x in obs.vector]

    def voice(path: Path, half: bool = False) -> dict[str, object]:
        audio = load_audio(path)
        obs = ve.observe(audio[: audio.size // 2] if half else audio)
        assert obs is not None
        return {"vector": [round(float(x), 6) for x in obs.vector], "speech_s": round(obs.speech_s, 3)}

    a_utts = sorted((OTHER / a).glob("*.flac"))
    b_utt = sorted((OTHER / b).glob("*.flac"))[:1] or sorted(ONE.glob(f"{b}-*.flac"))[:1]
    out = {
        "source": "tests/data/identity/SOURCE.md",
        "face": {
            "a_key": face("Ariel_Sharon_0001"),
            "a_query": face("Ariel_Sharon_0002"),
            "b": face("Hugo_Chavez_0009"),
        },
        "voice": {
            "a_speaker": a,
            "b_speaker": b,
            "a_enroll": [voice(p) for p in a_utts[:3]],
            "a_query": voice(a_utts[3]),
            "b_query": voice(b_utt[0], half=b_utt[0].parent == ONE),
        },
    }
    Path(__file__).with_name("near_pair.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()

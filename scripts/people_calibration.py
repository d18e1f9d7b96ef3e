"""Where the face-track and linking thresholds of egomem.perception.people come from, measured on
data that is not in `egomem bench av` (run from the repository root; reads ../shared/data):

1. split_threshold (tracks.py): descriptor distances of same- and different-person pairs in
   faces_lfw_subset_10x10 (a position-continuous track is split only above every same-person
   distance and below most different-person ones).
2. roi_threshold (tracks.py): HOG scores in region searches around the faces of
   faces_lfw_subset_10x10 + faces_deepface, at full size and shrunk to 1/2 and 1/3: the face's own
   best score, and detections off the face (false positives) per search.
3. moving (link.py): lip activity of a still photo sent through H.264 at 5 fps (the measurement's
   noise floor), beside the physiological scale (a syllable moves the inner lips several mm;
   the threshold is ~2 mm of a ~63 mm eye distance).

    .venv/bin/python scripts/people_calibration.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from egomem.perception.face import FaceBox, FaceEncoder, load_image
from egomem.perception.people import PeopleAnalyzer, activity
from egomem.perception.people.geometry import overlap, resize, scale_box, size

DATA = Path("../shared/data")


def split_threshold(enc: FaceEncoder) -> None:
    vecs, who = [], []
    for f in sorted((DATA / "faces_lfw_subset_10x10" / "images").glob("*/*")):
        obs = enc.observe(load_image(f))
        if obs is not None:
            vecs.append(obs.vector)
            who.append(f.parent.name)
    x, y = np.array(vecs), np.array(who)
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    iu = np.triu_indices(len(x), 1)
    same = (y[:, None] == y[None])[iu]
    print(f"LFW 10x10: same-person max {d[iu][same].max():.3f}, 99th pct {np.percentile(d[iu][same], 99):.3f}; "
          f"different-person min {d[iu][~same].min():.3f}, 10th pct {np.percentile(d[iu][~same], 10):.3f}")  # fmt: skip


def roi_threshold(enc: FaceEncoder) -> None:
    files = sorted((DATA / "faces_lfw_subset_10x10" / "images").glob("*/*"))
    files += sorted((DATA / "faces_deepface" / "images").glob("*"))
    best: dict[float, list[float]] = {1.0: [], 0.5: [], 0.3: []}
    false: list[float] = []
    searches = 0
    for f in files:
        img = load_image(f)
        boxes = enc.detect(img)
        if len(boxes) != 1:
            continue
        for shrink in best:
            small = resize(img, shrink)
            b = scale_box(boxes[0], 1 / shrink, small.shape[0], small.shape[1])
            m = round(size(b) * 1.1)  # the tracker's region: 0.5 + max_shift face sizes around the box
            top, left = max(0, b.top - m), max(0, b.left - m)
            bottom, right = min(small.shape[0], b.bottom + m), min(small.shape[1], b.right + m)
            s = 100 / size(b)
            crop = resize(np.ascontiguousarray(small[top:bottom, left:right]), s)
            face = FaceBox(round((b.top - top) * s), round((b.right - left) * s), round((b.bottom - top) * s),
                           round((b.left - left) * s))  # fmt: skip
            dets = enc.detect_scored(crop, 0, -1.5)
            on = [sc for box, sc in dets if overlap(box, face) > 0.5]
            best[shrink].append(max(on) if on else -9.0)
            if shrink == 1.0:
                searches += 1
                false += [sc for box, sc in dets if overlap(box, face) <= 0.5]
    fp = np.array(false)
    for thr in (-1.0, -0.8, -0.6, -0.5, -0.4, 0.0):
        found = " / ".join(f"{np.mean(np.array(v) >= thr):.3f}" for v in best.values())
        print(f"region threshold {thr:+.1f}: false detections per search {np.sum(fp >= thr) / searches:.3f}, "
              f"faces re-found at full / half / third size {found}  ({searches} searches)")  # fmt: skip


def still_photo_lips() -> None:
    import av
    from PIL import Image

    face = Image.open(Path("tests/data/faces/Colin_Powell/Colin_Powell_0001.jpg")).convert("RGB")
    canvas = Image.new("RGB", (640, 360), (100, 100, 100))
    canvas.paste(face, (195, 55))
    frame = np.asarray(canvas)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "still.mp4"
        with av.open(str(path), "w") as out:
            vs = out.add_stream("libx264", rate=5)
            vs.width, vs.height, vs.pix_fmt = 640, 360, "yuv420p"
            rng = np.random.default_rng(0)
            for _ in range(50):  # sensor noise, so that every frame is coded anew
                noisy = np.clip(frame + rng.normal(0, 3, frame.shape), 0, 255).astype(np.uint8)
                for pkt in vs.encode(av.VideoFrame.from_ndarray(noisy, format="rgb24")):
                    out.mux(pkt)
            for pkt in vs.encode():
                out.mux(pkt)
        rep = PeopleAnalyzer().analyze(path)
    acts = [a for tr in rep.tracks for _, a in activity(tr.openings(), 0.3)]
    print(f"still photo through H.264 at 5 fps: lip activity mean {np.mean(acts):.4f}, max {np.max(acts):.4f} "
          f"({len(acts)} changes)")  # fmt: skip


def main() -> int:
    if not DATA.is_dir():
        print(f"{DATA} not found: run from the repository root beside ../shared/data", file=sys.stderr)
        return 1
    enc = FaceEncoder()
    split_threshold(enc)
    roi_threshold(enc)
    still_photo_lips()
    return 0


if __name__ == "__main__":
    sys.exit(main())

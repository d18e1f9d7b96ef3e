"""Labelled media folders the benchmarks accept (so they run on any such folder).

Layouts, tried in this order:
1. a pairs CSV (`master.csv` or `pairs.csv`): two path columns and a same/different label
   (Yes/No, 1/0, true/false, same/different);
2. a manifest (`labels.csv`, `manifest.csv` or `identities.csv`) with a path column
   (`path`, `file`, `image`, `filename`) and an identity column (`identity`, `speaker`, `speaker_id`);
3. one subfolder per identity with the media files inside.
Paths in a CSV are resolved relative to the CSV's folder, then to its `images/` subfolder.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from egomem.errors import InputError

IMAGE_EXT = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif"}
AUDIO_EXT = {".wav", ".flac", ".ogg", ".mp3", ".m4a"}
PATH_COLS = ("path", "file", "image", "filename")
ID_COLS = ("identity", "speaker", "speaker_id")
TRUE_WORDS = {"yes", "1", "true", "same", "y"}
FALSE_WORDS = {"no", "0", "false", "different", "diff", "n"}


@dataclass
class LabelledSet:
    root: Path
    items: list[tuple[Path, str]] = field(default_factory=list)  # (file, identity)
    pairs: list[tuple[Path, Path, bool]] = field(default_factory=list)  # official pairs, if any

    def all_pairs(self) -> list[tuple[Path, Path, bool]]:
        """Official pairs when given, else every unordered pair of items."""
        if self.pairs:
            return self.pairs
        out = []
        for i, (a, ia) in enumerate(self.items):
            for b, ib in self.items[i + 1 :]:
                out.append((a, b, ia == ib))
        return out


def _resolve(base: Path, name: str) -> Path:
    for cand in (base / name, base / "images" / name):
        if cand.is_file():
            return cand
    raise InputError(f"file {name!r} listed in {base} does not exist")


def _label(v: str, where: str) -> bool:
    w = v.strip().lower()
    if w in TRUE_WORDS:
        return True
    if w in FALSE_WORDS:
        return False
    raise InputError(f"unreadable same/different label {v!r} in {where}")


def load_set(root: Path, exts: set[str]) -> LabelledSet:
    if not root.is_dir():
        raise InputError(f"data folder not found: {root}")
    out = LabelledSet(root)
    for name in ("master.csv", "pairs.csv"):
        p = root / name
        if p.is_file():
            with open(p, newline="") as f:
                for row in csv.reader(f):
                    if len(row) < 3 or row[2].strip().lower() in ("decision", "label", "same"):
                        continue
                    out.pairs.append((_resolve(root, row[0]), _resolve(root, row[1]), _label(row[2], name)))
            break
    for name in ("labels.csv", "manifest.csv", "identities.csv"):
        p = root / name
        if not p.is_file():
            continue
        with open(p, newline="") as f:
            reader = csv.DictReader(f)
            cols = reader.fieldnames or []
            pc = next((c for c in PATH_COLS if c in cols), None)
            ic = next((c for c in ID_COLS if c in cols), None)
            if pc is None or ic is None:
                continue
            out.items = [(_resolve(root, r[pc]), r[ic]) for r in reader]
        break
    if not out.items:
        base = root / "images" if (root / "images").is_dir() else root
        for d in sorted(x for x in base.iterdir() if x.is_dir()):
            out.items += [(f, d.name) for f in sorted(d.iterdir()) if f.suffix.lower() in exts]
    if not out.items and not out.pairs:
        raise InputError(
            f"no labelled media found in {root} (expected a pairs CSV, a manifest or one folder per identity)"
        )
    return out

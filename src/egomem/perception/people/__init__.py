"""Several people at once: face tracks, lip activity, and face-voice links by evidence.

- `tracks.py`: `FaceTracker` (HOG detection in base/scan/region passes, assignment by position
  with `linear_sum_assignment`, one descriptor per track per second, occlusion gaps, merging of
  one person's tracks);
- `lips.py`: mouth opening from the 68-point landmarks and its change (lip activity);
- `link.py`: evidence per (face track, voice cluster) over 1 s windows, links by one-sided Wilson
  bounds and a one-to-one assignment, abstentions with reasons;
- `report.py`: `PeopleReport` (JSON with every link's evidence), naming tracks through a lookup;
- `analyze.py`: `analyze_people(path)` / `PeopleAnalyzer` for clips, `PeopleSession` live.

Perception knows no identities: mapping tracks to enrolled users is a lookup the caller supplies.
"""

from egomem.perception.people.analyze import PeopleAnalyzer, PeopleConfig, PeopleSession, analyze_people
from egomem.perception.people.link import (
    Abstention,
    EvidenceAccumulator,
    FaceInWindow,
    Link,
    LinkConfig,
    LinkDecision,
    PairEvidence,
    WindowObservation,
    link,
    observe_windows,
    wilson_lower,
)
from egomem.perception.people.lips import MouthMeter, activity, mean_activity, mouth_opening
from egomem.perception.people.report import PeopleReport, Person, name_tracks, reference_lookup
from egomem.perception.people.tracks import Detection, FaceTrack, FaceTracker, TrackerConfig, merge_tracks

__all__ = [
    "Abstention",
    "Detection",
    "EvidenceAccumulator",
    "FaceInWindow",
    "FaceTrack",
    "FaceTracker",
    "Link",
    "LinkConfig",
    "LinkDecision",
    "MouthMeter",
    "PairEvidence",
    "PeopleAnalyzer",
    "PeopleConfig",
    "PeopleReport",
    "PeopleSession",
    "Person",
    "TrackerConfig",
    "WindowObservation",
    "activity",
    "analyze_people",
    "link",
    "mean_activity",
    "merge_tracks",
    "mouth_opening",
    "name_tracks",
    "observe_windows",
    "reference_lookup",
    "wilson_lower",
]

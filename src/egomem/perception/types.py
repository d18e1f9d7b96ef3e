"""What perception produces: one observation per face or voice found in the media.

They live with perception (the layer that makes them); the identity layer turns them
into an Identification (egomem.identity.types re-exports them for its users).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class FaceObservation:
    vector: np.ndarray  # the face encoder's embedding (egomem.encoders: dlib_resnet_v1, 128-d)
    box: tuple[int, int, int, int]  # top, right, bottom, left in the frame's pixels
    frame_index: int = 0
    faces_in_view: int = 1  # faces detected in its frame (this is the primary one): >1, a voice is not linked to it


@dataclass
class VoiceObservation:
    vector: np.ndarray  # the voice encoder's embedding (egomem.encoders: resemblyzer, 256-d, L2-normalised)
    speech_s: float  # seconds of speech the embedding was computed from

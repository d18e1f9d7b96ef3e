"""The device stream protocol: small binary frames, one kind byte each (like Moshi's).

Client -> server, binary WebSocket messages: `kind (1 byte) + payload`

| kind | name            | payload                                                        |
| ---- | --------------- | -------------------------------------------------------------- |
| 0x01 | LISTEN          | microphone audio, PCM16 little-endian, mono, 16 kHz            |
| 0x02 | SPEAK           | the assistant's own audio, same format (optional)              |
| 0x03 | VIDEO           | one JPEG frame, taken at the current end of the LISTEN audio    |
| 0x04 | ASSISTANT_TEXT  | UTF-8: what the assistant said (text-only assistants)           |
| 0x05 | MONOLOGUE       | UTF-8: the client model's monologue tokens (`<retr>` queries)   |
| 0x06 | END             | empty: end of the stream; finish the session and write memory   |

Stream time is the LISTEN audio's clock: the n-th sample is at n / 16000 s.
Server -> client: JSON text messages with a `type`: `memchunk`, `user`, `session`,
`memory`, `assistant`, `heard`, `retrieval`, `warning`, `error`, `done`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from egomem.errors import InputError

MAX_FRAME_BYTES = 512 * 1024  # 16 s of PCM16 audio, or one large JPEG


class Kind(IntEnum):
    LISTEN = 0x01
    SPEAK = 0x02
    VIDEO = 0x03
    ASSISTANT_TEXT = 0x04
    MONOLOGUE = 0x05
    END = 0x06


@dataclass(frozen=True)
class Frame:
    kind: Kind
    payload: bytes


def encode(kind: Kind, payload: bytes = b"") -> bytes:
    if len(payload) + 1 > MAX_FRAME_BYTES:
        raise InputError(f"frame of {len(payload) + 1} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    return bytes([int(kind)]) + payload


def decode(message: bytes) -> Frame:
    """Parse one binary message; InputError with the reason for anything malformed."""
    if not message:
        raise InputError("empty frame")
    if len(message) > MAX_FRAME_BYTES:
        raise InputError(f"frame of {len(message)} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    try:
        kind = Kind(message[0])
    except ValueError as exc:
        raise InputError(f"unknown frame kind 0x{message[0]:02x}") from exc
    payload = bytes(message[1:])
    if kind in (Kind.LISTEN, Kind.SPEAK) and len(payload) % 2:
        raise InputError("PCM16 audio payload has an odd number of bytes")
    if kind in (Kind.ASSISTANT_TEXT, Kind.MONOLOGUE):
        try:
            payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("text payload is not valid UTF-8") from exc
    if kind == Kind.VIDEO and not payload.startswith(b"\xff\xd8"):
        raise InputError("video payload is not a JPEG image")
    if kind == Kind.END and payload:
        raise InputError("END frame carries no payload")
    return Frame(kind, payload)


def pcm16_to_float(payload: bytes) -> np.ndarray:
    return (np.frombuffer(payload, dtype="<i2").astype(np.float32) / 32768.0).copy()


def float_to_pcm16(audio: np.ndarray) -> bytes:
    # The inverse of pcm16_to_float (x / 32768), so PCM16 survives a round trip exactly.
    return np.clip(np.round(np.asarray(audio, np.float64) * 32768.0), -32768, 32767).astype("<i2").tobytes()

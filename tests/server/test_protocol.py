"""The device frame protocol: round trips, every malformed frame refused cleanly (fuzzed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egomem.errors import InputError
from egomem.server.protocol import MAX_FRAME_BYTES, Kind, decode, encode, float_to_pcm16, pcm16_to_float
from egomem.server.session import StepAssembler


@given(st.binary(max_size=4096))
@settings(max_examples=500, deadline=None)
def test_decode_never_fails_uncleanly(data: bytes) -> None:
    try:
        frame = decode(data)
    except InputError:
        return
    assert frame.kind in set(Kind) and encode(frame.kind, frame.payload) == data


@given(st.sampled_from([Kind.LISTEN, Kind.SPEAK]), st.lists(st.integers(-32768, 32767), max_size=2000))
@settings(max_examples=100, deadline=None)
def test_audio_round_trip(kind: Kind, samples: list[int]) -> None:
    pcm = np.asarray(samples, dtype="<i2").tobytes()
    frame = decode(encode(kind, pcm))
    assert frame.kind == kind
    assert float_to_pcm16(pcm16_to_float(frame.payload)) == pcm


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"\x09abc", "unknown frame kind 0x09"),
        (b"\x01\x00\x00\x00", "odd number"),
        (b"\x04\xff\xfe", "UTF-8"),
        (b"\x03not a jpeg", "not a JPEG"),
        (b"\x06x", "no payload"),
        (b"\x01" + b"\x00" * MAX_FRAME_BYTES, "limit"),
    ],
)
def test_malformed_frames(data: bytes, reason: str) -> None:
    with pytest.raises(InputError, match=reason):
        decode(data)


def test_step_assembler_cuts_80ms_steps_and_places_frames() -> None:
    asm = StepAssembler()
    asm.listen = np.ones(3000, np.float32)
    steps = asm.steps()
    assert [s.index for s in steps] == [0, 1] and asm.listen.size == 440
    assert asm.now_s == pytest.approx(3000 / 16000)
    from egomem.server.client import jpeg

    asm.add_video(jpeg(np.zeros((8, 8, 3), np.uint8)))
    asm.listen = np.concatenate([asm.listen, np.ones(2000, np.float32)])
    steps = asm.steps(final=True)
    assert sum(len(s.frames) for s in steps) == 1 and steps[0].frames[0].t == pytest.approx(3000 / 16000)
    assert all(s.listen.size == 1280 for s in steps)
    with pytest.raises(InputError, match="JPEG"):
        asm.add_video(b"\xff\xd8garbage")

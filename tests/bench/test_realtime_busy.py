"""bench realtime's per-component timer: times the product's methods and leaves them as they were."""

from __future__ import annotations

from egomem.bench.realtime import _Busy


class Encoder:
    def observe(self, x: int) -> int:
        return x + 1


def test_busy_times_and_restores() -> None:
    enc = Encoder()
    own = Encoder()
    own.observe = lambda x: x * 2  # type: ignore[method-assign]  # an instance attribute is restored as it was
    own_fn = own.observe
    busy = _Busy()
    with busy.active():
        busy.wrap(enc, "observe", "face")
        busy.wrap(own, "observe", "face")
        busy.wrap(enc, "missing", "nothing")  # no such method: not wrapped, no error
        assert enc.observe(1) == 2 and own.observe(3) == 6
        assert busy.calls["face"] == 2 and busy.seconds["face"] >= 0.0
        assert "nothing" not in busy.calls
    assert "observe" not in vars(enc) and enc.observe(1) == 2
    assert own.observe is own_fn

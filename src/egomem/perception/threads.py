"""Thread settings for small models on a shared 2-core machine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def torch_single_thread() -> Iterator[None]:
    """Run torch with one intra-op thread, then restore. Small recurrent nets (the trigger's
    GRU, resemblyzer's LSTM) are many tiny sequential ops that wait on thread barriers
    otherwise: on the shared 2-core machine the trigger's GRU ran 30x slower with 2 threads
    (8.8 s vs 0.29 s per 8192 steps), and one 2 s diarization window took 3 s, not 30 ms."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)

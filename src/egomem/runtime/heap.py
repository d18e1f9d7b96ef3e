"""The process heap: glibc's malloc arenas capped before the agent's threads allocate.

glibc gives each thread that finds the heap busy an arena of its own (up to 8 per core), and
memory freed into one arena is never handed to another thread's allocations. An agent runs the
stream loop, the identity poller, the memory worker and the thread pools of onnxruntime, torch,
CTranslate2 and llama.cpp side by side, so freed buffers pile up in many arenas. Two arenas
(glibc's own advice for memory-bound processes) cut `bench realtime`'s peak resident memory
with the default configuration from 2,494 to 2,381 MB on a 2-minute stream (docs/benchmarks/realtime.md).
An operator's MALLOC_ARENA_MAX (read by glibc itself at start) is left as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
ARENAS = 2


def cap_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas for the rest of the process; False where nothing was changed
    (the operator set MALLOC_ARENA_MAX, or the C library is not glibc)."""
    if arenas < 1:
        raise ValueError("arenas must be at least 1")
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: their mallopt is not glibc's
        return False
    return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)))

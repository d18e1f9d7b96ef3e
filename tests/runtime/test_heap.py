"""The malloc arena cap (runtime/heap.py): checked by counting glibc's arenas after threads contend."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from egomem.runtime.heap import cap_malloc_arenas

# Eight threads malloc and free through ctypes (which releases the GIL, so they really contend);
# glibc's malloc_info then lists one <heap> per arena.
_CHURN = textwrap.dedent(
    """
    import ctypes, ctypes.util, re, sys, tempfile, threading
    from egomem.runtime.heap import cap_malloc_arenas
    if sys.argv[1] == "cap":
        assert cap_malloc_arenas()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    def churn():
        for _ in range(20000):
            libc.free(libc.malloc(4096))
    threads = [threading.Thread(target=churn) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    with tempfile.NamedTemporaryFile(suffix=".xml") as f:
        fp = libc.fopen(f.name.encode(), b"w")
        libc.malloc_info(0, fp)
        libc.fclose(fp)
        print(len(re.findall(r'<heap nr="[0-9]+">', open(f.name).read())))
    """
)


def _arenas(mode: str) -> int:
    env = {"PATH": "/usr/bin:/bin"}  # no MALLOC_ARENA_MAX from the caller's environment
    out = subprocess.run([sys.executable, "-c", _CHURN, mode], capture_output=True, text=True, env=env, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas")
def test_the_cap_holds_threads_to_two_arenas_where_they_otherwise_get_more() -> None:
    # Measured on 2 cores: 9 arenas without the cap, 2 with it.
    assert _arenas("nocap") > 2
    assert _arenas("cap") <= 2


def test_an_operators_malloc_arena_max_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert cap_malloc_arenas() is False


def test_fewer_than_one_arena_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        cap_malloc_arenas(0)

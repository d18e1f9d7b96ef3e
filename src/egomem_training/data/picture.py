"""A PNG of one built stream, for people to check what was built: the two audio channels,
the monologue, the MemChunk slots, the trigger labels and every sample's masks, over
stream positions (80 ms steps)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt
import numpy as np

from egomem.stream.clock import SAMPLES_PER_STEP
from egomem_training.data.layout import DIALOG_START, LEVEL1_SLOT, LEVEL2_SLOT
from egomem_training.data.stream import BuiltStream
from egomem_training.data.text_tokens import PAD, RETR, TextTokenizer

_TASK_COLOURS = {"level1": "tab:green", "level2_query": "tab:red", "level2_answer": "tab:purple", "trigger": "tab:gray"}


def _envelope_db(x: np.ndarray) -> np.ndarray:
    n = x.size // SAMPLES_PER_STEP
    p = np.mean(np.square(x[: n * SAMPLES_PER_STEP].reshape(n, SAMPLES_PER_STEP), dtype=np.float64), axis=1)
    return np.asarray(10 * np.log10(p + 1e-10))


def _voices(st: BuiltStream) -> str:
    voices = list(st.meta["voices"].values())
    return f"voices {', '.join(voices)}" if len(voices) <= 3 else f"{len(voices)} users, {len(set(voices))} voices"


def draw_stream(st: BuiltStream, path: Path, tok: TextTokenizer) -> None:
    steps = st.text.size
    pos = DIALOG_START + np.arange(steps)
    fig, axes = plt.subplots(5, 1, figsize=(11, 7), sharex=True, gridspec_kw={"height_ratios": [1, 1, 0.6, 0.6, 1.6]})
    ax_l, ax_s, ax_t, ax_lab, ax_m = axes
    ax_l.plot(pos, _envelope_db(st.listen_clean), lw=0.6, color="tab:blue", label="users (clean)")
    ax_l.plot(pos, _envelope_db(st.listen), lw=0.6, color="tab:orange", alpha=0.7, label="augmented")
    ax_l.set_ylabel("listen dB")
    ax_l.legend(loc="upper right", fontsize=7)
    ax_s.plot(pos, _envelope_db(st.speak), lw=0.6, color="tab:blue")
    ax_s.set_ylabel("speak dB")
    pad, retr = tok.id_of(PAD), tok.id_of(RETR)
    spoken = np.flatnonzero(st.text != pad)
    ax_t.vlines(DIALOG_START + spoken, 0, 1, color="tab:blue", lw=0.5)
    ax_t.vlines(DIALOG_START + np.flatnonzero(st.text == retr), 0, 1, color="tab:red", lw=1.5)
    ax_t.set_ylabel("text")
    ax_t.set_yticks([])
    ax_lab.step(pos, st.labels, where="post", lw=0.8, color="black")
    ax_lab.set_ylabel("trigger")
    ax_lab.set_yticks([0, 1, 2, 3])
    for row, s in enumerate(st.samples):
        c = _TASK_COLOURS[s.task]
        for a, b in s.text_spans:
            ax_m.plot([a, b], [row, row], color=c, lw=3, solid_capstyle="butt")
        for a, b in s.speak_spans:
            ax_m.plot([a, b], [row + 0.3, row + 0.3], color=c, lw=1.5, alpha=0.6, solid_capstyle="butt")
        for a, b in s.label_spans:
            ax_m.plot([a, b], [row, row], color=c, lw=1, ls=":")
        if s.level1_text:
            ax_m.plot(LEVEL1_SLOT, [row, row], color="tab:green", lw=1, alpha=0.5)
        if s.level2_text:
            ax_m.plot(LEVEL2_SLOT, [row, row], color="tab:purple", lw=1, alpha=0.5)
    if len(st.samples) <= 24:  # more would not be legible: the colours still say the task
        names = [f"{s.task} {s.turn if s.turn >= 0 else ''}" for s in st.samples]
        ax_m.set_yticks(range(len(st.samples)), names, fontsize=6)
    else:
        ax_m.set_yticks([])
    ax_m.invert_yaxis()
    ax_m.set_ylabel("sample masks")
    ax_m.set_xlabel("stream position (80 ms steps); 0-511 Level-1 slot, 512-767 Level-2 slot")
    for ax in axes:
        ax.axvspan(*LEVEL1_SLOT, color="tab:green", alpha=0.08)
        ax.axvspan(*LEVEL2_SLOT, color="tab:purple", alpha=0.08)
        ax.axvline(DIALOG_START, color="gray", lw=0.5)
    aug = st.augmentation
    fig.suptitle(
        f"stream {st.stream_id}: {len(st.plan)} sessions, {_voices(st)}; "
        f"echo={f'{aug.echo_gain:.2f}@{aug.echo_delay_s:.2f}s' if aug.echo else 'no'}, "
        f"background={'yes' if aug.background else 'no'}, noise={f'{aug.snr_db:.0f} dB' if aug.noise else 'no'}",
        fontsize=8,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=70)
    plt.close(fig)

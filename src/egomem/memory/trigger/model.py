"""The tagger network: local convolutions at the 80 ms step, a bidirectional GRU at 320 ms.

The BiGRU sees the whole chunk in both directions (the paper uses full attention over
chunks of up to 8192 steps) at a quarter of the step rate, which makes CPU training
~4x cheaper (a GRU is sequential); full-rate convolutions before and after it keep
boundaries exact to the step. ~0.2 M parameters.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

N_LABELS = 4
POOL = 4  # GRU rate = step rate / POOL


class TriggerNet(nn.Module):
    def __init__(self, n_features: int, hidden: int = 96, layers: int = 2, width: int = 64) -> None:
        super().__init__()
        self.config = {"n_features": n_features, "hidden": hidden, "layers": layers, "width": width}
        self.inp = nn.Linear(n_features, width)
        self.local = nn.Sequential(
            nn.Conv1d(width, width, 5, padding=2), nn.GELU(), nn.Conv1d(width, width, 5, padding=2), nn.GELU()
        )
        self.down = nn.Conv1d(width, width, POOL, stride=POOL)
        self.gru = nn.GRU(width, hidden, num_layers=layers, batch_first=True, bidirectional=True, dropout=0.1)
        self.head = nn.Sequential(
            nn.Conv1d(width + 2 * hidden, width, 5, padding=2), nn.GELU(), nn.Conv1d(width, N_LABELS, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (batch, steps, n_features) normalised features -> (batch, steps, 4) logits."""
        steps = x.shape[1]
        pad = (-steps) % POOL
        h = F.gelu(self.inp(F.pad(x, (0, 0, 0, pad)))).transpose(1, 2)  # (B, C, T)
        h = h + self.local(h)
        g, _ = self.gru(F.gelu(self.down(h)).transpose(1, 2))  # (B, T/POOL, 2H)
        g = g.transpose(1, 2).repeat_interleave(POOL, dim=2)
        out: torch.Tensor = self.head(torch.cat([h, g], dim=1))[:, :, :steps].transpose(1, 2)
        return out

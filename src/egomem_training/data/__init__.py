"""Training data for a memory-aware full-duplex dialog model (`egomem data build`, docs/data.md).

script (the input format) -> stream (voices, plan, audio, augmentation, labels, tokens,
samples) -> shards (Parquet) -> dataset (PyTorch); picture draws one stream.
"""

"""The evaluation package: what benchmarks (`egomem.bench`) and training (`egomem_training`)
share and the product never runs: data loaders (labelled face and voice sets, LoCoMo, where the
data is), scenario and stream generators (spoken conversations, synthetic trigger streams,
users' voices, assistant lines), scorers (EER/AUC, identity trials) and the run envelope
(`record`). It imports the product's layers; the product imports none of it (import-linter).
"""

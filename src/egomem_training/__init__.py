"""Training, calibration and cohort building: the code that makes egomem's shipped files.

Kept out of the runtime package `egomem` (import-linter forbids egomem from importing
it): nothing here runs when egomem is used, only when its shipped weights, thresholds
and cohort are rebuilt from data (`--data`, else EGOMEM_BENCH_DATA, else ../shared/data):

    python -m egomem_training.trigger          # episodic-trigger BiGRU + rule thresholds
    python -m egomem_training.voice_threshold  # the s-normed voice threshold (config.voice)
    python -m egomem_training.voice_cohort     # identity/data/voice_cohort.npz
"""

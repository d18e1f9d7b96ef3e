"""Episodic trigger: tags every 80 ms step of the two-channel stream as
0 no dialog, 1 session start, 2 in session, 3 session end.

- `tagger.EpisodicTrigger` (shipped BiGRU weights) and `tagger.sessions` (labels -> spans)
- `rules.RuleTrigger`: the VAD + gaps + speaker-change baseline (`rules.StreamRuleTrigger` for the agent)
- `features`, `synth`, `dataset`, `model`, `metrics`: how it is built and measured
  (training itself: `python -m egomem_training.trigger`)
"""

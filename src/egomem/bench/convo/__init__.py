"""Spoken multi-day conversation scenarios for `egomem bench conversation`.

- `bank`: the lists people are drawn from (names, jobs, cities, likes, dislikes, habits);
- `templates`: the sentence templates (ids, kinds) and their dev/test split;
- `scenario`: a seeded scenario (2-3 people, 2 days) with its gold annotations;
- `render`: text-to-speech voices, face photos and the mp4 writer (also used by the demo assets);
- `score`: the matching rule and the metrics over a finished store;
- `drive`: running a scenario through the product (audio or gold transcript).
"""

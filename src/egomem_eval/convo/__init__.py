"""Spoken multi-day conversation scenarios (`egomem bench conversation`, `egomem data from-convo`).

- `bank`: the lists people are drawn from (names, jobs, cities, likes, dislikes, habits);
- `templates`: the sentence templates (ids, kinds) and their dev/test split;
- `scenario`: a seeded scenario (2-3 people, 2 days) with its gold annotations.
"""

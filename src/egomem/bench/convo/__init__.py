"""Running spoken multi-day conversation scenarios (egomem_eval.convo) for `egomem bench conversation`.

- `render`: text-to-speech voices, face photos and the mp4 writer (also used by the demo assets);
- `media`: a scenario's sessions as audio and video;
- `score`: the matching rule and the metrics over a finished store;
- `report`: the tables;
- `drive`: running a scenario through the product (audio or gold transcript).
"""

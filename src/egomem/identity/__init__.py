"""Identity: who is there. Key index over face/voice embeddings, thresholds, s-norm, fusion, enrollment."""

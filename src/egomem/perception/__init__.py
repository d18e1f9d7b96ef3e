"""Perception: raw media to embeddings and text (face detect+embed, VAD, speaker embedding, ASR)."""

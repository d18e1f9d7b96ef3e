"""Runtime: the EgoMem agent running retrieval, dialog and memory management concurrently."""

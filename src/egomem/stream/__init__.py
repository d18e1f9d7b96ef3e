"""Stream: the 80 ms step clock, ring buffers of the listening/speaking channels and video, and sources."""

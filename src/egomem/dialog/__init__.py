"""Dialog: the interface a full-duplex model implements, and the bundled responders."""

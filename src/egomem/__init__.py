"""egomem: a lifelong memory of people for full-duplex voice/vision assistants and robots.

Data flows one way: stream -> perception -> identity/retrieval -> dialog, and
stream -> memory -> store. See README.md for the architecture.
"""

__version__ = "0.1.0"

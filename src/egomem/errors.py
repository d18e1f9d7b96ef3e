"""Error types. Every user-facing failure is an EgomemError with a one-line message."""


class EgomemError(Exception):
    """Base class: the CLI prints `egomem: error: <message>` and exits non-zero."""


class ConfigError(EgomemError):
    """The configuration file or an EGOMEM_* variable is malformed."""


class StoreError(EgomemError):
    """The memory store cannot be opened or a write was refused."""


class StoreUnreachable(StoreError):
    """The database did not answer: the connection was lost (a restart, a crash) or cannot be made.
    Nothing of the failed operation is known to be applied; the next call reconnects, so a caller
    that holds a durable job waits this out instead of failing it."""


class NotFoundError(StoreError):
    """An id (user, fact, relation, episode, key) does not exist."""


class DimensionError(StoreError):
    """A vector does not have the dimension its model produces."""


class InputError(EgomemError):
    """Bad media or text input (corrupt image, unusable audio, malformed query)."""

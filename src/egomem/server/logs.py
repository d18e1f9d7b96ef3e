"""Log redaction: no API key reaches a log line, whatever logged it.

Keys travel in headers and WebSocket messages, never in URLs (server/deps.py), so an access
log should hold none; this filter is the safety net for a client that puts one in a URL anyway
(`?api_key=egm_...`) or a message that quotes one. It rewrites the record's message and its
arguments in place, keeping the arguments' shape (uvicorn's access formatter unpacks them).
"""

from __future__ import annotations

import logging
import re
from typing import Any

REDACTED = "[redacted]"
_PATTERNS = (
    re.compile(r"egm_[A-Za-z0-9_\-]{4,}"),  # egomem keys (tenants.py: "egm_" + urlsafe token)
    re.compile(r"(?<=[?&;])(?:api_key|apikey|key|token|access_token)=[^&\s\"']+", re.IGNORECASE),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/\-]+=*", re.IGNORECASE),
)
# The loggers a service writes through (uvicorn's access and error logs, the product's own).
SERVICE_LOGGERS = ("uvicorn", "uvicorn.access", "uvicorn.error", "egomem", "")


def redact(text: str) -> str:
    for pattern in _PATTERNS:
        if pattern.pattern.startswith("(?<=[?&;])"):
            text = pattern.sub(lambda m: m.group(0).split("=", 1)[0] + "=" + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _redact_arg(arg: Any) -> Any:
    return redact(arg) if isinstance(arg, str) else arg


class RedactKeys(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _redact_arg(v) for k, v in record.args.items()}
        return True


_FILTER = RedactKeys()


def install_redaction(names: tuple[str, ...] = SERVICE_LOGGERS) -> None:
    """Add the filter to these loggers and to their handlers (a logger's filter sees only the
    records logged on it, a handler's every record it writes, propagated ones included).
    Idempotent; call it after logging is configured (uvicorn.Config configures it)."""
    for name in names:
        logger = logging.getLogger(name)
        for target in (logger, *logger.handlers):
            if _FILTER not in target.filters:
                target.addFilter(_FILTER)

"""Structured logging: JSON lines to $GHOST_HOME/system/logs/ghost.jsonl plus a readable console.

Every decision worth tailing is one event with a stable name (`request`, `backend_ready`, ...). The file
is always JSON lines (one object per line, `ts` UTC ISO, `level`, `event`); the console is either the same
JSON or a human-readable rendering.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


class LogSink:
    """The final structlog processor: writes each event to the file and the console, then drops it.

    Writes are serialized by a lock because inference threads log too. The file is opened line-buffered
    in append mode so a crash loses at most the event being written.
    """

    def __init__(self, file_path: Path | None, console: IO[str] | None, console_format: str) -> None:
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        if file_path is not None:
            file_path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(file_path, "ab", buffering=0)  # noqa: SIM115 - lifetime = the sink's
        self._console = console
        self._console_format = console_format
        self._pretty = structlog.dev.ConsoleRenderer(colors=False, sort_keys=False)

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        line = orjson.dumps(event, default=str, option=orjson.OPT_APPEND_NEWLINE)
        with self._lock:
            if self._file is not None:
                self._file.write(line)
            if self._console is not None:
                if self._console_format == "json":
                    self._console.write(line.decode())
                else:
                    self._console.write(self._pretty(logger, method, dict(event)) + "\n")
        raise structlog.DropEvent

    def close(self) -> None:
        """Flush and close the file (console streams are not ours to close)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
            if self._console is not None:
                try:
                    self._console.flush()
                except (OSError, ValueError):
                    pass


_current_sink: LogSink | None = None


def configure_logging(
    file_path: Path | None,
    *,
    level: str = "info",
    console_format: str = "console",
    console: IO[str] | None = sys.stderr,
) -> LogSink:
    """Route structlog events to `file_path` (JSON lines) and `console`. Replaces any previous sink."""
    # Imported here, not at the top: distill/ imports this module for its loggers, and the redactor needs
    # nothing from this one, so a module-level import would only create a cycle waiting to happen.
    from ghost_agent.distill.redact import redact_event

    global _current_sink
    sink = LogSink(file_path, console, console_format)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            structlog.processors.format_exc_info,
            redact_event,  # user content (and upstream error text) is redacted before it reaches a file
            sink,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, 20)),
        logger_factory=structlog.ReturnLoggerFactory(),
        cache_logger_on_first_use=False,  # reconfigurable (tests build many apps in one process)
    )
    previous, _current_sink = _current_sink, sink
    if previous is not None:
        previous.close()
    return sink


def get_logger(name: str | None = None) -> Any:
    """A lazy structlog logger; `name` lands in the `component` field.

    Lazy on purpose: module-level loggers are created at import, before `configure_logging` runs, and
    must still pick up the configuration in force when they log.
    """
    return structlog.get_logger(component=name) if name else structlog.get_logger()


@contextlib.contextmanager
def warnings_to(stream: IO[str]) -> Iterator[None]:
    """For a CLI command: warnings and worse go to `stream` (never stdout, which carries the command's output)
    while inside. A caller that already configured logging (a daemon in the same process) keeps its setup."""
    if structlog.is_configured():
        yield
        return
    sink = configure_logging(None, level="warning", console=stream)
    try:
        yield
    finally:
        sink.close()
        structlog.reset_defaults()

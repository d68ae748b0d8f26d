"""Structured logging: JSON lines to $GHOST_HOME/system/logs/ghost.jsonl plus a readable console.

Every decision worth tailing is one event with a stable name (`request`, `backend_ready`, ...). The file
is always JSON lines (one object per line, `ts` UTC ISO, `level`, `event`); the console is either the same
JSON or a human-readable rendering.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import IO, Any

import orjson
import structlog

from ghost_agent.privacy.redact import redact_event

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


class LogSink:
    """The final structlog processor: writes each event to the file and the console, then drops it.

    Writes are serialized by a lock because inference threads log too. The file is opened unbuffered in
    append mode so a crash loses at most the event being written.

    Rotation: before each write the path is stat'ed. When it no longer names the open file (an external
    logrotate moved or deleted it) the file is reopened, as `logging.handlers.WatchedFileHandler` does; when
    the write would take it past `max_bytes` (> 0) it is rotated like `RotatingFileHandler`: ghost.jsonl.1 ..
    .N, newest first, `backups` of them kept (0 = the old log is discarded). Several processes may write the
    same file (the daemon, `prm train`): the size is the file's, not this process's count, and a rotation
    holds an exclusive lock on the old file and re-checks it, so two writers never rotate the same file twice.
    A failing reopen or rotation never raises into the caller: the event goes to the file still open.
    """

    def __init__(
        self,
        file_path: Path | None,
        console: IO[str] | None,
        console_format: str,
        *,
        max_bytes: int = 0,
        backups: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._path = file_path
        self._file: IO[bytes] | None = None
        self._file_id: tuple[int, int] | None = None
        self.max_bytes = max_bytes
        self.backups = backups
        if file_path is not None:
            file_path.parent.mkdir(parents=True, exist_ok=True)
            self._open()
        self._console = console
        self._console_format = console_format
        self._pretty = structlog.dev.ConsoleRenderer(colors=False, sort_keys=False)

    def _open(self) -> None:
        assert self._path is not None
        fh = open(self._path, "ab", buffering=0)  # noqa: SIM115 - lifetime = the sink's
        st = os.fstat(fh.fileno())
        if self._file is not None:
            self._file.close()
        self._file, self._file_id = fh, (st.st_dev, st.st_ino)

    def _path_stat(self) -> os.stat_result | None:
        assert self._path is not None
        try:
            return os.stat(self._path)
        except FileNotFoundError:
            return None

    def _prepare(self, size: int) -> None:
        """Reopen after an external rotation, rotate when this write would pass `max_bytes` (lock held)."""
        st = self._path_stat()
        if st is None or (st.st_dev, st.st_ino) != self._file_id:
            self._path.parent.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
            self._open()
            st = os.fstat(self._file.fileno())  # type: ignore[union-attr]
        if self.max_bytes > 0 and st.st_size > 0 and st.st_size + size > self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        assert self._path is not None and self._file is not None
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
        try:
            st = self._path_stat()
            if st is not None and (st.st_dev, st.st_ino) == self._file_id:  # nobody rotated it meanwhile
                if self.backups > 0:
                    for n in range(self.backups - 1, 0, -1):
                        older = self._path.with_name(f"{self._path.name}.{n}")
                        if older.exists():
                            os.replace(older, self._path.with_name(f"{self._path.name}.{n + 1}"))
                    os.replace(self._path, self._path.with_name(f"{self._path.name}.1"))
                else:
                    self._path.unlink()
        finally:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
        self._open()

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        line = orjson.dumps(event, default=str, option=orjson.OPT_APPEND_NEWLINE)
        with self._lock:
            if self._file is not None:
                try:
                    self._prepare(len(line))
                except OSError:
                    pass  # keep writing to the file still open; the next event tries again
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
    max_bytes: int = 0,
    backups: int = 0,
) -> LogSink:
    """Route structlog events to `file_path` (JSON lines) and `console`. Replaces any previous sink.

    `max_bytes` > 0 rotates the file at that size keeping `backups` old ones (see LogSink); an external
    rotation is followed either way."""
    global _current_sink
    sink = LogSink(file_path, console, console_format, max_bytes=max_bytes, backups=backups)
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

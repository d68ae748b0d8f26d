"""A minimal HTTP/1.1 keep-alive load generator on raw asyncio streams.

Deliberately tiny: the benchmark measures the daemon's added cost, so the client must cost as little as
possible and the same on both sides of the comparison. Supports Content-Length and chunked responses, and
records time to the first body byte that carries content (for SSE: the first `data:` event with text).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Sample:
    total_s: float
    first_byte_s: float
    status: int


@dataclass
class Result:
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0

    def latencies_ms(self) -> list[float]:
        return sorted(s.total_s * 1000 for s in self.samples)

    def first_bytes_ms(self) -> list[float]:
        return sorted(s.first_byte_s * 1000 for s in self.samples)

    @property
    def rps(self) -> float:
        return len(self.samples) / self.wall_s if self.wall_s else 0.0


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


class Connection:
    """One keep-alive connection issuing sequential POSTs."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\n{extra}Content-Length: "
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass

    async def post(self, body: bytes, content_marker: bytes | None = None) -> Sample:
        """Send one request; `content_marker` (e.g. b'"content":"') defines the first *content* byte."""
        assert self.reader is not None and self.writer is not None
        t0 = time.perf_counter()
        self.writer.write(self._head + str(len(body)).encode() + b"\r\n\r\n" + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = None
        chunked = False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        first: float | None = None
        if length is not None:
            await self.reader.readexactly(length)
            first = time.perf_counter()
        elif chunked:
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data = await self.reader.readexactly(size + 2)
                if first is None and (content_marker is None or content_marker in data):
                    first = time.perf_counter()
        end = time.perf_counter()
        return Sample(end - t0, (first or end) - t0, status)


async def run_load(
    url: str,
    body: bytes,
    *,
    requests: int,
    concurrency: int,
    headers: dict[str, str] | None = None,
    content_marker: bytes | None = None,
) -> Result:
    """Issue `requests` POSTs over `concurrency` keep-alive connections; returns per-request samples."""
    conns = [Connection(url, headers) for _ in range(concurrency)]
    await asyncio.gather(*(c.open() for c in conns))
    result = Result()
    remaining = [requests]

    async def worker(conn: Connection) -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            result.samples.append(await conn.post(body, content_marker))

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    result.wall_s = time.perf_counter() - t0
    await asyncio.gather(*(c.close() for c in conns))
    bad = [s.status for s in result.samples if s.status != 200]
    if bad:
        raise RuntimeError(f"{len(bad)} non-200 responses, e.g. {bad[:5]}")
    return result

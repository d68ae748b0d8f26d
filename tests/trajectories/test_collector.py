"""The trajectory store: layout, filters, laziness, get(), concurrency, corrupt lines, redaction, policies."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import orjson
import pytest
from structlog.testing import capture_logs

from ghost_agent.trajectories.collector import DURABILITY_POLICIES, TrajectoryCollector, session_file_name
from ghost_agent.trajectories.record import JSON, SCHEMA, Outcome, Trajectory
from tests.trajectories.trajhelp import all_files, file_of, make_traj, raw_lines, raw_records


class CountingCollector(TrajectoryCollector):
    """Records every file the reader opens (through the collector's read seam)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: list[Path] = []

    def _open_for_read(self, path: Path) -> IO[bytes]:
        self.opened.append(path)
        return super()._open_for_read(path)


def five_days(c: TrajectoryCollector) -> list[Trajectory]:
    """Two records a day on 2026-04-20 .. 24 (06:00 and 18:00 UTC), sources alternating."""
    out = []
    for d in range(20, 25):
        for hour, source in ((6, "chat"), (18, "self_play")):
            t = make_traj(f"2026-04-{d}T{hour:02d}:00:00+00:00", session=f"s{d}", source=source)
            c.append(t)
            out.append(t)
    return out


# ----------------------------------------------------------------------------- layout


def test_append_writes_one_schema_line_under_the_utc_day(collector: TrajectoryCollector, root: Path) -> None:
    traj = make_traj("2026-04-26T23:30:00-02:00", session="abc")
    collector.append(traj)
    path = root / "2026-04-27" / "session-abc.jsonl"
    assert all_files(root) == [path]
    (record,) = raw_records(path)
    assert record["schema"] == SCHEMA and record["id"] == traj.id and record["ts"] == traj.ts
    assert path.read_bytes().endswith(b"\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_records_of_one_session_share_a_file_per_day(collector: TrajectoryCollector, root: Path) -> None:
    for ts in ("2026-04-26T01:00:00Z", "2026-04-26T02:00:00Z", "2026-04-27T00:00:00Z"):
        collector.append(make_traj(ts, session="same"))
    collector.append(make_traj("2026-04-26T03:00:00Z", session="other"))
    assert [p.relative_to(root).as_posix() for p in all_files(root)] == [
        "2026-04-26/session-other.jsonl",
        "2026-04-26/session-same.jsonl",
        "2026-04-27/session-same.jsonl",
    ]
    assert len(raw_lines(root / "2026-04-26" / "session-same.jsonl")) == 2


@pytest.mark.parametrize("session", ["../../etc/passwd", "/abs/path", "..", ".hidden", "a\x00b", "é/ü", ""])
def test_session_ids_cannot_escape_the_day_directory(collector: TrajectoryCollector, root: Path, session: str) -> None:
    collector.append(make_traj(session=session))
    (path,) = all_files(root)
    assert path.parent == root / "2026-04-26"
    assert path.name.startswith("session-") and "/" not in path.name[len("session-"):]
    assert list(collector.iter_trajectories())[0].session_id == (session or "default")


def test_distinct_unsafe_session_ids_stay_in_distinct_files() -> None:
    names = {session_file_name(s) for s in ("a/b", "a_b", "a:b", "a b")}
    assert len(names) == 4
    assert session_file_name("abc-1.2_x") == "session-abc-1.2_x.jsonl"
    assert len(session_file_name("x" * 5000)) < 120


def test_bad_ts_raises_before_anything_is_written(collector: TrajectoryCollector, root: Path) -> None:
    with pytest.raises(ValueError):
        collector.append(make_traj("yesterday"))
    assert all_files(root) == []


def test_disabled_collector_creates_nothing(root: Path) -> None:
    c = TrajectoryCollector(root, enabled=False)
    traj = make_traj()
    c.append(traj)
    c.update_outcome(traj.id, Outcome.FAILED, "nope", source="user_correction")
    c.flush()
    c.close()
    assert not root.exists()
    assert list(c.iter_trajectories()) == [] and c.get(traj.id) is None


def test_invalid_durability_is_refused(root: Path) -> None:
    with pytest.raises(ValueError, match="durability"):
        TrajectoryCollector(root, durability="sometimes")


@pytest.mark.parametrize("durability", DURABILITY_POLICIES)
def test_every_durability_policy_stores_and_reads_back(root: Path, durability: str) -> None:
    c = TrajectoryCollector(root, durability=durability)
    trajs = [make_traj(f"2026-04-2{d}T10:00:00Z", session=f"s{d}") for d in range(3)]
    for t in trajs:
        c.append(t)
    c.flush()
    c.close()
    c.close()  # idempotent
    extra = make_traj("2026-04-23T10:00:00Z")
    c.append(extra)  # usable after close: reopens
    c.close()
    assert [t.id for t in c.iter_trajectories()] == [t.id for t in [*trajs, extra]]


def test_descriptor_cache_is_bounded(root: Path) -> None:
    with TrajectoryCollector(root, max_open_files=8) as c:
        for n in range(40):
            c.append(make_traj(session=f"s{n}"))
            assert c.open_files <= 8
        for n in range(40):  # evicted files are reopened and appended to, not truncated
            c.append(make_traj(session=f"s{n}"))
    assert len(all_files(root)) == 40
    assert all(len(raw_lines(p)) == 2 for p in all_files(root))


# ----------------------------------------------------------------------------- reading and filters


def test_iteration_order_is_day_then_file_then_line(collector: TrajectoryCollector) -> None:
    later = make_traj("2026-04-21T00:00:00Z", session="a")
    b1 = make_traj("2026-04-20T09:00:00Z", session="b")
    a1 = make_traj("2026-04-20T10:00:00Z", session="a")
    b2 = make_traj("2026-04-20T08:00:00Z", session="b")
    for t in (later, b1, a1, b2):
        collector.append(t)
    assert [t.id for t in collector.iter_trajectories()] == [a1.id, b1.id, b2.id, later.id]


def test_since_until_source_outcome_filters(collector: TrajectoryCollector) -> None:
    trajs = five_days(collector)
    ids = [t.id for t in trajs]

    def got(**kw: Any) -> list[str]:
        return [t.id for t in collector.iter_trajectories(**kw)]

    assert got() == ids
    assert got(since="2026-04-22") == ids[4:]
    assert got(until="2026-04-21") == ids[:4]  # a bare date covers its whole day
    assert got(since="2026-04-21", until="2026-04-21") == ids[2:4]
    assert got(since="2026-04-21T12:00:00Z") == ids[3:]  # boundary day filtered per record
    assert got(until="2026-04-23T06:00:00+00:00") == ids[:7]  # a timestamp bound is inclusive
    assert got(since=datetime(2026, 4, 22, 7, tzinfo=timezone.utc), until=datetime(2026, 4, 23, 7)) == ids[5:7]
    assert got(source="self_play") == ids[1::2]
    assert got(source="chat", since="2026-04-24") == [ids[8]]
    assert got(outcome="unknown") == ids and got(outcome=Outcome.FAILED) == []
    assert got(since="2026-05-01") == [] and got(until="2026-01-01") == []


@pytest.mark.parametrize(
    "kwargs", [{"source": "telepathy"}, {"outcome": "meh"}, {"since": "last tuesday"}, {"until": 42}]
)
def test_bad_filters_raise_up_front(collector: TrajectoryCollector, kwargs: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError)):
        collector.iter_trajectories(**kwargs)


def test_older_day_directories_are_never_opened(root: Path) -> None:
    c = CountingCollector(root)
    trajs = five_days(c)
    # A FIFO in an old day would hang any reader that opened it: proof by construction on top of the count.
    os.mkfifo(root / "2026-04-20" / "session-trap.jsonl")
    c.opened.clear()
    got = [t.id for t in c.iter_trajectories(since="2026-04-23")]
    assert got == [t.id for t in trajs[6:]]
    assert {p.parent.name for p in c.opened} == {"2026-04-23", "2026-04-24"}
    assert c.iter_days(since="2026-04-23") == ["2026-04-23", "2026-04-24"]
    assert c.iter_days(until="2026-04-20T23:59:59Z") == ["2026-04-20"]
    c.opened.clear()
    assert len(list(c.iter_trajectories(until="2026-04-20"))) == 2  # the FIFO is not a regular file: skipped
    assert {p.parent.name for p in c.opened} == {"2026-04-20"}
    assert c.corrupt_lines == 0


def test_iteration_is_lazy_one_file_at_a_time(root: Path) -> None:
    c = CountingCollector(root)
    five_days(c)
    it = c.iter_trajectories()
    assert c.opened == []  # nothing happens before the first next()
    first = next(it)
    assert first.ts.startswith("2026-04-20") and len(c.opened) == 1
    it.close()  # type: ignore[attr-defined]
    assert len(c.opened) == 1


def test_non_day_entries_in_the_root_are_ignored(collector: TrajectoryCollector, root: Path) -> None:
    collector.append(make_traj())
    (root / "notes").mkdir()
    (root / "2026-13-99x").mkdir()
    (root / "2026-04-25").write_text("a file, not a directory")
    (root / "2026-04-26" / "README.txt").write_text("ignored")
    (root / "2026-04-26" / "session-dir.jsonl").mkdir()
    assert len(list(collector.iter_trajectories())) == 1
    assert collector.corrupt_lines == 0


def test_get_finds_a_record_and_applies_the_overlay(collector: TrajectoryCollector) -> None:
    trajs = five_days(collector)
    target = trajs[3]
    decoy = make_traj("2026-04-24T20:00:00Z", request=f"what happened in {target.id}?")
    collector.append(decoy)
    assert collector.get(target.id) == target
    collector.update_outcome(target.id, "failed", "user said it was wrong", source="user_correction")
    got = collector.get(target.id)
    assert got is not None and got.outcome is Outcome.FAILED and got.failure_reason == "user said it was wrong"
    assert collector.get("0" * 32) is None


# ----------------------------------------------------------------------------- concurrency


def test_eight_threads_appending_never_interleave(root: Path) -> None:
    c = TrajectoryCollector(root, max_open_files=4)
    # Big records (beyond PIPE_BUF) to one shared file and a few others, with eviction churn.
    payloads = ["x" * (n % 7 * 2000) for n in range(7)]

    def worker(w: int) -> None:
        for n in range(500):
            session = "shared" if n % 2 else f"w{w}-{n % 5}"
            c.append(make_traj(session=session, payload=payloads[n % 7], extra={"w": w, "n": n}))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c.close()
    lines = [line for p in all_files(root) for line in raw_lines(p)]
    assert len(lines) == 4000
    records = [orjson.loads(line) for line in lines]  # every line is one whole JSON object
    assert len({r["id"] for r in records}) == 4000
    assert {(r["extra"]["w"], r["extra"]["n"]) for r in records} == {(w, n) for w in range(8) for n in range(500)}
    assert sum(1 for _ in c.iter_trajectories()) == 4000 and c.corrupt_lines == 0


async def test_fifty_asyncio_tasks_appending_never_interleave(root: Path) -> None:
    c = TrajectoryCollector(root)

    async def task(k: int) -> None:
        for n in range(20):
            t = make_traj(session=f"t{k % 3}", payload="y" * (k * 97), extra={"k": k, "n": n})
            if n % 2:
                await c.aappend(t)
            else:
                c.append(t)
            await asyncio.sleep(0)

    await asyncio.gather(*(task(k) for k in range(50)))
    c.close()
    records = [orjson.loads(line) for p in all_files(root) for line in raw_lines(p)]
    assert len(records) == 1000
    assert {(r["extra"]["k"], r["extra"]["n"]) for r in records} == {(k, n) for k in range(50) for n in range(20)}


# ----------------------------------------------------------------------------- corrupt and torn lines


def write_garbage(path: Path, torn_tail: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(b"not json at all\n")
        fh.write(b"[1, 2, 3]\n")
        fh.write(b'{"schema": "ghost.prm.logreg.v1", "id": "abc"}\n')
        fh.write(b'{"schema": "ghost.trajectory.v1", "session_id": "s1"}\n')
        fh.write(b'{"schema": "ghost.trajectory.v1", "id": "bad-steps", "steps": [{"i": "not-an-int"}]}\n')
        fh.write(b"\n")  # a blank line is not counted
        fh.write(torn_tail)


def test_corrupt_lines_and_a_torn_tail_are_skipped_counted_and_logged_once(
    collector: TrajectoryCollector,
) -> None:
    good = [make_traj(f"2026-04-26T0{n}:00:00Z") for n in range(3)]
    for t in good:
        collector.append(t)
    path = file_of(collector, good[0])
    write_garbage(path, torn_tail=good[0].to_json()[:200])  # a crash mid-line: no newline, half a record
    with capture_logs() as logs:
        got = [t.id for t in collector.iter_trajectories()]
        again = [t.id for t in collector.iter_trajectories()]
    assert got == again == [t.id for t in good]
    assert collector.corrupt_lines == 6
    events = [e for e in logs if e["event"] == "trajectory_corrupt_line"]
    assert len(events) == 1  # once per file, not once per line nor once per scan
    assert events[0]["file"] == str(path) and events[0]["count"] == 6


def test_an_append_after_a_torn_tail_stays_whole(collector: TrajectoryCollector) -> None:
    first = make_traj("2026-04-26T01:00:00Z")
    collector.append(first)
    path = file_of(collector, first)
    with open(path, "ab") as fh:
        fh.write(first.to_json()[:100])  # another writer died mid-line
    after = make_traj("2026-04-26T02:00:00Z")
    collector.append(after)
    assert [t.id for t in collector.iter_trajectories()] == [first.id, after.id]
    assert collector.corrupt_lines == 1
    assert raw_lines(path)[1] == first.to_json()[:100]


def test_unreadable_files_are_skipped_without_raising(root: Path) -> None:
    c = TrajectoryCollector(root)
    c.append(make_traj(session="ok"))
    c.close()

    class Failing(TrajectoryCollector):
        def _open_for_read(self, path: Path) -> IO[bytes]:
            raise PermissionError(13, "Permission denied", str(path))

    with capture_logs() as logs:
        assert list(Failing(root).iter_trajectories()) == []
    assert [e["event"] for e in logs] == ["trajectory_file_unreadable"]


# ----------------------------------------------------------------------------- redaction


SECRETS = {
    "openai": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3,
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "email": "alice.liddell@example.com",
    "home": "/home/alice/",
    "users": "/Users/bob/",
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlMTIzNDU2",
}


def test_redaction_runs_on_every_string_before_disk(collector: TrajectoryCollector, root: Path) -> None:
    traj = make_traj(
        session=SECRETS["email"],
        request=f"my key is {SECRETS['openai']} and mail {SECRETS['email']}",
        router={"decision": "agent", "note": SECRETS["github"]},
        extra={"headers": {"Authorization": SECRETS["bearer"]}},
    )
    traj.steps[0].tool_args = {"path": SECRETS["home"] + "project/main.py", "nested": [{"k": SECRETS["github"]}]}
    traj.steps[1].result_preview = f"cat {SECRETS['users']}notes.txt"
    traj.final_response = f"Done, {SECRETS['email']}."
    collector.append(traj)
    collector.update_outcome(traj.id, "failed", f"user {SECRETS['email']} said no", source="user_correction")
    collector.close()
    for path in all_files(root):
        data = path.read_bytes()
        for secret in SECRETS.values():
            assert secret.encode() not in data, (path.name, secret)
        assert SECRETS["email"] not in str(path)  # not even in the file name
        assert b"REDACTED" in data or b"<user>" in data
    (stored,) = collector.iter_trajectories()
    assert stored.id == traj.id and stored.ts == traj.ts  # structural fields survive redaction
    assert "project/main.py" in orjson.dumps(stored.to_dict()).decode()  # the rest of the path is kept


def test_structural_fields_survive_any_redactor(root: Path) -> None:
    def scorched_earth(record: JSON) -> JSON:
        return {k: ("X" if isinstance(v, str) else v) for k, v in record.items()}

    c = TrajectoryCollector(root, redactor=scorched_earth)
    traj = make_traj()
    c.append(traj)
    (stored,) = c.iter_trajectories()
    assert (stored.id, stored.ts, stored.user_request) == (traj.id, traj.ts, "X")


def test_a_failing_redactor_writes_nothing(root: Path) -> None:
    def broken(record: JSON) -> JSON:
        raise RuntimeError("redactor bug")

    c = TrajectoryCollector(root, redactor=broken)
    with pytest.raises(RuntimeError):
        c.append(make_traj())
    assert all_files(root) == []

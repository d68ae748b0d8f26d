"""The correction-transfer driver ("does it learn?", issue 13): teach a daemon a convention by correcting it
once, then check whether fresh requests of the same kind follow it — and unrelated ones are unchanged.

For each family of `eval/suites/transfer.py`:

1. **before** — every probe (the family's and the controls) in a fresh session of its own: no lessons;
2. **teach** — the teaching request in the family's session (`x-ghost-session-id`), answered the default way;
3. **correct** — once the daemon has recorded the teaching turn (a user reads the reply first: the
   correction check finds the turn by its recorded reply), the conversation so far plus the user's
   correction, as a client sends it; the daemon marks the teaching turn FAILED and reflects on it in the
   background;
4. **wait** — until the reflection is done: `GET /v1/ghost/status?refresh=true` (the corrections and
   reflection counts), and, when the daemon's home is readable here, its lesson store (the lesson written from
   the teaching turn) — so a missed correction is known at once and a lesson is never waited for in vain;
5. **after** — the family's probes and the controls (probes of other families), each as a new conversation
   in the taught session, where the daemon shows the session's lessons.

The daemon is only observed: nothing here changes how it answers. Requests go one at a time (one model);
the whole run is loopback-only (`eval/transfer_client.py`) and inside the eval's egress guard. `run_transfer`
never raises for a failed request (it is a failed probe with its error); `RunnerError` means the daemon cannot
be used at all.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ghost_agent import __version__
from ghost_agent.eval.content import get_content_check
from ghost_agent.eval.conventions import get_check
from ghost_agent.eval.suites.transfer import Family, Probe
from ghost_agent.eval.transfer_client import ChatReply, Counts, HomeStore, TransferClient
from ghost_agent.eval.transfer_report import (
    LESSON_MISSED,
    LESSON_NONE,
    LESSON_STORED,
    LESSON_TEACH_FAILED,
    LESSON_TIMEOUT,
    FamilyRun,
    LessonWait,
    TransferResult,
    TurnRun,
)
from ghost_agent.jsonsafe import JSON
from ghost_agent.logging import get_logger

log = get_logger("eval.transfer")

Progress = Callable[[str], None]

DEFAULT_LESSON_TIMEOUT_S = 300.0
DEFAULT_POLL_S = 1.0
DEFAULT_CONTROLS = 2
HOME_CHECK_S = 5.0  # how long the teaching turn's record may take to appear in the daemon's home
DEFAULT_CORRECTION_DELAY_S = 1.0  # a user reads the reply before correcting it


def control_probes(family: Family, pool: Sequence[Family], n: int) -> list[Probe]:
    """`n` probes of other families of `pool` as controls for `family`: counting on from the family in suite
    order, the third family, then every third one after it (so next-door families, which may be related, come
    last); a different probe of each."""
    ids = [f.id for f in pool]
    start = ids.index(family.id) if family.id in ids else -1
    others = [pool[(start + k) % len(pool)] for k in range(1, len(pool) + 1)]
    others = [f for f in others if f.id != family.id]
    picked: list[Family] = []
    index = 2
    while len(picked) < min(n, len(others)):
        candidate = others[index % len(others)]
        if any(f.id == candidate.id for f in picked):
            index += 1
            continue
        picked.append(candidate)
        index += 3
    return [f.probes[(max(start, 0) + j) % len(f.probes)] for j, f in enumerate(picked)]


def _session_part(text: str) -> str:
    return text.replace("/", ".").replace(" ", "-")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class TransferDriver:
    """Runs the suite against one daemon (see the module doc). `store` (optional) is the daemon's home."""

    def __init__(
        self,
        client: TransferClient,
        families: Sequence[Family],
        *,
        pool: Sequence[Family] | None = None,
        store: HomeStore | None = None,
        probes_per_family: int | None = None,
        controls_per_family: int = DEFAULT_CONTROLS,
        lesson_timeout_s: float = DEFAULT_LESSON_TIMEOUT_S,
        poll_s: float = DEFAULT_POLL_S,
        correction_delay_s: float = DEFAULT_CORRECTION_DELAY_S,
        progress: Progress | None = None,
        run_id: str | None = None,
    ) -> None:
        if not families:
            raise ValueError("no families to run")
        self.client, self.families = client, list(families)
        self.pool = list(pool) if pool is not None else self.families
        self.store = store
        self.store_note = "not given" if store is None else "not checked yet"
        self.probes_per_family = probes_per_family
        self.controls_per_family = controls_per_family
        self.lesson_timeout_s, self.poll_s = lesson_timeout_s, poll_s
        self.correction_delay_s = correction_delay_s
        self.progress = progress or (lambda line: None)
        self.run_id = run_id or f"transfer-{secrets.token_hex(4)}"
        self._by_probe = {p.id: f for f in self.pool for p in (f.teach, *f.probes)}
        self._by_probe.update({p.id: f for f in self.families for p in (f.teach, *f.probes)})

    def probes_of(self, family: Family) -> list[Probe]:
        """The family's probes in this run (the first `probes_per_family`)."""
        return list(family.probes[: self.probes_per_family] if self.probes_per_family else family.probes)

    def controls_of(self, family: Family) -> list[Probe]:
        """The control probes asked in the family's session after learning."""
        return control_probes(family, self.pool, self.controls_per_family)

    # ---- one request --------------------------------------------------------------------------------------

    async def _ask(self, probe: Probe, *, role: str, phase: str, session: str, messages: list[JSON]) -> TurnRun:
        family = self._by_probe[probe.id]
        reply = await self.client.chat(session, messages)
        content: bool | None = None
        content_reason = ""
        if reply.error is not None:
            passed, reason = False, "no reply"
        else:
            verdict = get_check(family.check)(reply.text, probe.expected)
            passed, reason = verdict.passed, verdict.reason
            graded = get_content_check(family.check)(reply.text, probe.expected)
            content, content_reason = graded.passed, graded.reason
        run = TurnRun(probe_id=probe.id, family=family.id, role=role, phase=phase, session=session,
                      prompt=str(messages[-1]["content"]), passed=passed, reason=reason, reply=reply.text,
                      trajectory_id=reply.trajectory_id, error=reply.error, duration_ms=round(reply.duration_ms, 1),
                      content=content, content_reason=content_reason)
        verdict_text = "PASS" if passed else "FAIL"
        why = f"  ({run.error or reason})" if not passed else ""
        if content is False:
            why += f"  [content: {content_reason}]"
        self.progress(f"[{phase:<6}] {role:<10} {probe.id:<34} {verdict_text}  {reply.duration_ms / 1000:6.1f}s{why}")
        return run

    async def _probe(self, probe: Probe, *, role: str, phase: str, session: str) -> TurnRun:
        return await self._ask(probe, role=role, phase=phase, session=session,
                               messages=[{"role": "user", "content": probe.prompt}])

    # ---- the lesson wait ----------------------------------------------------------------------------------

    async def _settle(self, teach: TurnRun) -> None:
        """Let the daemon finish recording the teaching turn before the correction, as a user reading the
        reply would: the correction check finds the turn by its recorded reply. With a home store, wait until
        the turn is on disk (which also proves the store is the daemon's; otherwise it is dropped); then pause
        `correction_delay_s`."""
        store = self.store
        if store is not None and teach.trajectory_id:
            deadline = time.monotonic() + HOME_CHECK_S
            while not await asyncio.to_thread(store.has_trajectory, teach.trajectory_id):
                if time.monotonic() >= deadline:
                    self.store_note = (f"not the daemon's home (turn {teach.trajectory_id} is not recorded in "
                                       f"{store.home.root})")
                    self.progress(f"home store: {self.store_note}; watching /v1/ghost/status only")
                    self.store = None
                    break
                await asyncio.sleep(0.05)
            else:
                self.store_note = "used"
        await asyncio.sleep(self.correction_delay_s)

    async def _wait_for_lesson(self, teach: TurnRun, baseline: Counts | None) -> LessonWait:
        t0 = time.monotonic()
        teach_id = teach.trajectory_id or ""
        store = self.store

        def waited() -> float:
            return round(time.monotonic() - t0, 2)

        if store is not None:
            taken = await asyncio.to_thread(store.corrected, teach_id)
        else:
            now = await self.client.counts()
            # without either source there is nothing to tell by: wait for the reflection
            taken = now.corrections > baseline.corrections if now is not None and baseline is not None else True
        if not taken:
            return LessonWait(LESSON_MISSED, waited(), detail="the daemon did not take the message as a correction")
        while True:
            if store is not None:
                found = await asyncio.to_thread(store.lesson_from, teach_id)
                if found is not None:
                    return LessonWait(LESSON_STORED, waited(), lesson_id=found[0], text=found[1])
            counts = await self.client.counts()
            if counts is not None and baseline is not None and counts.reflections > baseline.reflections:
                if store is not None:
                    found = await asyncio.to_thread(store.lesson_from, teach_id)
                    if found is not None:
                        return LessonWait(LESSON_STORED, waited(), lesson_id=found[0], text=found[1])
                    reason = await asyncio.to_thread(store.no_lesson_reason, teach_id)
                    return LessonWait(LESSON_NONE, waited(), detail=reason or "the reflection stored no lesson")
                if counts.lessons > baseline.lessons:
                    return LessonWait(LESSON_STORED, waited(), detail="seen in the lesson count")
                return LessonWait(LESSON_NONE, waited(),
                                  detail="a reflection was recorded; the lesson count did not grow")
            if counts is None and store is not None:  # no status route: the reflection's record says it
                reason = await asyncio.to_thread(store.no_lesson_reason, teach_id)
                if reason:
                    return LessonWait(LESSON_NONE, waited(), detail=reason)
            if time.monotonic() - t0 >= self.lesson_timeout_s:
                return LessonWait(LESSON_TIMEOUT, waited(), detail=f"no reflection within {self.lesson_timeout_s:g}s")
            await asyncio.sleep(self.poll_s)

    # ---- one family ---------------------------------------------------------------------------------------

    async def learn(self, family: Family) -> FamilyRun:
        """Teach, correct, wait for the lesson, then ask the probes and the controls in the taught session."""
        session = f"{self.run_id}-{_session_part(family.id)}"
        baseline = await self.client.counts()
        teach = await self._probe(family.teach, role="teach", phase="learn", session=session)
        correction: TurnRun | None = None
        if teach.error is not None or not teach.reply.strip():
            lesson = LessonWait(LESSON_TEACH_FAILED, detail=f"teaching turn: {teach.error or 'empty reply'}")
        else:
            await self._settle(teach)
            messages = [{"role": "user", "content": family.teach.prompt},
                        {"role": "assistant", "content": teach.reply},
                        {"role": "user", "content": family.correction}]
            correction = await self._ask(family.teach, role="correction", phase="learn", session=session,
                                         messages=messages)
            if correction.error is not None:
                lesson = LessonWait(LESSON_TEACH_FAILED, detail=f"correcting turn: {correction.error}")
            else:
                lesson = await self._wait_for_lesson(teach, baseline)
        self.progress(f"[lesson] {family.id:<16} {lesson.status} after {lesson.seconds:.1f}s"
                      + (f": {lesson.text[:100]}" if lesson.text else f" ({lesson.detail})" if lesson.detail else ""))
        run = FamilyRun(family=family.id, convention=family.convention, session=session, teach=teach,
                        correction=correction, lesson=lesson)
        for probe in self.probes_of(family):
            run.probes.append(await self._probe(probe, role="probe", phase="after", session=session))
        for probe in self.controls_of(family):
            run.controls.append(await self._probe(probe, role="control", phase="after", session=session))
        return run

    # ---- the whole run ------------------------------------------------------------------------------------

    def before_probes(self) -> list[Probe]:
        """Every probe asked before learning: each family's, then the controls not already among them."""
        seen: dict[str, Probe] = {}
        for family in self.families:
            for probe in self.probes_of(family) + self.controls_of(family):
                seen.setdefault(probe.id, probe)
        return list(seen.values())

    async def run(self) -> TransferResult:
        """Describe the daemon, run the before phase, then each family; the result with its metadata."""
        started, t0 = _now(), time.perf_counter()
        meta: JSON = dict(await self.client.describe())
        before: dict[str, TurnRun] = {}
        for probe in self.before_probes():
            session = f"{self.run_id}-before-{_session_part(probe.id)}"
            before[probe.id] = await self._probe(probe, role="probe", phase="before", session=session)
        runs = [await self.learn(family) for family in self.families]
        result = TransferResult(before=before, families=runs, metadata=meta)
        await self._fill_lessons_shown(result)
        meta.update(
            suite="transfer", run_id=self.run_id, families=[f.id for f in self.families],
            probes_per_family=self.probes_per_family, controls_per_family=self.controls_per_family,
            lesson_timeout_s=self.lesson_timeout_s, timeout_s=self.client.timeout_s, home_store=self.store_note,
            harness_version=__version__, started_at=started, finished_at=_now(),
            duration_s=round(time.perf_counter() - t0, 3),
        )
        totals = result.totals()
        log.info("eval_transfer_done", families=len(runs), before=str(totals["before"]), after=str(totals["after"]),
                 controls_before=str(totals["controls_before"]), controls_after=str(totals["controls_after"]))
        return result

    async def _fill_lessons_shown(self, result: TransferResult) -> None:
        store = self.store
        if store is None:
            return
        runs = [*result.before.values()]
        for family in result.families:
            runs += [family.teach, *([family.correction] if family.correction else []), *family.probes,
                     *family.controls]
        for run in runs:
            if run.trajectory_id:
                run.lessons_shown = await asyncio.to_thread(store.lessons_shown, run.trajectory_id)


async def run_transfer(
    client: TransferClient,
    families: Sequence[Family],
    *,
    store: HomeStore | None = None,
    **options: Any,
) -> TransferResult:
    """Run the correction-transfer suite (`TransferDriver`, options as its keyword arguments) inside the eval's
    egress guard: any connection off the machine raises NetworkEgressError."""
    from ghost_agent.eval.network_guard import no_external_network

    with no_external_network():
        return await TransferDriver(client, families, store=store, **options).run()


__all__ = [
    "DEFAULT_CONTROLS",
    "DEFAULT_LESSON_TIMEOUT_S",
    "DEFAULT_POLL_S",
    "ChatReply",
    "Counts",
    "HomeStore",
    "TransferClient",
    "TransferDriver",
    "control_probes",
    "run_transfer",
]

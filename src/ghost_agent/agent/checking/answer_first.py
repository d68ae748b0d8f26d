"""The answer-first agent turn: draft the reply as the bare model would, then use the sandbox to check and
repair it.

Measured on the embedded 1.5B, the model writes good direct answers but follows a JSON action protocol poorly
(it ran code when asked to write it, leaked action JSON, looped). So the turn starts from the model's own direct
answer — the client's messages exactly as the fast path would send them — and adds only what execution can
decide (`text/request_kind.py` says which):

- **code requests**: the answer's Python code runs against the request's own examples and against assertions the model
  wrote from the spec (`agent/checking/code_tests.py`); on a failure the model sees only the failing cases and revises
  once, then a fresh candidate is sampled if it still fails; the candidate that passes most (the user's examples
  first) wins, and the draft stays when nothing beats it. The reply keeps the code — never its output. Code in
  another language (a SQL query, a regex, a shell line) is not run: the draft stands.
- **quantitative questions**: the number is computed by a program (the draft's own, else one the model writes:
  program of thought); when it disagrees with the draft's number a second sampled program votes, and only
  when it agrees with the first program is the answer rewritten to follow the program and its real output.
  A question whose answer is a date or a weekday ("what date is 100 days after …") is computed the same way,
  the program asked to print the date, and compared as a date (`text/dates.py`), never as its numbers.
- **code with a claimed output** ("Output: 5050"): the code is run and the answer rewritten from the real
  output when they disagree.
- **the requested form** (`agent/checking/form.py`): an `Answer: <n>` line, only JSON, just the number… — a
  deterministic check, then a deterministic fix or one short model call; the content is never rewritten for form.
- **the user's stated preferences** (`agent/checking/preference_follow.py`), when a preference lesson was shown: those
  of a known kind by rule, the others by one rewrite call kept only when it broke nothing, then a check and one
  repair.

Every later step is best-effort: a backend failure after the draft keeps the best answer so far. Each sandbox
run is a recorded step (`source` "check"), each model call counts in `llm_calls` and `usage`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ghost_agent.agent.checking import claims, code_tests, form
from ghost_agent.agent.checking.preference_follow import PreferenceFollower
from ghost_agent.agent.compat import structured
from ghost_agent.agent.strategy import (
    CaseTally,
    CodeOutcome,
    Computed,
    ComputedDay,
    LoopResult,
    LoopRun,
    ModelCall,
    StrategyContext,
    evidence_of,
    message_of,
)
from ghost_agent.agent.tool_loop.prompting import content_text, direct_messages
from ghost_agent.jsonsafe import JSON
from ghost_agent.llm.base import BackendError, LLMBackend
from ghost_agent.logging import get_logger
from ghost_agent.memory.bus import strip_notes_echo
from ghost_agent.privacy.redact import redact_text
from ghost_agent.text import dates
from ghost_agent.text.inline_data import find_inline_data
from ghost_agent.text.prompts import load_prompt
from ghost_agent.text.request_kind import RequestKind
from ghost_agent.tools.base import cap_text, one_line, preview_text
from ghost_agent.tools.registry import ToolRegistry
from ghost_agent.trajectories.record import Step

log = get_logger("agent.answer_first")
T = TypeVar("T")

# Client parameters the draft keeps: it is the bare model's answer, so it is generated as the client asked.
DRAFT_PARAMS = ("temperature", "top_p", "seed", "stop", "max_tokens", "max_completion_tokens",
                "presence_penalty", "frequency_penalty", "logit_bias", "response_format", "logprobs", "top_logprobs")
# What bounds every call whose text can become the reply (revisions, rewrites, form fixes), not only the draft.
BOUND_PARAMS = ("stop",)
OUTPUT_CHARS = 1500  # real output shown to the model when it rewrites an answer
SHORT_FORMS = frozenset({"answer_line", "number_only", "yes_no", "one_word"})
SHORT_FIXUP_TOKENS = 48
DRAFT_RECORD_CHARS = 2000  # a revised turn records the start of its draft


@dataclass
class CheckConfig:
    """How hard the turn checks a draft.

    `model_tests`: assertions asked of the model for a code answer whose request has no examples of its own
    (0 = never);
    `revisions`: repair rounds after a failed check; `samples`: fresh candidates sampled (at
    `sample_temperature`) when the repaired answer still fails; `compute`: write and run a program for
    quantitative questions the draft answered without code; `preferences`: rewrite the finished reply to follow
    the user's stated preferences shown to the turn; `rules`: apply those of a known kind by rule instead.
    """

    model: str | None = None
    max_tokens: int = 1024
    check_max_tokens: int = 400
    model_tests: int = 5
    revisions: int = 1
    samples: int = 1
    sample_temperature: float = 0.8
    compute: bool = True
    preferences: bool = True
    rules: bool = True


@dataclass
class _Candidate:
    text: str
    report: code_tests.CheckReport
    origin: str


class AnswerFirst:
    """Runs answer-first turns over `backend`, executing checks with the `python` tool of `registry`."""

    def __init__(self, backend: LLMBackend, registry: ToolRegistry, config: CheckConfig) -> None:
        self.backend = backend
        self.registry = registry
        self.config = config
        self._reply_max_tokens = config.max_tokens
        self._bounds: JSON = {}
        self._draft_logprobs: Any = None
        self._preferences = PreferenceFollower(self._text, self._complete, self._reply_bounds, config.rules)

    async def run(self, ctx: StrategyContext) -> LoopResult:
        """Draft (with the client's sampling parameters, `ctx.client_body`), check by the request's kind, repair,
        fix the form, apply the user's stated preferences (`ctx.preferences`). A BackendError on the draft
        propagates (nothing to answer with); after it, failures keep the best answer so far."""
        started = time.perf_counter()
        tool_ctx, user_request, kind = ctx.tool_ctx, ctx.user_request, ctx.kind
        draft_messages = direct_messages(ctx.extra_system, ctx.messages, ctx.notes)
        run = LoopRun(conversation=draft_messages, tool_ctx=tool_ctx, user_request=user_request, on_event=ctx.on_event)
        draft_body = {k: v for k, v in ctx.client_body.items() if k in DRAFT_PARAMS}
        self._bound_replies(draft_body)
        draft = await self._text("draft", run, draft_messages, keep_logprobs=True, **draft_body)
        if ctx.notes:
            draft = strip_notes_echo(draft)  # a small model may echo the notes block it was shown
        final, value = draft, None
        response_format = draft_body.get("response_format")
        if structured.kind(response_format):
            # The reply is the client's JSON: the draft was generated under the constraint; no check may rewrite
            # it into prose. It is only made to parse and validate (one repair round under the constraint).
            async def ask(instruction: str) -> str:
                return await self._text("structured output repair", run, [
                    *draft_messages, {"role": "assistant", "content": draft}, {"role": "user", "content": instruction}],
                    **draft_body)

            final, run.info.structured = await structured.ensure(draft, response_format, ask)
            return self._finish(run, draft, final, kind, started)
        can_run = "python" in self.registry.names and tool_ctx.sandbox is not None
        if tool_ctx.sandbox is None:
            # No sandbox may run code (e.g. bubblewrap missing, unisolated not opted into): the draft is the reply,
            # unchecked, and the record says why.
            run.info.checks_skipped = one_line(tool_ctx.sandbox_error or "no sandbox attached", 300)
        try:
            # Only Python code is run against tests; a SQL query, a regex, a bash line or a Ruby method stands as
            # drafted (nothing here checks those languages: running them as Python would only mangle them).
            python_code = kind.code and code_tests.tests_apply(user_request, draft)
            if can_run and python_code and code_tests.entry_points(user_request, code_tests.answer_code(draft, [])):
                final = await self._code_answer(run, draft_messages, draft)
            elif can_run:
                if kind.code and not python_code:
                    run.info.checks_skipped = "the answer's code is not Python: no tests run"
                final, value = await self._run_claims(run, draft_messages, draft, kind)
            computed = run.info.computed
            trusted = computed is not None and computed.trusted
            day = computed.day.answer if computed is not None and computed.day is not None else None
            final = await self._follow_form(run, final, value, trusted=trusted, day=day)
            if ctx.preferences and self.config.preferences:
                checked = _checked_answer(computed, value, day, final, run.user_request)
                final = await self._preferences.follow(
                    run, final, ctx.preferences, checked, request=_without_form_instructions(run.user_request))
        except BackendError as exc:
            log.warning("answer_first_degraded", status=exc.status, error=one_line(exc.message, 200),
                        llm_calls=run.llm_calls)
        await run.emit("answer", None, one_line(final, 200))
        return self._finish(run, draft, final, kind, started)

    def _finish(self, run: LoopRun, draft: str, final: str, kind: RequestKind, started: float) -> LoopResult:
        run.final_text = final
        run.info.kind, run.info.revised = kind.label, final != draft
        if final != draft:  # what the checks changed, for the per-problem tables and the PRM's later labels
            run.info.draft = redact_text(draft)[:DRAFT_RECORD_CHARS]  # redact, then cut (never the reverse)
        result = run.result()
        if final == draft:
            result.logprobs = self._draft_logprobs  # the reply's own generation; a rewrite has none to give
        log.info("answer_first_done", kind=kind.label, steps=len(result.steps), llm_calls=result.llm_calls,
                 revised=final != draft, ms=round((time.perf_counter() - started) * 1000.0, 1))
        return result

    def _bound_replies(self, draft_body: JSON) -> None:
        """Whatever text becomes the reply stays inside the client's bounds: its max_tokens and stop apply to
        the revisions and rewrites too (the checks' own calls — tests, programs — have their own budgets)."""
        cap = draft_body.get("max_completion_tokens", draft_body.get("max_tokens"))
        self._reply_max_tokens = min(self.config.max_tokens, cap) if isinstance(cap, int) else self.config.max_tokens
        self._bounds = {k: draft_body[k] for k in BOUND_PARAMS if k in draft_body}

    # ------------------------------------------------------------------------------------------ code

    async def _code_answer(self, run: LoopRun, draft_messages: list[JSON], draft: str) -> str:
        request = run.user_request
        names = code_tests.entry_points(request, code_tests.answer_code(draft, []))
        context = code_tests.request_code(request)
        cases = code_tests.user_cases(request, names)
        if self.config.model_tests > 0 and not cases:
            # Only when the request gives no examples of its own. Measured on HumanEval (first 21, embedded 1.5B):
            # with examples present, the model's own asserts failed a draft that passed them on 8 of 21 problems,
            # each costing a revision and a sample (the turn at ~3.2x the direct wall time), and not one of those
            # candidates was chosen over the draft: a 1.5B's expected values are wrong about as often as its code.
            cases += await self._model_tests(run, names[0])
        best = _Candidate(draft, await self._check(run, context, draft, cases, names, "draft"), "draft")
        if best.report.all_passed or (not cases and best.report.loaded):
            _note_code_outcome(run, best)
            return draft
        current = best
        for _ in range(self.config.revisions):
            failures = current.report.failures("user") or current.report.failures()
            problem = code_tests.case_lines(failures) if current.report.loaded else \
                f"- the code does not run: {current.report.load_error}"
            prompt = _prompt("revise_code", failures=problem)
            revised = await self._text("code revision", run, [
                *draft_messages, {"role": "assistant", "content": current.text}, {"role": "user", "content": prompt}],
                temperature=0.0, **self._reply_bounds())
            current = _Candidate(revised, await self._check(run, context, revised, cases, names, "revision"),
                                 "revision")
            best = max(best, current, key=lambda c: c.report.score)  # ties keep the earlier (the draft)
            if best.report.all_passed:
                break
        for _ in range(0 if best.report.all_passed else self.config.samples):
            sampled = await self._text("code sample", run, draft_messages, temperature=self.config.sample_temperature,
                                       **self._reply_bounds())
            current = _Candidate(sampled, await self._check(run, context, sampled, cases, names, "sample"), "sample")
            best = max(best, current, key=lambda c: c.report.score)
            if best.report.all_passed:
                break
        _note_code_outcome(run, best)
        log.info("answer_first_code", chosen=best.origin, score=best.report.score,
                 user_cases=best.report.total("user"), model_cases=best.report.total("model"))
        return draft if best.origin == "draft" else splice_code(draft, best.text, names)

    async def _model_tests(self, run: LoopRun, name: str) -> list[code_tests.Case]:
        prompt = _prompt("tests", count=str(self.config.model_tests), name=name,
                         task=_without_form_instructions(run.user_request)[:6000])
        text = await self._text("test cases", run, [{"role": "user", "content": prompt}], temperature=0.0,
                                max_tokens=self.config.check_max_tokens)
        return code_tests.model_cases(text, [name])[: self.config.model_tests * 2]

    async def _check(self, run: LoopRun, context: str, reply: str, cases: list[code_tests.Case],
                     names: list[str], origin: str) -> code_tests.CheckReport:
        program = code_tests.check_program(context, reply, cases, names[0] if names else None)
        ok, output = await self._execute(run, program, f"check the {origin} against {len(cases)} test cases",
                                         {"cases": code_tests.describe_cases(cases), "candidate": origin})
        report = code_tests.parse_report(output, cases)
        step = run.steps[-1]
        step.ok = ok and report.loaded and report.all_passed
        step.extra["passed"] = {"user": report.passed("user"), "model": report.passed("model")}
        return report

    # ---------------------------------------------------------------------------------- numbers, outputs

    async def _run_claims(self, run: LoopRun, draft_messages: list[JSON], draft: str,
                          kind: RequestKind) -> tuple[str, float | None]:
        """Returns (answer, the number execution vouches for, or None).

        When the draft's code claims what it prints, the code is run and the answer rewritten from the real
        output if they disagree. Otherwise a quantitative question gets its number computed (`_compute`)."""
        claim = claims.code_claim(draft)
        if claim is None or not claim.prints or claim.claimed_output is None:
            return await self._compute(run, draft) if kind.quantitative and self.config.compute else (draft, None)
        ok, output = await self._execute(run, claim.program, "run the code of the answer", {})
        real = _stdout(output)
        value = claims.printed_value(real) if ok and kind.quantitative and \
            claims.printed_day(real, dates.asks_for(run.user_request)) is None else None
        if ok and claims.outputs_agree(claim.claimed_output, real):
            return draft, value
        rewrite = _prompt("revise_output", output=(real if ok else one_line(output, OUTPUT_CHARS))[:OUTPUT_CHARS])
        revised = await self._text("revision after running the code", run, [
            *draft_messages, {"role": "assistant", "content": draft}, {"role": "user", "content": rewrite}],
            temperature=0.0, **self._reply_bounds())
        return (revised or draft), value

    async def _compute(self, run: LoopRun, draft: str) -> tuple[str, float | None]:
        """Compute a quantitative answer with a program (the draft's own when it has one that prints, else one
        the model writes) and vote when it disagrees with the draft's final number.

        Measured on the 1.5B: when its prose arithmetic and its program disagreed, the program was right, and
        asking the model to "check its work" made it defend the wrong number; on problems that are hard to
        program (ages, algebra) the program was the one wrong. So a disagreement gets a second, independently
        sampled program: only when it reproduces the first program's number (2 votes to 1) is the answer
        rewritten to follow that program and its real output; otherwise the draft stands."""
        data = save_inline_data(run.user_request, run.tool_ctx.workspace)
        try:
            return await self._compute_with(run, draft, data)
        finally:
            for path in data:
                path.unlink(missing_ok=True)

    async def _compute_with(self, run: LoopRun, draft: str, data: list[Path]) -> tuple[str, float | None]:
        claimed = claims.final_number(draft)
        claim = claims.code_claim(draft)
        source = "draft"
        asked = dates.asks_for(run.user_request)  # a date or weekday question: its programs print that
        if claim is None or not claim.prints:
            claim, source = await self._program(run, temperature=0.0, data=data, asked=asked), "program"
        if claim is None:
            return draft, None
        out, claim, repair = await self._output_or_repair(run, claim, f"compute the answer ({source}'s code)", data,
                                                          asked)
        day = claims.printed_day(out, asked) if out is not None else None
        if day is not None and not claims.computes_day(claim.program):
            return draft, None  # a recalled date, printed: nothing was computed
        if day is not None:
            computed = run.info.computed = Computed(value=None, draft=None, source=source, repair=repair,
                                                    data=len(data))
            return await self._computed_day(run, draft, claim, day, asked, computed, data)
        value = claims.printed_value(out) if out is not None else None
        computed = run.info.computed = Computed(value=value, draft=claimed, source=source, repair=repair,
                                                data=len(data))
        if value is None or claims.same_number(value, claimed):
            return draft, value
        other = await self._second_opinion(run, data, asked, lambda printed, _: claims.printed_value(printed))
        computed.voted, computed.second = True, other
        if not claims.same_number(other, value):
            return draft, None  # no majority against the draft (it sided with the draft, or said something else)
        computed.trusted = True
        return await self._explain(run, draft, claim, claims.format_number(value)), value

    async def _computed_day(self, run: LoopRun, draft: str, claim: claims.CodeClaim, day: dates.CalendarAnswer,
                            asked: str | None, computed: Computed, data: Sequence[Path]) -> tuple[str, None]:
        """`_compute_with` for an answer that is a date or a weekday: the same vote, compared as days. Returns no
        number (a date is not one: the form check must not write its digits as an `Answer:` number)."""
        stated = claims.final_day(draft, day, run.user_request)
        computed.day = ComputedDay(printed=str(day), draft=None if stated is None else str(stated), answer=day)
        if day.same(stated):
            return draft, None
        kind = asked or ("weekday" if isinstance(day, dates.Weekday) else "date")
        other = await self._second_opinion(
            run, data, asked,
            lambda printed, program: claims.printed_day(printed, kind) if claims.computes_day(program) else None)
        computed.voted, computed.day.second = True, None if other is None else str(other)
        if not day.same(other):
            return draft, None
        computed.trusted = True
        return await self._explain(run, draft, claim, day.spoken()), None

    async def _second_opinion(self, run: LoopRun, data: Sequence[Path], asked: str | None,
                              read: Callable[[str, str], T | None]) -> T | None:
        """A second, independently sampled program for the vote: its answer as `read(output, program)` gives it
        (None when it wrote no program, failed, or `read` finds nothing)."""
        second = await self._program(run, temperature=self.config.sample_temperature, data=data, asked=asked)
        if second is None:
            return None
        out = await self._output(run, second.program, "compute the answer again (second opinion)")
        return read(out, second.program) if out is not None else None

    async def _explain(self, run: LoopRun, draft: str, claim: claims.CodeClaim, value: str) -> str:
        """The answer rewritten to follow the program the vote trusted and its printed `value`."""
        explain = _prompt("explain", task=run.user_request[:6000], program=claim.program[:4000], value=value)
        answer = await self._text("answer rewritten to the program", run, [{"role": "user", "content": explain}],
                                  temperature=0.0, **self._reply_bounds())
        return answer or draft

    async def _program(self, run: LoopRun, *, temperature: float, data: Sequence[Path] = (),
                       asked: str | None = None) -> claims.CodeClaim | None:
        """A program the model writes to compute the answer (the question without its form instructions); told
        where the question's pasted data was saved (`data`), so it reads it rather than inventing a variable.
        A question asking for a date or a weekday (`asked`, `dates.asks_for`) gets a program that prints that
        (`program_date`, `program_weekday`) instead of "only the final number"."""
        question = _without_form_instructions(run.user_request)[:6000]
        section = {"date": "program_date", "weekday": "program_weekday"}.get(asked or "", "program")
        prompt = _prompt(section, task=question) + _data_note(data)
        text = await self._text("program", run, [{"role": "user", "content": prompt}],
                                temperature=temperature, max_tokens=self.config.check_max_tokens)
        return _printing_claim(text)

    async def _output(self, run: LoopRun, program: str, description: str) -> str | None:
        """Run a program; what it printed (None when it failed)."""
        ok, output = await self._execute(run, program, description, {})
        return _stdout(output) if ok else None

    async def _output_or_repair(self, run: LoopRun, claim: claims.CodeClaim, description: str,
                                data: Sequence[Path], asked: str | None
                                ) -> tuple[str | None, claims.CodeClaim, str | None]:
        """Run the program; when it fails, one repair round: the model sees its program and the traceback and
        writes a fixed one, which runs in its place. What it printed (None: it still failed), the program that
        printed it, and how a repair went (None: none was needed)."""
        ok, output = await self._execute(run, claim.program, description, {})
        if ok:
            return _stdout(output), claim, None
        prints = {"date": "the date (YYYY-MM-DD)", "weekday": "the day of the week"}.get(asked or "",
                                                                                       "the final number")
        repair = _prompt("repair_program", program=claim.program[:4000], error=_error_tail(output), prints=prints,
                         data=("\n" + _data_note(data).strip()) if data else "")
        text = await self._text("program repair", run, [{"role": "user", "content": repair}], temperature=0.0,
                                max_tokens=self.config.check_max_tokens)
        fixed = _printing_claim(text)
        if fixed is None:
            return None, claim, "failed"
        ok, output = await self._execute(run, fixed.program, "run the repaired program", {"repair": True})
        if not ok:
            return None, claim, "failed"
        return _stdout(output), fixed, "ok"

    # ------------------------------------------------------------------------------------------- form

    async def _follow_form(self, run: LoopRun, text: str, value: float | None, *, trusted: bool = False,
                           day: dates.CalendarAnswer | None = None) -> str:
        """Make the reply take the form the request states: a deterministic fix when one is certain (the
        computed number — or date, `day` — is used only when the reply's own final one agrees with it or the vote
        trusted it), else one short model call. A fix is kept only if every form that already held still holds."""
        specs = form.detect_forms(run.user_request)
        for spec in specs:
            agreed = _states_computed(text, value, day, run.user_request)
            shown = claims.format_number(value) if value is not None else day.spoken() if day is not None else None
            wrong_value = trusted and shown is not None and spec.kind == "answer_line" and not agreed
            if form.check(text, spec).ok and not wrong_value:
                continue
            fixed = form.deterministic_fix(text, spec, value=shown if shown is not None and (trusted or agreed)
                                           else None)
            if fixed is None:
                prompt = form.fixup_prompt(text, spec)
                if not prompt:
                    continue
                short = spec.kind in SHORT_FORMS
                bounds = self._reply_bounds()
                if short:
                    bounds["max_tokens"] = min(SHORT_FIXUP_TOKENS, bounds["max_tokens"])
                reply = await self._text("form fix", run, prompt, temperature=0.0, **bounds)
                fixed = form.apply_fixup(text, spec, reply)
            held = [s for s in specs if s is not spec and form.check(text, s).ok]
            if fixed is not None and all(form.check(fixed, s).ok for s in held):
                run.info.form_fixed.append(spec.kind)
                text = fixed
        return text

    # ------------------------------------------------------------------------------------- primitives

    def _reply_bounds(self) -> JSON:
        return {"max_tokens": self._reply_max_tokens, **self._bounds}

    async def _text(self, purpose: str, run: LoopRun, messages: list[JSON], *, keep_logprobs: bool = False,
                    **params: Any) -> str:
        """One model call for `purpose`; the reply's text (`keep_logprobs`: remember its logprobs, for the draft)."""
        body: JSON = {"messages": messages, "max_tokens": self.config.max_tokens, "stream": False, **params}
        if "max_completion_tokens" in body:
            body["max_tokens"] = body.pop("max_completion_tokens")
        reply = await self._complete(purpose, run, body)
        if keep_logprobs and body.get("logprobs"):
            choices = reply.get("choices") or [{}]
            self._draft_logprobs = choices[0].get("logprobs") if isinstance(choices[0], dict) else None
        return content_text(message_of(reply).get("content")).strip()

    async def _complete(self, purpose: str, run: LoopRun, body: JSON) -> Any:
        """One model call, counted in `llm_calls` and `usage` and timed in `info.calls` (the status page's turn
        tree); the response as the backend gave it."""
        if self.config.model:
            body["model"] = self.config.model
        run.llm_calls += 1
        t0 = time.perf_counter()
        reply = await self.backend.complete(body)
        usage = reply.get("usage") if isinstance(reply, Mapping) else None
        run.add_usage(usage)
        run.info.calls.append(ModelCall.of(purpose, (time.perf_counter() - t0) * 1000.0, usage))
        return reply

    async def _execute(self, run: LoopRun, code: str, description: str, extra: JSON) -> tuple[bool, str]:
        """Run `code` with the python tool as a recorded step; (ok, the output text)."""
        args: JSON = {"code": code}
        step = Step(i=len(run.steps), description=description, tool_name="python",
                    tool_args=args, extra={"source": "check", **extra})
        await run.emit("step_start", step, f"step {step.i + 1}: {description}")
        t0 = time.perf_counter()
        result = await self.registry.call("python", args, run.tool_ctx)
        step.duration_ms = round((time.perf_counter() - t0) * 1000.0, 3)
        step.ok, step.error = result.ok, result.error
        message = result.to_message()
        step.result_preview = preview_text(message)
        run.steps.append(step)
        run.evidence.append(evidence_of("python", args, cap_text(message, OUTPUT_CHARS)[0], result.ok))
        log.info("agent_step", i=step.i, tool="python", ok=result.ok, source="check", ms=round(step.duration_ms, 1))
        await run.emit("step_end", step, f"step {step.i + 1}: python {'ok' if result.ok else 'failed'}")
        return result.ok, result.output


def _checked_answer(computed: Computed | None, value: float | None, day: dates.CalendarAnswer | None, reply: str,
                    request: str) -> float | dates.CalendarAnswer | None:
    """The answer execution vouches for in `reply` — a number or a day the turn computed that the reply states
    (or the vote trusted) — which no later rewrite may lose; None when nothing was checked."""
    trusted = computed is not None and computed.trusted
    if not (trusted or _states_computed(reply, value, day, request)):
        return None
    return value if value is not None else day


def _states_computed(reply: str, value: float | None, day: dates.CalendarAnswer | None, request: str) -> bool:
    """Whether the reply's own final answer is the computed number (else the computed day); False for neither."""
    if value is not None:
        return claims.same_number(value, claims.final_number(reply))
    return day is not None and day.same(claims.final_day(reply, day, request))


def _printing_claim(text: str) -> claims.CodeClaim | None:
    claim = claims.code_claim(text) or claims.bare_code_claim(text)
    return claim if claim is not None and claim.prints else None


def _data_note(data: Sequence[Path]) -> str:
    if not data:
        return ""
    return "\n\n" + _prompt("program_data", files=", ".join(f"`{p.name}`" for p in data))


def _error_tail(output: str, lines: int = 12) -> str:
    """The end of a failed run's output (where the traceback's last lines are), bounded."""
    return "\n".join(output.strip().splitlines()[-lines:])[-OUTPUT_CHARS:]


def save_inline_data(request: str, workspace: Path | None) -> list[Path]:
    """Save the data pasted into `request` (`text.inline_data`) in the workspace as `request-data.<kind>`
    (numbered when several; never over an existing file); the paths written. The caller removes them."""
    if workspace is None:
        return []
    written: list[Path] = []
    for i, block in enumerate(find_inline_data(request), 1):
        stem = "request-data" if i == 1 else f"request-data-{i}"
        path = workspace / f"{stem}{block.suffix}"
        if path.exists() or path.is_symlink():
            continue
        try:
            path.write_text(block.text, encoding="utf-8")
        except OSError as exc:
            log.warning("inline_data_not_saved", error=repr(exc))
            continue
        written.append(path)
    return written


def _note_code_outcome(run: LoopRun, best: _Candidate) -> None:
    report = best.report
    run.info.code = CodeOutcome(
        chosen=best.origin,
        user_cases=CaseTally(report.passed("user"), report.total("user"),
                             failing=[r.describe() for r in report.failures("user")[:5]]),
        model_cases=CaseTally(report.passed("model"), report.total("model")),
    )


def splice_code(draft: str, candidate: str, names: list[str]) -> str:
    """The draft with its code block replaced by the candidate's code (the prose the user sees stays the draft's);
    the candidate as it is when the draft has no block to replace."""
    new_code = code_tests.answer_code(candidate, names).strip("\n")
    blocks = claims.python_blocks(draft)
    target = next((b for b in reversed(blocks) if any(f"def {n}" in b for n in names)), None)
    if not new_code or target is None:
        return candidate
    return draft.replace(target, new_code + "\n", 1)


def _without_form_instructions(request: str) -> str:
    """The request without the sentences that state its output form: an internal prompt ("write a program
    that computes…", "write asserts for…") must not be pulled toward the user's `Answer:` line or "only JSON"."""
    for spec in form.detect_forms(request):
        if spec.source and spec.source in request:
            request = request.replace(spec.source, " ")
    return request.strip()


def _prompt(section: str, **values: str) -> str:
    return load_prompt("agent_check")[section].substitute(**values)


def _stdout(output: str) -> str:
    """The program's stdout part of a python tool result (stderr and status lines dropped)."""
    return output.split("\n--- stderr ---", 1)[0].strip()


__all__ = ["AnswerFirst", "CheckConfig", "splice_code"]

"""The preference check's judgement, measured before it is trusted: does P(yes) tell a reply that follows the
user's stated preference from one that does not?

    python bench/bench_preference_check.py [--backend embedded|URL] [--json PATH]

Items: every example pair of the correction-transfer suite (`eval/suites/transfer.py`): for each family's
teaching request and probes, the reply in the user's convention (`good`) and the reply in the model's default
form (`bad`), judged against the preference the family's correction states (`memory.preference.stated_preference`,
the words the daemon would keep). One short call each (`agent.checking.preferences.judge_messages`, one token,
logprobs) — the same call answer-first makes. Prints, per family and overall, how many replies that follow the
preference were judged so (P(yes) >= FOLLOWED) and how many that do not were caught (P(yes) < FOLLOWED), the
mean P(yes) of each, and the seconds per call, beside a no-model baseline that always says "follows" (which is
what the turn did before the check: every rewrite was trusted).

These examples are the suite's own test data, so the figures say whether the check can tell the two forms apart
on replies a user would write, not how it fares on the 1.5B's own rewrites (those are in the transfer run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import structlog

from ghost_agent.agent.checking.preferences import FOLLOWED, judge_messages, p_yes
from ghost_agent.eval.suites.transfer import FAMILIES
from ghost_agent.llm.factory import make_backend
from ghost_agent.memory.preference import stated_preference
from ghost_agent.settings import Settings


async def judge(backend: Any, request: str, reply: str, preference: str) -> tuple[float | None, float]:
    body = {"messages": judge_messages(request, reply, [preference]), "max_tokens": 1, "temperature": 0.0,
            "logprobs": True, "top_logprobs": 5, "stream": False}
    start = time.perf_counter()
    response = await backend.complete(body)
    return p_yes(response), time.perf_counter() - start


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    keys: dict[str, Any] = {"n_ctx": 4096, "log_level": "warning"}
    if args.backend != "embedded":
        keys["upstream_url"] = args.backend
    settings = Settings.from_keys(**keys).validate()
    backend = make_backend(settings.backend)
    start = getattr(backend, "start", None)
    if start is not None:  # the embedded model loads here
        await start()
    rows: list[dict[str, Any]] = []
    try:
        for family in FAMILIES:
            preference = stated_preference(family.teach.prompt, family.correction)
            if preference is None:
                print(f"# {family.id}: the correction states no preference the daemon would keep; skipped")
                continue
            for probe in (family.teach, *family.probes):
                for follows in (True, False):
                    reply = family.example(probe, good=follows)
                    if not reply:
                        continue
                    p, seconds = await judge(backend, probe.prompt, reply, preference)
                    rows.append({"family": family.id, "probe": probe.id, "follows": follows, "p_yes": p,
                                 "seconds": round(seconds, 3)})
                    print(f"  {probe.id:34s} {'follows' if follows else 'default':8s} "
                          f"P(yes)={'-' if p is None else f'{p:.2f}'}  {seconds:5.1f}s", flush=True)
    finally:
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()
    return summarise(rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def figures(part: list[dict[str, Any]]) -> dict[str, Any]:
        good = [r for r in part if r["follows"]]
        bad = [r for r in part if not r["follows"]]
        kept = sum(1 for r in good if r["p_yes"] is not None and r["p_yes"] >= FOLLOWED)
        caught = sum(1 for r in bad if r["p_yes"] is not None and r["p_yes"] < FOLLOWED)
        unread = sum(1 for r in part if r["p_yes"] is None)

        def mean(xs: list[dict[str, Any]]) -> float | None:
            ps = [r["p_yes"] for r in xs if r["p_yes"] is not None]
            return round(sum(ps) / len(ps), 3) if ps else None

        return {"follows": len(good), "judged_follows": kept, "default": len(bad), "caught": caught,
                "unread": unread, "mean_p_yes_follows": mean(good), "mean_p_yes_default": mean(bad)}

    out: dict[str, Any] = {"families": {}, "rows": rows}
    for family in dict.fromkeys(r["family"] for r in rows):
        out["families"][family] = figures([r for r in rows if r["family"] == family])
    out["all"] = figures(rows)
    seconds = [r["seconds"] for r in rows]
    out["seconds_per_call"] = round(sum(seconds) / len(seconds), 2) if seconds else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="embedded", help="embedded (default) or an OpenAI-compatible URL")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    result = asyncio.run(main_async(args))
    print(f"\n{'family':16s} {'follows: judged so':>20s} {'default: caught':>16s} {'mean P(yes) f / d':>20s}")
    for name, f in [*result["families"].items(), ("all", result["all"])]:
        means = f"{f['mean_p_yes_follows']} / {f['mean_p_yes_default']}"
        print(f"{name:16s} {f['judged_follows']:>9d}/{f['follows']:<10d} {f['caught']:>7d}/{f['default']:<8d} "
              f"{means:>20s}")
    a = result["all"]
    print(f"\nbaseline that always says 'follows' (the turn before the check): judged so {a['follows']}/"
          f"{a['follows']}, caught 0/{a['default']}.  unreadable judgements: {a['unread']}.  "
          f"{result['seconds_per_call']} s per call (noisy shared 2-core machine)")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

"""concurrency (asyncio): bounded gathers and retries, graded by hidden tests that never depend on timing.

The event loop is deterministic when nothing really sleeps: the fake fetch yields with `asyncio.sleep(0)` a fixed
number of times and counts how many calls are in flight, and the retry's `sleep` is injected and only recorded.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ghost_agent.selfplay.checks import PythonTests
from ghost_agent.selfplay.task import Task, draft
from ghost_agent.selfplay.templates.concurrency import WORDS


def _code(sentence: str, code: str) -> str:
    return f"{sentence}\n\n```python\n{code.strip()}\n```"


def _consts(**values: object) -> str:
    return "".join(f"{k} = {v!r}\n" for k, v in values.items())


_GATHER_TESTS = """
import asyncio
from urllib.parse import urlsplit

state = {"now": 0, "peak": 0, "per_host": {}, "host_peak": {}}

async def fetch(url):
    host = urlsplit(url).hostname
    state["now"] += 1
    state["peak"] = max(state["peak"], state["now"])
    per_host = state["per_host"]
    per_host[host] = per_host.get(host, 0) + 1
    state["host_peak"][host] = max(state["host_peak"].get(host, 0), per_host[host])
    try:
        for _ in range(STEPS[url]):
            await asyncio.sleep(0)
        if url in FAILING:
            raise ConnectionError(f"refused: {url}")
        return SIZES[url]
    finally:
        state["now"] -= 1
        per_host[host] -= 1

got = asyncio.run(FN(URLS, fetch, LIMIT))
assert isinstance(got, list) and len(got) == len(URLS), f"expected a list of {len(URLS)} results, got {got!r}"
for url, value in zip(URLS, got):
    if url in FAILING:
        assert isinstance(value, ConnectionError), f"{url}: expected its ConnectionError, got {value!r}"
    else:
        assert value == SIZES[url], f"{url}: got {value!r}, expected {SIZES[url]} (results in input order)"
if PER_HOST:
    assert max(state["host_peak"].values()) == LIMIT, f"peak per host {state['host_peak']}, limit {LIMIT}"
    assert state["peak"] > LIMIT, f"only {state['peak']} in flight overall: different hosts should overlap"
else:
    assert state["peak"] == LIMIT, f"peak {state['peak']} requests in flight, limit {LIMIT}"
"""


@dataclass(frozen=True)
class BoundedGather:
    """asyncio.gather under a semaphore: at most N in flight, results in input order (difficulty adds
    exceptions returned in place, then a limit per host)."""

    cluster: str = "concurrency"
    name: str = "bounded_gather"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("fetch_all", "download_all", "get_all", "crawl"))
        limit = rng.randint(2, 4)
        hosts = [f"{w}.example.com" for w in rng.sample(WORDS, 3 if difficulty >= 3 else 1)]
        n = rng.randint(3 * limit + 6, 3 * limit + 9) if difficulty >= 3 else rng.randint(limit + 4, limit + 9)
        urls = [f"https://{hosts[i % len(hosts)]}/{rng.choice(WORDS)}/{i}" for i in range(n)]
        steps = {u: rng.randint(1, 6) for u in urls}
        steps[urls[0]] = 12  # the first request is the slowest: completion order differs from input order
        sizes = {u: rng.randint(200, 90000) for u in urls}
        failing = sorted(rng.sample(urls[1:], 2)) if difficulty >= 2 else []
        per_host = difficulty >= 3
        limit_text = ("at most `limit` requests in flight per host (different hosts can overlap)" if per_host
                      else "at most `limit` requests in flight at once")
        prompt = (f"I'm scraping {n} URLs with an async `fetch(url)` (awaitable, returns the response size). Write "
                  f"`async def {fn}(urls, fetch, limit)` that runs them concurrently but with {limit_text} - the "
                  f"site rate-limits us at {limit} - and returns the results in the same order as urls.")
        if failing:
            prompt += " A failed fetch shouldn't sink the batch: put the exception object in its slot."
        gather_kw = ", return_exceptions=True" if failing else ""
        if per_host:
            body = (f"async def {fn}(urls, fetch, limit):\n    sems = defaultdict(lambda: asyncio.Semaphore(limit))\n\n"
                    "    async def one(url):\n        async with sems[urlsplit(url).hostname]:\n"
                    "            return await fetch(url)\n\n"
                    f"    return list(await asyncio.gather(*(one(u) for u in urls){gather_kw}))\n")
            head = "import asyncio\nfrom collections import defaultdict\nfrom urllib.parse import urlsplit\n\n\n"
            sentence = "One semaphore per host caps each host while different hosts run side by side:"
        else:
            body = (f"async def {fn}(urls, fetch, limit):\n    sem = asyncio.Semaphore(limit)\n\n"
                    "    async def one(url):\n        async with sem:\n            return await fetch(url)\n\n"
                    f"    return list(await asyncio.gather(*(one(u) for u in urls){gather_kw}))\n")
            head = "import asyncio\n\n\n"
            sentence = "A semaphore caps the requests in flight, and gather keeps the input order:"
        reference = _code(sentence, head + body)
        unbounded = _code("gather runs them all concurrently and keeps the order:",
                          f"import asyncio\n\n\nasync def {fn}(urls, fetch, limit):\n"
                          f"    return list(await asyncio.gather(*(fetch(u) for u in urls){gather_kw}))\n")
        bad = [unbounded]
        if per_host:
            global_sem = ("import asyncio\n\n\n"
                          f"async def {fn}(urls, fetch, limit):\n    sem = asyncio.Semaphore(limit)\n\n"
                          "    async def one(url):\n        async with sem:\n            return await fetch(url)\n\n"
                          f"    return list(await asyncio.gather(*(one(u) for u in urls){gather_kw}))\n")
            bad.append(_code("A semaphore keeps us under the limit:", global_sem))
        elif failing:
            bad.append(_code("A semaphore caps the requests in flight:", (head + body).replace(gather_kw, "")))
        else:
            bad.append(_code("Collect the results as they complete, with a semaphore for the limit:",
                             f"import asyncio\n\n\nasync def {fn}(urls, fetch, limit):\n"
                             "    sem = asyncio.Semaphore(limit)\n\n    async def one(url):\n        async with sem:\n"
                             "            return await fetch(url)\n\n"
                             "    return [await f for f in asyncio.as_completed([one(u) for u in urls])]\n"))
        tests = _consts(URLS=urls, STEPS=steps, SIZES=sizes, FAILING=failing, LIMIT=limit, PER_HOST=per_host) + (
            f"FN = {fn}\n" + _GATHER_TESTS)
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad)


_RETRY_TESTS = """
import asyncio, math

class Op:
    def __init__(self, errors):
        self.errors, self.calls = list(errors), 0
    async def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)(f"attempt {self.calls}")
        return VALUE

def run(op, attempts):
    slept = []
    async def fake_sleep(seconds):
        slept.append(seconds)
    kwargs = {"sleep": fake_sleep}
    if JITTER:
        draws = iter(DRAWS)
        kwargs["rand"] = lambda: next(draws)
    args = (op, attempts, BASE) + ((CAP,) if CAP else ())
    try:
        return asyncio.run(FN(*args, **kwargs)), slept
    except Exception as exc:
        return exc, slept

def delays(k):
    out = []
    for i in range(k):
        d = BASE * 2 ** i
        if CAP:
            d = min(d, CAP)
        if JITTER:
            d = d * DRAWS[i]
        out.append(d)
    return out

def same(a, b):
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(a, b))

op = Op([ValueError])
got, slept = run(op, ATTEMPTS)
assert isinstance(got, ValueError) and op.calls == 1 and slept == [], "a ValueError must not be retried"

op = Op(RETRYABLE[:2])
got, slept = run(op, ATTEMPTS)
assert got == VALUE and op.calls == 3, f"got {got!r} after {op.calls} calls"
assert same(slept, delays(2)), f"slept {slept}, expected {delays(2)}"

op = Op(RETRYABLE * ATTEMPTS)
got, slept = run(op, ATTEMPTS)
assert isinstance(got, RETRYABLE) and str(got) == f"attempt {ATTEMPTS}", f"expected the last error, got {got!r}"
assert op.calls == ATTEMPTS, f"{op.calls} calls for attempts={ATTEMPTS}"
assert same(slept, delays(ATTEMPTS - 1)), f"slept {slept}, expected {delays(ATTEMPTS - 1)}"
"""


@dataclass(frozen=True)
class AsyncRetry:
    """An async retry with exponential backoff through an injected sleep (difficulty adds a cap and a second
    retryable error, then full jitter through an injected random source)."""

    cluster: str = "concurrency"
    name: str = "async_retry"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("retry", "with_retries", "call_with_backoff", "retry_async"))
        base = rng.choice((0.1, 0.2, 0.25, 0.5, 1.0))
        attempts = rng.randint(4, 6)
        cap = base * 2 ** rng.randint(1, attempts - 3) if difficulty >= 2 else 0.0  # the last waits are capped
        jitter = difficulty >= 3
        draws = [round(rng.uniform(0.05, 0.95), 3) for _ in range(attempts)]
        retryable = ("ConnectionError", "TimeoutError") if difficulty >= 2 else ("ConnectionError",)
        errors = " or ".join(retryable)
        sig = f"{fn}(op, attempts, base_delay" + (", max_delay" if cap else "") + ", sleep=asyncio.sleep" + (
            ", rand=random.random)" if jitter else ")")
        context = rng.choice(("our payment provider's API", "the S3 upload", "a flaky internal gRPC service",
                              "the LDAP lookup", "the webhook delivery", "the Redis reconnect"))
        prompt = (f"{context} fails now and then, so can you write `async def {sig}`? It awaits `op()` (no "
                  "arguments) and returns its result; when "
                  f"it raises {errors}, wait and try again, up to `attempts` calls in total. The wait doubles each "
                  f"time starting at base_delay (so {base:g}s, {base * 2:g}s, {base * 4:g}s, ...)")
        prompt += ", capped at max_delay." if cap else "."
        if jitter:
            prompt += (" Use full jitter: each wait is rand() times the (capped) backoff, so a herd of clients "
                       "spreads out.")
        prompt += (" Any other exception goes straight through; when the attempts run out, re-raise the last "
                   "error. Always wait with the `sleep` argument (I pass a fake in tests).")
        imports = "import asyncio\n" + ("import random\n" if jitter else "")
        exc_tuple = f"({', '.join(retryable)})" if len(retryable) > 1 else retryable[0]
        delay = "base_delay * 2 ** attempt"
        if cap:
            delay = f"min(max_delay, {delay})"
        if jitter:
            delay = f"rand() * {delay}"
        body = (f"\n\nasync def {sig}:\n    for attempt in range(attempts):\n        try:\n"
                f"            return await op()\n        except {exc_tuple}:\n            if attempt == attempts - 1:\n"
                f"                raise\n            await sleep({delay})\n")
        reference = _code("Retry only the transient errors, and don't sleep after the last attempt:", imports + body)
        sleep_last = (f"\n\nasync def {sig}:\n    last = None\n    for attempt in range(attempts):\n        try:\n"
                      f"            return await op()\n        except {exc_tuple} as exc:\n            last = exc\n"
                      f"            await sleep({delay})\n    raise last\n")
        bad = [_code("Loop over the attempts, backing off after each failure:", imports + sleep_last)]
        if jitter:
            bad.append(_code("Back off with jitter, capped:", imports + body.replace(
                delay, "min(max_delay, rand() * base_delay * 2 ** attempt)")))
        elif cap:
            bad.append(_code("Exponential backoff:", imports + body.replace(delay, "base_delay * 2 ** attempt")))
        else:
            bad.append(_code("Retry on failure with exponential backoff:",
                             imports + body.replace(f"except {exc_tuple}:", "except Exception:")))
        tests = _consts(VALUE=f"ok-{rng.randint(100, 999)}", ATTEMPTS=attempts, BASE=base, CAP=cap, JITTER=jitter,
                        DRAWS=draws) + f"RETRYABLE = {exc_tuple}\nFN = {fn}\n"
        if len(retryable) > 1:  # errors alternate between the two kinds
            tests += "RETRYABLE_LIST = [ConnectionError, TimeoutError]\n"
        tests += _RETRY_TESTS.replace("RETRYABLE[:2]", "RETRYABLE_LIST" if len(retryable) > 1 else "[RETRYABLE] * 2")
        tests = tests.replace("Op(RETRYABLE * ATTEMPTS)",
                              "Op((RETRYABLE_LIST * ATTEMPTS)[:ATTEMPTS])" if len(retryable) > 1
                              else "Op([RETRYABLE] * ATTEMPTS)")
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad)


TEMPLATES = (BoundedGather(), AsyncRetry())

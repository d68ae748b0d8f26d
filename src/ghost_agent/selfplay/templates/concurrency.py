"""concurrency (threads): shared state, queues, pools and locks done right, graded by hidden tests.

A race that only shows up now and then would make a flaky check, so the hidden tests force the bad
interleaving instead of hoping for it: the shared store sleeps inside its reads (a read-modify-write without a
lock loses updates every run), the locks record who holds them and in what order (a lock-order inversion is
seen even single-threaded), and the thread pool's calls record their thread. Each test runs well under a second.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ghost_agent.selfplay.checks import PythonTests
from ghost_agent.selfplay.task import Task, draft

WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper", "kiwi",
         "lumen", "maple", "nova", "onyx", "pine", "quartz", "raven", "sierra", "tango")


def _code(sentence: str, code: str) -> str:
    """A reply as a good assistant writes it: a sentence, then the code."""
    return f"{sentence}\n\n```python\n{code.strip()}\n```"


def _consts(**values: object) -> str:
    return "".join(f"{k} = {v!r}\n" for k, v in values.items())


# A shared counter whose store sleeps inside its reads


_STORE_TESTS = """
import threading, time

class SlowStore(dict):
    # A shared cache: every read takes a moment, so a read-modify-write without a lock loses updates.
    def get(self, key, default=None):
        value = super().get(key, default)
        time.sleep(0.001)
        return value

    def __getitem__(self, key):
        value = super().__getitem__(key)
        time.sleep(0.001)
        return value

def hammer(counter, keys, threads, per_thread):
    start = threading.Barrier(threads)
    def work(i):
        start.wait()
        for j in range(per_thread):
            getattr(counter, METHOD)(keys[(j // 3) % len(keys)])  # every thread on the same key
    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool: t.start()
    for t in pool: t.join()

store = SlowStore()
counter = CLS(store)
hammer(counter, KEYS, THREADS, PER_THREAD)
total = sum(dict.values(store))
assert total == THREADS * PER_THREAD, f"lost updates: {total} of {THREADS * PER_THREAD}"

if DRAIN:
    store = SlowStore()
    counter = CLS(store)
    drained = []
    go = threading.Barrier(THREADS + 1)
    def drainer():
        go.wait()
        for _ in range(12):
            drained.append(counter.drain(KEYS[0]))
            time.sleep(0.002)
    def recorder():
        go.wait()
        for _ in range(PER_THREAD):
            getattr(counter, METHOD)(KEYS[0])
    pool = [threading.Thread(target=recorder) for _ in range(THREADS)] + [threading.Thread(target=drainer)]
    for t in pool: t.start()
    for t in pool: t.join()
    left = dict.get(store, KEYS[0], 0)
    assert sum(drained) + left == THREADS * PER_THREAD, f"drain lost counts: {sum(drained)} + {left}"
    assert counter.drain(KEYS[0]) == left and dict.get(store, KEYS[0], 0) == 0

if TOP:
    store = SlowStore()
    counter = CLS(store)
    for key, n in [(KEYS[1], 3), (KEYS[0], 5), (KEYS[2], 3), (KEYS[3], 1)]:
        for _ in range(n):
            getattr(counter, METHOD)(key)
    want = [KEYS[0]] + sorted([KEYS[1], KEYS[2]])
    assert counter.top(3) == want, counter.top(3)
"""


@dataclass(frozen=True)
class SharedCounter:
    """'the totals come out low under load': make a read-modify-write counter over a shared store thread-safe
    (difficulty adds an atomic drain, then a top-k read)."""

    cluster: str = "concurrency"
    name: str = "shared_counter"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        cls = rng.choice(("VisitCounter", "HitCounter", "ViewTally", "ClickCounter"))
        method = rng.choice(("record", "hit", "bump", "add"))
        what = rng.choice(("page", "product", "user", "endpoint"))
        keys = [f"/{w}" if what in ("page", "endpoint") else w for w in rng.sample(WORDS, 4)]
        threads = (4, 5, 6)[difficulty - 1]
        per_thread = rng.randint(8, 12)
        drain, top = difficulty >= 2, difficulty >= 3
        original = (f"class {cls}:\n    def __init__(self, store):\n        self.store = store\n\n"
                    f"    def {method}(self, {what}):\n        n = self.store.get({what}, 0)\n"
                    f"        self.store[{what}] = n + 1\n")
        asks = [f"Keep the interface: `{cls}(store)` and `{method}({what})`, and the counts stay in `store` (a "
                "dict-like cache other code reads)."]
        if drain:
            asks.append(f"Also add `drain({what})`: our flusher thread calls it to take the current count and reset "
                        "it to 0, and no hit may get lost between the read and the reset.")
        if top:
            asks.append(f"And `top(k)`: the k {what}s with the most hits, most first, ties by name.")
        prompt = (f"our web workers share one {cls} across {threads} threads and the totals come out low under "
                  f"load. Can you make it thread-safe?\n\n```python\n{original}```\n\n" + " ".join(asks))
        lock_line = "        self._lock = threading.Lock()\n"
        body = (f"    def {method}(self, {what}):\n        with self._lock:\n"
                f"            self.store[{what}] = self.store.get({what}, 0) + 1\n")
        drain_src = (f"\n    def drain(self, {what}):\n        with self._lock:\n"
                     f"            n = self.store.get({what}, 0)\n            self.store[{what}] = 0\n"
                     "            return n\n") if drain else ""
        top_src = ("\n    def top(self, k):\n        with self._lock:\n            items = list(self.store.items())\n"
                   "        items.sort(key=lambda kv: (-kv[1], kv[0]))\n        return [key for key, _ in items[:k]]\n"
                   ) if top else ""
        head = f"import threading\n\n\nclass {cls}:\n    def __init__(self, store):\n        self.store = store\n"
        reference = _code("The read and the write have to happen under one lock shared by every thread, so the "
                          "lock lives on the instance:", head + lock_line + "\n" + body + drain_src + top_src)
        per_call = (f"    def {method}(self, {what}):\n        with threading.Lock():  # a new lock each call\n"
                    f"            self.store[{what}] = self.store.get({what}, 0) + 1\n")
        write_only = (f"    def {method}(self, {what}):\n        n = self.store.get({what}, 0)\n"
                      f"        with self._lock:\n            self.store[{what}] = n + 1\n")
        unlocked_drain = (f"\n    def drain(self, {what}):\n        n = self.store.get({what}, 0)\n"
                          f"        self.store[{what}] = 0\n        return n\n")
        bad = [_code("Wrapping the update in a lock fixes it:", head + "\n" + per_call + drain_src + top_src)]
        if drain:
            bad.append(_code("A lock around the record fixes it; drain just reads and resets:",
                             head + lock_line + "\n" + body + unlocked_drain + top_src))
        else:
            bad.append(_code("Only the write needs the lock:", head + lock_line + "\n" + write_only))
        tests = _consts(CLS=None, METHOD=method, KEYS=keys, THREADS=threads, PER_THREAD=per_thread, DRAIN=drain,
                        TOP=top).replace("CLS = None", f"CLS = {cls}") + _STORE_TESTS
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests), reference=reference, bad=bad)


# Producer / consumer over queue.Queue


_QUEUE_TESTS = """
import threading, time

started = []
guard = threading.Lock()
ahead = []

def source(items):
    for i, item in enumerate(items):
        if i % 5 == 0 and not (MAXSIZE and i):
            time.sleep(0.002)  # the feed stalls now and then (a huge fast feed when bounded): the queue runs dry
        if MAXSIZE:
            with guard:
                ahead.append(i - len(started))
        yield item

def handle(item):
    with guard:
        started.append(item)
    time.sleep(0.001)
    if item in FAILING:
        raise ValueError(f"bad record {item}")
    return item.upper()

before = threading.active_count()
args = (source(ITEMS), handle, WORKERS) + ((MAXSIZE,) if MAXSIZE else ())
out = FN(*args)
if FAILING:
    results, errors = out
    assert errors == {i: f"bad record {i}" for i in FAILING}, errors
else:
    results = out
want = {i: i.upper() for i in ITEMS if i not in FAILING}
assert results == want, f"missing {sorted(set(want) - set(results))[:5]}"
assert sorted(started) == sorted(ITEMS), "an item was handled twice or never"
assert not MAXSIZE or max(ahead) <= MAXSIZE + 2, f"the producer ran {max(ahead)} items ahead of the workers"
time.sleep(0.01)
assert threading.active_count() == before, "worker threads are still running"
"""


@dataclass(frozen=True)
class QueueWorkers:
    """A producer feeding `queue.Queue` and N worker threads: every item handled exactly once (difficulty adds
    per-item errors collected, then a bounded queue so the producer can't run ahead)."""

    cluster: str = "concurrency"
    name: str = "queue_workers"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("process_all", "run_workers", "consume", "drain_feed"))
        kind = rng.choice(("order", "invoice", "image", "log"))
        n, workers = rng.randint(14, 24), rng.randint(2, 4)
        items = [f"{kind}-{i}" for i in rng.sample(range(100, 999), n)]
        failing = sorted(rng.sample(items, 2)) if difficulty >= 2 else []
        maxsize = rng.randint(2, 4) if difficulty >= 3 else 0
        sig = f"{fn}(source, handle, workers" + (", maxsize)" if maxsize else ")")
        prompt = (f"I need `{sig}`: `source` is an iterator of {kind} ids (it reads from a feed, so it can stall "
                  f"for a bit), `handle(item)` does the slow work. Use a queue.Queue and `workers` threads so every "
                  f"item gets handled exactly once, and return a dict item -> handle's result once everything is "
                  f"done (no threads left running).")
        if failing:
            prompt += (" If handle raises for an item, keep going and return `(results, errors)` instead, where "
                       "errors maps the item to str(exception).")
        if maxsize:
            prompt += (" The feed can be huge, so the queue must be bounded to `maxsize` items: the producer "
                       "shouldn't run ahead of the workers.")
        ret = "(results, errors)" if failing else "results"
        errs = "    errors = {}\n" if failing else ""
        call = ("            try:\n                value = handle(item)\n            except Exception as exc:\n"
                "                with lock:\n                    errors[item] = str(exc)\n            else:\n"
                "                with lock:\n                    results[item] = value\n") if failing else (
                "            value = handle(item)\n            with lock:\n                results[item] = value\n")
        qsize = "maxsize=maxsize" if maxsize else ""
        reference = _code(
            "Start the workers first, feed the queue from the source, then send one stop marker per worker and "
            "join them, so nothing is lost and no thread outlives the call:",
            f"import queue\nimport threading\n\n_STOP = object()\n\n\ndef {sig}:\n    q = queue.Queue({qsize})\n"
            f"    results = {{}}\n{errs}    lock = threading.Lock()\n\n    def worker():\n        while True:\n"
            f"            item = q.get()\n            if item is _STOP:\n                return\n{call}\n"
            "    threads = [threading.Thread(target=worker) for _ in range(workers)]\n    for t in threads:\n"
            "        t.start()\n    for item in source:\n        q.put(item)\n    for _ in threads:\n"
            f"        q.put(_STOP)\n    for t in threads:\n        t.join()\n    return {ret}\n")
        early_exit = _code(
            "Each worker drains the queue until it's empty:",
            f"import queue\nimport threading\n\n\ndef {sig}:\n    q = queue.Queue({qsize})\n    results = {{}}\n"
            f"{errs}    lock = threading.Lock()\n\n    def worker():\n        while not q.empty():\n"
            f"            item = q.get()\n{call}\n"
            "    threads = [threading.Thread(target=worker) for _ in range(workers)]\n    for t in threads:\n"
            "        t.start()\n    for item in source:\n        q.put(item)\n    for t in threads:\n        t.join()\n"
            f"    return {ret}\n")
        no_join = _code(
            "Daemon workers pull from the queue; we return once everything is queued:",
            f"import queue\nimport threading\n\n\ndef {sig}:\n    q = queue.Queue()\n    results = {{}}\n{errs}"
            f"    lock = threading.Lock()\n\n    def worker():\n        while True:\n            item = q.get()\n"
            f"{call}\n    for _ in range(workers):\n        threading.Thread(target=worker, daemon=True).start()\n"
            f"    for item in source:\n        q.put(item)\n    return {ret}\n")
        unbounded = reference.replace("queue.Queue(maxsize=maxsize)", "queue.Queue()").replace(
            "Start the workers first", "A plain queue is fine since the workers keep up; start them first")
        bad = [unbounded if maxsize else early_exit, no_join]  # early exit + bounded queue would block for ever
        tests = _consts(ITEMS=items, WORKERS=workers, FAILING=failing, MAXSIZE=maxsize) + f"FN = {fn}\n" + _QUEUE_TESTS
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad)


# Blocking calls in a thread pool, results in input order


_POOL_TESTS = """
import threading, time

calls = []
guard = threading.Lock()

def slow(host):
    with guard:
        calls.append((host, threading.get_ident()))
    time.sleep(0.004 * (len(HOSTS) - HOSTS.index(host)))  # the first items finish last
    if host in FAILING:
        raise LookupError(host)
    return ANSWERS[host]

got = FN(HOSTS, slow, MAX_WORKERS)
want = [None if h in FAILING else ANSWERS[h] for h in HOSTS]
assert list(got) == want, f"got {list(got)}, expected {want} (same order as the input)"
threads = {ident for _, ident in calls}
assert threading.get_ident() not in threads, "the lookups ran in the calling thread, not in a pool"
assert 1 < len(threads) <= MAX_WORKERS, f"{len(threads)} worker threads for max_workers={MAX_WORKERS}"
if DEDUPE:
    looked = [h for h, _ in calls]
    assert sorted(looked) == sorted(set(HOSTS)), f"looked up {sorted(looked)}"
"""


@dataclass(frozen=True)
class PoolInOrder:
    """Blocking lookups run in a ThreadPoolExecutor, results in input order (difficulty adds failures as None,
    then duplicate inputs looked up once)."""

    cluster: str = "concurrency"
    name: str = "pool_in_order"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("resolve_all", "lookup_all", "fetch_many", "check_all"))
        what = rng.choice(("hostname", "package name", "ISBN", "zip code"))
        n, workers = rng.randint(6, 9), rng.randint(3, 4)
        hosts = [f"{w}.example" if what == "hostname" else w for w in rng.sample(WORDS, n)]
        answers = {h: rng.randint(1000, 9999) for h in hosts}
        failing = sorted(rng.sample(hosts, 2)) if difficulty >= 2 else []
        dedupe = difficulty >= 3
        if dedupe:
            hosts = hosts + rng.sample(hosts, 3)
            rng.shuffle(hosts)
        param = {"hostname": "host", "package name": "name", "ISBN": "isbn", "zip code": "zip_code"}[what]
        prompt = (f"I have a blocking function `lookup({param})` that looks up a {what} and takes a while "
                  f"(network I/O). Write "
                  f"`{fn}(items, lookup, max_workers)` that runs the lookups in a ThreadPoolExecutor with at most "
                  f"max_workers threads and returns the results as a list in the same order as `items`.")
        if failing:
            prompt += " When a lookup raises, put None in its slot instead of failing the whole batch."
        if dedupe:
            prompt += " The list can contain duplicates: look each distinct item up only once."
        guarded = ("\n\ndef _safe(lookup, item):\n    try:\n        return lookup(item)\n    except Exception:\n"
                   "        return None\n") if failing else ""
        target = "lambda item: _safe(lookup, item)" if failing else "lookup"
        if dedupe:
            body = (f"    unique = list(dict.fromkeys(items))\n    with ThreadPoolExecutor(max_workers=max_workers) "
                    f"as pool:\n        found = dict(zip(unique, pool.map({target}, unique)))\n"
                    "    return [found[item] for item in items]\n")
        else:
            body = (f"    with ThreadPoolExecutor(max_workers=max_workers) as pool:\n"
                    f"        return list(pool.map({target}, items))\n")
        head = (f"from concurrent.futures import ThreadPoolExecutor, as_completed\n{guarded}\n\n"
                f"def {fn}(items, lookup, max_workers):\n")
        reference = _code("`pool.map` runs the calls concurrently but yields the results in input order:",
                          head.replace(", as_completed", "") + body)
        completed = (f"    futures = {{pool.submit({target}, item): item for item in items}}\n"
                     "    return [f.result() for f in as_completed(futures)]\n")
        bad = [_code("Submit everything and collect the results as they finish:",
                     head + "    with ThreadPoolExecutor(max_workers=max_workers) as pool:\n"
                     + completed.replace("    ", "        ", 2).replace("\n    return", "\n        return"))]
        if failing or dedupe:
            unguarded = head.replace(guarded, "").replace(", as_completed", "") + (
                "    with ThreadPoolExecutor(max_workers=max_workers) as pool:\n"
                "        return list(pool.map(lookup, items))\n")
            bad.append(_code("`pool.map` keeps the input order:", unguarded))
        else:
            bad.append(_code("A comprehension keeps the order:", f"def {fn}(items, lookup, max_workers):\n"
                             "    return [lookup(item) for item in items]\n"))
        tests = _consts(HOSTS=hosts, ANSWERS=answers, FAILING=failing, MAX_WORKERS=workers, DEDUPE=dedupe) + (
            f"FN = {fn}\n" + _POOL_TESTS)
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad)


# Transfers between accounts with per-account locks


_BANK_TESTS = """
import threading

_held = threading.local()
pairs = set()

class TrackedLock:
    # A lock that records the order locks are taken in, and refuses (instead of hanging) a second acquire.
    def __init__(self, name):
        self.name, self._lock, self.owner = name, threading.Lock(), None
    def acquire(self, blocking=True, timeout=-1):
        held = getattr(_held, "locks", [])
        if self in held:
            raise RuntimeError(f"deadlock: {self.name} acquired twice by one thread")
        for other in held:
            pairs.add((other.name, self.name))
        if not self._lock.acquire(timeout=1.0):
            raise RuntimeError(f"deadlock waiting for {self.name}")
        self.owner = threading.get_ident()
        _held.locks = held + [self]
        return True
    def release(self):
        self.owner = None
        _held.locks = [h for h in _held.locks if h is not self]
        self._lock.release()
    def locked(self):
        return self._lock.locked()
    def __enter__(self):
        return self.acquire()
    def __exit__(self, *exc):
        self.release()

class TAccount:
    def __init__(self, id, balance):
        self.id, self._balance, self.lock = id, balance, TrackedLock(id)
    @property
    def balance(self):
        assert self.lock.owner == threading.get_ident(), f"{self.id}.balance read without holding its lock"
        return self._balance
    @balance.setter
    def balance(self, value):
        assert self.lock.owner == threading.get_ident(), f"{self.id}.balance written without holding its lock"
        self._balance = value

accts = [TAccount(name, amount) for name, amount in START]
a, b, c = accts
FN(a, b, 10)
FN(b, a, 4)
FN(c, a, 7)
FN(b, c, 1)
assert [x._balance for x in accts] == [START[0][1] + 1, START[1][1] + 5, START[2][1] - 6]
inverted = sorted(p for p in pairs if (p[1], p[0]) in pairs)
assert not inverted, f"locks taken in both orders (deadlock risk): {inverted}"

if CHECK_FUNDS:
    before = [x._balance for x in accts]
    try:
        FN(a, b, before[0] + 1)
    except ValueError:
        pass
    else:
        raise AssertionError("overdrawing should raise ValueError")
    assert [x._balance for x in accts] == before, "a refused transfer changed a balance"

if SAME:
    before = a._balance
    FN(a, a, 5)
    assert a._balance == before

def shuffle(i):
    for j in range(20):
        src, dst = accts[(i + j) % 3], accts[(i + 2 * j + 1) % 3]
        if src is not dst:
            FN(src, dst, 1)

total = sum(x._balance for x in accts)
pool = [threading.Thread(target=shuffle, args=(i,)) for i in range(4)]
for t in pool: t.start()
for t in pool: t.join()
assert sum(x._balance for x in accts) == total, "money appeared or vanished"
"""


@dataclass(frozen=True)
class LockOrderedTransfer:
    """Move money between two accounts, each with its own lock, atomically and without deadlock (lock
    ordering); difficulty adds refusing an overdraft, then a transfer to the same account."""

    cluster: str = "concurrency"
    name: str = "lock_ordered_transfer"

    def make(self, rng: random.Random, difficulty: int) -> Task:
        fn = rng.choice(("transfer", "move_funds", "send_money", "pay"))
        names = [f"acct-{w}" for w in rng.sample(WORDS, 3)]
        start = [(name, rng.randint(50, 200)) for name in names]
        funds, same = difficulty >= 2, difficulty >= 3
        prompt = (f"Each account has its own lock:\n\n```python\nclass Account:\n    def __init__(self, id, balance):\n"
                  "        self.id = id\n        self.balance = balance\n        self.lock = threading.Lock()\n```\n\n"
                  f"Write `{fn}(src, dst, amount)` that moves the amount atomically (hold both accounts' locks "
                  f"while touching balances) and can't deadlock when two threads do {fn}(x, y, ..) and "
                  f"{fn}(y, x, ..) at the same time.")
        if funds:
            prompt += " If src doesn't have enough money raise ValueError and change nothing."
        if same:
            prompt += " src and dst may be the same account; that's a no-op."
        check_src = ("            if src.balance < amount:\n                raise ValueError(\"insufficient funds\")\n"
                     if funds else "")
        guard = "    if src is dst:\n        return\n" if same else ""
        move = "            src.balance -= amount\n            dst.balance += amount\n"
        reference = _code(
            "Always take the two locks in the same global order (by account id), whichever way the money moves:",
            f"def {fn}(src, dst, amount):\n{guard}    first, second = sorted((src, dst), key=lambda a: a.id)\n"
            f"    with first.lock:\n        with second.lock:\n{check_src}{move}")
        naive = _code("Lock both accounts, then move the money:",
                      f"def {fn}(src, dst, amount):\n{guard}    with src.lock:\n        with dst.lock:\n"
                      f"{check_src}{move}")
        bad = [naive]
        if same:
            bad.append(_code("Take the locks in id order so two transfers can't deadlock:",
                             f"def {fn}(src, dst, amount):\n"
                             "    first, second = sorted((src, dst), key=lambda a: a.id)\n"
                             f"    with first.lock:\n        with second.lock:\n{check_src}{move}"))
        elif funds:
            bad.append(_code("Check the balance first, then lock in id order:",
                             f"def {fn}(src, dst, amount):\n    if src.balance < amount:\n"
                             "        raise ValueError(\"insufficient funds\")\n"
                             "    first, second = sorted((src, dst), key=lambda a: a.id)\n"
                             f"    with first.lock:\n        with second.lock:\n{move}"))
        else:
            bad.append(_code("Locking the source is enough to make the transfer safe:",
                             f"def {fn}(src, dst, amount):\n    with src.lock:\n        src.balance -= amount\n"
                             "    dst.balance += amount\n"))
        tests = _consts(START=start, CHECK_FUNDS=funds, SAME=same) + f"FN = {fn}\n" + _BANK_TESTS
        return draft(self, difficulty, prompt=prompt, check=PythonTests(tests, entry_point=fn), reference=reference,
                     bad=bad)


TEMPLATES = (SharedCounter(), QueueWorkers(), PoolInOrder(), LockOrderedTransfer())

"""Redaction coverage: which kinds are redacted, how often, at what false-positive rate and what cost, with the
rules of a baseline commit measured side by side in the same run.

    python bench/bench_redaction_coverage.py [--per-kind 200] [--per-category 500] [--records 1000]
                                             [--rounds 7] [--baseline REV|none] [--seed 1]

(a) Kinds covered: the rules in the order they run (`redact_rules.RULES`), the placeholders, and the generated
    kinds of tests/secret_kinds.py (the catalogue the daemon fuzz sends through every field).
(b) Detection rate per kind: `--per-kind` generated secrets, each in a random surrounding (prose, quotes, a
    JSON value, JSON-escaped or URL-encoded text); detected = no part of it (whole, or any aligned 16-character
    window) is left.
(c) False-positive rate on the ordinary corpus (tests/ordinary_corpus.py, `--per-category` texts of each
    category): the share of texts that change at all. Also shown: random 16-digit numbers with a card prefix
    and no Luhn filter, a tenth of which are Luhn-valid by chance and are then indistinguishable from cards.
(d) CPU cost of `redact_trajectory` per ordinary ~4 KB record (bench_redaction.realistic), baseline and current
    rules interleaved round by round, best of `--rounds`; then each rule new since the baseline, alone.

The baseline is the privacy package at REV (default: the commit before issue 20 item 5), read from git into a
temporary package; `--baseline none` skips it.
"""

from __future__ import annotations

import argparse
import importlib
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_redaction import realistic  # noqa: E402
from redaction_variants import VARIANTS, luhn_ok  # noqa: E402
from tests.ordinary_corpus import ordinary_texts  # noqa: E402
from tests.secret_kinds import KINDS, make_secret, needles  # noqa: E402

from ghost_agent.privacy import redact as current  # noqa: E402
from ghost_agent.privacy import redact_rules  # noqa: E402
from ghost_agent.privacy.redact import RECORD_SEP, redact_text  # noqa: E402

DEFAULT_BASELINE = "382d082"  # the last commit before issue 20, item 5
PACKAGE = "src/ghost_agent/privacy"
CONTEXTS = ["{}", "before {} after", 'x = "{}"', "'{}'", "({})", "see:\n{}\n.", "{}.", "\\n{}\\n", "%20{}%20",
            '{{"v": "{}"}}', "The user wrote: {} -- please keep it safe.", "```\n{}\n```"]


def load_baseline(rev: str, workdir: Path) -> ModuleType | None:
    """`ghost_agent.privacy.redact` as it was at `rev`, imported as a separate package from a copy."""
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, f"{PACKAGE}/"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        print(f"    (no baseline: {listing.stderr.strip()})")
        return None
    package = workdir / "privacy_baseline"
    package.mkdir()
    for path in listing.stdout.split():
        if path.endswith(".py"):
            source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True,
                                    text=True, check=True).stdout
            (package / Path(path).name).write_text(source.replace("ghost_agent.privacy", "privacy_baseline"))
    sys.path.insert(0, str(workdir))
    return importlib.import_module("privacy_baseline.redact")


# --------------------------------------------------------------------------------------------- (a) kinds


def show_kinds(baseline: ModuleType | None) -> set[str]:
    """Print the rules and placeholders; return the names of the rules the baseline lacks."""
    names = [rule.name for rule in redact_rules.RULES]
    old: set[str] = set()
    if baseline is not None:
        rules_module = sys.modules["privacy_baseline.redact_rules"]
        old_rules = getattr(rules_module, "RULES", None) or getattr(rules_module, "_RULES", ())
        old = {rule.name for rule in old_rules}
    new = [n for n in names if n not in old] if old else []
    placeholders = sorted({v for k, v in vars(current).items() if k.isupper() and isinstance(v, str)
                           and v.startswith("<") and v.endswith(">")})
    print(f"(a) kinds covered: {len(names)} rules ({len(old) or '?'} in the baseline), {len(placeholders)} "
          f"placeholders, {len(KINDS)} generated kinds in tests/secret_kinds.py")
    print("    rules, in the order they run:", ", ".join(f"{n}*" if n in new else n for n in names))
    print("    (* new since the baseline; Discord bot tokens are found with the vendor tokens at '.')")
    print("    placeholders:", " ".join(placeholders))
    return set(new)


# --------------------------------------------------------------------------------------------- (b) detection


def detection(redactors: dict[str, Callable[[str], str]], per_kind: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"(b) detection rate per kind: {per_kind} generated secrets each, in a random surrounding "
          f"({len(CONTEXTS)} kinds of surrounding)")
    header = "".join(f"{name:>10s}" for name in redactors)
    print(f"    {'kind':28s}{header}")
    totals = dict.fromkeys(redactors, 0)
    for kind in KINDS:
        found = dict.fromkeys(redactors, 0)
        for _ in range(per_kind):
            secret = make_secret(kind, rng)
            text = rng.choice(CONTEXTS).format(secret.text)
            parts = needles(secret.parts)
            for name, redact in redactors.items():
                out = redact(text)
                found[name] += not any(part in out for part in parts)
        for name in redactors:
            totals[name] += found[name]
        print(f"    {kind:28s}" + "".join(f"{found[n] / per_kind:10.1%}" for n in redactors))
    print(f"    {'all kinds':28s}" + "".join(f"{totals[n] / (per_kind * len(KINDS)):10.1%}" for n in redactors))


def variants(redactors: dict[str, Callable[[str], str]], per_kind: int, seed: int) -> None:
    rng = random.Random(seed + 3)
    print(f"(b2) detection on wider forms than the catalogue: {per_kind} each")
    print(f"    {'kind':44s}" + "".join(f"{name:>10s}" for name in redactors))
    for kind, make in VARIANTS.items():
        found = dict.fromkeys(redactors, 0)
        missed: list[str] = []
        for _ in range(per_kind):
            text, secret = make(rng)
            text = rng.choice(CONTEXTS).format(text)
            for name, redact in redactors.items():
                ok = secret not in redact(text)
                found[name] += ok
                if not ok and name == "current" and len(missed) < 2:
                    missed.append(text)
        print(f"    {kind:44s}" + "".join(f"{found[n] / per_kind:10.1%}" for n in redactors))
        for text in missed:
            print(f"      missed: {text!r}")


# --------------------------------------------------------------------------------------------- (c) false positives


def false_positives(redactors: dict[str, Callable[[str], str]], per_category: int, seed: int) -> None:
    rng = random.Random(seed + 1)
    corpus = ordinary_texts(rng, per_category)
    print(f"(c) false positives: share of ordinary texts changed ({per_category} generated per category; the fixed "
          "list whole)")
    header = "".join(f"{name:>10s}" for name in redactors)
    print(f"    {'category':36s}{'texts':>7s}{header}")
    examples: list[str] = []
    totals = dict.fromkeys(redactors, 0)
    count = 0
    for category, texts in corpus.items():
        changed = dict.fromkeys(redactors, 0)
        for text in texts:
            for name, redact in redactors.items():
                out = redact(text)
                if out != text:
                    changed[name] += 1
                    if name == "current" and len(examples) < 5:
                        examples.append(f"{text!r} -> {out!r}")
        count += len(texts)
        for name in redactors:
            totals[name] += changed[name]
        print(f"    {category:36s}{len(texts):7d}" + "".join(f"{changed[n] / len(texts):10.2%}" for n in redactors))
    print(f"    {'all ordinary text':36s}{count:7d}" + "".join(f"{totals[n] / count:10.2%}" for n in redactors))
    for example in examples:
        print("      e.g.", example)
    numbers = [rng.choice("3456") + "".join(rng.choice("0123456789") for _ in range(15)) for _ in range(per_category)]
    luhn = sum(luhn_ok(n) for n in numbers) / len(numbers)
    hit = sum(redactors["current"](f"id {n}") != f"id {n}" for n in numbers) / len(numbers)
    print(f"    random 16-digit ids with a card prefix, no Luhn filter: {luhn:.1%} Luhn-valid by chance, "
          f"{hit:.1%} redacted as cards (the rule's floor: such an id IS a well-formed card number)")


# --------------------------------------------------------------------------------------------- (d) cost


def cost(trajectory_redactors: dict[str, Callable[[dict[str, Any]], Any]], new_rules: set[str], n: int,
         rounds: int, seed: int) -> None:
    rng = random.Random(seed + 2)
    records = [realistic(rng, i) for i in range(n)]
    best = {name: float("inf") for name in trajectory_redactors}
    for _ in range(rounds):  # interleaved: a load spike on the machine hits both alike
        for name, redact in trajectory_redactors.items():
            c0 = time.process_time()
            for record in records:
                redact(record)
            best[name] = min(best[name], time.process_time() - c0)
    print(f"(d) cost: redact_trajectory over {n} ordinary ~4 KB records, CPU time, best of {rounds} interleaved rounds")
    for name, seconds in best.items():
        print(f"    {name:10s} {seconds / n * 1e6:7.1f} us/record")
    if "baseline" in best:
        print(f"    current / baseline: {best['current'] / best['baseline']:.2f}x")
    if not new_rules:
        return
    texts = []
    for record in records[:200]:
        strings: list[str] = []
        current._collect({k: v for k, v in record.items() if k not in current.PROTECTED_FIELDS}, strings, 0, False)
        texts.append(RECORD_SEP.join(strings))
    print("    each new rule alone over the same records (its lowercase or shape copy included):")
    for rule in redact_rules.RULES:
        if rule.name not in new_rules:
            continue
        seconds = float("inf")
        for _ in range(rounds):
            c0 = time.process_time()
            for text in texts:
                redact_rules.redact_with(text, (rule,))
            seconds = min(seconds, time.process_time() - c0)
        print(f"      {rule.name:20s} {seconds / len(texts) * 1e6:6.1f} us/record")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-kind", type=int, default=200)
    parser.add_argument("--per-category", type=int, default=500)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="a git revision, or none")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-redaction-coverage-"))
    try:
        baseline = None if args.baseline == "none" else load_baseline(args.baseline, workdir)
        redactors: dict[str, Callable[[str], str]] = {"current": redact_text}
        trajectories: dict[str, Callable[[dict[str, Any]], Any]] = {"current": current.redact_trajectory}
        if baseline is not None:
            redactors = {"baseline": baseline.redact_text, **redactors}
            trajectories = {"baseline": baseline.redact_trajectory, **trajectories}
        print(f"baseline: {args.baseline if baseline is not None else 'none'}")
        new_rules = show_kinds(baseline)
        detection(redactors, args.per_kind, args.seed)
        variants(redactors, args.per_kind, args.seed)
        false_positives(redactors, args.per_category, args.seed)
        cost(trajectories, new_rules, args.records, args.rounds, args.seed)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

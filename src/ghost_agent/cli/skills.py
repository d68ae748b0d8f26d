"""`ghost-agent skills candidates | promote ID | reject ID | ls`: review what the skills phase mined.

- `candidates [--all] [--limit N] [--json]`: the proposed tool sequences, most supported first — id, support
  (validator-passing trajectories containing the sequence), length, the sequence and a sample request.
  `--all` adds the promoted and rejected ones.
- `promote ID`: the sequence becomes a pinned lesson (source `skill`), shown to every session for similar
  requests inside the untrusted notes block, like any pinned lesson.
- `reject ID [--reason TEXT]`: never proposed again; a promoted skill's lesson is retracted.
- `ls [--json]`: the promoted skills and their lessons' status.

ID is a candidate id or a unique prefix (at least 4 characters). Exit 0 done, 1 no such candidate / an
ambiguous prefix / no store, 2 usage. Listing a home without a skills store prints nothing and creates
nothing. Decisions are logged to the home's log (`skill_decided`); stdout carries only the output, without
control characters.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO, Any

import orjson

from ghost_agent.cli.args import cli_settings, home_config_parent, positive_int
from ghost_agent.cli.models import home_logging
from ghost_agent.home import GhostHome
from ghost_agent.logging import get_logger
from ghost_agent.memory.sanitize import strip_controls
from ghost_agent.memory.store import SkillMemory, SkillMemoryError
from ghost_agent.skills_auto.promote import promote, reject
from ghost_agent.skills_auto.store import Candidate, SkillStore, SkillStoreError

log = get_logger("skills_cli")

EXIT_OK, EXIT_FAIL = 0, 1
MIN_PREFIX = 4
SAMPLE_CHARS = 80


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `skills` and its subcommands on the main parser's subparsers action."""
    common = home_config_parent("GHOST_HOME whose skills to use")
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser: argparse.ArgumentParser = sub.add_parser(
        "skills", help="review mined tool sequences: list candidates, promote or reject them",
        description="The skills phase mines tool-call sequences that recur in validator-passing turns. They stay "
        "candidates until you promote one: it then becomes a pinned lesson, shown to every session for similar "
        "requests as data, not instructions.",
    )
    ssub = parser.add_subparsers(dest="skills_command", metavar="SUBCOMMAND")
    ssub.required = True

    cands = ssub.add_parser("candidates", parents=[common], help="the proposed sequences, most supported first")
    cands.add_argument("--all", action="store_true", help="include promoted and rejected sequences")
    cands.add_argument("--limit", type=positive_int, help="only the first N")
    cands.set_defaults(func=cmd_skills, parser=cands)

    promote_p = ssub.add_parser("promote", parents=[common], help="make a candidate a pinned lesson (source skill)")
    promote_p.add_argument("id", help="candidate id or a unique prefix (4+ characters)")
    promote_p.set_defaults(func=cmd_skills, parser=promote_p)

    reject_p = ssub.add_parser("reject", parents=[common], help="never propose it again (retracts a promoted one)")
    reject_p.add_argument("id", help="candidate id or a unique prefix (4+ characters)")
    reject_p.add_argument("--reason", default="operator", help="why (recorded; default: operator)")
    reject_p.set_defaults(func=cmd_skills, parser=reject_p)

    ls = ssub.add_parser("ls", parents=[common], help="the promoted skills and their lessons")
    ls.set_defaults(func=cmd_skills, parser=ls)
    return parser


def cmd_skills(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `skills` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    settings = cli_settings(args, parser)
    home = GhostHome(settings.home)
    command = args.skills_command
    if not home.skills_db.exists():
        if command in ("candidates", "ls"):
            out.write("[]\n" if args.json else "")
            return EXIT_OK
        err.write(f"no skills store in {home.root} ({home.skills_db} does not exist: the skills phase has not "
                  "run yet)\n")
        return EXIT_FAIL
    with home_logging(home):
        try:
            with SkillStore(home.skills_db) as store:
                if command == "candidates":
                    wanted = None if args.all else ("candidate",)
                    found = store.candidates(wanted)[: args.limit] if args.limit else store.candidates(wanted)
                    _list(out, args.json, found)
                    return EXIT_OK
                if command == "ls":
                    return _ls(home, store, args.json, out)
                candidate = _resolve(store, args.id, err)
                if candidate is None:
                    return EXIT_FAIL
                return _decide(home, store, command, candidate, args, out)
        except (SkillStoreError, SkillMemoryError) as exc:
            err.write(f"{exc}\n")
            return EXIT_FAIL


def _decide(
    home: GhostHome, store: SkillStore, command: str, candidate: Candidate, args: argparse.Namespace, out: IO[str]
) -> int:
    if command == "promote":
        with SkillMemory(home.lessons_db) as memory:
            updated = promote(store, memory, candidate)
    elif candidate.lesson_id and home.lessons_db.exists():
        with SkillMemory(home.lessons_db) as memory:
            updated = reject(store, memory, candidate, args.reason)
    else:
        updated = reject(store, None, candidate, args.reason)
    log.info("skill_decided", action=command, candidate_id=candidate.id, status_before=candidate.status,
             status=updated.status, lesson_id=updated.lesson_id or None, support=updated.support)
    if args.json:
        out.write(orjson.dumps(updated.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        lesson = f" (lesson {updated.lesson_id})" if command == "promote" else ""
        out.write(f"{updated.id}  {updated.status}{lesson}  {_one_line(updated.text)}\n")
    return EXIT_OK


def _ls(home: GhostHome, store: SkillStore, as_json: bool, out: IO[str]) -> int:
    promoted = store.candidates(("promoted",))
    statuses: dict[str, str] = {}
    if promoted and home.lessons_db.exists():
        with SkillMemory(home.lessons_db) as memory:
            for c in promoted:
                lesson = memory.get(c.lesson_id) if c.lesson_id else None
                statuses[c.id] = lesson.status if lesson is not None else "missing"
    if as_json:
        docs = [{**c.to_dict(), "lesson_status": statuses.get(c.id, "missing")} for c in promoted]
        out.write(orjson.dumps(docs, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    if promoted:
        out.write(f"{'ID':<12}  {'SUPPORT':>7}  {'LESSON':<12}  {'LESSON STATUS':<13}  SEQUENCE\n")
    for c in promoted:
        out.write(f"{c.id:<12}  {c.support:>7}  {c.lesson_id[:12]:<12}  {statuses.get(c.id, 'missing'):<13}  "
                  f"{_one_line(c.text)}\n")
    return EXIT_OK


def _list(out: IO[str], as_json: bool, found: Sequence[Candidate]) -> None:
    if as_json:
        out.write(orjson.dumps([c.to_dict() for c in found], option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if found:
        out.write(f"{'ID':<12}  {'STATUS':<9}  {'SUPPORT':>7}  {'LEN':>3}  SEQUENCE\n")
    for c in found:
        out.write(f"{c.id:<12}  {c.status:<9}  {c.support:>7}  {c.length:>3}  {_one_line(c.text)}\n")
        if c.samples:
            sample = _one_line(c.samples[0])
            if len(sample) > SAMPLE_CHARS:
                sample = sample[: SAMPLE_CHARS - 1] + "…"
            out.write(f"{'':<12}  e.g. {sample!r}\n")


def _resolve(store: SkillStore, wanted: str, err: IO[str]) -> Candidate | None:
    """The candidate with id `wanted`, else the one whose id starts with it (4+ characters)."""
    exact = store.get(wanted.strip().lower())
    if exact is not None:
        return exact
    if len(wanted.strip()) < MIN_PREFIX:
        err.write(f"no candidate with id {_one_line(wanted)!r} (a prefix needs at least {MIN_PREFIX} characters)\n")
        return None
    matches = store.find(wanted)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        err.write(f"no candidate with id {_one_line(wanted)!r} in {store.path}\n")
    else:
        err.write(f"{_one_line(wanted)!r} is ambiguous: " + ", ".join(c.id for c in matches[:10]) + "\n")
    return None


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text).split())


def run_skills_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent skills <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args(["skills", *argv])
        return cmd_skills(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


__all__ = ["add_subparser", "cmd_skills", "run_skills_cli"]

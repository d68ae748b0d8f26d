"""`ghost-agent lessons ls | show ID | pin ID | archive ID | retract ID`: see and curate what was learned.

- `ls [--status S]… [--session ID] [--limit N] [--json]`: one line per lesson, oldest first — id, status
  (active | pinned | archived | retracted), source, session, created, uses, a short text.
- `show ID [--json]`: the whole record, and which sessions see it.
- `pin ID`: promote a lesson to every session (the one way a lesson crosses sessions); restores an archived one.
- `archive ID`: hide it from every session and from dedup; never deletes (`pin` brings it back).
- `retract ID [--reason TEXT]`: the lesson is wrong: never shown or merged into again, kept for the record.

ID is a lesson id or a unique prefix of one (at least 4 characters). Exit 0 done, 1 no such lesson / an
ambiguous prefix / an action the lesson's status forbids (a retracted lesson cannot be pinned or archived),
2 usage. `ls` and `show` on a home without a lesson store print nothing / exit 1 and create nothing. Actions
are logged to the home's log (`lesson_curated`), not to stdout, which carries the output; text is shown
without control characters, so a stored lesson cannot drive the terminal.

`add_subparser(sub)` registers the command on the main parser (`cli/main.py`'s `func`/`parser` convention);
`run_lessons_cli(argv, out, err)` runs it standalone (tests, scripts).
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from typing import IO, Any

import orjson

from ghost_agent.cli.args import cli_settings, home_config_parent, positive_int
from ghost_agent.cli.models import home_logging
from ghost_agent.home import GhostHome
from ghost_agent.logging import get_logger
from ghost_agent.memory.bus import shown_as
from ghost_agent.memory.demonstrations import Demonstration
from ghost_agent.memory.lessons import STATUSES, Lesson
from ghost_agent.memory.sanitize import instruction_flags, strip_controls
from ghost_agent.memory.store import SkillMemory, SkillMemoryError

log = get_logger("lessons_cli")

EXIT_OK, EXIT_FAIL = 0, 1
MIN_PREFIX = 4
SHORT_ID = 12
PREVIEW_CHARS = 60
SESSION_COLUMN = 16


def add_subparser(sub: Any) -> argparse.ArgumentParser:
    """Register `lessons` and its subcommands on the main parser's subparsers action."""
    common = home_config_parent("GHOST_HOME whose lessons to use")
    common.add_argument("--json", action="store_true", help="print JSON instead of text")

    parser: argparse.ArgumentParser = sub.add_parser(
        "lessons", help="list, show, pin, archive and retract learned lessons",
        description="See and curate what the agent learned. A lesson is shown only to the session that wrote it "
        "until it is pinned; archive hides it; retract marks it wrong. Nothing is ever deleted.",
    )
    lsub = parser.add_subparsers(dest="lessons_command", metavar="SUBCOMMAND")
    lsub.required = True

    ls = lsub.add_parser("ls", parents=[common], help="one line per lesson (oldest first)")
    ls.add_argument("--status", action="append", choices=STATUSES, help="only this status (repeatable)")
    ls.add_argument("--session", help="only lessons written by this session id")
    ls.add_argument("--limit", type=positive_int, help="only the N most recent of the selection")
    ls.set_defaults(func=cmd_lessons, parser=ls)

    show = lsub.add_parser("show", parents=[common], help="one lesson in full, and who sees it")
    show.add_argument("id", help="lesson id or a unique prefix (4+ characters)")
    show.set_defaults(func=cmd_lessons, parser=show)

    for name, help_text in (
        ("pin", "show the lesson to every session (restores an archived one)"),
        ("archive", "hide the lesson from every session; never deletes (pin brings it back)"),
        ("retract", "mark the lesson wrong: never shown again, kept for the record"),
    ):
        action = lsub.add_parser(name, parents=[common], help=help_text)
        action.add_argument("id", help="lesson id or a unique prefix (4+ characters)")
        if name == "retract":
            action.add_argument("--reason", default="operator", help="why (recorded; default: operator)")
        action.set_defaults(func=cmd_lessons, parser=action)
    return parser


def cmd_lessons(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Dispatch a parsed `lessons` command; returns the exit code."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    settings = cli_settings(args, parser)
    home = GhostHome(settings.home)
    command = args.lessons_command
    if not home.lessons_db.exists():
        if command == "ls":
            out.write("[]\n" if args.json else "")
            return EXIT_OK
        err.write(f"no lesson store in {home.root} ({home.lessons_db} does not exist)\n")
        return EXIT_FAIL
    with home_logging(home):
        try:
            with SkillMemory(home.lessons_db) as memory:
                if command == "ls":
                    return _ls(memory, args, out)
                lesson = _resolve(memory, args.id, err)
                if lesson is None:
                    return EXIT_FAIL
                if command == "show":
                    _write(out, args.json, lesson, full=True, demos=memory.demonstrations([lesson.id]))
                    return EXIT_OK
                return _act(memory, command, lesson, args, out, err)
        except SkillMemoryError as exc:
            err.write(f"{exc}\n")
            return EXIT_FAIL


def _ls(memory: SkillMemory, args: argparse.Namespace, out: IO[str]) -> int:
    wanted = set(args.status or STATUSES)
    selection: Iterable[Lesson] = (
        lesson for lesson in memory.all(include_archived=True, include_retracted=True, written_by=args.session)
        if lesson.status in wanted
    )
    if args.limit:
        selection = deque(selection, maxlen=args.limit)
    lessons = list(selection)
    if args.json:
        out.write(orjson.dumps([lesson.to_dict() for lesson in lessons], option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    if lessons:
        out.write(f"{'ID':<{SHORT_ID}}  {'STATUS':<9}  {'SOURCE':<10}  {'SESSION':<{SESSION_COLUMN}}  "
                  f"{'CREATED':<20}  {'USES':>4}  TEXT\n")
    for lesson in lessons:
        out.write(format_line(lesson) + "\n")
    return EXIT_OK


def _act(
    memory: SkillMemory, command: str, lesson: Lesson, args: argparse.Namespace, out: IO[str], err: IO[str]
) -> int:
    if lesson.status == "retracted":
        if command == "retract":
            _write(out, args.json, lesson)  # idempotent: already where the operator wants it
            return EXIT_OK
        err.write(f"lesson {lesson.id} is retracted ({lesson.retract_reason or 'no reason'}); "
                  f"a retracted lesson cannot be {'pinned' if command == 'pin' else 'archived'}\n")
        return EXIT_FAIL
    if command == "pin":
        done = memory.pin(lesson.id)
    elif command == "archive":
        done = memory.archive(lesson.id)
    else:
        done = memory.retract(lesson.id, reason=args.reason)
    after = memory.get(lesson.id)
    if not done or after is None:  # changed under us (the daemon retracted it meanwhile)
        err.write(f"lesson {lesson.id} could not be changed (status now: {after.status if after else 'gone'})\n")
        return EXIT_FAIL
    log.info("lesson_curated", action=command, lesson_id=lesson.id, status_before=lesson.status,
             status=after.status)
    _write(out, args.json, after)
    return EXIT_OK


def _resolve(memory: SkillMemory, wanted: str, err: IO[str]) -> Lesson | None:
    """The lesson with id `wanted`, else the one whose id starts with it (4+ characters); errors on stderr."""
    exact = memory.get(wanted)
    if exact is not None:
        return exact
    wanted = wanted.strip().lower()
    if len(wanted) < MIN_PREFIX:
        err.write(f"no lesson with id {wanted!r} (a prefix needs at least {MIN_PREFIX} characters)\n")
        return None
    matches = [lesson for lesson in memory.all(include_archived=True, include_retracted=True)
               if lesson.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        err.write(f"no lesson with id {wanted!r} in {memory.path}\n")
    else:
        err.write(f"{wanted!r} is ambiguous: " + ", ".join(lesson.id for lesson in matches[:10]) + "\n")
    return None


def visibility(lesson: Lesson) -> str:
    """Which sessions are shown this lesson, in words."""
    status = lesson.status
    if status in ("retracted", "archived"):
        return f"no session ({status})"
    if status == "pinned":
        return "every session (pinned)"
    if lesson.session_id:
        return (f"only session {lesson.session_id!r}: the client conversations that send it as x-ghost-session-id "
                "or the `user` field (pin it to show it to every session)")
    return "no session until pinned (no session recorded)"


def format_line(lesson: Lesson) -> str:
    """`id status source session created uses text` on one line (id and text shortened)."""
    session = _one_line(lesson.session_id) or "-"
    if len(session) > SESSION_COLUMN:
        session = session[: SESSION_COLUMN - 1] + "…"
    text = _one_line(f"{lesson.task} -> {lesson.solution}")
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    created = lesson.created_at[:19].replace("T", " ")
    return (f"{lesson.id[:SHORT_ID]:<{SHORT_ID}}  {lesson.status:<9}  {_one_line(lesson.source) or '-':<10}  "
            f"{session:<{SESSION_COLUMN}}  {created:<20}  {lesson.uses:>4}  {text}")


def format_lesson(lesson: Lesson) -> str:
    """The whole lesson as readable text."""
    rows = [
        ("id", lesson.id), ("status", lesson.status), ("visible to", visibility(lesson)),
        ("source", lesson.source or "-"), ("session", lesson.session_id or "-"),
        ("trajectory", lesson.source_trajectory_id or "-"),
        ("merged from", ", ".join(lesson.merged_sources) or "-"), ("created", lesson.created_at),
        ("uses", str(lesson.uses)), ("last used", lesson.last_used or "-"),
    ]
    if lesson.retracted_at:
        rows.append(("retracted", f"{lesson.retracted_at} ({lesson.retract_reason or 'no reason'})"))
    lines = [f"{name + ':':<13}{_one_line(value)}" for name, value in rows]
    for name in ("task", "mistake", "solution"):
        text = strip_controls(getattr(lesson, name)).strip() or "-"
        lines.append(f"{name}:\n" + "\n".join("  " + line for line in text.splitlines()))
    return "\n".join(lines)


def flags(lesson: Lesson) -> list[str]:
    """What in the lesson reads as an order to the model or a command to run (`memory.sanitize`)."""
    return [flag for name in ("task", "mistake", "solution") for flag in instruction_flags(getattr(lesson, name))]


def format_shown(lesson: Lesson) -> str:
    """What the model will read for this lesson, and the phrases an operator should look at before pinning."""
    lines = ["shown to the model as:", "  " + shown_as(lesson)]
    found = flags(lesson)
    if found:
        lines.append(f"WARNING: {len(found)} phrase(s) read as an instruction or a command; pinning shows them to "
                     "every session:")
        lines += [f"  - {_one_line(flag)}" for flag in found]
    return "\n".join(lines)


def _write(out: IO[str], as_json: bool, lesson: Lesson, *, full: bool = False,
           demos: Sequence[Demonstration] = ()) -> None:
    if as_json:
        record = {**lesson.to_dict(), "visible_to": visibility(lesson), "shown_as": shown_as(lesson),
                  "flags": flags(lesson)}
        if full:
            record["demonstrations"] = [{"request": d.request, "reply": d.reply, "trajectory_id": d.trajectory_id}
                                        for d in demos]
        out.write(orjson.dumps(record, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif full:
        out.write(format_lesson(lesson) + "\n" + format_shown(lesson) + "\n")
        for i, demo in enumerate(demos, 1):  # shown with the lesson, to the same clients
            out.write(f"demonstration {i} (a reply the user accepted, shown with the lesson):\n"
                      f"  request: {_one_line(demo.request)[:200]}\n"
                      + "\n".join("  | " + line for line in strip_controls(demo.reply).splitlines()) + "\n")
    else:
        out.write(f"{lesson.id}  {lesson.status}  visible to {visibility(lesson)}\n")
        if lesson.status == "pinned":
            out.write(format_shown(lesson) + "\n")


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text).split())


def run_lessons_cli(argv: Sequence[str], out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run `ghost-agent lessons <argv>` standalone; usage errors return 2 instead of exiting."""
    root = argparse.ArgumentParser(prog="ghost-agent")
    add_subparser(root.add_subparsers(dest="command"))
    try:
        args = root.parse_args(["lessons", *argv])
        return cmd_lessons(args, args.parser, out, err)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


__all__ = ["add_subparser", "cmd_lessons", "format_lesson", "format_line", "run_lessons_cli", "visibility"]

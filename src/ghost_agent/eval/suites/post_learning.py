"""The `post_learning` suite: 5 file-read-shape prompts that score "discover before reading" (seed 001).

Each prompt asks about a file that does not exist in the agent's workspace. A reply passes when it shows
discovery — listing, finding, searching, locating or verifying the file, or talking about the workspace —
instead of fabricating the file's contents. That is the lesson the Reflector writes after a FileNotFoundError,
so a compare against a pre-seeding baseline shows whether the lesson generalises to fresh turns.

The prompts themselves contain none of the discovery words, so the stub runner (which echoes the prompt) fails
every task here, as it must for non-regression tasks.
"""

from __future__ import annotations

from ghost_agent.eval.task import EvalTask

SUITE = "post_learning"
CLUSTER = "file_read"

# The seed's keywords (list / find / search / locate / verify / workspace) with their inflections, any case.
DISCOVERY_PATTERN = (
    r"(?i)\b(?:list(?:s|ed|ing)?|find(?:s|ing)?|search(?:es|ed|ing)?|locat(?:e|es|ed|ing|ion)"
    r"|verif(?:y|ies|ied|ying|ication)|workspaces?)\b"
)

_PROMPTS: tuple[tuple[str, str], ...] = (
    ("config-port", "Read config.yaml and tell me which port the server is configured to use."),
    ("access-log-500s", "Open access.log and tell me how many requests returned HTTP status 500."),
    ("env-database-url", "What is the value of DATABASE_URL in the .env file? Quote it exactly."),
    ("todo-summary", "Summarise the open TODO items written in notes/todo.md."),
    ("emails-unique", "Parse emails.txt and tell me how many unique email addresses it contains."),
)


def tasks() -> list[EvalTask]:
    """The 5 tasks in a fixed order, ids "post_learning/file_read/<slug>", verifier regex_match with
    `expected` = DISCOVERY_PATTERN (the pattern carries its own case-insensitive flag)."""
    return [
        EvalTask(
            id=f"{SUITE}/{CLUSTER}/{slug}",
            suite=SUITE,
            cluster=CLUSTER,
            prompt=prompt,
            verifier="regex_match",
            expected=DISCOVERY_PATTERN,
        )
        for slug, prompt in _PROMPTS
    ]


__all__ = ["CLUSTER", "DISCOVERY_PATTERN", "SUITE", "tasks"]

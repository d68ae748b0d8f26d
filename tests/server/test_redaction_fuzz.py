"""No secret reaches the disk: 61 secret kinds x 24 fields = 1464 cases through the real daemon, 0 hits allowed.

The daemon runs under uvicorn on a loopback port in front of the scripted fake upstream (also on loopback), with
the real sandbox, trajectory store, lesson store and JSON log (at debug level). For every kind in
`tests/secret_kinds.py` one agent turn carries a *different* secret of that kind in each field a client or the
model controls:

    client: x-ghost-session-id header, x-request-id header, `user`, `metadata`, system message, an earlier
            assistant message, the arguments of an earlier (client) tool call, an earlier tool message, the
            user message; and in a second turn `user` alone, which then becomes the session id
    model:  the agent's tool-call arguments, the tool's output on failure (stderr) and on success (stdout:
            the program decodes the secret from hex, so the arguments never hold it), the final reply, the
            verifier's note

and the other paths carry one each: a streamed fast-path turn (the client sends tools, so the router forwards
it) with the secret in the user message, in the upstream's streamed reply and in its streamed tool-call
arguments (both cut into 5-character chunks); a legacy `/v1/completions` request, plain and streamed, with
the secret in the prompt and in the upstream's text; `/v1/embeddings` with the secret in the input; and an
upstream error whose message holds the secret (logged by the daemon).

The agent turn fails a step and recovers, and the verifier confirms it, so a lesson is written too. Afterwards
every file under GHOST_HOME (contents and names of files and directories, the log included) is searched for
each secret whole and for every aligned 16-character window of it (`grep -F`): the test fails on any hit and
names the kind and field.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from ghost_agent.home import GhostHome
from ghost_agent.llm.scripted import ScriptedBackend, ScriptedReply, tool_call
from ghost_agent.sandbox.detect import get_sandbox
from ghost_agent.settings import Settings
from ghost_agent.trajectories.collector import TrajectoryCollector
from tests.conftest import app_client, daemon_on_port, make_settings
from tests.secret_kinds import KINDS, Secret, make_secret, needles

FIELDS = (
    "session_header", "request_id_header", "user_field", "metadata", "system_message", "assistant_message",
    "client_tool_call_args", "tool_message", "user_message", "user_field_as_session", "agent_tool_args",
    "tool_output_stderr", "tool_output_stdout", "model_reply", "verifier_note",
    "fast_stream_user_message", "fast_stream_reply", "fast_stream_tool_call_args", "completion_prompt",
    "completion_reply", "completion_stream_prompt", "completion_stream_reply", "embedding_input", "upstream_error",
)
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a value up.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]


async def test_client_ids_holding_a_secret_are_replaced_everywhere(tmp_path: Path) -> None:
    """The echoed x-request-id and the session's trajectory file: pseudonyms; the secret is nowhere on disk."""
    secret = make_secret("github_classic", random.Random(1)).text
    settings = make_settings(tmp_path)
    backend = ScriptedBackend(model="m")
    backend.enqueue(ScriptedReply(content="ok"))
    async with app_client(settings, backend) as client:
        response = await client.post(
            "/v1/chat/completions", headers={"x-request-id": f"req {secret}", "x-ghost-session-id": secret},
            json={"messages": [{"role": "user", "content": "hi"}]},
        )
        plain = await client.get("/health", headers={"x-request-id": "trace-0001"})
    assert response.status_code == 200
    assert response.headers["x-request-id"].startswith("REDACTED_API_KEY-")
    assert plain.headers["x-request-id"] == "trace-0001"  # an id holding no secret is kept for correlation
    files = [p.name for p in Path(settings.home).rglob("*")]
    assert any(name.startswith("session-REDACTED_API_KEY-") for name in files)
    assert not any(secret in name or secret in p.read_text(errors="replace")
                   for p in Path(settings.home).rglob("*") if p.is_file() for name in [p.name])


def test_catalogue_size() -> None:
    assert (len(KINDS), len(FIELDS)) == (61, 24)  # the figures in the module docstring


@pytest.fixture(scope="module")
def _sandbox_runs_code(tmp_path_factory: pytest.TempPathFactory) -> None:
    try:
        get_sandbox(make_settings(tmp_path_factory.mktemp("probe")))
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no sandbox backend can run code here: {exc}")


def _act(tool: str, **args: Any) -> ScriptedReply:
    return ScriptedReply(content=json.dumps({"tool": tool, "args": args}))


def _hex(secret: Secret) -> str:
    return secret.text.encode().hex()


def _turns(secrets: dict[str, Secret]) -> tuple[dict[str, Any], dict[str, Any], list[ScriptedReply]]:
    """The two requests of one kind (kwargs for httpx) and the upstream's script for them."""
    s = {field: secret.text for field, secret in secrets.items()}
    first = {
        "headers": {"x-ghost-session-id": secrets["session_header"].one_line(),
                    "x-request-id": secrets["request_id_header"].one_line()},
        "json": {
            "model": "m",
            "user": s["user_field"],
            "metadata": {"note": s["metadata"]},
            "messages": [
                {"role": "system", "content": f"You are careful.\n{s['system_message']}"},
                {"role": "user", "content": "look it up"},
                {"role": "assistant", "content": f"Here it is:\n{s['assistant_message']}",
                 "tool_calls": [{"id": "call_1", "type": "function",
                                 "function": {"name": "lookup",
                                              "arguments": json.dumps({"q": s["client_tool_call_args"]})}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": s["tool_message"]},
                {"role": "user", "content": f"use python to check this:\n{s['user_message']}"},
            ],
        },
    }
    second = {"json": {"model": "m", "user": s["user_field_as_session"],
                       "messages": [{"role": "user", "content": "use python to say hi"}]}}
    script = [
        _act("python", code=f'NOTE = """{s["agent_tool_args"]}"""\n'
                            f'raise SystemExit(bytes.fromhex("{_hex(secrets["tool_output_stderr"])}").decode())'),
        _act("python", code=f'print(bytes.fromhex("{_hex(secrets["tool_output_stdout"])}").decode())'),
        ScriptedReply(content=f"Checked. The value is:\n{s['model_reply']}"),
        ScriptedReply(content=json.dumps({"verdict": "CONFIRMED", "confidence": 0.95,
                                          "note": f"output matches {s['verifier_note']}"})),
        ScriptedReply(content="hi"),
    ]
    return first, second, script


def _other_paths(secrets: dict[str, Secret]) -> list[tuple[str, dict[str, Any], int, list[ScriptedReply]]]:
    """The fast-path, legacy-completion and embedding requests of one kind, in the order they are sent:
    (path, kwargs for httpx, expected status, what the upstream is scripted to answer)."""
    s = {field: secret.text for field, secret in secrets.items()}
    fast_reply = ScriptedReply(content=f"Found:\n{s['fast_stream_reply']}", chunk_size=5,
                               tool_calls=[tool_call("lookup", json.dumps({"q": s["fast_stream_tool_call_args"]}))])
    return [
        ("/v1/chat/completions", {"json": {"model": "m", "stream": True, "tools": TOOLS, "messages": [
            {"role": "user", "content": f"look this up:\n{s['fast_stream_user_message']}"}]}}, 200, [fast_reply]),
        ("/v1/completions", {"json": {"model": "m", "prompt": f"Continue:\n{s['completion_prompt']}"}}, 200,
         [ScriptedReply(content=f" and then {s['completion_reply']}")]),
        ("/v1/completions", {"json": {"model": "m", "stream": True,
                                      "prompt": f"Continue:\n{s['completion_stream_prompt']}"}}, 200,
         [ScriptedReply(content=f" and then {s['completion_stream_reply']}", chunk_size=5)]),
        ("/v1/embeddings", {"json": {"model": "m", "input": [f"index {s['embedding_input']}"]}}, 200, []),
        ("/v1/embeddings", {"json": {"model": "m", "input": "hello"}}, 400,
         [ScriptedReply(error=(400, f"invalid input, see {s['upstream_error']}"))]),
    ]


def _grep(root: Path, owners: dict[str, tuple[str, str]], work: Path) -> list[tuple[str, str, str]]:
    """(kind, field, where) for every needle found in a file's contents or in a file or directory name."""
    patterns = work / "needles.txt"
    patterns.write_text("\n".join(owners) + "\n")
    hits: list[tuple[str, str, str]] = []
    found = subprocess.run(["grep", "-rFaoH", "-f", str(patterns), str(root)], capture_output=True, text=True,
                           errors="replace")
    assert found.returncode in (0, 1), found.stderr
    for line in found.stdout.splitlines():
        path, _, needle = line.rpartition(":")
        if needle in owners:
            hits.append((*owners[needle], path))
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            hits += [(*owner, f"name {dirpath}/{name}") for needle, owner in owners.items() if needle in name]
    return hits


@pytest.mark.usefixtures("_sandbox_runs_code")
def test_no_secret_of_any_kind_in_any_field_reaches_ghost_home(
    tmp_path: Path, upstream: tuple[str, ScriptedBackend]
) -> None:
    """61 kinds x 24 fields = 1464 secrets through the daemon; grep of the whole GHOST_HOME and its log: 0 hits."""
    url, llm = upstream
    settings: Settings = make_settings(
        tmp_path, router="always-agent", agent_strategy="action-loop", mcts=False, upstream_url=url,
        log_level="debug",
    )
    rng = random.Random(12)
    owners: dict[str, tuple[str, str]] = {}  # needle -> (kind, field)
    plan = []
    for kind in KINDS:
        secrets = {field: make_secret(kind, rng) for field in FIELDS}
        for field, secret in secrets.items():
            owners.update((needle, (kind, field)) for needle in needles(secret.parts))
        plan.append((kind, secrets, *_turns(secrets), _other_paths(secrets)))

    with daemon_on_port(settings) as base, httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
        for kind, secrets, first, second, script, others in plan:
            llm.enqueue(*script)
            for request in (first, second):
                response = client.post("/v1/chat/completions", **request)
                assert response.status_code == 200, (kind, response.text)
            assert llm.pending == 0, kind
            # The secrets really went through: the model (the user's own upstream) saw the client's content and
            # the program's decoded output, unredacted.
            seen = json.dumps([r["messages"] for r in llm.requests[-5:]])
            for field in ("system_message", "tool_message", "user_message", "tool_output_stdout"):
                assert all(part in seen for part in secrets[field].parts), (kind, field)
            for path, request, status, replies in others:
                llm.enqueue(*replies)
                response = client.post(path, **request)
                assert response.status_code == status, (kind, path, response.text)
                if request["json"].get("stream"):
                    assert response.text.rstrip().endswith("data: [DONE]"), (kind, path)
            assert llm.pending == 0, kind
            seen = json.dumps(llm.requests[-5:], ensure_ascii=False)
            for field in ("fast_stream_user_message", "completion_prompt", "completion_stream_prompt",
                          "embedding_input"):
                assert all(part in seen for part in secrets[field].parts), (kind, field)

    home = GhostHome(settings.home)
    with TrajectoryCollector(home.trajectories) as collector:
        records = list(collector.iter_trajectories())
    assert len(records) == 3 * len(KINDS)  # the agent turn, the `user`-as-session turn, the fast path
    agent_turns = [r for r in records if len(r.steps) == 2]
    assert len(agent_turns) == len(KINDS)
    assert sum((r.router or {}).get("decision") == "fast" and (r.router or {}).get("reason") == "client_tools"
               for r in records) == len(KINDS)
    assert all([s.ok for s in r.steps] == [False, True] for r in agent_turns)  # the tools really ran
    assert home.log_file.stat().st_size > 0

    hits = _grep(settings.home, owners, tmp_path)
    leaked = sorted({(kind, field) for kind, field, _ in hits})
    cases = len(KINDS) * len(FIELDS)
    print(f"redaction fuzz: {len(KINDS)} kinds x {len(FIELDS)} fields = {cases} cases, {len(owners)} needles, "
          f"{len(hits)} hits in {len(leaked)} cases")
    assert not hits, f"{len(leaked)} of {cases} (kind, field) cases reached the disk: {leaked}; e.g. {hits[:3]}"

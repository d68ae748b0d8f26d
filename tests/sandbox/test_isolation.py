"""Isolation seen from inside bubblewrap (both variants): network, hidden files, read-only root, identity, env.

Every test checks on the host that what it looks for really exists / really works there (the server accepts,
the secret is readable, the directory is writable), so each fails if the isolation it names breaks.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_agent.sandbox.base import ExecResult, SandboxBackend, SandboxError
from ghost_agent.sandbox.bwrap import BwrapSandbox
from tests.sandbox.conftest import QUICK, LoopbackServer

CHECKOUT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["bwrap", "bwrap_userns"])
def sandbox(request: pytest.FixtureRequest) -> SandboxBackend:
    """Each isolation test runs against both ways bubblewrap can make us nobody."""
    backend: SandboxBackend = request.getfixturevalue(request.param)
    return backend


def py(backend: SandboxBackend, code: str, workspace: Path | None = None) -> ExecResult:
    result = backend.run_sync("python", code, limits=QUICK, workspace=workspace)
    assert result.exit_code == 0, result
    return result


def test_a_loopback_server_on_the_host_is_unreachable(sandbox: SandboxBackend, loopback_server: LoopbackServer) -> None:
    code = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {loopback_server.port}), timeout=2).recv(100)
    print("connected")
except OSError as e:
    print("refused", type(e).__name__)
"""
    result = py(sandbox, code)
    assert result.stdout.startswith("refused"), result
    assert loopback_server.accepted == 0
    # control: the server is reachable from the host, so only the sandbox's own network namespace stopped it
    with socket.create_connection(("127.0.0.1", loopback_server.port), timeout=2) as s:
        assert s.recv(100).startswith(b"hello")
    assert loopback_server.accepted == 1


def test_an_abstract_unix_socket_on_the_host_is_unreachable(sandbox: SandboxBackend) -> None:
    # abstract sockets (dbus, X11) have no file to hide: only the network namespace separates them
    name = f"\0ghost-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(name)
        server.listen()
        code = f"""
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect({name!r})
    print("connected")
except OSError as e:
    print("refused", type(e).__name__)
"""
        assert py(sandbox, code).stdout.startswith("refused")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(name)  # control: reachable from the host


@contextlib.contextmanager
def fake_resolver() -> Iterator[socket.socket | None]:
    """A UDP socket on 127.0.0.1:53, where glibc sends queries when no resolv.conf exists (as inside): a
    sandbox sharing our network would reach it. None when the port is taken (then only the lookup is checked)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind(("127.0.0.1", 53))
    except OSError:
        sock.close()
        yield None
        return
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def test_dns_resolution_fails_and_only_loopback_exists(sandbox: SandboxBackend) -> None:
    with fake_resolver() as resolver:
        code = """
import json, socket
out = {"interfaces": [n for _, n in socket.if_nameindex()]}
try:
    socket.getaddrinfo("ghost-dns-probe.example", 80)
    out["dns"] = "resolved"
except socket.gaierror as e:
    out["dns"] = "failed"
print(json.dumps(out))
"""
        out = json.loads(py(sandbox, code).stdout)
        assert out == {"interfaces": ["lo"], "dns": "failed"}
        if resolver is not None:
            with pytest.raises(BlockingIOError):
                resolver.recv(512)  # no query reached the host's loopback


def test_ghost_home_checkout_and_shadow_are_unreadable(sandbox: SandboxBackend, secret_home: Path) -> None:
    bwrap = sandbox
    assert isinstance(bwrap, BwrapSandbox) and bwrap.runtime is not None
    site = bwrap.runtime.site_dirs[0] if bwrap.runtime.site_dirs else None
    targets = [
        secret_home / "system" / "secret.txt",
        CHECKOUT / "README.md",
        Path(__file__).resolve(),
        CHECKOUT / ".venv" / "pyvenv.cfg",
        Path("/etc/shadow"),
        Path("/etc/passwd"),
    ]
    for t in targets:
        assert t.read_bytes() is not None  # control: each is really there and readable on the host
    dirs = [secret_home, CHECKOUT, Path("/home"), Path.home() / ".ssh"] + ([Path(site)] if site else [])
    code = f"""
import json, os
out = {{}}
for p in {[str(t) for t in targets]!r}:
    try:
        open(p, "rb").read(1)
        out[p] = "READ"
    except OSError as e:
        out[p] = type(e).__name__
for d in {[str(d) for d in dirs]!r}:
    out[d] = "LISTED" if os.path.isdir(d) and os.listdir(d) else "absent"
out["/"] = sorted(os.listdir("/"))
print(json.dumps(out))
"""
    out = json.loads(py(sandbox, code).stdout)
    root = out.pop("/")
    assert all(v in ("FileNotFoundError", "PermissionError", "absent") for v in out.values()), out
    # the whole root is an allow-list: anything bound by mistake (/home, /work, /sys) shows up here; /etc holds
    # only /etc/alternatives (test_awk_resolves_but_etc_stays_closed)
    assert set(root) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "sbin", "tmp", "usr",
                         "workspace", *[p.strip("/").split("/")[0] for p in (bwrap.runtime.prefix,)]}, root


def test_writes_outside_the_workspace_fail(sandbox: SandboxBackend, host_dir: Path) -> None:
    bwrap = sandbox
    assert isinstance(bwrap, BwrapSandbox) and bwrap.runtime is not None
    name = f"ghost-write-probe-{uuid.uuid4().hex}"
    mapped = [Path("/usr") / name, Path(bwrap.runtime.prefix) / name, host_dir / name]  # host paths
    inside_only = [f"/{name}", f"/etc/{name}", f"/opt/ghost/site-packages/{name}", f"/proc/sys/kernel/{name}"]
    code = f"""
import json
out = {{}}
for p in {[str(p) for p in mapped] + inside_only!r}:
    try:
        with open(p, "w") as f:
            f.write("x")
        out[p] = "WROTE"
    except OSError as e:
        out[p] = type(e).__name__
with open("/tmp/{name}", "w") as f:
    f.write("private")
out["tmp"] = open("/tmp/{name}").read()
try:
    with open("/proc/sys/kernel/hostname", "w") as f:
        f.write("pwned")
    out["hostname"] = "WROTE"
except OSError as e:
    out["hostname"] = type(e).__name__
print(json.dumps(out))
"""
    out = json.loads(py(sandbox, code).stdout)
    assert out.pop("tmp") == "private"  # /tmp works inside ...
    assert "WROTE" not in out.values(), out
    assert not (Path("/tmp") / name).exists()  # ... and is not the host's
    for p in mapped:
        assert not p.exists(), p
    assert os.access(host_dir, os.W_OK)  # control: the host dir itself is writable


def test_the_workspace_is_writable_and_visible_on_the_host(sandbox: SandboxBackend, tmp_path: Path) -> None:
    bwrap = sandbox
    assert isinstance(bwrap, BwrapSandbox)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "given.txt").write_text("from the host\n")  # written by the daemon (root) before the run
    code = """
import os
with open("given.txt", "a") as f:
    f.write("appended inside\\n")
os.makedirs("sub/dir")
with open("/workspace/sub/dir/out.txt", "w") as f:
    f.write("made inside")
print(os.getcwd())
"""
    assert py(sandbox, code, workspace=ws).stdout.strip() == "/workspace"
    assert (ws / "given.txt").read_text() == "from the host\nappended inside\n"
    made = ws / "sub" / "dir" / "out.txt"
    assert made.read_text() == "made inside"
    assert made.stat().st_uid == bwrap.host_uid
    assert ws.stat().st_mode & 0o002 == 0  # writable to the sandbox by ownership, never world-writable


def test_it_runs_as_nobody_without_privileges(sandbox: SandboxBackend) -> None:
    code = """
import json, os
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
try:
    os.setuid(0)
    became_root = True
except OSError:  # EPERM as nobody; EINVAL in a user namespace, where uid 0 is not even mapped
    became_root = False
print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups(),
                  "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
                  "nnp": status["NoNewPrivs"].strip(), "became_root": became_root, "pid": os.getpid()}))
"""
    out = json.loads(py(sandbox, code).stdout)
    assert out["uid"] == out["euid"] == out["gid"] == 65534
    assert set(out["groups"]) <= {65534}
    assert int(out["cap_eff"], 16) == 0 and int(out["cap_bnd"], 16) == 0
    assert out["nnp"] == "1" and out["became_root"] is False
    assert out["pid"] < 10  # its own pid namespace


def test_the_environment_is_built_from_scratch(sandbox: SandboxBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHOST_API_KEY", "sk-daemon-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-upstream-secret")
    env = json.loads(py(sandbox, "import json, os; print(json.dumps(dict(os.environ)))").stdout)
    assert not [k for k in env if k.startswith("GHOST_")]
    assert "sk-" not in json.dumps(env)
    assert env["HOME"] == "/workspace" and env["LANG"] == "C.UTF-8"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["MPLBACKEND"] == "Agg"
    assert env["PYTHONPATH"] == "/workspace"  # the stand-in venv does the rest of sys.path, as for the daemon


def test_numpy_pandas_and_sqlite3_work_inside(bwrap: SandboxBackend) -> None:
    code = """
import sqlite3
import numpy as np
import pandas as pd
db = sqlite3.connect(":memory:")
db.execute("create table t (x integer)")
db.executemany("insert into t values (?)", [(i,) for i in range(10)])
df = pd.read_sql_query("select x from t", db)
print(int(np.sum(df["x"].to_numpy() ** 2)), df["x"].mean())
"""
    assert py(bwrap, code).stdout.split() == ["285", "4.5"]
    # bash scripts get the same interpreter (with the packages) as `python3`
    result = bwrap.run_sync("bash", "python3 -c 'import numpy, pandas; print(\"ok\")'", limits=QUICK)
    assert result.stdout.strip() == "ok", result


def test_modules_written_to_the_workspace_are_importable(bwrap: SandboxBackend, tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("def answer():\n    return 42\n")
    assert py(bwrap, "import helper\nprint(helper.answer())", workspace=tmp_path).stdout == "42\n"


def test_no_bytecode_is_written_next_to_the_packages(bwrap: SandboxBackend) -> None:
    out = py(bwrap, "import os, sys, numpy; print(sys.dont_write_bytecode, os.access(numpy.__file__, os.W_OK))")
    assert out.stdout.split() == ["True", "False"]


def test_reported_isolation_is_full(sandbox: SandboxBackend) -> None:
    iso = sandbox.isolation
    assert (iso.isolated, iso.network, iso.filesystem, iso.pid_namespace) == (True, True, True, True)
    assert iso.backend == "bwrap"
    assert iso.details["mode"] in ("setpriv", "userns")


def test_an_unknown_language_or_missing_workspace_is_a_sandbox_error(bwrap: SandboxBackend, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="unsupported language"):
        bwrap.run_sync("ruby", "puts 1", limits=QUICK)
    with pytest.raises(SandboxError, match="does not exist"):
        bwrap.run_sync("python", "pass", limits=QUICK, workspace=tmp_path / "missing")


def test_the_sandbox_init_command_line_names_no_host_path(sandbox: SandboxBackend, secret_home: Path) -> None:
    # bwrap is pid 1 inside; its options (the workspace's host path, the venv's, GHOST_HOME's) travel through
    # `--args FD`, so /proc/1/cmdline shows only the program it runs.
    workspace = secret_home / "workspace" / "session-x"
    workspace.mkdir(parents=True)
    result = py(sandbox, "print(open('/proc/1/cmdline', 'rb').read().replace(b'\\0', b' ').decode())", workspace)
    assert result.ok, result.stderr
    cmdline = result.stdout
    assert "--args" in cmdline
    for host_path in (str(workspace), str(secret_home), str(Path(__file__).resolve().parents[2])):
        assert host_path not in cmdline


def test_awk_resolves_but_etc_stays_closed(sandbox: SandboxBackend) -> None:
    # Debian's /usr/bin/awk goes through /etc/alternatives: a shell one-liner a person would run must work,
    # while the rest of /etc (passwd, hosts, the host's configuration) is not there.
    if sandbox.name != "bwrap":
        pytest.skip("the unisolated fallback sees the host's /etc")
    result = sandbox.run_sync("bash", "printf '1\\n2\\n' | awk '{ s += $1 } END { print s }'; ls /etc",
                              limits=QUICK)
    assert result.exit_code == 0, result
    lines = result.stdout.split()
    assert lines[0] == "3"
    assert set(lines[1:]) <= {"alternatives"}

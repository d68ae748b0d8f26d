"""The command line: flag validation as usage errors, config printing, doctor."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ghost_agent import __version__
from ghost_agent.cli.doctor import run_doctor
from ghost_agent.cli.main import build_parser, main
from ghost_agent.llm.fake_server import free_port
from ghost_agent.settings import FIELDS, load_settings
from tests.conftest import make_settings


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_out_of_range_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["serve", "--frontier-uniform-sample-prob", "2"], capsys)
    assert code == 2
    assert "usage:" in err
    assert "--frontier-uniform-sample-prob" in err and "valid range is [0.0, 1.0]" in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["serve", "--port", "abc"], "--port"),
        (["serve", "--local-model", "gpt"], "invalid choice"),
        (["serve", "--log-format", "xml"], "invalid choice"),
        (["serve", "--host", "0.0.0.0"], "--insecure-no-auth"),
        (["serve", "--upstream-url", "localhost:8080"], "http://"),
    ],
)
def test_bad_flags_exit_2_with_message(args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert fragment in err


def test_every_setting_has_a_serve_flag() -> None:
    parser = build_parser()
    serve = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr,index]
    dests = {a.dest for a in serve._actions}
    assert set(FIELDS) <= dests
    help_text = serve.format_help()
    for flag in ("--frontier-selfplay", "--no-frontier-selfplay", "--prm-model", "--prm-train-cooldown",
                 "--upstream-url", "--api-key", "--home", "--local-model", "--log-level", "--log-format",
                 "--insecure-no-auth", "--max-request-bytes"):
        assert flag in help_text, flag


def test_config_defaults_prints_toml(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["config", "--defaults"], capsys)
    assert code == 0
    assert "[server]" in out and "# port = 8000" in out


def test_config_prints_the_settings_in_force_in_the_defaults_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[server]\nport = 9100\n")
    monkeypatch.setenv("GHOST_MAX_STEPS", "9")
    monkeypatch.setenv("GHOST_API_KEY", "sk-do-not-print-me")
    code, out, err = run_cli(["config", "--home", str(home), "--log-level", "debug"], capsys)
    assert code == 0, err
    assert f"port = 9100  # from config {home / 'config.toml'}" in out
    assert "max_steps = 9  # from env GHOST_MAX_STEPS" in out
    assert 'log_level = "debug"  # from flag --log-level' in out
    assert "# n_ctx = 8192" in out  # a default stays commented out, as in --defaults
    assert "sk-do-not-print-me" not in out and '# api_key = "***"  # set by env GHOST_API_KEY' in out
    assert f"config file read: {home / 'config.toml'}" in out
    # the same layout as --defaults: the same sections and documentation lines, in the same order
    _, defaults, _ = run_cli(["config", "--defaults"], capsys)
    def doc_lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("[", "# ("))]
    assert doc_lines(out) == doc_lines(defaults)
    # and it reads back as a config file giving the same settings
    saved = tmp_path / "saved.toml"
    saved.write_text(out)
    monkeypatch.delenv("GHOST_MAX_STEPS")
    monkeypatch.delenv("GHOST_API_KEY")
    again = load_settings(cli={"config": saved}, environ={})
    assert (again.server.port, again.agent.max_steps, again.logging.level, again.home) == (9100, 9, "debug", home)


def test_config_with_a_bad_value_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("port = 99999\n")
    code, _, err = run_cli(["config", "--home", str(home)], capsys)
    assert code == 2 and "valid range is [0, 65535]" in err


def test_module_entry_point_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "ghost_agent", "--version"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    assert __version__ in result.stdout


def test_doctor_ok_against_a_live_upstream(tmp_path: Path, fake_upstream: tuple[str, object]) -> None:
    url, _ = fake_upstream
    out = io.StringIO()
    code = run_doctor(make_settings(tmp_path, upstream_url=url), out=out)
    text = out.getvalue()
    assert code == 0, text
    for name in ("python", "packages", "home", "telemetry", "upstream"):
        assert any(line.startswith("OK") and f" {name} " in line + " " for line in text.splitlines()), (name, text)


def test_doctor_fails_with_a_fix_when_upstream_is_down(tmp_path: Path) -> None:
    out = io.StringIO()
    settings = make_settings(tmp_path, upstream_url=f"http://127.0.0.1:{free_port()}", upstream_connect_timeout=1.0)
    code = run_doctor(settings, out=out)
    text = out.getvalue()
    assert code == 1
    assert "FAIL  upstream" in text and "fix:" in text


def test_doctor_cli_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["doctor", "--home", str(tmp_path / "h"), "--upstream-url", f"http://127.0.0.1:{free_port()}",
         "--upstream-connect-timeout", "0.5"],
        capsys,
    )
    assert code == 1
    assert "checks passed" in out

"""Framework output goes to the log file, the project's own lines to the terminal."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.unit

_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from linkage_lab.console import framework_output, say
    print("before", flush=True)
    with framework_output("phase one", Path(sys.argv[1])):
        print("framework table", flush=True)
        os.write(2, b"native warning\\n")
        say("progress line")
        with framework_output("nested", Path(sys.argv[1])):
            print("nested framework", flush=True)
    print("after", flush=True)
    try:
        with framework_output("failing", Path(sys.argv[1])):
            raise ValueError("bad input")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
    """
)


def _run(tmp_path, env_extra=None):
    import os

    log = tmp_path / "framework.log"
    env = {**os.environ, **(env_extra or {})}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(log)], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    return done, log


def test_framework_output_goes_to_the_log_and_progress_to_the_terminal(tmp_path):
    done, log = _run(tmp_path, {"LINKAGE_LAB_VERBOSE": "0"})
    out = done.stdout.splitlines()
    assert out[0] == "before" and out[-1] == "after"
    assert "progress line" in out and "framework table" not in done.stdout
    assert any(line.startswith("(framework output: ") for line in out)
    assert "native warning" not in done.stderr and "error: bad input" in done.stderr
    text = log.read_text()
    for line in ("framework table", "native warning", "nested framework", "phase one", "failing"):
        assert line in text
    assert "progress line" not in text


def test_verbose_keeps_framework_output_on_the_terminal(tmp_path):
    done, log = _run(tmp_path, {"LINKAGE_LAB_VERBOSE": "1"})
    assert "framework table" in done.stdout and "native warning" in done.stderr
    assert not log.exists()


def test_progress_line_reads_like_a_sentence():
    from linkage_lab.training.loop import progress_line

    line = progress_line(
        9,
        300,
        41.5,
        980.0,
        {"Metrics/base_velocity/error_vel_xy": 0.21, "Metrics/base_velocity/error_vel_yaw": 0.3},
        2200,
        754,
    )
    assert line == (
        "iteration 10/300  reward 41.50  episode 980 steps  v err 0.210 m/s  yaw err 0.300 rad/s  "
        "2200 steps/s  ETA 12:34"
    )
    assert progress_line(0, 5, None, None, {}, 10, 0) == "iteration 1/5  10 steps/s  ETA 0:00"


def test_cli_verbose_flag_sets_the_environment(monkeypatch):
    from linkage_lab.cli.main import main
    from linkage_lab.console import VERBOSE_ENV, verbose

    monkeypatch.setenv(VERBOSE_ENV, "0")
    assert main(["--verbose", "plot", "/nonexistent-run"]) == 2
    assert verbose()

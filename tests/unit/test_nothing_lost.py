"""Nothing lost, nothing misleading: each case a user found where a command overwrote, lost or misled.

Every test here runs without a simulation (the ``no_simulation`` fixture fails any env build): the
refusals must come before the 15-45 s build, and the files a user owns must be byte-for-byte intact.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
from pathlib import Path

import pytest
import torch
from test_cli_validation import LIMIT, LIMIT_SIZES, MARVIN_SIZES, checkpoint_file, one_error_line, onnx_file

from linkage_lab.cli.main import main

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def no_simulation(monkeypatch):
    """Fail the test if anything builds a simulation."""
    import linkage_lab.runtime

    def make_env(*args, **kwargs):
        raise AssertionError("the simulation was built before the user error was found")

    monkeypatch.setattr(linkage_lab.runtime, "make_env", make_env)


@pytest.fixture
def policies(tmp_path, monkeypatch):
    """A policies/ folder holding a shipped Limit policy (model, record, evaluation) to protect."""
    import linkage_lab.pretrained

    root = tmp_path / "policies"
    folder = root / LIMIT
    folder.mkdir(parents=True)
    checkpoint_file(folder / "model.pt", *LIMIT_SIZES)
    for name in ("train.json", "eval.json", "sweep.json"):
        (folder / name).write_text(json.dumps({"file": name}))
    monkeypatch.setattr(linkage_lab.pretrained, "PRETRAINED_DIR", root)
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- 1. ship checks the policy before it writes, swaps whole, keeps the previous one ---


@pytest.mark.parametrize("no_eval", [True, False])
def test_ship_refuses_another_robots_checkpoint_before_writing(capsys, tmp_path, policies, no_eval):
    before = snapshot(policies)
    (tmp_path / "loose").mkdir()
    marvin = checkpoint_file(tmp_path / "loose" / "marvin_model.pt", *MARVIN_SIZES)
    args = ["ship", "--task", LIMIT, "--checkpoint", str(marvin)] + (["--no-eval"] if no_eval else [])
    assert main(args) == 2
    one_error_line(capsys, "trained with 60 observations and 16 actions", f"{LIMIT} has 48 observations")
    assert snapshot(policies) == before
    assert sorted(p.name for p in policies.iterdir()) == [LIMIT]  # no staging folder left behind


def test_ship_swaps_the_folder_whole_and_keeps_the_previous_policy(capsys, tmp_path, policies):
    before = snapshot(policies / LIMIT)
    (tmp_path / "run").mkdir()
    new = checkpoint_file(tmp_path / "run" / "model_7.pt", *LIMIT_SIZES)
    torch.save({**torch.load(new, weights_only=True), "iter": 7}, new)
    assert main(["ship", "--task", LIMIT, "--checkpoint", str(new), "--no-eval"]) == 0
    shipped = policies / LIMIT
    assert (shipped / "model.pt").read_bytes() == new.read_bytes()
    assert json.loads((shipped / "train.json").read_text())["iterations"] == 8
    # The evaluation files of the old model are not left beside the new one: they moved with it.
    assert not (shipped / "eval.json").exists() and not (shipped / "sweep.json").exists()
    assert snapshot(shipped / "previous") == before
    assert sorted(p.name for p in policies.iterdir()) == [LIMIT]
    assert "previous" in capsys.readouterr().out


def test_a_second_ship_keeps_one_previous_policy(tmp_path, policies):
    from linkage_lab.pretrained import install_policy, stage_policy

    first = snapshot(policies / LIMIT)
    for iteration in (1, 2):
        source = checkpoint_file(tmp_path / f"model_{iteration}.pt", *LIMIT_SIZES)
        install_policy(stage_policy(LIMIT, source, {"iterations": iteration}), LIMIT)
        if iteration == 1:
            assert snapshot(policies / LIMIT / "previous") == first
    previous = policies / LIMIT / "previous"
    assert json.loads((previous / "train.json").read_text()) == {"iterations": 1}
    assert not (previous / "previous").exists()


# --- 2. eval --sweep --out follows the output-folder rules ---


def test_eval_sweep_refuses_a_users_folder_and_keeps_it(capsys, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "sweep.json").write_text("my own sweep")
    (folder / "sweep.png").write_bytes(b"my own plot")
    policy = onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)
    for force in ([], ["--force"]):
        assert main(["eval", "--task", LIMIT, "--onnx", str(policy), "--sweep", "--out", str(folder), *force]) == 2
        one_error_line(capsys, str(folder), "not a linkage-lab output")
    assert (folder / "sweep.json").read_text() == "my own sweep"
    assert (folder / "sweep.png").read_bytes() == b"my own plot"


def fake_report(case_overrides: tuple[str, ...]) -> dict:
    """An ``eval.json`` whose forward speed is the commanded one (read back from the case's override), trotting."""
    from linkage_lab.robots.limit.joints import LEGS

    command = next(o for o in case_overrides if o.startswith("env.commands.base_velocity.ranges.lin_vel_x="))
    speed = float(command.partition("[")[2].partition(",")[0])
    return {
        "episodes": 2,
        "falls": 0,
        "tracking": {
            "lin_vel_xy_rms_mps": 0.01,
            "yaw_rate_rms_radps": 0.01,
            "mean_forward_speed_mps": speed,
            "mean_yaw_rate_radps": 0.0,
        },
        "footfalls": {"alternation": 1.0, "feet": [{"body": f"{leg}_foot", "duty_factor": 0.5} for leg in LEGS]},
    }


@pytest.fixture
def fake_evaluate(monkeypatch):
    """``evaluate`` replaced by one that writes a small eval output per case, as the real one does."""
    import linkage_lab.evaluation.evaluate as evaluate_module
    from linkage_lab.outputs import write_output

    def evaluate(request):
        report = fake_report(tuple(request.overrides))
        write_output(
            request.out_dir,
            evaluate_module.EVAL_COMMAND,
            lambda folder: (folder / "eval.json").write_text(json.dumps(report)),
            request.force,
        )
        return Path(request.out_dir), report

    monkeypatch.setattr(evaluate_module, "evaluate", evaluate)


def test_a_sweep_folder_is_its_own_output_and_force_replaces_it_whole(tmp_path, fake_evaluate):
    from linkage_lab.evaluation.evaluate import EvalRequest
    from linkage_lab.evaluation.sweep import SWEEP_COMMAND, CommandCase
    from linkage_lab.evaluation.sweep_output import run_sweep
    from linkage_lab.outputs import OutputDirError, read_manifest

    out = tmp_path / "sweep"
    request = EvalRequest(task=LIMIT, out_dir=out)
    run_sweep(request, [CommandCase(0.3), CommandCase(0.5)])
    assert read_manifest(out)["command"] == SWEEP_COMMAND
    cases = {f"{CommandCase(v).name}/eval.json" for v in (0.3, 0.5)}
    assert {"sweep.json", "sweep.png", *cases} <= set(read_manifest(out)["files"])
    with pytest.raises(OutputDirError, match="pass --force"):
        run_sweep(request, [CommandCase(0.3)])
    from dataclasses import replace

    run_sweep(replace(request, force=True), [CommandCase(0.4)])
    # Replaced whole: the cases of the earlier sweep are gone, not mixed with the new one.
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [CommandCase(0.4).name]


# --- 3. SIGTERM is Ctrl-C; a continued run's curves stop at its checkpoint ---


def test_sigterm_is_raised_at_the_end_of_the_critical_block():
    from linkage_lab.training.loop import InterruptGuard, StopSignal, stop_signum

    guard = InterruptGuard()
    with guard.installed():
        with pytest.raises(StopSignal) as stopped:
            with guard.critical():
                signal.raise_signal(signal.SIGTERM)
                guard.check()  # held: nothing raised inside
                finished = True
        assert finished and stop_signum(stopped.value) == signal.SIGTERM
        # A plain KeyboardInterrupt is Ctrl-C's.
        assert stop_signum(KeyboardInterrupt()) == signal.SIGINT
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_terminate_raises_turns_sigterm_into_a_stop():
    from linkage_lab.training.loop import StopSignal, terminate_raises

    with pytest.raises(StopSignal) as stopped, terminate_raises():
        signal.raise_signal(signal.SIGTERM)
    assert stopped.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_terminated_training_exits_143_with_its_report(capsys, monkeypatch):
    import linkage_lab.training
    from linkage_lab.training import TrainingInterrupted, TrainResult

    result = TrainResult(
        log_dir=Path("logs/run"),
        checkpoint=Path("logs/run/model_4.pt"),
        wall_time_s=12.0,
        first_iteration=0,
        last_iteration=4,
        interrupted=True,
        resumed_from=None,
    )

    def train(*args, **kwargs):
        raise TrainingInterrupted(result, signal.SIGTERM)

    monkeypatch.setattr(linkage_lab.training, "train", train)
    assert main(["train", "--task", LIMIT]) == 143
    err = capsys.readouterr().err
    assert "SIGTERM" in err and "saved iteration 4: logs/run/model_4.pt" in err and "--resume run" in err


def write_events(run_dir: Path, iterations: range) -> None:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(run_dir))
    for it in iterations:
        writer.add_scalar("Train/mean_reward", float(it), it)
        writer.add_scalar("Loss/value", 2.0 * it, it)
    writer.close()


def scalar_steps(run_dir: Path, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    return [e.step for e in events.Scalars(tag)]


def test_cut_events_drops_what_was_logged_after_the_checkpoint(tmp_path):
    from linkage_lab.training.events import cut_events

    run = tmp_path / "run"
    write_events(run, range(10))  # a session killed after logging iteration 9, its checkpoint at 5
    assert cut_events(run, 5) == 2 * 4  # iterations 6-9 of both tags
    assert scalar_steps(run, "Train/mean_reward") == list(range(6))
    assert scalar_steps(run, "Loss/value") == list(range(6))
    write_events(run, range(6, 8))  # the continued session logs 6 and 7 once each
    assert scalar_steps(run, "Train/mean_reward") == list(range(8))
    assert cut_events(run, 7) == 0


# --- 4. values out of range: one line naming the token, before the build ---


@pytest.mark.parametrize(
    ("token", "fragment"),
    [
        ("agent.algorithm.learning_rate=-1", "learning_rate must be > 0, got -1"),
        ("agent.algorithm.clip_param=0", "clip_param must be > 0"),
        ("agent.algorithm.gamma=1.5", "gamma must be in [0, 1]"),
        ("agent.algorithm.lam=-0.1", "lam must be in [0, 1]"),
        ("agent.algorithm.entropy_coef=-0.01", "entropy_coef must be >= 0"),
        ("env.commands.base_velocity.ranges.lin_vel_x=[0.5,0.1]", "min 0.5 > max 0.1"),
        ("env.sim.dt=0.0", "env.sim.dt must be > 0"),
        ("agent.algorithm.learning_rate=nan", "must be a finite number"),
        ("agent.algorithm.gamma=inf", "must be a finite number"),
    ],
)
def test_values_out_of_range_are_one_line_naming_the_token(capsys, tmp_path, token, fragment):
    policy = onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)
    assert main(["eval", "--task", LIMIT, "--onnx", str(policy), "--out", str(tmp_path / "e"), token]) == 2
    one_error_line(capsys, repr(token), fragment)


def test_range_rules_on_a_plain_config():
    from types import SimpleNamespace as NS

    from linkage_lab.config_ranges import range_errors

    def agent(**algorithm):
        base = dict(learning_rate=1e-3, clip_param=0.2, gamma=0.99, lam=0.95, entropy_coef=0.0)
        base.update(value_loss_coef=1.0, max_grad_norm=1.0, desired_kl=None)
        base.update(algorithm)
        return NS(algorithm=NS(**base), clip_actions=None, actor=NS(distribution_cfg=NS(init_std=1.0)))

    env = NS(decimation=4, sim=NS(dt=0.005), episode_length_s=20.0, commands=NS())
    assert range_errors(env, agent()) == []
    assert range_errors(env, agent(gamma=1.0, lam=0.0)) == []  # the ends of [0, 1] are valid
    (error,) = range_errors(env, agent(learning_rate=0.0))
    assert error == "the task's config: agent.algorithm.learning_rate must be > 0, got 0.0"
    ranged = NS(**{**vars(env), "commands": NS(base=NS(ranges=NS(lin_vel_x=(0.2, 0.2), ang_vel_z=(1.0, -1.0))))})
    (error,) = range_errors(ranged, agent(), ["env.commands.base.ranges.ang_vel_z=[1.0,-1.0]"])
    assert error.startswith("'env.commands.base.ranges.ang_vel_z=[1.0,-1.0]'") and "min 1.0 > max -1.0" in error


def test_a_physics_step_the_linkage_actuator_was_not_given_is_refused():
    from types import SimpleNamespace as NS

    from linkage_lab.config_ranges import range_errors

    agent = NS(algorithm=None, clip_actions=None, actor=None)

    def env(dt, legs_dt):
        robot = NS(actuators={"legs": NS(physics_dt_s=legs_dt), "ankles": NS(stiffness=30.0)})
        return NS(decimation=8, sim=NS(dt=dt), episode_length_s=20.0, commands=NS(), scene=NS(robot=robot))

    assert range_errors(env(0.0025, 0.0025), agent) == []
    (error,) = range_errors(env(0.0025, 0.005), agent, ["env.sim.dt=0.0025", "env.decimation=8"])
    assert error.startswith("'env.sim.dt=0.0025': env.sim.dt is 0.0025 s but env.scene.robot.actuators.legs")
    assert "env.scene.robot.actuators.legs.physics_dt_s=0.0025" in error


# --- 5. non-finite numbers: refused on input, never written as NaN/Infinity ---


def strict_load(text: str):
    """``json.loads`` as a strict parser reads: NaN and Infinity are not JSON."""

    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", ["nan", "inf", "NaN", "Infinity"])
def test_ankle_report_refuses_non_finite_demands(capsys, value):
    with pytest.raises(SystemExit) as exited:
        main(["ankle", "report", "--demand", value, "0"])
    assert exited.value.code == 2
    assert "expected a finite number" in capsys.readouterr().err


def test_finite_float_reads_numbers_and_refuses_the_rest():
    from linkage_lab.arguments import finite_float

    assert finite_float("1e-3") == 1e-3 and finite_float("-2") == -2.0
    for text in ("nan", "inf", "-Infinity", "one"):
        with pytest.raises(argparse.ArgumentTypeError):
            finite_float(text)


def test_json_files_never_hold_nan_or_infinity(tmp_path):
    from linkage_lab.io import NON_FINITE_KEY, write_json_atomic

    path = write_json_atomic(tmp_path / "r.json", {"speed": math.nan, "rows": [1.0, math.inf, {"x": -math.inf}]})
    data = strict_load(path.read_text())
    assert data["speed"] is None and data["rows"] == [1.0, None, {"x": None}]
    assert set(data[NON_FINITE_KEY]) == {"$.speed", "$.rows[1]", "$.rows[2].x"}
    assert "nan" in data[NON_FINITE_KEY]["$.speed"]


def test_ankle_report_json_is_strict_json(capsys):
    assert main(["ankle", "report", "--json"]) == 0
    report = strict_load(capsys.readouterr().out)
    assert report  # a non-empty report that a strict parser reads


# --- 6. --video and plot --out never overwrite a user's file, and an unwritable path fails first ---


def test_video_over_an_existing_file_is_refused_before_the_run(capsys, tmp_path):
    video = tmp_path / "mine.mp4"
    video.write_bytes(b"my video")
    policy = onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)
    assert (
        main(["eval", "--task", LIMIT, "--onnx", str(policy), "--out", str(tmp_path / "e"), "--video", str(video)]) == 2
    )
    one_error_line(capsys, str(video), "already exists", "--force")
    assert video.read_bytes() == b"my video"
    assert main(["sprint", "--out", str(tmp_path / "s"), "--video", str(video)]) == 2
    one_error_line(capsys, "already exists")
    assert video.read_bytes() == b"my video"


def test_an_unwritable_video_path_fails_before_the_run(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    policy = onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)
    video = blocker / "v.mp4"  # a folder that cannot exist: its parent is a file
    assert (
        main(["eval", "--task", LIMIT, "--onnx", str(policy), "--out", str(tmp_path / "e"), "--video", str(video)]) == 2
    )
    one_error_line(capsys, "cannot write --video")


def test_a_video_that_cannot_be_rendered_exits_4():
    from linkage_lab.cli.video_option import video_exit
    from linkage_lab.evaluation.video import NOT_WRITTEN
    from linkage_lab.exit_codes import INCOMPLETE

    assert video_exit(f"{NOT_WRITTEN} (no OpenGL)") == INCOMPLETE
    assert video_exit("video: out.mp4 (120 frames at 50 fps, ...)") == 0
    assert video_exit(None) == 0


@pytest.fixture
def run_with_events(tmp_path):
    run = tmp_path / "logs" / "2026-01-01_00-00-00"
    write_events(run, range(3))
    return run


def test_plot_out_refuses_to_replace_a_users_png(capsys, tmp_path, run_with_events):
    out = tmp_path / "figures"
    out.mkdir()
    (out / "return.png").write_bytes(b"my figure")
    assert main(["plot", str(run_with_events), "--out", str(out)]) == 2
    one_error_line(capsys, "return.png", "--force")
    assert (out / "return.png").read_bytes() == b"my figure"
    assert main(["plot", str(run_with_events), "--out", str(out), "--force"]) == 0
    assert (out / "return.png").read_bytes().startswith(b"\x89PNG")
    # The run's own curves folder is the run's: plotting again replaces it without --force.
    assert main(["plot", str(run_with_events)]) == 0
    assert main(["plot", str(run_with_events)]) == 0


# --- 7. messages that say what is wrong ---


def test_an_onnx_file_given_as_a_checkpoint_says_so(capsys, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name in ("policy.onnx", "policy_copy.bin"):  # by its name, and by its bytes
        path = onnx_file(bundle / name, *LIMIT_SIZES)
        assert main(["export", "--task", LIMIT, "--checkpoint", str(path), "--out", str(tmp_path / "x")]) == 2
        line = one_error_line(capsys, "is an ONNX file", "--onnx", "sim2sim")
        assert "tampered" not in line and "arbitrary code" not in line


def test_sim2sim_bundle_file_names_the_folder(capsys, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "metadata.json").write_text("{}")
    policy = onnx_file(bundle / "policy.onnx", *LIMIT_SIZES)
    assert main(["sim2sim", "--bundle", str(policy)]) == 2
    line = one_error_line(capsys, "is a file", str(bundle))
    assert "does not exist" not in line


def test_unknown_io_options_list_the_valid_ones():
    from linkage_lab.sim2sim.bundle import BundleError
    from linkage_lab.sim2sim.robot_side import check_io_options

    def factory(bundle, chain, ankle_mode="host_torque", *, gain_scale=1.0):
        return None

    check_io_options(factory, {"ankle_mode": "motor_pd", "gain_scale": "2"}, "marvin")
    with pytest.raises(BundleError, match="unknown --io-option bogus for marvin's robot side; it takes: ankle_mode"):
        check_io_options(factory, {"bogus": "1"}, "marvin")


@pytest.mark.parametrize(
    ("robot", "valid"),
    [
        ("limit", ("base_velocity", "drivers", "leg_gains", "estimator_rate")),
        ("marvin", ("ankle_mode", "base_velocity")),
    ],
)
def test_the_robots_io_options_are_checked_by_name(robot, valid):
    """The registered robot sides (lazy wrappers taking ``**options``) name the options their class takes."""
    import inspect

    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sim2sim.bundle import BundleError
    from linkage_lab.sim2sim.robot_side import check_io_options

    factory = get_robot(robot).extra("sim2sim_io")
    for name in valid:
        check_io_options(factory, {name: "x"}, robot)
    with pytest.raises(BundleError, match=f"unknown --io-option bogus for {robot}'s robot side"):
        check_io_options(factory, {"bogus": "1"}, robot)
    target = {"limit": "linkage_lab.robots.limit.sim2sim:LimitSim2SimIO"}.get(
        robot, "linkage_lab.robots.marvin.sim2sim:MarvinSim2SimIO"
    )
    module, _, name = target.partition(":")
    import importlib

    cls = getattr(importlib.import_module(module), name)
    assert tuple(inspect.signature(cls).parameters)[2:] == valid  # the declared options are the class's


def test_another_commands_output_is_named_with_its_article(tmp_path):
    from linkage_lab.outputs import OutputDirError, check_output_dir, write_output

    write_output(tmp_path / "o", "sprint", lambda folder: (folder / "a.txt").write_text("a"))
    with pytest.raises(OutputDirError, match="not an export output"):
        check_output_dir(tmp_path / "o", "export")
    with pytest.raises(OutputDirError, match="not an eval output"):
        check_output_dir(tmp_path / "o", "eval")


def test_resume_from_another_robots_checkpoint_is_one_line_before_the_build(capsys, tmp_path):
    marvin = checkpoint_file(tmp_path / "marvin_model.pt", *MARVIN_SIZES)
    state = torch.load(marvin, weights_only=True)
    state.update(critic_state_dict={}, optimizer_state_dict={}, iter=3)
    torch.save(state, marvin)
    assert main(["train", "--task", LIMIT, "--device", "cpu", "--resume", str(marvin)]) == 2
    one_error_line(capsys, "trained with 60 observations and 16 actions", f"{LIMIT} has 48 observations")


def test_eval_help_names_pretrained(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "'pretrained'" in capsys.readouterr().out


def test_a_run_in_which_no_episode_ended_says_why():
    from linkage_lab.cli.evaluate import format_summary

    report = {
        "task": LIMIT,
        "episodes": 0,
        "steps": 500,
        "num_envs": 2,
        "stopped_by": "max_steps",
        "episode_length": {"mean_s": None},
        "return": {"mean": None, "std": None},
        "fall_rate": None,
        "tracking": {},
    }
    assert "no episode ended within 500 steps" in format_summary(report)


def test_the_readme_scripted_trot_runs_whole_episodes():
    from linkage_lab.paths import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index("linkage-lab eval --task LinkageLab-Velocity-Flat-Limit --policy scripted")
    command = readme[start : readme.index("\n\n", start)]
    # 10 s episodes at the task's 50 Hz control rate end within the default step cap.
    assert "--max-steps" not in command and "env.episode_length_s=10.0" in command


# --- 8. verdicts a script can read ---


def test_a_missed_sweep_exits_3_and_a_met_one_0(tmp_path, fake_evaluate, monkeypatch, capsys):
    import linkage_lab.evaluation.evaluate as evaluate_module

    policy = onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)
    args = ["eval", "--task", LIMIT, "--onnx", str(policy), "--sweep", "--command", "0.3"]
    assert main([*args, "--out", str(tmp_path / "met")]) == 0
    walking = evaluate_module.evaluate

    def slow(request):
        out, report = walking(request)
        report["tracking"]["lin_vel_xy_rms_mps"] = 0.3  # stands still: misses the tracking target
        return out, report

    monkeypatch.setattr(evaluate_module, "evaluate", slow)
    assert main([*args, "--out", str(tmp_path / "missed")]) == 3
    assert "verdict: missed" in capsys.readouterr().out


def test_verdict_exit_codes():
    from linkage_lab.exit_codes import MISSED, verdict_exit

    assert (verdict_exit(True), verdict_exit(None), verdict_exit(False)) == (0, 0, MISSED)
    assert MISSED not in (0, 2)


@pytest.mark.parametrize(("speed", "status"), [(0.3, 0), (0.1, 3)])
def test_demo_exits_3_when_its_policy_does_not_walk(tmp_path, monkeypatch, capsys, speed, status):
    import linkage_lab.cli.demo as demo
    import linkage_lab.export.bundle
    import linkage_lab.robots.assets
    import linkage_lab.training
    from linkage_lab.training import TrainResult

    preset = tmp_path / "tiny.yaml"
    preset.write_text(f"task: {LIMIT}\noverrides: []\neval: {{command_mps: 0.3, tolerance_mps: 0.05}}\n")
    result = TrainResult(tmp_path, tmp_path / "model_1.pt", 1.0, 0, 1, False, None)
    monkeypatch.setattr(linkage_lab.robots.assets, "buildable_robots", lambda: [])
    monkeypatch.setattr(linkage_lab.training, "train", lambda task, overrides: result)
    monkeypatch.setattr(
        linkage_lab.export.bundle, "export_bundle", lambda *a, **k: argparse.Namespace(out_dir=tmp_path)
    )
    report = {"tracking": {"mean_forward_speed_mps": speed}, "falls": 0, "episodes": 8}
    monkeypatch.setattr(demo, "_evaluate", lambda *a, **k: (report, tmp_path / "trained"))
    assert main(["demo", "--preset", str(preset), "--no-video"]) == status
    assert ("verdict: missed" in capsys.readouterr().out) == bool(status)


# --- 9. the shipped policies' own sweeps are held to their acceptance ---


def shipped_sweeps():
    from linkage_lab.evaluation.sweep import SWEEP_FILES
    from linkage_lab.pretrained import PRETRAINED_DIR, shipped_tasks

    return [
        (task, simulator, PRETRAINED_DIR / task / name)
        for task in shipped_tasks()
        for simulator, name in SWEEP_FILES.items()
        if (PRETRAINED_DIR / task / name).is_file()
    ]


def test_every_shipped_policy_has_its_isaac_lab_and_closed_chain_sweeps():
    found = {(task, simulator) for task, simulator, _ in shipped_sweeps()}
    from linkage_lab.pretrained import shipped_tasks

    assert found == {(task, simulator) for task in shipped_tasks() for simulator in ("isaac_lab", "closed_chain")}


@pytest.mark.parametrize(("task", "simulator", "path"), shipped_sweeps(), ids=lambda v: getattr(v, "name", str(v)))
def test_a_shipped_sweep_misses_exactly_its_known_misses(task, simulator, path):
    """Every check in a shipped sweep meets the task's target, or is a known miss recorded with its reason in
    the task's acceptance; a known miss that is met now must be removed from it."""
    from linkage_lab.evaluation.sweep import failed_checks, task_acceptance

    acceptance = task_acceptance(task)
    sweep = json.loads(path.read_text())
    commands = {(c["command"]["lin_vel_x_mps"], c["command"]["ang_vel_z_radps"]) for c in sweep["cases"]}
    assert commands == {(c.lin_vel_x_mps, c.ang_vel_z_radps) for c in acceptance.cases}
    assert {k: v for k, v in sweep["targets"].items() if v is not None} == {
        k: v for k, v in vars(acceptance.targets_for(simulator)).items() if v is not None
    }, "the sweep was judged on other targets than the task's acceptance"
    failed = failed_checks(sweep)
    known = acceptance.known(simulator)
    assert failed - known == set(), f"{path}: misses not recorded in the task's acceptance"
    assert known - failed == set(), f"{path}: known misses that the sweep meets now (remove them)"
    assert all(miss.reason for miss in acceptance.known_misses)


def test_library_warnings_go_to_the_framework_log(tmp_path, monkeypatch, capsys):
    import warnings

    import linkage_lab.console as console

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test
    monkeypatch.setattr(console, "FRAMEWORK_LOG", tmp_path / "framework.log")
    monkeypatch.setenv(console.VERBOSE_ENV, "0")
    console.log_python_warnings()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("body com pose always has unit quaternion", UserWarning, stacklevel=1)
    captured = capsys.readouterr()
    assert "unit quaternion" not in captured.err + captured.out
    assert "UserWarning: body com pose always has unit quaternion" in (tmp_path / "framework.log").read_text()


def test_ankle_report_plot_refuses_to_replace_a_users_png(capsys, tmp_path):
    (tmp_path / "torque_diamond.png").write_bytes(b"my figure")
    assert main(["ankle", "report", "--plot", str(tmp_path)]) == 2
    one_error_line(capsys, "torque_diamond.png", "--force")
    assert (tmp_path / "torque_diamond.png").read_bytes() == b"my figure"
    assert main(["ankle", "report", "--plot", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "torque_diamond.png").read_bytes().startswith(b"\x89PNG")


def test_warp_starts_inside_the_framework_log(tmp_path):
    """On a machine without a GPU Warp's native library prints a CUDA notice to file descriptor 2 when it
    starts; simulation commands start it inside the framework log, so the notice never reaches the console.
    Run in a child process: the redirection works on the process's real file descriptors."""
    import subprocess
    import sys

    from linkage_lab.cli.main import SIMULATION_COMMANDS

    assert {"demo", "train", "eval", "export", "sprint", "ship"} <= SIMULATION_COMMANDS
    log = tmp_path / "framework.log"
    script = f"""
import os
import warp
import linkage_lab.console as console
console.FRAMEWORK_LOG = __import__("pathlib").Path({str(log)!r})
warp.init = lambda: os.write(2, b"Warp CUDA warning: no driver\\n")
console.init_warp_quietly()
print("done")
"""
    env = {**os.environ, "LINKAGE_LAB_VERBOSE": "0"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout and "Warp CUDA warning" not in done.stdout + done.stderr
    assert "Warp CUDA warning: no driver" in log.read_text()

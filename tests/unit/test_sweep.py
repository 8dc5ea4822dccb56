"""The fixed-command evaluation sweep: command overrides, per-case checks and the summary."""

from __future__ import annotations

import pytest

from linkage_lab.evaluation.sweep import (
    CommandCase,
    TrackingTargets,
    case_result,
    format_table,
    parse_case,
    summarize,
)

pytestmark = pytest.mark.unit


def _report(lin: float, yaw: float, falls: int, speed: float) -> dict:
    return {
        "episodes": 8,
        "falls": falls,
        "tracking": {"lin_vel_xy_rms_mps": lin, "yaw_rate_rms_radps": yaw, "mean_forward_speed_mps": speed},
    }


def test_case_pins_every_command_range_and_disables_standing_envs():
    overrides = CommandCase(0.3, -0.5).overrides()
    assert "env.commands.base_velocity.ranges.lin_vel_x=[0.3,0.3]" in overrides
    assert "env.commands.base_velocity.ranges.ang_vel_z=[-0.5,-0.5]" in overrides
    assert "env.commands.base_velocity.ranges.lin_vel_y=[0.0,0.0]" in overrides
    assert "env.commands.base_velocity.rel_standing_envs=0.0" in overrides
    assert CommandCase(0.3, -0.5).name == "vx+0.30_wz-0.50"


@pytest.mark.parametrize("text", ["", "a", "0.1,0.2,0.3", "nan", "0.1,inf"])
def test_parse_case_rejects_malformed_commands(text):
    with pytest.raises(ValueError, match="VX,WZ"):
        parse_case(text)


def test_parse_case_reads_one_or_two_numbers():
    assert parse_case("0.5") == CommandCase(0.5, 0.0)
    assert parse_case(" -0.3 , 0.25 ") == CommandCase(-0.3, 0.25)


def test_forward_case_checks_velocity_not_yaw_and_turning_case_the_reverse():
    targets = TrackingTargets(lin_vel_rms_mps=0.06, yaw_rate_rms_radps=0.12, max_falls=0)
    forward = case_result(CommandCase(0.3), _report(0.05, 0.5, 0, 0.29), targets)
    assert set(forward["checks"]) == {"falls", "lin_vel_xy_rms_mps"}
    assert forward["checks"]["lin_vel_xy_rms_mps"]["ok"]
    turning = case_result(CommandCase(0.0, 0.5), _report(0.5, 0.13, 0, 0.0), targets)
    assert set(turning["checks"]) == {"falls", "yaw_rate_rms_radps"}
    assert not turning["checks"]["yaw_rate_rms_radps"]["ok"]


def test_summary_fails_on_any_missed_check_and_names_it():
    targets = TrackingTargets()
    rows = [
        case_result(CommandCase(0.3), _report(0.05, 0.0, 0, 0.3), targets),
        case_result(CommandCase(0.5), _report(0.07, 0.0, 1, 0.45), targets),
    ]
    summary = summarize(rows)
    assert summary["passed"] is False
    assert summary["total_falls"] == 1
    assert summary["worst_lin_vel_xy_rms_mps"] == pytest.approx(0.07)
    assert len(summary["failed_checks"]) == 2  # the velocity error and the fall of the 0.5 m/s case
    assert all(line.startswith("vx+0.50_wz+0.00") for line in summary["failed_checks"])
    table = format_table({"cases": rows, "summary": summary})
    assert "NO" in table and "missed" in table


def test_missing_tracking_figure_is_a_failed_check():
    row = case_result(CommandCase(0.3), {"episodes": 0, "falls": 0, "tracking": None}, TrackingTargets())
    assert row["checks"]["lin_vel_xy_rms_mps"]["ok"] is False


def test_demo_walk_check_needs_the_commanded_speed_and_no_fall():
    from linkage_lab.cli.demo import walks

    report = {"falls": 0, "tracking": {"mean_forward_speed_mps": 0.27}}
    assert walks(report, 0.3, 0.05)
    assert not walks(report, 0.3, 0.02)
    assert not walks({**report, "falls": 1}, 0.3, 0.05)
    assert not walks({"falls": 0, "tracking": None}, 0.0, 0.05)


def test_demo_steps_time_each_step_until_the_next(monkeypatch, capsys):
    import linkage_lab.cli.demo as demo

    clock = iter([10.0, 12.5, 40.0, 41.0])
    monkeypatch.setattr(demo.time, "perf_counter", lambda: next(clock))
    step = demo._Steps(3)
    step("assets")
    step("training")
    step("evaluating")
    step.finish()
    assert capsys.readouterr().out.splitlines() == ["[1/3] assets", "[2/3] training", "[3/3] evaluating"]
    assert step.durations_s() == [2.5, 27.5, 1.0]
    assert step.total_s() == 31.0
    assert step.summary() == "step 1: 2 s, step 2: 28 s, step 3: 1 s"


def test_ship_command_keeps_its_name_and_reports_a_missing_checkpoint_in_one_line(capsys):
    from linkage_lab.cli.main import main

    assert main(["ship", "--task", "LinkageLab-Velocity-Flat-Limit", "--checkpoint", "/nonexistent/model_1.pt"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("linkage-lab ship: error:") and "does not exist" in err[0]


def test_forward_speed_target_checks_the_mean_speed_against_the_command():
    targets = TrackingTargets(lin_vel_rms_mps=None, yaw_rate_rms_radps=None, max_falls=0, forward_speed_error_mps=0.1)
    slow = case_result(CommandCase(0.4), _report(0.3, 0.2, 0, 0.28), targets)
    assert set(slow["checks"]) == {"falls", "forward_speed_error_mps"}
    assert slow["forward_speed_error_mps"] == pytest.approx(0.12)
    assert not slow["checks"]["forward_speed_error_mps"]["ok"]
    near = case_result(CommandCase(0.4), _report(0.3, 0.2, 0, 0.33), targets)
    assert near["checks"]["forward_speed_error_mps"]["ok"]
    standing = case_result(CommandCase(0.0), _report(0.05, 0.1, 0, -0.02), targets)
    assert standing["forward_speed_error_mps"] == pytest.approx(0.02)


def test_each_task_declares_its_acceptance_and_others_get_the_default():
    from linkage_lab.evaluation.sweep import DEFAULT_CASES, task_acceptance

    limit = task_acceptance("LinkageLab-Velocity-Flat-Limit")
    # The Limit turns on the spot at ±0.3 rad/s; tighter marks in Isaac Lab than on the closed chain.
    assert [(c.lin_vel_x_mps, c.ang_vel_z_radps) for c in limit.cases] == [
        (-0.3, 0.0),
        (0.0, 0.0),
        (0.3, 0.0),
        (0.5, 0.0),
        (0.0, 0.3),
        (0.0, -0.3),
    ]
    isaac, closed = limit.targets_for("isaac_lab"), limit.targets_for("closed_chain")
    assert (isaac.lin_vel_rms_mps, isaac.yaw_rate_rms_radps, isaac.max_falls) == (0.06, 0.10, 0)
    assert (closed.lin_vel_rms_mps, closed.yaw_rate_rms_radps, closed.max_falls) == (0.08, 0.12, 0)
    marvin = task_acceptance("LinkageLab-Velocity-Flat-Marvin-Residual")
    assert [(c.lin_vel_x_mps, c.ang_vel_z_radps) for c in marvin.cases] == [
        (0.0, 0.0),
        (0.3, 0.0),
        (0.4, 0.0),
        (0.5, 0.0),
        (0.4, 0.2),
        (0.4, -0.2),
    ]
    assert marvin.targets.yaw_rate_error_radps == 0.05 and marvin.targets.yaw_rate_rms_radps is None
    assert marvin.targets.forward_speed_error_mps == 0.1 and marvin.targets.lin_vel_rms_mps is None
    assert marvin.targets.min_alternation == 0.8
    assert marvin.targets_for("closed_chain") == marvin.targets
    # The same commands and targets; the residual task's shipped policy records what it misses.
    plain = task_acceptance("LinkageLab-Velocity-Flat-Marvin")
    assert (plain.cases, plain.targets, plain.known_misses) == (marvin.cases, marvin.targets, ())
    sprint = task_acceptance("LinkageLab-Sprint-Marvin")
    assert sprint.cases == DEFAULT_CASES and sprint.targets == TrackingTargets()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--command", "0.3"], "--command is a case of --sweep"),
        (["--sweep", "--command", "fast"], "expected 'VX' or 'VX,WZ'"),
        (["--sweep", "--video", "x.mp4"], "cannot be combined with --sweep"),
    ],
)
def test_eval_sweep_options_are_checked_in_one_line(capsys, argv, message):
    from linkage_lab.cli.main import main

    code = main(["eval", "--task", "LinkageLab-Velocity-Flat-Limit", "--checkpoint", "pretrained", *argv])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_alternation_target_is_a_lower_bound_on_walking_cases_only():
    targets = TrackingTargets(lin_vel_rms_mps=None, yaw_rate_rms_radps=None, max_falls=0, min_alternation=0.8)

    def report(alternation):
        return {**_report(0.1, 0.1, 0, 0.3), "footfalls": {"alternation": alternation}}

    walking = case_result(CommandCase(0.3), report(0.95), targets)
    assert walking["checks"]["alternation"]["ok"] and walking["alternation"] == 0.95
    shuffling = case_result(CommandCase(0.3), report(0.5), targets)
    assert not shuffling["checks"]["alternation"]["ok"]
    assert summarize([shuffling])["failed_checks"] == ["vx+0.30_wz+0.00: alternation 0.5 < 0.8"]
    assert "alternation" not in case_result(CommandCase(0.0), report(None), targets)["checks"]
    assert not case_result(CommandCase(0.3), _report(0.1, 0.1, 0, 0.3), targets)["checks"]["alternation"]["ok"]


def test_sweep_plot_is_a_png(tmp_path):
    from linkage_lab.evaluation.sweep_output import plot_sweep

    targets = TrackingTargets()
    rows = [
        case_result(CommandCase(0.3), _report(0.05, 0.02, 0, 0.31), targets),
        case_result(CommandCase(0.0, 0.5), _report(0.03, 0.4, 1, 0.0), targets),
    ]
    sweep = {"task": "T", "episodes_per_case": 8, "targets": vars(targets), "cases": rows, "summary": summarize(rows)}
    path = plot_sweep(sweep, tmp_path / "sweep.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_yaw_rate_error_target_checks_the_mean_yaw_rate_on_turning_cases_only():
    targets = TrackingTargets(lin_vel_rms_mps=None, yaw_rate_rms_radps=None, max_falls=0, yaw_rate_error_radps=0.05)

    def report(mean_yaw_rate):
        base = _report(0.1, 0.5, 0, 0.4)
        return {**base, "tracking": {**base["tracking"], "mean_yaw_rate_radps": mean_yaw_rate}}

    turning = case_result(CommandCase(0.4, 0.2), report(0.17), targets)
    assert turning["yaw_rate_error_radps"] == pytest.approx(0.03) and turning["checks"]["yaw_rate_error_radps"]["ok"]
    # The RMS (0.5 here: a biped's yaw swing within each stride) is not what this target reads.
    lagging = case_result(CommandCase(0.4, -0.2), report(-0.12), targets)
    assert not lagging["checks"]["yaw_rate_error_radps"]["ok"]
    assert summarize([lagging])["failed_checks"] == ["vx+0.40_wz-0.20: yaw_rate_error_radps 0.08 > 0.05"]
    assert "yaw_rate_error_radps" not in case_result(CommandCase(0.4), report(0.3), targets)["checks"]
    assert not case_result(CommandCase(0.4, 0.2), report(None), targets)["checks"]["yaw_rate_error_radps"]["ok"]


def test_tracking_stats_mean_yaw_rate_is_the_sample_mean_of_the_counted_envs():
    import torch

    from linkage_lab.evaluation.metrics import TrackingStats

    stats = TrackingStats()
    command = torch.tensor([[0.4, 0.0, 0.2], [0.4, 0.0, 0.2], [0.4, 0.0, 0.2]])
    lin = torch.zeros(3, 3)
    for yaw_rates, mask in (([0.1, 0.3, 9.0], [True, True, False]), ([0.5, -0.3, 9.0], [True, True, False])):
        ang = torch.zeros(3, 3)
        ang[:, 2] = torch.tensor(yaw_rates)
        stats.add(command, lin, ang, torch.tensor(mask))
    summary = stats.summary()
    # (0.1 + 0.3 + 0.5 − 0.3) / 4; the masked env's 9.0 is never counted.
    assert summary["mean_yaw_rate_radps"] == pytest.approx(0.15)
    # RMS of (0.2 − ω): (0.1² + 0.1² + 0.3² + 0.5²) / 4.
    assert summary["yaw_rate_rms_radps"] == pytest.approx(((0.01 + 0.01 + 0.09 + 0.25) / 4) ** 0.5)
    assert TrackingStats().summary()["mean_yaw_rate_radps"] is None


def test_duty_factor_target_is_the_least_loaded_foot_on_every_case():
    targets = TrackingTargets(lin_vel_rms_mps=None, yaw_rate_rms_radps=None, max_falls=None, min_duty_factor=0.2)

    def report(*duties):
        feet = [{"body": f"foot_{k}", "duty_factor": d} for k, d in enumerate(duties)]
        return {**_report(0.1, 0.1, 0, 0.3), "footfalls": {"feet": feet}}

    trotting = case_result(CommandCase(0.3), report(0.5, 0.45, 0.55, 0.48), targets)
    assert trotting["min_duty_factor"] == 0.45 and trotting["checks"]["min_duty_factor"]["ok"]
    three_legged = case_result(CommandCase(0.0, 0.3), report(0.23, 0.78, 0.69, 0.001), targets)
    assert three_legged["min_duty_factor"] == 0.001 and not three_legged["checks"]["min_duty_factor"]["ok"]
    assert summarize([three_legged])["failed_checks"] == ["vx+0.00_wz+0.30: min_duty_factor 0.001 < 0.2"]
    # No footfalls measured is a miss, not a pass.
    unmeasured = case_result(CommandCase(0.0), _report(0.1, 0.1, 0, 0.0), targets)
    assert unmeasured["min_duty_factor"] is None and not unmeasured["checks"]["min_duty_factor"]["ok"]
    assert "min_duty_factor" not in case_result(CommandCase(0.3), report(0.1), TrackingTargets())["checks"]


def test_closed_chain_runs_pool_each_feet_duty_over_all_samples():
    from linkage_lab.sim2sim.sweep import pool_reports

    def run(steps, duties, pairs):
        feet = [{"body": name, "duty_factor": d} for name, d in zip(("a", "b"), duties, strict=True)]
        tracking = dict.fromkeys(
            ("lin_vel_xy_rms_mps", "yaw_rate_rms_radps", "mean_forward_speed_mps", "mean_yaw_rate_radps"), 0.1
        )
        footfalls = {"samples": steps, "feet": feet, "touchdown_pairs": pairs}
        return {"control_steps": steps, "falls": 0, "tracking": tracking, "footfalls": footfalls}

    # 100 steps with foot a down 80 % of them, 300 with it down 40 %: (80 + 120) / 400 = 0.5.
    pooled = pool_reports([run(100, (0.8, 0.0), {"alternating": 3}), run(300, (0.4, 0.2), {"repeated": 1})])
    assert pooled["footfalls"]["samples"] == 400
    assert pooled["footfalls"]["feet"] == [{"body": "a", "duty_factor": 0.5}, {"body": "b", "duty_factor": 0.15}]
    assert pooled["footfalls"]["alternation"] == 0.75

"""The policies shipped under ``policies/`` still walk: a brief evaluation at a fixed forward command.

A change to a task, its actuators or the physics that breaks a shipped policy fails here.
"""

from __future__ import annotations

import pytest

from linkage_lab.pretrained import pretrained_checkpoint, shipped_tasks

pytestmark = pytest.mark.sim

#: The forward command each shipped policy is checked at (m/s), and how close its mean speed must be: a
#: regression guard around what the shipped files measure over these 8 s (the Limit: 0.34 m/s at 0.3;
#: Marvin: 0.30 m/s at 0.4 for one env, the gait's 4.5 s stride ramp from rest included), not the acceptance
#: targets, which `linkage-lab ship` measures into each policy's sweep.json. A policy that stands or
#: falls fails either.
WALK_CHECKS = {
    "LinkageLab-Velocity-Flat-Limit": (0.3, 0.1),
    "LinkageLab-Velocity-Flat-Marvin-Residual": (0.4, 0.15),
}
#: Seconds of the check; the first second (start from rest) is in the mean, hence the tolerances.
CHECK_DURATION_S = 8.0


def test_the_limit_and_marvin_policies_are_shipped():
    assert {"LinkageLab-Velocity-Flat-Limit", "LinkageLab-Velocity-Flat-Marvin-Residual"} <= set(shipped_tasks())


@pytest.mark.parametrize("task", shipped_tasks())
def test_shipped_policy_walks_at_its_command(task, tmp_path):
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate
    from linkage_lab.evaluation.sweep import CommandCase

    assert task in WALK_CHECKS, f"shipped policy {task} has no walking check here"
    command_mps, tolerance_mps = WALK_CHECKS[task]
    steps = int(CHECK_DURATION_S / 0.02)
    _, report = evaluate(
        EvalRequest(
            task=task,
            checkpoint=pretrained_checkpoint(task),
            episodes=2,
            num_envs=2,
            max_steps=steps,
            overrides=tuple(CommandCase(command_mps).overrides()),
            out_dir=tmp_path / "eval",
            device="cpu",
            progress=False,
        )
    )
    assert report["steps"] == steps
    assert report["falls"] == 0
    speed = report["tracking"]["mean_forward_speed_mps"]
    assert abs(speed - command_mps) <= tolerance_mps, f"{task}: {speed:.3f} m/s at a {command_mps} m/s command"


def test_shipped_marvin_finishes_the_sprint_in_its_lane():
    """The residual race (0.8 m/s, the gait prior at 1.2 Hz) with lane keeping: the shipped Marvin finishes 10 m
    inside its 1 m lane and inside 15.5 s (five races measured 13.98-14.46 s, at most 0.19 m off the centre;
    the target is 15 s; the race at the gait's own 0.88 Hz and 0.4 m/s took 27.7-28.4 s)."""
    from linkage_lab.sprint.runner import run_race

    record = run_race("pretrained", "diamond", device="cpu", progress=False)
    metrics = record.metrics
    assert metrics["ended_reason"] == "finished", metrics
    assert metrics["max_lateral_offset_m"] < 0.35
    assert metrics["time"] < 15.5, metrics

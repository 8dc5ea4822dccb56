"""The sprint runner's hand-off to the referee when the env stops the physics first."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.sprint.rules import SprintCfg, SprintTracker
from linkage_lab.sprint.runner import stopped_pose

pytestmark = pytest.mark.unit

RULES = SprintCfg(fall_height_m=0.4)
START = torch.tensor([[-0.3, 0.05, 0.68]], dtype=torch.float64)


def _referee(fired, last):
    tracker = SprintTracker(1, RULES)
    tracker.update(0.0, START)
    tracker.update(12.0, stopped_pose(torch.tensor([last], dtype=torch.float64), fired, tracker.start_xy[0], RULES))
    return tracker.metrics(0)


def test_finish_term_puts_the_torso_on_the_line():
    # One step short of the line by the pre-step pose: the env's finish term saw the crossing.
    metrics = _referee(["finished"], [9.69, 0.1, 0.62])
    assert metrics["ended_reason"] == "finished" and metrics["success"]
    assert metrics["distance_m"] == pytest.approx(10.0) and metrics["time"] == pytest.approx(12.0)


@pytest.mark.parametrize("y, side", [(0.54, 1.0), (-0.44, -1.0)])
def test_lane_term_puts_the_torso_outside_its_lane(y, side):
    metrics = _referee(["left_track"], [3.0, y, 0.62])
    assert metrics["ended_reason"] == "left_track" and not metrics["fell"]
    assert metrics["max_lateral_offset_m"] == pytest.approx(0.5, abs=1e-5)
    assert metrics["distance_m"] == pytest.approx(3.3)


@pytest.mark.parametrize("term", ["fell", "base_contact"])
def test_fall_terms_are_falls(term):
    metrics = _referee([term], [2.0, 0.0, 0.55])
    assert metrics["ended_reason"] == "fell" and metrics["fell"] and not metrics["success"]


def test_finish_wins_over_a_fall_in_the_same_step():
    metrics = _referee(["finished", "fell"], [9.69, 0.0, 0.3])
    assert metrics["ended_reason"] == "finished" and metrics["fell"]


def test_no_term_leaves_the_pose_alone():
    last = torch.tensor([[1.0, 0.2, 0.6]], dtype=torch.float64)
    assert torch.equal(stopped_pose(last, ["time_out"], START[0, :2], RULES), last)


def test_race_task_follows_the_policy(tmp_path, monkeypatch):
    """Scripted and ONNX race on the plain sprint; pretrained on the sprint whose velocity task ships a policy;
    a checkpoint on the sprint of the task its run records; nothing shipped is a clear error."""
    import json

    from linkage_lab import pretrained
    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.sprint.runner import default_task, policy_task_of, race_task
    from linkage_lab.tasks.sprint import sprint_tasks

    TASK = default_task()

    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", tmp_path / "policies")
    assert race_task("scripted") == TASK
    assert race_task(str(tmp_path / "policy.onnx")) == TASK
    with pytest.raises(PolicyLoadError, match="no pretrained policy for the sprint"):
        race_task("pretrained")
    residual_sprint = sprint_tasks()[0]
    velocity = policy_task_of(residual_sprint)
    assert velocity != policy_task_of(TASK)
    (tmp_path / "policies" / policy_task_of(TASK)).mkdir(parents=True)
    (tmp_path / "policies" / policy_task_of(TASK) / "model.pt").write_bytes(b"x")
    assert race_task("pretrained") == TASK
    (tmp_path / "policies" / velocity).mkdir(parents=True)
    (tmp_path / "policies" / velocity / "model.pt").write_bytes(b"x")
    assert race_task("pretrained") == residual_sprint
    run = tmp_path / "run"
    run.mkdir()
    (run / "model_5.pt").write_bytes(b"x")
    (run / "run.json").write_text(json.dumps({"task": velocity}))
    assert race_task(str(run / "model_5.pt")) == residual_sprint


def test_a_policy_is_checked_against_the_race_env_with_its_overrides():
    """A policy trained before the actor gained a term races with the term left out: the size check before the race
    builds the env as the race will, overrides included."""
    import argparse

    from linkage_lab.cli.sprint import _check_policy
    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.paths import REPO_ROOT

    checkpoint = REPO_ROOT / "policies" / "transfer" / "marvin_diamond_seed43" / "model.pt"  # 64 inputs
    args = argparse.Namespace(policy=str(checkpoint), ankle="diamond", device="cpu")
    with pytest.raises(PolicyLoadError, match="trained with 64 observations"):
        _check_policy(args)
    _check_policy(args, ["env.observations.policy.previous_action=null"])

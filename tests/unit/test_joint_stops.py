"""The share of time each joint spends on a stop of its range, counted by hand."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.evaluation.metrics import JOINT_STOP_FLAG_SHARE, JointStopStats, joint_stop_line

pytestmark = pytest.mark.unit


def test_shares_on_a_stop_counted_by_hand():
    stats = JointStopStats(torch.tensor([-1.0, -0.6]), torch.tensor([1.0, 0.6]), margin_rad=0.005)
    # Joint 0 stays inside; joint 1 stands at its upper end (0.6006: inside the limit's constraint) or
    # 0.004 rad below it (within the margin) in 3 of 4 valid samples, and at 0.59 (off the stop) in one.
    stats.add(torch.tensor([[0.0, 0.6006], [0.5, 0.596]]))
    stats.add(torch.tensor([[-0.994, 0.59], [0.0, 0.6]]))
    stats.add(torch.tensor([[0.0, 0.6], [0.0, 0.6]]), valid=torch.tensor([False, False]))  # resets: not counted
    summary = stats.summary(["hip", "ankle"])
    assert summary["samples"] == 4
    hip, ankle = summary["joints"]
    assert hip["share_on_stop"] == pytest.approx(0.0)  # -0.994 is 0.006 from the end: outside the margin
    assert ankle["share_on_stop"] == pytest.approx(3 / 4)
    assert summary["flagged"] == ["ankle"] and not hip["flagged"]


def test_the_flag_is_above_five_percent_and_limits_may_differ_per_env():
    assert JOINT_STOP_FLAG_SHARE == 0.05
    lower = torch.tensor([[-1.0], [-0.5]])
    upper = torch.tensor([[1.0], [0.5]])
    stats = JointStopStats(lower, upper, margin_rad=0.01)
    for step in range(20):
        # Env 1's range is narrower: its 0.499 is on the stop there, env 0's 0.499 is not.
        stats.add(torch.tensor([[0.499], [0.499 if step == 0 else 0.0]]))
    (row,) = stats.summary(["knee"])["joints"]
    assert row["share_on_stop"] == pytest.approx(1 / 40) and not row["flagged"]


def test_the_console_line_names_the_flagged_joints_only():
    """Knee on its stop 3 of 4 samples, hip 1 of 4 (25 %, also over 5 %), ankle never: a line naming the two."""
    stats = JointStopStats(torch.tensor([-1.0, -1.57, -0.6]), torch.tensor([1.0, -0.25, 0.6]))
    for q in ([0.0, -0.25, 0.0], [0.0, -0.25, 0.0], [0.0, -0.25, 0.0], [1.0, -1.0, 0.0]):
        stats.add(torch.tensor([q]))
    summary = stats.summary(["hip", "knee", "ankle"])
    assert joint_stop_line(summary) == "  on a joint stop more than 5% of the time: hip 25%, knee 75%"
    assert joint_stop_line(JointStopStats(torch.zeros(1) - 1, torch.ones(1)).summary(["hip"])) is None
    assert joint_stop_line(None) is None

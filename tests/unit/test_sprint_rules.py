"""The sprint referee on synthetic torso trajectories, one per end reason, with hand-checked metrics."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.sprint.rules import ENDED_REASONS, SprintCfg, SprintTracker, fall_threshold, sprint_metrics

pytestmark = pytest.mark.unit

CFG = SprintCfg(fall_height_m=0.36)
DT = 0.5


def _trajectory(duration_s: float, x, y=lambda t: 0.0, z=lambda t: 0.6):
    times = torch.arange(0.0, duration_s + 1e-9, DT, dtype=torch.float64)
    positions = torch.tensor([[x(t), y(t), z(t)] for t in times.tolist()], dtype=torch.float64)
    return times, positions


def test_fall_threshold_is_the_nao_fraction():
    assert fall_threshold(0.333) == pytest.approx(0.20, rel=1e-3)  # the NAO itself
    assert fall_threshold(0.60) == pytest.approx(0.60 * 0.20 / 0.33309)
    with pytest.raises(ValueError):
        fall_threshold(0.0)


def test_finished():
    # 0.5 m/s from x = 2 in lane y = 1, drifting 0.01 m/s left: 10 m at t = 20 s, 0.2 m off.
    times, positions = _trajectory(30.0, lambda t: 2.0 + 0.5 * t, lambda t: 1.0 + 0.01 * t)
    metrics = sprint_metrics(times, positions, CFG)
    assert metrics == {
        "success": True,
        "time": pytest.approx(20.0),
        "distance_m": pytest.approx(10.0),
        "average_speed_mps": pytest.approx(0.5),
        "max_lateral_offset_m": pytest.approx(0.2),
        "fell": False,
        "ended_reason": "finished",
        "duration_s": pytest.approx(20.0),
    }


def test_fell():
    times, positions = _trajectory(30.0, lambda t: 0.3 * t, z=lambda t: 0.6 if t <= 5.0 else 0.3)
    metrics = sprint_metrics(times, positions, CFG)
    assert metrics["ended_reason"] == "fell" and metrics["fell"] is True and metrics["success"] is False
    assert metrics["time"] is None
    assert metrics["duration_s"] == pytest.approx(5.5)
    assert metrics["distance_m"] == pytest.approx(1.65)
    assert metrics["average_speed_mps"] == pytest.approx(0.3)


def test_left_track():
    # y = 0.1 t: at t = 5.0 exactly on the 0.5 m edge (still in), out at t = 5.5.
    times, positions = _trajectory(30.0, lambda t: 0.2 * t, lambda t: 0.1 * t)
    metrics = sprint_metrics(times, positions, CFG)
    assert metrics["ended_reason"] == "left_track" and metrics["fell"] is False
    assert metrics["duration_s"] == pytest.approx(5.5)
    assert metrics["max_lateral_offset_m"] == pytest.approx(0.55)
    assert metrics["distance_m"] == pytest.approx(1.1)


def test_no_progress():
    # 1 m in 2 s, then stuck: the last 0.2 m checkpoint is at t = 2 s, so the run ends at 22 s.
    times, positions = _trajectory(60.0, lambda t: min(0.5 * t, 1.0))
    metrics = sprint_metrics(times, positions, CFG)
    assert metrics["ended_reason"] == "no_progress"
    assert metrics["duration_s"] == pytest.approx(22.0)
    assert metrics["distance_m"] == pytest.approx(1.0)
    assert metrics["average_speed_mps"] == pytest.approx(1.0 / 22.0)


def test_slow_creep_is_no_progress():
    # 0.005 m/s: 0.1 m in 20 s, under the 0.2 m needed.
    times, positions = _trajectory(60.0, lambda t: 0.005 * t)
    assert sprint_metrics(times, positions, CFG)["duration_s"] == pytest.approx(20.0)


def test_time_limit():
    # 0.1 m/s: 0.2 m every 2 s keeps progressing, 9 m at 90 s.
    times, positions = _trajectory(100.0, lambda t: 0.1 * t)
    metrics = sprint_metrics(times, positions, CFG)
    assert metrics["ended_reason"] == "time_limit" and metrics["success"] is False
    assert metrics["duration_s"] == pytest.approx(90.0)
    assert metrics["distance_m"] == pytest.approx(9.0)
    assert metrics["average_speed_mps"] == pytest.approx(0.1)


def test_precedence_when_reasons_coincide():
    assert ENDED_REASONS == ("finished", "fell", "left_track", "no_progress", "time_limit")
    # Crossing the line while falling counts as finished; falling while leaving the lane is fell.
    times, positions = _trajectory(10.0, lambda t: 2.0 * t, z=lambda t: 0.6 if t < 5.0 else 0.1)
    assert sprint_metrics(times, positions, CFG)["ended_reason"] == "finished"
    times, positions = _trajectory(
        10.0, lambda t: 0.5 * t, lambda t: 0.0 if t < 2.0 else 1.0, lambda t: 0.6 if t < 2.0 else 0.1
    )
    assert sprint_metrics(times, positions, CFG)["ended_reason"] == "fell"


def test_batched_tracker_freezes_ended_envs_and_resets():
    tracker = SprintTracker(2, CFG)
    for step in range(41):
        t = step * DT
        tracker.update(t, torch.tensor([[0.5 * t, 0.0, 0.6], [0.5 * t, 0.1 * t, 0.6]]))
    assert tracker.done.tolist() == [True, True]
    first, second = tracker.metrics(0), tracker.metrics(1)
    assert first["ended_reason"] == "finished" and first["duration_s"] == pytest.approx(20.0)
    assert second["ended_reason"] == "left_track" and second["duration_s"] == pytest.approx(5.5)
    assert second["distance_m"] == pytest.approx(2.75)  # frozen at the end, not the last update
    tracker.reset(torch.tensor([1]))
    assert tracker.done.tolist() == [True, False]
    with pytest.raises(RuntimeError, match="has not ended"):
        tracker.metrics(1)


def test_trajectory_too_short_is_an_error():
    times, positions = _trajectory(5.0, lambda t: 0.5 * t)
    with pytest.raises(ValueError, match="before the sprint does"):
        sprint_metrics(times, positions, CFG)

"""Lane keeping of the residual race: Isaac Lab's command term and the sim2sim heading hold are one law,
checked against a hand calculation and against each other."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from linkage_lab.sim2sim.race import heading_hold
from linkage_lab.tasks.sprint.commands import (
    LaneKeepingVelocityCommand,
    LaneKeepingVelocityCommandCfg,
    lane_keeping_cfg,
)
from linkage_lab.tasks.velocity.commands import SplitVelocityCommandCfg

pytestmark = pytest.mark.unit

GAIN, LIMIT, LOOKAHEAD = 0.5, 0.2, 0.5


def _isaac_yaw_rate(offset_y: np.ndarray, yaw: np.ndarray, origin_y: float) -> np.ndarray:
    """The command term's yaw-rate command, run on stand-ins for the robot's data and the scene."""
    n = len(offset_y)
    cfg = LaneKeepingVelocityCommandCfg(asset_name="robot", resampling_time_range=(90.0, 90.0), lookahead_m=LOOKAHEAD)
    cfg.heading_command = True
    cfg.heading_control_stiffness = GAIN
    cfg.ranges.ang_vel_z = (-LIMIT, LIMIT)
    term = object.__new__(LaneKeepingVelocityCommand)
    root = torch.zeros(n, 3, dtype=torch.float64)
    root[:, 1] = torch.as_tensor(offset_y) + origin_y
    origins = torch.zeros(n, 3, dtype=torch.float64)
    origins[:, 1] = origin_y
    term.cfg = cfg
    term.robot = SimpleNamespace(
        data=SimpleNamespace(
            root_pos_w=SimpleNamespace(torch=root), heading_w=SimpleNamespace(torch=torch.as_tensor(yaw))
        )
    )
    term._env = SimpleNamespace(scene=SimpleNamespace(env_origins=origins))
    term.heading_target = torch.zeros(n, dtype=torch.float64)
    term.vel_command_b = torch.zeros(n, 3, dtype=torch.float64)
    term.is_heading_env = torch.ones(n, dtype=torch.bool)
    term.is_standing_env = torch.zeros(n, dtype=torch.bool)
    term._update_command()
    return term.vel_command_b[:, 2].numpy()


def _sim2sim_yaw_rate(offset_y: float, yaw: float, start_y: float) -> float:
    hold = {"gain_per_s": GAIN, "limit_rads": LIMIT, "lane_lookahead_m": LOOKAHEAD, "start_y_m": start_y}
    sensors = SimpleNamespace(
        roll_pitch_yaw_rad=np.array([0.0, 0.0, yaw]), base_pos_w=np.array([3.0, start_y + offset_y, 0.9])
    )
    return float(heading_hold(np.array([0.6, 0.0, 0.0]), sensors, hold)[2])


def test_hand_calculation():
    # 0.05 m left of the centre, heading straight: target -atan(0.1) = -0.0997 rad, 0.5/s of it.
    assert _sim2sim_yaw_rate(0.05, 0.0, 0.0) == pytest.approx(-0.5 * math.atan(0.1), abs=1e-12)
    assert _isaac_yaw_rate(np.array([0.05]), np.array([0.0]), 0.0)[0] == pytest.approx(-0.5 * math.atan(0.1), abs=1e-12)
    # Already turned back enough: heading -atan(0.1) cancels the error.
    assert _sim2sim_yaw_rate(0.05, -math.atan(0.1), 0.0) == pytest.approx(0.0, abs=1e-12)
    # Far off: the command saturates at the trained yaw-rate range.
    assert _sim2sim_yaw_rate(0.4, 0.0, 0.0) == pytest.approx(-LIMIT)
    assert _sim2sim_yaw_rate(-0.4, 0.0, 0.0) == pytest.approx(LIMIT)


def test_isaac_term_and_sim2sim_agree_about_their_own_start_line():
    rng = np.random.default_rng(3)
    offsets = rng.uniform(-0.5, 0.5, 64)
    yaws = rng.uniform(-3.0, 3.0, 64)
    isaac = _isaac_yaw_rate(offsets, yaws, origin_y=2.0)
    sim2sim = [_sim2sim_yaw_rate(o, y, start_y=-1.0) for o, y in zip(offsets, yaws)]
    np.testing.assert_allclose(isaac, sim2sim, atol=1e-12)
    assert np.ptp(isaac) > 0.2  # the samples span the saturated and the linear range


def test_lane_keeping_cfg_keeps_the_command_settings_and_checks_the_lookahead():
    split = SplitVelocityCommandCfg(asset_name="robot", resampling_time_range=(4.0, 6.0), rel_standing_envs=0.2)
    lane = lane_keeping_cfg(split, 0.7)
    assert lane.class_type is LaneKeepingVelocityCommand and lane.lookahead_m == 0.7
    assert lane.resampling_time_range == (4.0, 6.0) and lane.rel_standing_envs == 0.2
    assert not hasattr(lane, "rel_straight_envs")
    with pytest.raises(ValueError, match="lookahead_m"):
        lane_keeping_cfg(split, 0.0)

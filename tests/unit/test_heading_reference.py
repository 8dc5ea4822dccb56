"""The heading a yaw-rate command asks for: integration, wrapping, the drag-along limit and resets."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.gait.heading import HeadingReference, wrap_angle

pytestmark = pytest.mark.unit

DT = 0.02


def test_wrap_angle_lands_in_minus_pi_to_pi():
    angles = torch.tensor([0.0, 3.0, -3.0, 2 * math.pi + 0.1, -2 * math.pi - 0.1, 7.0])
    expected = torch.tensor([0.0, 3.0, -3.0, 0.1, -0.1, 7.0 - 2 * math.pi])
    torch.testing.assert_close(wrap_angle(angles), expected)


def test_the_reference_starts_at_the_robot_and_integrates_the_command():
    reference = HeadingReference(2, max_error_rad=0.5)
    heading = torch.tensor([0.3, -1.0])
    command = torch.tensor([0.2, -0.1])
    # First step: the reference is the robot's heading, whatever it was before.
    torch.testing.assert_close(reference.step(heading, command, DT), torch.zeros(2))
    # A robot that does not turn falls behind by ω_cmd · t: after 50 more steps, by ω · 50 · dt.
    for _ in range(50):
        error = reference.step(heading, command, DT)
    torch.testing.assert_close(error, command * 50 * DT)
    # A robot that turns at the commanded rate holds its error.
    turning = heading.clone()
    held = error.clone()
    for _ in range(30):
        turning = turning + command * DT
        error = reference.step(turning, command, DT)
    torch.testing.assert_close(error, held, atol=1e-5, rtol=0)


def test_the_error_is_wrapped_across_plus_minus_pi():
    reference = HeadingReference(1, max_error_rad=0.5)
    reference.step(torch.tensor([math.pi - 0.05]), torch.zeros(1), DT)
    # The robot crosses ±π by 0.1 rad to the left: 0.1 rad ahead of its reference, not 2π − 0.1.
    error = reference.step(torch.tensor([-math.pi + 0.05]), torch.zeros(1), DT)
    assert float(error) == pytest.approx(-0.1, abs=1e-5)


def test_a_lost_heading_drags_the_reference_along():
    reference = HeadingReference(1, max_error_rad=0.5)
    reference.step(torch.zeros(1), torch.zeros(1), DT)
    # Spun 2 rad to the right: the error is capped at 0.5, and the reference now sits 0.5 ahead.
    assert float(reference.step(torch.tensor([-2.0]), torch.zeros(1), DT)) == pytest.approx(0.5)
    # Coming back 0.3 rad leaves 0.2 to go, not the 1.7 a wound-up integral would keep.
    assert float(reference.step(torch.tensor([-1.7]), torch.zeros(1), DT)) == pytest.approx(0.2, abs=1e-6)


def test_reset_restarts_only_the_envs_named():
    reference = HeadingReference(3, max_error_rad=0.5)
    heading = torch.zeros(3)
    command = torch.full((3,), 0.4)
    for _ in range(20):
        reference.step(heading, command, DT)
    reference.reset(torch.tensor([1]))
    error = reference.step(torch.tensor([0.0, 2.0, 0.0]), command, DT)
    assert float(error[1]) == 0.0
    torch.testing.assert_close(error[[0, 2]], torch.full((2,), 0.4 * 20 * DT))


@pytest.mark.parametrize("limit", [0.0, -0.1, math.pi, float("nan")])
def test_bad_limits_are_rejected(limit):
    with pytest.raises(ValueError, match="max_error_rad"):
        HeadingReference(1, max_error_rad=limit)


def test_heading_tracking_term_pays_the_kernel_of_the_heading_error():
    """The reward term on a stand-in env: exp(−e²/σ²) of the error from the integrated yaw-rate command."""
    from types import SimpleNamespace

    from isaaclab.managers import SceneEntityCfg

    from linkage_lab.tasks.velocity.rewards import heading_tracking

    heading = torch.zeros(2)
    command = torch.tensor([[0.4, 0.0, 0.5], [0.4, 0.0, 0.0]])
    robot = SimpleNamespace(data=SimpleNamespace(heading_w=SimpleNamespace(torch=heading)))
    env = SimpleNamespace(
        num_envs=2,
        device="cpu",
        step_dt=DT,
        scene={"robot": robot},
        command_manager=SimpleNamespace(get_command=lambda name: command),
    )
    params = {"std_rad": 0.25, "max_error_rad": 0.5, "command_name": "base_velocity"}
    term = heading_tracking(SimpleNamespace(params=params), env)
    call = {**params, "asset_cfg": SceneEntityCfg("robot")}
    torch.testing.assert_close(term(env, **call), torch.ones(2))
    # Standing still for 10 more steps: env 0 is 0.5 rad/s · 10 · 0.02 s = 0.1 rad behind, env 1 on target.
    for _ in range(10):
        reward = term(env, **call)
    torch.testing.assert_close(reward, torch.tensor([math.exp(-((0.1 / 0.25) ** 2)), 1.0]))
    # A reset of env 0 restarts its reference at its heading.
    term.reset(torch.tensor([0]))
    torch.testing.assert_close(term(env, **call), torch.ones(2))

"""The gait prior as ONNX and the robot-side composer: same targets as the torch module in the task."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, replace

import numpy as np
import onnx
import pytest
import torch

from linkage_lab.deploy.residual_gait import (
    GAIT_FILE,
    GAIT_INPUTS,
    GAIT_OUTPUTS,
    ResidualGaitComposer,
    gait_graph_parity,
    gait_metadata,
    write_gait_graph,
)
from linkage_lab.gait.biped import BipedGait
from linkage_lab.gait.commanded import CommandedBipedGait, GaitCommandCfg, gait_observation, yaw_rate_with_integral
from linkage_lab.robots.marvin.articulation import JOINT_NAMES
from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg

pytestmark = pytest.mark.unit

DT = 0.02
SCALE = 0.15
CLIP = 3.0


@pytest.fixture(scope="module")
def prior() -> CommandedBipedGait:
    gait = BipedGait(marvin_sprint_gait_cfg(heading_gain=0.0))
    return CommandedBipedGait(
        gait,
        GaitCommandCfg(
            speed_per_stride_mps=0.72, in_place_speed_mps=0.065, max_stride_scale=0.8, turn_per_yaw_rate_s=0.5
        ),
        DT,
        JOINT_NAMES,
    )


def write_bundle(gait: CommandedBipedGait, out, command_parameters: dict) -> None:
    """A minimal residual bundle in ``out``: gait.onnx and the metadata keys the composer reads."""
    write_gait_graph(gait, out / GAIT_FILE)
    limits = gait.gait.cfg.joint_limits_rad
    metadata = {
        "action_scale": [SCALE] * len(JOINT_NAMES),
        "action_clip": CLIP,
        "action_target_clip": [list(limits[name]) for name in JOINT_NAMES],
        "residual_gait": gait_metadata(gait, "base_velocity", "gait", {}, command_parameters),
    }
    (out / "metadata.json").write_text(json.dumps(metadata))


@pytest.fixture(scope="module")
def bundle(prior, tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    write_bundle(prior, out, {})
    return out


def test_gait_graph_is_valid_onnx_with_named_io(bundle):
    model = onnx.load(str(bundle / GAIT_FILE))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == list(GAIT_INPUTS)
    assert [o.name for o in model.graph.output] == list(GAIT_OUTPUTS)
    props = {p.key: p.value for p in model.metadata_props}
    assert json.loads(props["linkage_lab.joint_names"]) == list(JOINT_NAMES)


def test_onnxruntime_matches_torch(prior, bundle):
    assert gait_graph_parity(prior, bundle / GAIT_FILE, samples=256) < 1e-5


def test_composer_reproduces_the_task_composition_over_a_walk(prior, bundle):
    """A start, a walk, a turn and a stop: the numpy loop and the torch module agree at every step."""
    composer = ResidualGaitComposer(bundle)
    limits = prior.gait.cfg.joint_limits_rad
    lower = torch.tensor([limits[name][0] for name in JOINT_NAMES])
    upper = torch.tensor([limits[name][1] for name in JOINT_NAMES])
    generator = torch.Generator().manual_seed(7)
    state = prior.initial_state(1)
    commands = [(0.4, 0.0, 0.0)] * 150 + [(0.3, 0.1, 0.4)] * 50 + [(0.0, 0.0, 0.0)] * 200
    for command in commands:
        gravity = torch.tensor([[0.0, 0.0, -1.0]]) + 0.05 * torch.randn(1, 3, generator=generator)
        gravity = gravity / gravity.norm()
        gyro = 0.3 * torch.randn(1, 3, generator=generator)
        velocity = torch.tensor([[command[0], command[1], 0.0]]) + 0.05 * torch.randn(1, 3, generator=generator)
        action = 2.0 * torch.randn(1, len(JOINT_NAMES), generator=generator)  # some beyond ±CLIP
        np.testing.assert_allclose(composer.observation(), gait_observation(state)[0].numpy(), atol=2e-6)
        command_tensor = torch.tensor([command])
        gait_targets, state = prior(state, command_tensor, gravity, gyro, velocity)
        residual = SCALE * action.clamp(-CLIP, CLIP)
        expected = torch.maximum(torch.minimum(gait_targets + residual, upper), lower)
        got = composer.joint_targets(
            action[0].numpy(), np.array(command), gravity[0].numpy(), gyro[0].numpy(), velocity[0].numpy()
        )
        np.testing.assert_allclose(got, expected[0].numpy(), atol=1e-5)
    assert composer.state[2] == 0.0, "the composer did not stop stepping on the zero command"


def test_composer_falls_back_to_the_gait_on_a_non_finite_action_and_resets(bundle):
    composer = ResidualGaitComposer(bundle)
    args = (np.array([0.4, 0.0, 0.0]), np.array([0.0, 0.0, -1.0]), np.zeros(3), np.zeros(3))
    bad = np.ones(len(JOINT_NAMES))
    bad[3] = np.inf  # one bad entry drops the whole action, as the task's guarded action term does
    with_nan = composer.joint_targets(bad, *args)
    composer.reset()
    assert composer.observation().tolist() == [0.0, 1.0, 0.0, 0.0]
    np.testing.assert_array_equal(with_nan, composer.joint_targets(np.zeros(len(JOINT_NAMES)), *args))
    assert np.isfinite(with_nan).all()


def test_metadata_describes_the_graph(prior):
    meta = gait_metadata(prior, "base_velocity", "gait", {"frequency_hz": 0.88}, {})
    assert [i["name"] for i in meta["inputs"]] == list(GAIT_INPUTS)
    assert meta["outputs"][0]["shape"] == [1, len(JOINT_NAMES)]
    assert meta["initial_state"] == [0.0, 0.0, 0.0]
    assert meta["swing_time_s"] == pytest.approx(
        (math.pi - 2 * math.asin(prior.gait.cfg.double_support_margin)) / (2 * math.pi * prior.gait.cfg.frequency_hz)
    )


def test_composer_rejects_a_plain_bundle(tmp_path):
    (tmp_path / "metadata.json").write_text(json.dumps({"action_scale": [0.5]}))
    with pytest.raises(ValueError, match="no residual gait"):
        ResidualGaitComposer(tmp_path)


def test_the_heading_integral_builds_at_the_yaw_rate_error_saturates_and_clears_off_a_turn():
    cfg = GaitCommandCfg(yaw_integral_gain_per_s=2.0, yaw_integral_limit_rad=0.05)
    walk_turn = torch.tensor([[0.4, 0.0, 0.2]])
    integral = torch.zeros(1)
    for n in range(1, 20):
        # The robot turns at 0.05 rad/s of the 0.2 asked: e grows 0.15 rad/s x dt per step, up to its bound.
        command, integral = yaw_rate_with_integral(cfg, walk_turn, torch.tensor([0.05]), integral, DT)
        expected = min(0.15 * DT * n, 0.05)
        assert integral.item() == pytest.approx(expected, abs=1e-7)
        assert command[0, 2].item() == pytest.approx(0.2 + 2.0 * expected, abs=1e-6)
        assert command[0, :2].tolist() == pytest.approx([0.4, 0.0]) and walk_turn[0, 2].item() == pytest.approx(0.2)
    walk = torch.tensor([[0.4, 0.0, 0.05]])  # inside the yaw deadband: open loop, e cleared
    straight, integral = yaw_rate_with_integral(cfg, walk, torch.tensor([0.3]), integral, DT)
    assert integral.item() == 0.0 and straight[0, 2].item() == pytest.approx(0.05)


def test_the_heading_integral_makes_a_slow_turning_plant_follow_on_the_mean():
    # A plant that turns at g = 0.45 of the yaw rate it is given settles where g (ω + K e) = ω.
    cfg = GaitCommandCfg(yaw_integral_gain_per_s=1.0, yaw_integral_limit_rad=0.5)
    command, integral, rate = torch.tensor([[0.4, 0.0, 0.2]]), torch.zeros(1), torch.zeros(1)
    for _ in range(2000):
        given, integral = yaw_rate_with_integral(cfg, command, rate, integral, DT)
        rate = 0.45 * given[:, 2]
    assert rate.item() == pytest.approx(0.2, abs=1e-4)
    assert integral.item() == pytest.approx(0.2 * (1 - 0.45) / 0.45, abs=1e-3)


def test_composer_runs_the_heading_integral_as_the_task_does(prior, tmp_path):
    held = CommandedBipedGait(
        prior.gait, replace(prior.command_cfg, yaw_integral_gain_per_s=1.0), DT, prior.joint_names
    )
    write_bundle(held, tmp_path, asdict(held.command_cfg))
    limits = held.gait.cfg.joint_limits_rad
    composer = ResidualGaitComposer(tmp_path)
    generator = torch.Generator().manual_seed(3)
    state, integral = held.initial_state(1), torch.zeros(1)
    commands = [(0.4, 0.0, 0.2)] * 120 + [(0.4, 0.0, 0.0)] * 40 + [(0.0, 0.0, 0.0)] * 40
    gravity, velocity = torch.tensor([[0.0, 0.0, -1.0]]), torch.tensor([[0.4, 0.0, 0.0]])
    lower = torch.tensor([limits[name][0] for name in JOINT_NAMES])
    upper = torch.tensor([limits[name][1] for name in JOINT_NAMES])
    for command in commands:
        gyro = torch.tensor([[0.0, 0.0, 0.08]]) + 0.3 * torch.randn(1, 3, generator=generator)
        given, integral = yaw_rate_with_integral(held.command_cfg, torch.tensor([command]), gyro[:, 2], integral, DT)
        gait_targets, state = held(state, given, gravity, gyro, velocity)
        got = composer.joint_targets(
            np.zeros(len(JOINT_NAMES)), np.array(command), gravity[0].numpy(), gyro[0].numpy(), velocity[0].numpy()
        )
        np.testing.assert_allclose(got, torch.maximum(torch.minimum(gait_targets[0], upper), lower).numpy(), atol=1e-5)
        assert composer.yaw_integral_rad == pytest.approx(integral.item(), abs=1e-6)
    assert composer.yaw_integral_rad == 0.0
    composer.reset()
    assert composer.yaw_integral_rad == 0.0

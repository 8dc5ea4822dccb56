"""Left-right mirror: joint twins and signs against forward kinematics, observation layouts, the gait prior."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from linkage_lab.description.mirror import SAGITTAL_REFLECTION, MirrorError, joint_mirror
from linkage_lab.description.model import Joint, Link, RobotModel, Solid
from linkage_lab.robots.registry import get_robot
from linkage_lab.statics.tree import KinematicTree

pytestmark = pytest.mark.unit

ROBOTS = ("marvin", "limit")


def _mirror(robot: str):
    spec = get_robot(robot)
    return spec, joint_mirror(spec.description_model(), spec.joint_names)


def test_marvin_twins_and_signs_by_hand():
    _, mirror = _mirror("marvin")
    for side, other in (("left", "right"), ("right", "left")):
        for joint, sign in {
            "hip_yaw": -1.0,
            "hip_roll": -1.0,
            "hip_pitch": 1.0,
            "knee": 1.0,
            "ankle_pitch": 1.0,
            "ankle_roll": -1.0,
            "shoulder_pitch": 1.0,
            "elbow": 1.0,
        }.items():
            name = f"{side}_{joint}"
            k = mirror.joint_names.index(name)
            assert mirror.twin(name) == f"{other}_{joint}"
            assert mirror.sign[k] == sign


def test_limit_legs_swap_sides_and_keep_their_pitch_signs():
    _, mirror = _mirror("limit")
    assert {name: mirror.twin(name) for name in ("fl_hip", "rr_knee", "rl_ankle")} == {
        "fl_hip": "fr_hip",
        "rr_knee": "rl_knee",
        "rl_ankle": "rr_ankle",
    }
    assert set(mirror.sign) == {1.0}


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_mirror_is_an_involution_and_keeps_the_standing_pose(robot):
    spec, mirror = _mirror(robot)
    values = np.random.default_rng(0).normal(size=(5, len(spec.joint_names)))
    np.testing.assert_allclose(mirror.apply(mirror.apply(values)), values)
    articulation = spec.articulation()
    pose = articulation.init_state.joint_pos
    standing = np.array(
        [next((v for pattern, v in pose.items() if re.fullmatch(pattern, name)), 0.0) for name in spec.joint_names]
    )
    np.testing.assert_allclose(mirror.apply(standing), standing)


@pytest.mark.parametrize("robot", ROBOTS)
def test_mirrored_angles_put_every_link_at_its_twins_reflected_pose(robot):
    """The independent oracle: forward kinematics of the serial description, not the mirror's own geometry."""
    spec, mirror = _mirror(robot)
    model = spec.description_model()
    tree = KinematicTree(model)
    child = {joint.name: joint.child for joint in model.joints}
    q = np.random.default_rng(1).uniform(-0.5, 0.5, size=len(spec.joint_names))
    frames = tree.forward_kinematics(dict(zip(spec.joint_names, q, strict=True)))
    mirrored = tree.forward_kinematics(dict(zip(spec.joint_names, mirror.apply(q), strict=True)))
    reflect = SAGITTAL_REFLECTION
    for name in spec.joint_names:
        twin = child[mirror.twin(name)]
        link = child[name]
        np.testing.assert_allclose(mirrored[link].position, reflect @ frames[twin].position, atol=1e-12)
        np.testing.assert_allclose(mirrored[link].rotation, reflect @ frames[twin].rotation @ reflect, atol=1e-12)


def test_an_asymmetric_robot_is_refused_naming_the_joint():
    body = Link("base", [Solid("box", 1.0, (0.0, 0.0, 0.0), (0.1, 0.1, 0.1))])
    legs = [Link(name, [Solid("point", 0.1, (0.0, 0.0, -0.1))]) for name in ("left", "right")]
    joints = [
        Joint("left_hip", "revolute", "base", "left", (0.0, 0.1, 0.0), (1.0, 0.0, 0.0)),
        Joint("right_hip", "revolute", "base", "right", (0.0, -0.12, 0.0), (1.0, 0.0, 0.0)),
    ]
    with pytest.raises(MirrorError, match="left_hip at y = \\+0.1000 m has no single mirror twin"):
        joint_mirror(RobotModel("lopsided", [body, *legs], joints), ["left_hip", "right_hip"])
    with pytest.raises(MirrorError, match="no revolute joint knee"):
        joint_mirror(RobotModel("lopsided", [body, *legs], joints), ["knee"])


# -- observations and actions of the tasks -------------------------------------------------------


def _env_cfg(task: str):
    from linkage_lab.runtime import resolve_configs

    return resolve_configs(task, [], "cpu")[0]


def _apply(joints, values: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(joints.apply(values.numpy()), dtype=values.dtype)


class _Env:
    def __init__(self, cfg):
        self.cfg = cfg


def test_marvin_residual_observation_mirror_term_by_term():
    from tensordict import TensorDict

    from linkage_lab.tasks.velocity.symmetry import mirror_rollout

    env = _Env(_env_cfg("LinkageLab-Velocity-Flat-Marvin-Residual"))
    _, joints = _mirror("marvin")
    n = len(joints.joint_names)
    rng = torch.Generator().manual_seed(0)
    lin, ang, grav, cmd = (torch.randn(2, 3, generator=rng) for _ in range(4))
    pos, vel, act, prev = (torch.randn(2, n, generator=rng) for _ in range(4))
    phase = torch.tensor([0.3, 4.0])
    gait = torch.stack((torch.sin(phase), torch.cos(phase), torch.tensor([0.5, 0.8]), torch.tensor([1.0, 0.2])), -1)
    policy = torch.cat((lin, ang, grav, cmd, pos, vel, act, gait, prev), dim=-1)
    obs, actions = mirror_rollout(env, TensorDict({"policy": policy}, batch_size=[2]), act)
    assert obs.batch_size[0] == 4 and actions.shape == (4, n)
    torch.testing.assert_close(obs["policy"][:2], policy)
    back = obs["policy"][2:]
    flip_y = torch.tensor([1.0, -1.0, 1.0])
    by_hand = torch.cat(
        (
            lin * flip_y,
            -ang * flip_y,
            grav * flip_y,
            cmd * torch.tensor([1.0, -1.0, -1.0]),
            *(_apply(joints, x) for x in (pos, vel, act)),
            torch.stack((torch.sin(phase + math.pi), torch.cos(phase + math.pi), gait[:, 2], gait[:, 3]), -1),
            _apply(joints, prev),
        ),
        dim=-1,
    )
    torch.testing.assert_close(back, by_hand)
    torch.testing.assert_close(actions[2:], _apply(joints, act))
    none_obs, only_actions = mirror_rollout(env, None, act)
    assert none_obs is None and only_actions.shape == (4, n)


def test_a_term_without_a_rule_is_refused():
    from isaaclab.managers import ObservationTermCfg

    from linkage_lab.tasks.velocity.symmetry import SymmetryError, TaskMirror

    cfg = _env_cfg("LinkageLab-Velocity-Flat-Limit")
    cfg.observations.policy.foot_forces = ObservationTermCfg(func=lambda env: None)
    with pytest.raises(SymmetryError, match="'foot_forces'.*no mirror rule"):
        TaskMirror.from_env_cfg(cfg)


def test_the_gait_prior_commutes_with_the_mirror():
    """Mirrored inputs at the phase half a cycle on give the mirrored targets: what ``gait_state``'s rule assumes."""
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import marvin_gait_prior

    _, joints = _mirror("marvin")
    prior = marvin_gait_prior(0.02, list(joints.joint_names))
    rng = torch.Generator().manual_seed(2)
    n = 6
    phase = torch.rand(n, generator=rng) * 2 * math.pi
    state = torch.stack((phase, torch.rand(n, generator=rng) * 0.8, torch.ones(n)), dim=-1)
    forward, yaw_rate = torch.rand(n, generator=rng) * 0.6, torch.rand(n, generator=rng) * 0.4 - 0.2
    command = torch.stack((forward, torch.zeros(n), yaw_rate), -1)
    tilt = torch.tensor([0.05, 0.08, -1.0]) + 0.05 * torch.randn(n, 3, generator=rng)
    gravity = torch.nn.functional.normalize(tilt, dim=-1)
    ang_vel, lin_vel = 0.3 * torch.randn(n, 3, generator=rng), 0.2 * torch.randn(n, 3, generator=rng)
    flip_y = torch.tensor([1.0, -1.0, 1.0])
    targets, _ = prior(state, command, gravity, ang_vel, lin_vel)
    shifted = state.clone()
    shifted[:, 0] = torch.remainder(phase + math.pi, 2 * math.pi)
    mirrored_targets, _ = prior(
        shifted, command * torch.tensor([1.0, -1.0, -1.0]), gravity * flip_y, -ang_vel * flip_y, lin_vel * flip_y
    )
    torch.testing.assert_close(mirrored_targets, _apply(joints, targets))

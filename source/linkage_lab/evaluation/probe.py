"""Reads what the actuators commanded at every physics substep of a running env.

Isaac Lab runs ``decimation`` physics steps per control step. Before each one the articulation
calls every explicit actuator's ``compute``, and the torque that call returns is what that physics
step integrates; with a PD on a new target the largest one comes in the first substep after the
target changes. Reading the articulation after ``env.step`` sees only the last substep, so the
probe hooks two places, per instance (undone by :meth:`SubstepProbe.close`):

* the ``compute`` of the actuator groups that drive linkage ankles: each call leaves its
  commanded joint torque (``computed_effort``, before any motor limit) next to the joint
  positions it was computed from;
* the simulation's ``step``: each physics step commits one sample, the ankle torque and pose of
  the last ``compute`` before it and the policy joints' applied and commanded torques (the
  articulation's ``applied_torque`` and ``computed_torque`` buffers, which that ``compute`` filled).

A ``compute`` that no physics step follows is never committed. The pose has to come from the
actuator call itself: after ``env.step`` the articulation is one physics step further on, and an
env reset in that step already shows its next episode's pose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from linkage_lab.evaluation.replay import AnkleReplay

#: What ``eval.json`` and the sprint's ``ankle_replay`` say about how the samples were taken.
SAMPLING = "every physics substep"


@dataclass(frozen=True)
class SubstepSamples:
    """The physics substeps of one control step; axis 0 is the substep, in order.

    Attributes:
        applied_torque_nm: ``(substeps, num_envs, n_joints)`` torque the physics integrated (N·m).
        commanded_torque_nm: ``(substeps, num_envs, n_joints)`` torque before the actuators'
            limits (N·m).
        ankle_torque_nm: ``(substeps, num_envs, n_ankles, 2)`` commanded (pitch, roll) torque of
            each linkage ankle (N·m), or ``None`` without ankles.
        ankle_pose_rad: The (pitch, roll) pose each ankle torque was computed at (rad), same shape.
    """

    applied_torque_nm: torch.Tensor
    commanded_torque_nm: torch.Tensor
    ankle_torque_nm: torch.Tensor | None
    ankle_pose_rad: torch.Tensor | None

    @property
    def substeps(self) -> int:
        """Number of physics substeps held."""
        return int(self.applied_torque_nm.shape[0])


class SubstepProbe:
    """Records joint torques and linkage-ankle torques at every physics substep of an env.

    Args:
        env: The env (wrapped or not).
        joint_columns: Articulation indices of the joints whose torques to record (report order).
        ankles: ``{name: (pitch joint, roll joint)}`` of the linkage ankles to record (``None`` or
            empty: none); the ankle axis of the samples follows its order.

    Raises:
        ValueError: An ankle's two joints are not driven by one actuator group.
    """

    def __init__(
        self,
        env: Any,
        joint_columns: Sequence[int],
        ankles: Mapping[str, tuple[str, str]] | None = None,
    ):
        unwrapped = env.unwrapped
        self._robot = unwrapped.scene["robot"]
        self._sim = unwrapped.sim
        self._columns = list(joint_columns)
        self.ankle_names = list(ankles or {})
        num_envs, device = unwrapped.num_envs, unwrapped.device
        self._ankle_torque = torch.zeros(num_envs, len(self.ankle_names), 2, device=device)
        self._ankle_pose = torch.zeros_like(self._ankle_torque)
        self._fresh = False
        self._samples: list[tuple[torch.Tensor, ...]] = []
        self.physics_steps = 0
        self._patched: list[Any] = []
        covered: set[str] = set()
        for actuator in self._robot.actuators.values():
            local = [
                (k, [actuator.joint_names.index(j) for j in joints])
                for k, joints in enumerate((ankles or {}).values())
                if all(j in actuator.joint_names for j in joints)
            ]
            if local:
                self._wrap_compute(actuator, local)
                covered.update(self.ankle_names[k] for k, _ in local)
        missing = [name for name in self.ankle_names if name not in covered]
        if missing:
            self.close()
            raise ValueError(f"ankles {missing} are not driven by one actuator group each")
        self._wrap_step()

    def _wrap_compute(self, actuator: Any, local: list[tuple[int, list[int]]]) -> None:
        original = actuator.compute

        def compute(control_action, joint_pos, joint_vel):
            result = original(control_action, joint_pos, joint_vel)
            for k, columns in local:
                self._ankle_torque[:, k] = actuator.computed_effort[:, columns]
                self._ankle_pose[:, k] = joint_pos[:, columns]
            self._fresh = True
            return result

        actuator.compute = compute
        self._patched.append((actuator, "compute"))

    def _wrap_step(self) -> None:
        original = self._sim.step

        def step(*args, **kwargs):
            self._commit()
            return original(*args, **kwargs)

        self._sim.step = step
        self._patched.append((self._sim, "step"))

    def _commit(self) -> None:
        """One physics step is about to integrate what the actuators just computed: keep it."""
        if self.ankle_names and not self._fresh:
            raise RuntimeError("a physics step ran without an actuator compute before it; cannot sample it")
        data = self._robot.data
        self._samples.append(
            (
                data.applied_torque.torch[:, self._columns].clone(),
                data.computed_torque.torch[:, self._columns].clone(),
                self._ankle_torque.clone(),
                self._ankle_pose.clone(),
            )
        )
        self._fresh = False
        self.physics_steps += 1

    def drain(self) -> SubstepSamples:
        """The substeps committed since the last call (all of one ``env.step``), oldest first."""
        if not self._samples:
            empty = torch.zeros(0, *self._ankle_torque.shape)
            joints = torch.zeros(0, self._ankle_torque.shape[0], len(self._columns))
            applied, commanded, torque, pose = joints, joints.clone(), empty, empty.clone()
        else:
            applied, commanded, torque, pose = (torch.stack(column) for column in zip(*self._samples, strict=True))
        self._samples.clear()
        with_ankles = bool(self.ankle_names)
        return SubstepSamples(applied, commanded, torque if with_ankles else None, pose if with_ankles else None)

    def close(self) -> None:
        """Restore the hooked objects' own methods."""
        for owner, name in self._patched:
            delattr(owner, name)
        self._patched.clear()


def substep_probe(env: Any, joint_columns: Sequence[int]) -> tuple[SubstepProbe, AnkleReplay | None]:
    """A :class:`SubstepProbe` of ``joint_columns`` and, for a robot with linkage ankles, their
    :class:`~linkage_lab.evaluation.replay.AnkleReplay` with the ankle geometry the actuators use."""
    from linkage_lab.evaluation.robot_info import linkage_ankles, linkage_groups, robot_name

    ankles = linkage_ankles(env)
    replay = None
    if ankles:
        from linkage_lab.evaluation.replay import ankle_geometry_preset, rsu_ankle_replay

        robot = robot_name(env)
        preset = ankle_geometry_preset((g["transmission"] for g in linkage_groups(env)), robot=robot)
        replay = rsu_ankle_replay(preset=preset, robot=robot)
        if list(ankles) != replay.names:
            raise ValueError(f"linkage ankles {list(ankles)} do not match the replay's {replay.names}")
    return SubstepProbe(env, joint_columns, ankles), replay

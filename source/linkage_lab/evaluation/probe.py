"""Reads the commanded ankle torque, and the pose it was commanded at, out of a running env.

Sampling: once per control step, after ``env.step``, the probe holds the last physics substep's
commanded joint torque — the linkage actuator's ``computed_effort``, before any motor limit — and
the joint positions the actuator computed it from. The pose has to come from the actuator call
itself: after ``env.step`` the articulation is one physics step further on, and an env that was
reset in that step already shows its next episode's pose.
"""

from __future__ import annotations

from typing import Any

import torch

from linkage_lab.evaluation.robot_info import linkage_ankles, robot_of


class AnkleTorqueProbe:
    """Records each linkage ankle's commanded (pitch, roll) torque and pose at every actuator call.

    Wraps the ``compute`` of the actuator groups that drive the ankles (per instance, undone by
    :meth:`close`), so each physics step leaves the torque it commanded next to the pose it saw.

    Args:
        env: The env (wrapped or not) whose robot has linkage ankles.

    Raises:
        ValueError: The robot has no linkage-driven ankle.
    """

    def __init__(self, env: Any):
        self.ankles = linkage_ankles(env)
        if not self.ankles:
            raise ValueError("the robot has no linkage-driven ankles (<side>_ankle_pitch/_roll) to probe")
        self.names = list(self.ankles)
        robot = robot_of(env)
        num_envs = env.unwrapped.num_envs
        device = env.unwrapped.device
        self._torque = torch.zeros(num_envs, len(self.names), 2, device=device)
        self._pose = torch.zeros_like(self._torque)
        self._patched: list[Any] = []
        for actuator in robot.actuators.values():
            local = [
                (k, [actuator.joint_names.index(j) for j in joints])
                for k, joints in enumerate(self.ankles.values())
                if all(j in actuator.joint_names for j in joints)
            ]
            if local:
                self._wrap(actuator, local)
        self.calls = 0

    def _wrap(self, actuator: Any, local: list[tuple[int, list[int]]]) -> None:
        original = actuator.compute

        def compute(control_action, joint_pos, joint_vel):
            result = original(control_action, joint_pos, joint_vel)
            for k, columns in local:
                self._torque[:, k] = actuator.computed_effort[:, columns]
                self._pose[:, k] = joint_pos[:, columns]
            self.calls += 1
            return result

        actuator.compute = compute
        self._patched.append(actuator)

    def latest(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The last physics step's commanded torque (N·m) and pose (rad), each ``(num_envs, n_ankles, 2)``."""
        return self._torque.clone(), self._pose.clone()

    def close(self) -> None:
        """Restore the actuators' own ``compute``."""
        for actuator in self._patched:
            del actuator.compute
        self._patched.clear()

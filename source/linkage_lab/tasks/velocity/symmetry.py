"""Left-right symmetry of the velocity tasks for rsl-rl's symmetry augmentation (Mittal et al., ICRA 2024).

A robot that is its own mirror image in the sagittal plane has, for every state it can be in, a
mirrored twin state, and the mirror of a good action there is a good action in the twin. rsl-rl's
:class:`~rsl_rl.extensions.Symmetry` trains on both when ``algorithm.symmetry_cfg`` names
:func:`mirror_rollout`. Mirroring each observation term, with ``R = diag(1, −1, 1)`` (y → −y):

============================  =====================================================================
term function                 mirrored
============================  =====================================================================
``base_lin_vel``              ``R v``: a vector (``(v_x, −v_y, v_z)``)
``base_lin_vel_estimate``     the same: an estimate of the same vector (its bias mirrors with it)
``projected_gravity``         ``R g``
``base_ang_vel``              ``−R ω``: an axial vector (``(−ω_x, ω_y, −ω_z)``)
``generated_commands``        ``(v_x, −v_y, −ω_z)``: the velocity command
``joint_pos_rel``, ``joint_vel_rel``, ``last_action``, ``previous_action``  the joint mirror
                              (:mod:`linkage_lab.description.mirror`)
``gait_state``                ``(sin φ, cos φ, s, a) → (−sin φ, −cos φ, s, a)``: the prior's legs are half a
                              cycle apart, so swapping them shifts the phase by π
``gait_clock``                ``(sin φ, cos φ) → (−sin φ, −cos φ)``: the trot's diagonal pairs are half a cycle
                              apart and the mirror swaps them (fl, rr ↔ fr, rl), so again a shift by π
============================  =====================================================================

Actions are joint-space (targets or corrections in the policy's joint order) and take the joint
mirror. The joint mirror comes from the robot's description (found through the registry by the
articulation's pinned joint order), so this module knows no robot. A term it has no rule for is an
error, never a silent pass-through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from linkage_lab.description.mirror import joint_mirror
from linkage_lab.robots.registry import robot_for_joints

#: Sign patterns of the three-vector terms (module docstring).
_POLAR = (1.0, -1.0, 1.0)
_AXIAL = (-1.0, 1.0, -1.0)
_VELOCITY_COMMAND = (1.0, -1.0, -1.0)
#: ``(sin φ, cos φ, s, a)`` with φ shifted by π.
_GAIT_STATE = (-1.0, -1.0, 1.0, 1.0)
#: The rule of each observation term function, by name: a fixed sign pattern or ``"joints"``.
TERM_RULES: dict[str, tuple[float, ...] | str] = {
    "base_lin_vel": _POLAR,
    "base_lin_vel_estimate": _POLAR,
    "projected_gravity": _POLAR,
    "base_ang_vel": _AXIAL,
    "generated_commands": _VELOCITY_COMMAND,
    "joint_pos_rel": "joints",
    "joint_vel_rel": "joints",
    "last_action": "joints",
    "previous_action": "joints",
    "gait_state": _GAIT_STATE,
    "gait_clock": _GAIT_STATE[:2],
}


class SymmetryError(ValueError):
    """An observation group has a term without a mirror rule, or its layout does not match the data."""


@dataclass(frozen=True)
class Mirror:
    """A mirror as a gather and a sign over the last axis: ``mirrored = values[..., index] * sign``."""

    index: torch.Tensor
    sign: torch.Tensor

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        """The mirrored values; ``values`` has the mirror's width on its last axis."""
        if values.shape[-1] != self.index.numel():
            raise SymmetryError(f"expected {self.index.numel()} values on the last axis, got {values.shape[-1]}")
        index, sign = self.index.to(values.device), self.sign.to(values.device, values.dtype)
        return values[..., index] * sign

    @staticmethod
    def concat(parts: list[tuple[list[int], list[float]]]) -> Mirror:
        """One mirror over consecutive blocks, each ``(index within the block, sign)``."""
        index, sign, offset = [], [], 0
        for block_index, block_sign in parts:
            index += [offset + k for k in block_index]
            sign += block_sign
            offset += len(block_index)
        return Mirror(torch.tensor(index, dtype=torch.long), torch.tensor(sign, dtype=torch.float32))


def group_mirror(group_cfg: Any, joint_index: list[int], joint_sign: list[float]) -> Mirror:
    """The mirror of one concatenated observation group, built from its config's terms in order.

    Terms are taken as Isaac Lab's observation manager takes them: the group's attributes that are
    observation terms (have a ``func``), in definition order, ``None`` skipped.

    Raises:
        SymmetryError: A term function has no rule in :data:`TERM_RULES`, or keeps a history.
    """
    parts = []
    for name, term in vars(group_cfg).items():
        func = getattr(term, "func", None)
        if func is None:
            continue
        rule = TERM_RULES.get(getattr(func, "__name__", ""))
        if rule is None:
            known = ", ".join(sorted(TERM_RULES))
            raise SymmetryError(f"observation term {name!r} ({func!r}) has no mirror rule; known terms: {known}")
        if getattr(term, "history_length", 0):
            raise SymmetryError(f"observation term {name!r} keeps a history; its mirror is not defined here")
        if rule == "joints":
            parts.append((list(joint_index), list(joint_sign)))
        else:
            parts.append((list(range(len(rule))), list(rule)))
    return Mirror.concat(parts)


@dataclass(frozen=True)
class TaskMirror:
    """The mirrors of a task's observation groups and of its joint-space actions."""

    observations: dict[str, Mirror]
    actions: Mirror

    @classmethod
    def from_env_cfg(cls, env_cfg: Any) -> TaskMirror:
        """The mirror of a velocity task from its (resolved) env config; its robot comes from the registry.

        Raises:
            SymmetryError: See :func:`group_mirror`.
            UnknownRobot: The articulation's joint order is no registered robot's.
            MirrorError: The robot's description is not left-right symmetric.
        """

        spec = robot_for_joints(list(env_cfg.scene.robot.joint_ordering))
        joints = joint_mirror(spec.description_model(), spec.joint_names)
        index, sign = list(joints.index), list(joints.sign)
        groups = {
            name: group_mirror(group, index, sign)
            for name, group in vars(env_cfg.observations).items()
            if group is not None and hasattr(group, "concatenate_terms")
        }
        return cls(groups, Mirror.concat([(index, sign)]))


_MIRRORS: dict[int, tuple[Any, TaskMirror]] = {}


def task_mirror(env: Any) -> TaskMirror:
    """The :class:`TaskMirror` of ``env`` (any object with the task's env config as ``cfg``), built once."""
    cfg = env.cfg
    cached = _MIRRORS.get(id(env))
    if cached is None or cached[0] is not cfg:
        cached = (cfg, TaskMirror.from_env_cfg(cfg))
        _MIRRORS[id(env)] = cached
    return cached[1]


def mirror_rollout(env: Any, obs: Any = None, actions: torch.Tensor | None = None) -> tuple[Any, Any]:
    """rsl-rl's symmetry function: each batch followed by its mirror image (twice the rows).

    Args:
        env: The training ``VecEnv`` (its ``cfg`` is the task's env config).
        obs: rsl-rl's observation ``TensorDict`` of ``(B, ...)`` groups, or ``None``.
        actions: ``(B, num_actions)`` joint-space actions, or ``None``.

    Returns:
        ``(obs, actions)`` with ``2B`` rows, originals first; ``None`` where the input was ``None``.
    """
    mirror = task_mirror(env)
    out_obs = None
    if obs is not None:
        unknown = [key for key in obs.keys() if key not in mirror.observations]
        if unknown:
            raise SymmetryError(f"observation groups {unknown} are not in the task's config")
        out_obs = obs.__class__(
            {key: torch.cat((obs[key], mirror.observations[key](obs[key])), dim=0) for key in obs.keys()},
            batch_size=[2 * obs.batch_size[0]],
        )
    out_actions = None if actions is None else torch.cat((actions, mirror.actions(actions)), dim=0)
    return out_obs, out_actions

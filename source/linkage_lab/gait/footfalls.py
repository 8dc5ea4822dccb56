"""Touchdowns of a robot's feet and the order they come in (pure torch).

One definition serves the evaluation's footfall statistics
(:class:`~linkage_lab.evaluation.metrics.FootContactStats`) and the training reward that pays for
alternating steps (:class:`~linkage_lab.tasks.velocity.rewards.touchdown_alternation`), so a policy is
paid for exactly what the acceptance measures.

A *touchdown* is a foot in contact at a control step after at least ``min_air_steps`` steps out of
contact; shorter lifts are the chatter of a landing foot, not steps. Per env, a touchdown is
*alternating* when it is the only one of its step and its foot differs from the previous single
touchdown's, *repeated* when the same foot touches down twice in a row, and a step with two or more
touchdowns is *simultaneous* (a hop, or a trot's diagonal pair); a simultaneous step forgets the
previous foot.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TouchdownStep:
    """What one control step's contacts add, per env.

    Attributes:
        touchdown: ``(num_envs, n_feet)`` bool, the feet touching down this step.
        alternating: ``(num_envs,)`` bool, a single touchdown by the other foot than the previous one.
        repeated: ``(num_envs,)`` bool, a single touchdown by the same foot as the previous one.
        simultaneous: ``(num_envs,)`` bool, two or more feet touching down this step.
        lift_steps: ``(num_envs, n_feet)`` long, for each foot touching down the control steps it was out
            of contact before (0 for the others).
        interval_steps: ``(num_envs,)`` long, at a step with a touchdown the control steps since the
            previous step with one (or since the episode began), 0 elsewhere.
    """

    touchdown: torch.Tensor
    alternating: torch.Tensor
    repeated: torch.Tensor
    simultaneous: torch.Tensor
    lift_steps: torch.Tensor
    interval_steps: torch.Tensor


class TouchdownSequence:
    """Per env, the feet's air time in control steps and the foot of the last single touchdown.

    Args:
        num_envs: Number of parallel envs.
        n_feet: Number of feet.
        min_air_steps: Control steps a foot must be out of contact before its contact counts as a touchdown.
        device: Device of the contact tensors.
    """

    def __init__(self, num_envs: int, n_feet: int, min_air_steps: int = 3, device: str | torch.device = "cpu"):
        if min_air_steps < 1:
            raise ValueError(f"min_air_steps must be at least 1, got {min_air_steps}")
        self.min_air_steps = min_air_steps
        self._air_steps = torch.zeros(num_envs, n_feet, dtype=torch.long, device=device)
        self._last_foot = torch.full((num_envs,), -1, dtype=torch.long, device=device)
        self._since_touchdown = torch.zeros(num_envs, dtype=torch.long, device=device)

    def step(self, in_contact: torch.Tensor, mask: torch.Tensor | None = None) -> TouchdownStep:
        """Add one control step.

        Args:
            in_contact: ``(num_envs, n_feet)`` bool, each foot in contact with the ground.
            mask: ``(num_envs,)`` bool, the envs whose episode goes on; the others count nothing and
                restart their history. ``None``: all of them.
        """
        in_contact = in_contact.to(self._air_steps.device, torch.bool)
        if mask is None:
            mask = torch.ones(in_contact.shape[0], dtype=torch.bool, device=in_contact.device)
        else:
            mask = mask.to(in_contact.device, torch.bool)
        touchdown = in_contact & (self._air_steps >= self.min_air_steps) & mask[:, None]
        lift_steps = torch.where(touchdown, self._air_steps, 0)
        self._air_steps = torch.where(in_contact | ~mask[:, None], 0, self._air_steps + 1)
        count = touchdown.sum(-1)
        single = count == 1
        self._since_touchdown = torch.where(mask, self._since_touchdown + 1, 0)
        interval_steps = torch.where(count > 0, self._since_touchdown, 0)
        self._since_touchdown = torch.where(count > 0, 0, self._since_touchdown)
        foot = touchdown.int().argmax(-1)
        known = single & (self._last_foot >= 0)
        step = TouchdownStep(
            touchdown=touchdown,
            alternating=known & (foot != self._last_foot),
            repeated=known & (foot == self._last_foot),
            simultaneous=count > 1,
            lift_steps=lift_steps,
            interval_steps=interval_steps,
        )
        self._last_foot = torch.where(single, foot, torch.where(count > 1, -1, self._last_foot))
        self._last_foot = torch.where(mask, self._last_foot, -1)
        return step

    def reset(self, env_ids: torch.Tensor | slice | None = None) -> None:
        """Forget the history of ``env_ids`` (all envs when ``None``): a new episode starts there."""
        index = slice(None) if env_ids is None else env_ids
        self._air_steps[index] = 0
        self._last_foot[index] = -1
        self._since_touchdown[index] = 0

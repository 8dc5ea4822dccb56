"""The policy's own recent outputs as observations: what a robot with loop latency still has in flight.

With a loop latency ``L`` (sample age plus target delay) the joint targets acting on the robot between two
policy ticks are answers to states up to ``L`` old. ``last_action`` holds the one before; past one control
period the one before that is in flight too, and an actor that cannot see it cannot tell what its joints are
still being told. :func:`previous_action` is that second output, kept by the policy itself on the robot
(``sim2sim.bundle.BundlePolicy`` keeps it the same way).
"""

from __future__ import annotations

from typing import Any

import torch


def previous_action(env: Any) -> torch.Tensor:
    """The raw action two policy ticks back (``num_envs``, ``num_actions``): ``last_action``'s predecessor.

    Isaac Lab's action manager keeps it (``prev_action``, zeroed at reset like ``last_action``); both are the
    guarded, clipped copy the learner sees (:mod:`~linkage_lab.tasks.velocity.faults`).
    """
    return env.action_manager.prev_action

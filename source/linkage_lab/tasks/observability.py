"""What the robot has for each observation an actor reads: a sensor, an estimate, or nothing yet.

A policy may only observe what the robot can measure or estimate. :data:`ROBOT_SOURCES` names, per
observation function, where the robot gets that value; :data:`UNMEASURED` lists the functions the
robot has no source for, each with the reason it is still observed. A test holds every task's actor
to these two tables, so a new term needs a source, and a known gap is written down once, here.
"""

from __future__ import annotations

from typing import Any

#: Observation function name → what gives the robot that value.
ROBOT_SOURCES: dict[str, str] = {
    "base_lin_vel_estimate": (
        "the base-velocity estimator (IMU + leg kinematics + contact, deploy/base_velocity.py), trained on the "
        "truth with the estimator's measured bias and noise"
    ),
    "base_ang_vel": "the IMU's gyroscope",
    "projected_gravity": "the IMU's orientation estimate (gravity in the base frame)",
    "generated_commands": "the operator's velocity command (cmd_vel)",
    "joint_pos_rel": "the joint encoders (through the linkage's forward kinematics where motors drive a joint)",
    "joint_vel_rel": "the joint encoders, differentiated (through the linkage's Jacobian)",
    "last_action": "the policy's own previous output",
    "previous_action": "the policy's own output before the previous one",
    "gait_state": "the gait prior's phase, stride and stepping scale, computed on the robot (gait.onnx)",
    "gait_clock": "the robot's own clock: its control ticks since the policy started (tasks/velocity/gait_clock.py)",
}

#: Observation function name → why an actor still reads it although the robot has no source for it. Empty: the
#: true base velocity (``base_lin_vel``) was the last such term, replaced by ``base_lin_vel_estimate``.
UNMEASURED: dict[str, str] = {}


def actor_terms(env_cfg: Any, groups: list[str]) -> list[tuple[str, str]]:
    """``(term name, function name)`` of each observation term in the actor's ``groups``, in order."""
    terms = []
    for group_name in groups:
        group = getattr(env_cfg.observations, group_name)
        for name, term in vars(group).items():
            func = getattr(term, "func", None)
            if func is not None:
                terms.append((name, getattr(func, "__name__", None) or str(func).rpartition(":")[2]))
    return terms


def unsourced_terms(env_cfg: Any, groups: list[str]) -> list[str]:
    """The actor's terms whose function is in neither :data:`ROBOT_SOURCES` nor :data:`UNMEASURED`."""
    return [name for name, func in actor_terms(env_cfg, groups) if func not in ROBOT_SOURCES and func not in UNMEASURED]

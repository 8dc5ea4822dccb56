"""Physical stress on the closed-chain robot: motors weaker or stronger than modelled, heavier rotors, a slippery floor.

A policy trained on nominal constants meets a robot whose constants are only estimates. A
:class:`PhysicsStress` changes the compiled closed-chain model the way the robot may differ: every motor's
torque scaled (the torque constant; the driver's limits scale with it), its rotor inertia scaled, and the
floor's friction set. :data:`STRESS_SET` is the fixed set the reality-gap sweep runs every acceptance command
under (:mod:`linkage_lab.sim2sim.reality_gap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PhysicsStress:
    """How the closed-chain model differs from its nominal constants.

    Attributes:
        motor_strength: Scale of the torque every motor applies, after its limits (a torque constant that far
            off: 0.8 is a motor 20 % weaker than modelled).
        armature_scale: Scale of every motor's reflected rotor inertia.
        ground_friction: The floor's and feet's sliding friction coefficient; ``None`` keeps the model's.
        contact_solref: Every geom's contact ``solref`` (time constant s, damping ratio): how soft the feet meet
            the floor; ``None`` keeps the model's (MuJoCo's default 0.02 s, 1).
    """

    motor_strength: float = 1.0
    armature_scale: float = 1.0
    ground_friction: float | None = None
    contact_solref: tuple[float, float] | None = None

    def __post_init__(self):
        values = (
            self.motor_strength,
            self.armature_scale,
            1.0 if self.ground_friction is None else self.ground_friction,
            *((1.0, 1.0) if self.contact_solref is None else self.contact_solref),
        )
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError(f"a physics stress takes positive finite scales, friction and solref, got {self}")

    @property
    def nominal(self) -> bool:
        """Whether nothing is changed."""
        return self == PhysicsStress()

    def apply(self, model: Any, motor_dof: Any) -> None:
        """Change the compiled ``mujoco.MjModel`` in place: the motor joints' armature, every geom's sliding
        friction (MuJoCo takes the larger of two touching geoms', so all are set) and contact ``solref``."""
        model.dof_armature[motor_dof] *= self.armature_scale
        if self.ground_friction is not None:
            model.geom_friction[:, 0] = self.ground_friction
        if self.contact_solref is not None:
            model.geom_solref[:] = self.contact_solref

    def report(self) -> dict[str, Any]:
        """The stress as ``sim2sim.json`` records it."""
        return {
            "motor_strength": self.motor_strength,
            "armature_scale": self.armature_scale,
            "ground_friction": self.ground_friction,
            "contact_solref": None if self.contact_solref is None else list(self.contact_solref),
        }


@dataclass(frozen=True)
class StressCondition:
    """One named condition of the reality-gap sweep.

    Attributes:
        name: Short name (a folder name).
        description: What it stands for on the robot.
        delays_s: ``(observation, action)`` delays (s).
        physics: The model's changes.
    """

    name: str
    description: str
    delays_s: tuple[float, float] = (0.0, 0.0)
    physics: PhysicsStress = PhysicsStress()


#: The reality-gap sweep's conditions. Every run uses the robot's base-velocity estimator (never the truth) and the
#: sweep's start kicks; each condition adds one more gap to the hardware.
STRESS_SET: tuple[StressCondition, ...] = (
    StressCondition("nominal", "the estimator and kicked starts, nominal constants"),
    StressCondition(
        "delay_20ms", "20 ms sample-to-torque latency: 10 ms old samples, targets 10 ms late", (0.01, 0.01)
    ),
    StressCondition("delay_40ms", "40 ms latency: 20 ms old samples, targets 20 ms late", (0.02, 0.02)),
    StressCondition(
        "motors_weak",
        "motors 20 % weaker, rotors 20 % heavier",
        physics=PhysicsStress(motor_strength=0.8, armature_scale=1.2),
    ),
    StressCondition(
        "motors_strong",
        "motors 20 % stronger, rotors 20 % lighter",
        physics=PhysicsStress(motor_strength=1.2, armature_scale=0.8),
    ),
    StressCondition("friction_0.5", "a slippery floor: friction 0.5", physics=PhysicsStress(ground_friction=0.5)),
)

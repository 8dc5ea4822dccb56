"""Shared base of the project's velocity tasks, whatever the ground: Isaac Lab's velocity task made offline,
Newton-by-default and guarded against numeric faults.

Imports Isaac Lab's ``LocomotionVelocityRoughEnvCfg`` and overrides what every task of the project needs: the
explicit actuator path, the robot's contact sensors, the estimated base velocity, the numeric-fault guards and the
CPU physics replay. A ground is a small delta on top (:mod:`~linkage_lab.tasks.velocity.flat_env_cfg`); robot
folders override the rest.
"""

from __future__ import annotations

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.utils import configclass
from isaaclab.utils.modifiers import ModifierCfg
from isaaclab_tasks.core.velocity.velocity_env_cfg import LocomotionVelocityRoughEnvCfg

from linkage_lab.tasks.velocity import estimate, faults

#: Clip of the policy's raw actions (action units, ``q* = q_default + scale · a``), in the env and
#: in the rsl-rl runner (``clip_actions``). Wide enough never to change a target inside a joint's
#: range: the farthest joint limit from the standing pose is the Limit's knee, 2.57 rad at 0.25 rad
#: per unit = 10.3 units (Marvin's farthest, the shoulder, is 5.0 units at 0.5 rad). It bounds
#: what a broken policy can send: a 1e6 action costs what a 12 does.
ACTION_CLIP = 12.0

#: The control loop's latency in training, sensor sample to drive (s), drawn per env at each reset: the bus, the
#: filters and the inference of a real robot, up to two 20 ms control periods (the reality-gap sweep's 40 ms). Tasks
#: apply it to the joint targets (:func:`loop_latency_steps`): a memoryless policy's loop depends on the sum of the
#: sample's and the target's delay. Marvin's task takes it whole; the Limit's keeps 0-20 ms (its task says why).
LOOP_LATENCY_RANGE_S = (0.0, 0.040)


def loop_latency_steps(physics_dt_s: float, range_s: tuple[float, float] = LOOP_LATENCY_RANGE_S) -> tuple[int, int]:
    """``range_s`` in whole physics steps of ``physics_dt_s`` (rounded to the nearest)."""
    return (round(range_s[0] / physics_dt_s), round(range_s[1] / physics_dt_s))


@configclass
class LinkageVelocityEnvCfg(LocomotionVelocityRoughEnvCfg):
    """Velocity tracking, Newton (MuJoCo-Warp) physics by default, on the parent's ground until a delta sets one.

    The PhysX presets of the parent (``physics=physx``) stay selectable for users with Isaac Sim.
    """

    def __post_init__(self):
        super().__post_init__()
        # The sky light's texture is remote; a headless run does not need a light.
        self.scene.sky_light = None
        # urdf-usd-converter nests bodies under <Robot>/Geometry/..., so match them at any depth.
        self.scene.contact_forces.prim_path = "{ENV_REGEX_NS}/Robot/.*"
        # Custom (explicit, Python) actuator classes run on the Isaac Lab actuator path.
        self.sim.use_newton_actuators = False
        self.commands.base_velocity.debug_vis = False
        # No robot measures its base velocity: the actor sees an estimator's (its bias and noise; robots set
        # their measured values in params).
        self.observations.policy.base_lin_vel = ObsTerm(
            func=estimate.base_lin_vel_estimate,
            params={
                "bias_mps": estimate.DEFAULT_BIAS_MPS,
                "noise_std_mps": estimate.DEFAULT_NOISE_STD_MPS,
                "correlation_s": (0.0, 0.0, 0.0),
            },
        )
        self._guard_numeric_faults()
        self._replay_cpu_physics_as_graph()

    def _replay_cpu_physics_as_graph(self) -> None:
        """MuJoCo-Warp presets step through :class:`~linkage_lab.physics.cpu_graph.NewtonCpuGraphMJWarpManager`.

        On the CPU the physics step is replayed as a captured Warp graph (1.7x env-steps/s for the
        Limit at 64 envs, the same physics to the bit); on a GPU nothing changes.
        """
        from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg

        from linkage_lab.physics.cpu_graph import NewtonCpuGraphMJWarpManager

        for preset in vars(self.sim.physics).values():
            if isinstance(preset, NewtonCfg) and isinstance(preset.solver_cfg, MJWarpSolverCfg):
                preset.class_type = NewtonCpuGraphMJWarpManager
                preset.solver_cfg.class_type = NewtonCpuGraphMJWarpManager

    def _guard_numeric_faults(self) -> None:
        """Keep NaN/inf out of the physics and the learner (:mod:`~linkage_lab.tasks.velocity.faults`)."""
        action = self.actions.joint_pos
        self.actions.joint_pos = faults.GuardedJointPositionActionCfg(
            asset_name=action.asset_name,
            joint_names=action.joint_names,
            scale=action.scale,
            use_default_offset=action.use_default_offset,
            action_clip=ACTION_CLIP,
        )
        setattr(self.terminations, faults.NONFINITE_STATE_TERM, DoneTerm(func=faults.NonFiniteState))
        setattr(self.events, faults.REWARD_GUARD_EVENT, EventTerm(func=faults.NonFiniteRewardGuard, mode="startup"))
        for group in vars(self.observations).values():
            for term in vars(group).values() if group is not None else ():
                if isinstance(term, ObsTerm):
                    term.modifiers = [*(term.modifiers or []), ModifierCfg(func=faults.finite_or_zero)]

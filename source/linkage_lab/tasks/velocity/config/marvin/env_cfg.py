"""Velocity tracking on flat ground for Marvin: the shared flat task plus Isaac Lab's humanoid
(H1) reward terms, with the ankle model selectable: ``presets=diamond`` (default) or ``presets=box``,
and the diamond ankle's armature: ``presets=reflected_armature`` (default) or ``presets=motor_armature``.
"""

from __future__ import annotations

from isaaclab.assets import ArticulationCfg
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils import configclass
from isaaclab_tasks.core.velocity import mdp
from isaaclab_tasks.core.velocity.config.h1.flat_env_cfg import H1FlatRewards
from isaaclab_tasks.utils import PresetCfg

from linkage_lab.robots.marvin.articulation import marvin_articulation_cfg, standing_height_m
from linkage_lab.robots.marvin.gait import marvin_config
from linkage_lab.tasks.velocity.flat_env_cfg import LinkageVelocityFlatEnvCfg


@configclass
class MarvinRobotCfg(PresetCfg):
    """Marvin with the ankle's torque limits selectable: ``presets=diamond`` (default) or ``presets=box``.

    The diamond ankle carries the motors' pose-dependent reflected inertia ``Jᵀ(q) diag(J̄) J(q)``
    (``reflected_armature``, the default, :data:`~linkage_lab.robots.marvin.articulation.ANKLE_REFLECTED_ARMATURE`);
    ``motor_armature`` gives each ankle joint one motor's ``J̄`` instead (half the pitch inertia at neutral).
    """

    default: ArticulationCfg = None
    diamond: ArticulationCfg = None
    box: ArticulationCfg = None
    reflected_armature: ArticulationCfg = None
    motor_armature: ArticulationCfg = None


@configclass
class MarvinRewardsCfg(H1FlatRewards):
    """Isaac Lab's humanoid rewards; Marvin has no torso joint, and a base-height term keeps it upright."""

    joint_deviation_torso = None
    base_height_l2 = RewTerm(func=mdp.base_height_l2, weight=-10.0, params={"target_height": 0.68})


@configclass
class MarvinFlatEnvCfg(LinkageVelocityFlatEnvCfg):
    """``LinkageLab-Velocity-Flat-Marvin``."""

    rewards: MarvinRewardsCfg = MarvinRewardsCfg()

    def __post_init__(self):
        super().__post_init__()
        robot_cfg = marvin_config()
        self.scene.robot = MarvinRobotCfg(
            default=marvin_articulation_cfg(robot_cfg, "diamond", self.sim.dt),
            diamond=marvin_articulation_cfg(robot_cfg, "diamond", self.sim.dt),
            box=marvin_articulation_cfg(robot_cfg, "box", self.sim.dt),
            reflected_armature=marvin_articulation_cfg(robot_cfg, "diamond", self.sim.dt, reflected_armature=True),
            motor_armature=marvin_articulation_cfg(robot_cfg, "diamond", self.sim.dt, reflected_armature=False),
        )
        self.scene.env_spacing = 2.0
        mjwarp = self.sim.physics.newton_mjwarp
        mjwarp.solver_cfg.njmax = 80
        mjwarp.solver_cfg.nconmax = 25
        self.sim.physics.default = mjwarp

        command = self.commands.base_velocity
        command.heading_command = False
        command.rel_heading_envs = 0.0
        command.ranges.lin_vel_x = (0.0, 0.8)
        command.ranges.lin_vel_y = (-0.2, 0.2)
        command.ranges.ang_vel_z = (-0.6, 0.6)

        self.actions.joint_pos.scale = 0.5
        self.actions.joint_pos.preserve_order = True

        feet = ".*_foot"
        self.rewards.feet_air_time.params["sensor_cfg"].body_names = feet
        self.rewards.feet_slide.params["sensor_cfg"].body_names = feet
        self.rewards.feet_slide.params["asset_cfg"].body_names = feet
        self.rewards.air_time_variance.params["sensor_cfg"].body_names = feet
        self.rewards.dof_pos_limits.params["asset_cfg"].joint_names = [".*_ankle_pitch", ".*_ankle_roll"]
        self.rewards.joint_deviation_arms.params["asset_cfg"].joint_names = [".*_shoulder_pitch", ".*_elbow"]
        self.rewards.base_height_l2.params["target_height"] = standing_height_m(robot_cfg)
        self.rewards.undesired_contacts = None
        self.rewards.lin_vel_z_l2 = None
        self.rewards.flat_orientation_l2.weight = -1.0
        self.rewards.dof_torques_l2.weight = 0.0
        self.rewards.action_rate_l2.weight = -0.005
        self.rewards.dof_acc_l2.weight = -1.25e-7
        self.rewards.feet_air_time.weight = 1.0
        self.rewards.feet_air_time.params["threshold"] = 0.6

        self.terminations.base_contact.params["sensor_cfg"].body_names = "pelvis"
        for term in (self.events.add_base_mass, self.events.base_external_force_torque):
            term.params["asset_cfg"] = SceneEntityCfg("robot", body_names="pelvis")
        self.events.base_com = None
        self.events.reset_robot_joints.params["position_range"] = (1.0, 1.0)

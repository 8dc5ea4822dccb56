"""The sprint for Marvin: a velocity task on a 10 m track with the race's terminations.

Same observations and actions as the velocity task it is built on (a velocity policy runs here
with a constant forward command): ``LinkageLab-Sprint-Marvin`` on ``LinkageLab-Velocity-Flat-Marvin``,
``LinkageLab-Sprint-Marvin-Residual`` on the residual-gait task. No pushes or randomisation; the
robot starts behind the start line, centred in its 1 m lane; the episode is the race's 90 s limit.
"""

from __future__ import annotations

from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.utils import configclass

from linkage_lab.robots.marvin.articulation import standing_height_m
from linkage_lab.robots.marvin.gait import marvin_config
from linkage_lab.robots.marvin.race import (
    HEADING_HOLD_GAIN_PER_S,
    LANE_LOOKAHEAD_M,
    RACE_COMMAND_MPS,
    RESIDUAL_RACE_COMMAND_MPS,
    RESIDUAL_RACE_GAIT_FREQUENCY_HZ,
)
from linkage_lab.sprint.rules import SprintCfg, fall_threshold
from linkage_lab.tasks.sprint import mdp as sprint_mdp
from linkage_lab.tasks.sprint.commands import lane_keeping_cfg
from linkage_lab.tasks.velocity.config.marvin.env_cfg import MarvinFlatEnvCfg
from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

#: Start position behind the start line (m, along +x from the env origin).
START_X_M = -0.3


def marvin_sprint_rules() -> SprintCfg:
    """The race's rules for Marvin (docs/design/gait.md §4), the fall height scaled from the NAO's."""
    return SprintCfg(fall_height_m=fall_threshold(standing_height_m(marvin_config())))


def apply_sprint_rules(cfg: MarvinFlatEnvCfg, command_mps: float = RACE_COMMAND_MPS) -> None:
    """Turn a Marvin velocity env config into the race: track, start, command and terminations (in place,
    on a config being built)."""
    rules = marvin_sprint_rules()
    cfg.episode_length_s = rules.time_limit_s
    cfg.scene.num_envs = 1
    cfg.scene.env_spacing = 2 * rules.lane_half_width_m

    command = cfg.commands.base_velocity
    command.resampling_time_range = (rules.time_limit_s, rules.time_limit_s)
    command.rel_standing_envs = 0.0
    command.ranges.lin_vel_x = (command_mps, command_mps)
    command.ranges.lin_vel_y = (0.0, 0.0)
    command.ranges.ang_vel_z = (0.0, 0.0)

    cfg.events.push_robot = None
    cfg.events.add_base_mass = None
    cfg.events.physics_material = None
    cfg.events.base_external_force_torque = None
    cfg.events.reset_base.params["pose_range"] = {"x": (START_X_M, START_X_M)}
    cfg.events.reset_base.params["velocity_range"] = {}
    cfg.events.reset_robot_joints.params["position_range"] = (1.0, 1.0)

    cfg.terminations.fell = DoneTerm(func=sprint_mdp.torso_below, params={"height_m": rules.fall_height_m})
    cfg.terminations.left_track = DoneTerm(func=sprint_mdp.left_lane, params={"half_width_m": rules.lane_half_width_m})
    cfg.terminations.finished = DoneTerm(
        func=sprint_mdp.finished, params={"finish_x_m": START_X_M + rules.track_length_m}
    )


@configclass
class MarvinSprintEnvCfg(MarvinFlatEnvCfg):
    """``LinkageLab-Sprint-Marvin``."""

    def __post_init__(self):
        super().__post_init__()
        apply_sprint_rules(self)


@configclass
class MarvinResidualSprintEnvCfg(MarvinResidualFlatEnvCfg):
    """``LinkageLab-Sprint-Marvin-Residual``: the race for residual-gait policies, commanded at
    :data:`RESIDUAL_RACE_COMMAND_MPS` with the gait prior stepping at :data:`RESIDUAL_RACE_GAIT_FREQUENCY_HZ`,
    steered back to the lane's centre line."""

    def __post_init__(self):
        super().__post_init__()
        yaw_rate_range = self.commands.base_velocity.ranges.ang_vel_z
        apply_sprint_rules(self, RESIDUAL_RACE_COMMAND_MPS)
        self.actions.joint_pos.frequency_hz = RESIDUAL_RACE_GAIT_FREQUENCY_HZ
        # Keep the lane: the yaw-rate command steers towards the lane's centre line (LANE_LOOKAHEAD_M
        # ahead) within the yaw rates the policy was trained on, as an operator steering a robot would.
        command = lane_keeping_cfg(self.commands.base_velocity, LANE_LOOKAHEAD_M)
        self.commands.base_velocity = command
        command.heading_command = True
        command.rel_heading_envs = 1.0
        command.ranges.heading = (0.0, 0.0)
        command.ranges.ang_vel_z = yaw_rate_range
        command.heading_control_stiffness = HEADING_HOLD_GAIN_PER_S

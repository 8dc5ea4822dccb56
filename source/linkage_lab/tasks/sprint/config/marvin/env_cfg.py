"""The sprint for Marvin: the velocity task on a 10 m track with the race's terminations.

Same observations and actions as ``LinkageLab-Velocity-Flat-Marvin`` (a velocity policy runs
here with a constant forward command); no pushes or randomisation; the robot starts behind the
start line, centred in its 1 m lane; the episode is the race's 90 s time limit.
"""

from __future__ import annotations

from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.utils import configclass

from linkage_lab.config import load_robot_config
from linkage_lab.gait.sprint import SprintCfg, fall_threshold
from linkage_lab.robots.marvin import standing_height_m
from linkage_lab.tasks.sprint import mdp as sprint_mdp
from linkage_lab.tasks.velocity.config.marvin.env_cfg import MarvinFlatEnvCfg

#: Start position behind the start line (m, along +x from the env origin).
START_X_M = -0.3
#: Forward speed command a velocity policy races with (m/s).
RACE_COMMAND_MPS = 0.5


def marvin_sprint_rules() -> SprintCfg:
    """The race's rules for Marvin (gait.md §4), the fall height scaled from the NAO's."""
    return SprintCfg(fall_height_m=fall_threshold(standing_height_m(load_robot_config("marvin"))))


@configclass
class MarvinSprintEnvCfg(MarvinFlatEnvCfg):
    """``LinkageLab-Sprint-Marvin``."""

    def __post_init__(self):
        super().__post_init__()
        rules = marvin_sprint_rules()
        self.episode_length_s = rules.time_limit_s
        self.scene.num_envs = 1
        self.scene.env_spacing = 2 * rules.lane_half_width_m

        command = self.commands.base_velocity
        command.resampling_time_range = (rules.time_limit_s, rules.time_limit_s)
        command.rel_standing_envs = 0.0
        command.ranges.lin_vel_x = (RACE_COMMAND_MPS, RACE_COMMAND_MPS)
        command.ranges.lin_vel_y = (0.0, 0.0)
        command.ranges.ang_vel_z = (0.0, 0.0)

        self.events.push_robot = None
        self.events.add_base_mass = None
        self.events.physics_material = None
        self.events.base_external_force_torque = None
        self.events.reset_base.params["pose_range"] = {"x": (START_X_M, START_X_M)}
        self.events.reset_base.params["velocity_range"] = {}
        self.events.reset_robot_joints.params["position_range"] = (1.0, 1.0)

        self.terminations.fell = DoneTerm(func=sprint_mdp.torso_below, params={"height_m": rules.fall_height_m})
        self.terminations.left_track = DoneTerm(
            func=sprint_mdp.left_lane, params={"half_width_m": rules.lane_half_width_m}
        )
        self.terminations.finished = DoneTerm(
            func=sprint_mdp.finished, params={"finish_x_m": START_X_M + rules.track_length_m}
        )

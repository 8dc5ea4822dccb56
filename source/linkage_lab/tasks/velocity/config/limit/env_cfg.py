"""Velocity tracking on flat ground for the Limit: deltas from the shared flat velocity task.

The Limit's legs are planar (no hip abduction, no yaw joint), so it cannot step sideways: the
command asks for forward/backward speed and a moderate yaw rate, which differential stepping of
the left and right legs can produce. Rewards and thresholds are scaled to a 9.6 kg, 0.19 m-tall
trotting robot.
"""

from __future__ import annotations

from isaaclab.assets import ArticulationCfg
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils import configclass
from isaaclab.utils.modifiers import ModifierCfg
from isaaclab_tasks.contrib.velocity.config.spot.mdp import GaitReward
from isaaclab_tasks.core.velocity import mdp
from isaaclab_tasks.core.velocity.velocity_env_cfg import RewardsCfg
from isaaclab_tasks.utils import PresetCfg

from linkage_lab.physics.contact import newton_shape_gains
from linkage_lab.robots.limit.articulation import joint_target_clip, limit_articulation_cfg, standing_height_m
from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.limit.s3n import TASK_CONTACT_SOLREF, TASK_PHYSICS_DT_S
from linkage_lab.tasks.velocity import faults
from linkage_lab.tasks.velocity.base_env_cfg import loop_latency_steps
from linkage_lab.tasks.velocity.commands import split_command_cfg
from linkage_lab.tasks.velocity.flat_env_cfg import LinkageVelocityFlatEnvCfg
from linkage_lab.tasks.velocity.gait_clock import clock_contacts, gait_clock
from linkage_lab.tasks.velocity.randomization import apply_sensor_noise, randomize_constants
from linkage_lab.tasks.velocity.rewards import (
    airborne,
    foot_held_up,
    heading_tracking,
    lin_vel_error_l2,
    short_stance,
    standing_joint_deviation_l1,
    yaw_acceleration_l2,
    yaw_rate_error_l2,
)

#: How far inside its joint's range a joint target stays (rad): the policy may hold a joint near a stop, not on it.
TARGET_STOP_MARGIN_RAD = 0.02
#: The joint targets' first-order filter per control step (1: unfiltered); see the action term below.
TARGET_FILTER_ALPHA = 0.7


@configclass
class LimitRewardsCfg(RewardsCfg):
    """The shared velocity rewards plus a base-height term (a low robot can crawl on its belly)."""

    base_height_l2 = RewTerm(func=mdp.base_height_l2, weight=-20.0, params={"target_height": 0.16})
    # Sharper tracking kernels (0.1 m/s, 0.1 rad/s), off in the recipe (a weight of 0 skips a term): they pay the last
    # few hundredths of a m/s the 0.25 kernels barely see. From scratch they did not learn faster, so the recipe and the
    # demo leave them off; the shipped policy's last 900 iterations of fine-tuning turned them on (lin 1.0, yaw 1.5,
    # with 0.1 s of paid air time; its train.json). Before the knee's one-sided stop the same fine-tune walked backward
    # at 0.21 m/s on a 0.3 command on the closed chain, a rear knee past straight (docs/results/2026-12-04_knee_fold.md)
    track_lin_vel_xy_fine = RewTerm(
        func=mdp.track_lin_vel_xy_exp, weight=0.0, params={"command_name": "base_velocity", "std": 0.1}
    )
    track_ang_vel_z_fine = RewTerm(
        func=mdp.track_ang_vel_z_exp, weight=0.0, params={"command_name": "base_velocity", "std": 0.1}
    )
    # A trot: the feet of each diagonal pair (robot config's `joint_table.trot_pairs`) land and lift together, the
    # two pairs in turn (Isaac Lab's Spot gait term: air and contact times matched within a pair, crossed between
    # pairs; 1 for a clean trot, towards 0 otherwise), paid whenever a command is given. Off: 400 iterations of it at
    # weight 2 or 5 on the shipped policy evened its feet out but tracked worse, the yaw swing on the spot most of all
    # (policies/experiments/limit_trot_gait/). The pairs are filled in from the robot config below.
    trot_gait = RewTerm(
        func=GaitReward,
        weight=0.0,
        params={
            "std": 0.1,
            "max_err": 0.2,
            "velocity_threshold": 0.1,
            "synced_feet_pair_names": (),
            "asset_cfg": SceneEntityCfg("robot"),
            "sensor_cfg": SceneEntityCfg("contact_forces"),
        },
    )
    # The base's yaw acceleration, squared ((rad/s²)², the yaw rate differenced over a control step): a cost on the
    # fast swing of the yaw rate that makes most of the Limit's yaw error when it turns on the spot. Off: the swing came
    # back in slower bands (policies/experiments/limit_yaw_acceleration/).
    yaw_acceleration_l2 = RewTerm(func=yaw_acceleration_l2, weight=0.0)
    # The yaw-rate error squared, (rad/s)²: the acceptance's yaw RMS as a cost, charging the swing of the yaw rate as
    # much as its mean error. Off in the recipe (policies/experiments/limit_yaw_error_l2/).
    yaw_rate_error_l2 = RewTerm(func=yaw_rate_error_l2, weight=0.0, params={"command_name": "base_velocity"})
    # The planar velocity error squared, (m/s)²: the acceptance's lin-vel RMS as a cost, its swing charged with its
    # mean. Off in the recipe.
    lin_vel_error_l2 = RewTerm(func=lin_vel_error_l2, weight=0.0, params={"command_name": "base_velocity"})
    # The joints' distance from the standing pose, summed (rad), while the command asks to stand. Off: 400 iterations
    # at -0.5 or -2 on the shipped policy left it trotting in place on a standing command (its least-loaded foot down
    # 31 / 21 % of the time) and cost the closed chain's 0.5 m/s walk (policies/experiments/limit_fine_tune_3199/).
    standing_still = RewTerm(func=standing_joint_deviation_l1, weight=0.0, params={"command_name": "base_velocity"})
    # The heading the yaw-rate command integrates, held (Marvin's term): pays for the mean turn and its slow wander,
    # which the yaw-acceleration cost leaves alone. Off: with that cost it turned less (the same experiment).
    heading_tracking = RewTerm(
        func=heading_tracking,
        weight=0.0,
        params={"std_rad": 0.25, "max_error_rad": 0.5, "command_name": "base_velocity"},
    )
    # No foot down, at any command (a trot at these speeds needs no flight): the shipped policy is in the air 16 % of
    # the time (its eval.json). Off: at -1.0 / -3.0 it took that to 11 / 5 % but turned no better on the spot and
    # lost the closed chain's left turn (policies/experiments/limit_airborne/).
    airborne = RewTerm(func=airborne, weight=0.0, params={"sensor_cfg": SceneEntityCfg("contact_forces")})
    # A foot off the ground longer than a swing (0.5 s), the time over, up to 1 s per foot. Off in the recipe. The
    # lineage shipped since 2026-12-03 came to hold its right rear foot up for good (duty factor 0.0005 in its
    # eval.json) and hop on the other three (docs/results/2026-12-06_foot_loading.md).
    foot_held_up = RewTerm(func=foot_held_up, weight=0.0, params={"sensor_cfg": SceneEntityCfg("contact_forces")})
    # A foot's stance shorter than 0.15 s, charged when it lifts: with the term above alone the held-up foot learnt to
    # tap the ground every half second (2.3 touchdowns/s at a duty factor of 0.06). Off in the recipe.
    short_stance = RewTerm(func=short_stance, weight=0.0, params={"sensor_cfg": SceneEntityCfg("contact_forces")})
    # A foot that slides while it touches the ground (Isaac Lab's term: the foot link's ground speed while its contact
    # force is above 1 N, summed over the feet, m/s). Off in the recipe. The leg odometry of the robot's base-velocity
    # estimator takes a touching foot to stand still, so a gait that skids its feet reads short on the robot.
    feet_slide = RewTerm(
        func=mdp.feet_slide,
        weight=0.0,
        params={"sensor_cfg": SceneEntityCfg("contact_forces"), "asset_cfg": SceneEntityCfg("robot")},
    )


@configclass
class LimitRobotCfg(PresetCfg):
    """The Limit with its hip/knee linkage model selectable: ``presets=kin_only|s3n_act|s3n_full``.

    The default is ``s3n_act`` until the Limit's own ``M_p`` is identified on hardware.
    """

    default: ArticulationCfg = None
    kin_only: ArticulationCfg = None
    s3n_act: ArticulationCfg = None
    s3n_full: ArticulationCfg = None


@configclass
class LimitFlatEnvCfg(LinkageVelocityFlatEnvCfg):
    """``LinkageLab-Velocity-Flat-Limit``."""

    rewards: LimitRewardsCfg = LimitRewardsCfg()

    def __post_init__(self):
        super().__post_init__()
        # Physics step: 2.5 ms, eight steps per 20 ms control period (the PD torque is held over a step; why 2.5 ms:
        # robots/limit/s3n.py, TASK_PHYSICS_DT_S). The contact sensor ticks every step.
        control_period_s = self.sim.dt * self.decimation
        self.sim.dt = TASK_PHYSICS_DT_S
        self.decimation = round(control_period_s / TASK_PHYSICS_DT_S)
        self.sim.render_interval = self.decimation
        self.scene.contact_forces.update_period = self.sim.dt
        robot_cfg = limit_config()
        self.scene.robot = LimitRobotCfg(
            default=limit_articulation_cfg(robot_cfg, "s3n_act", self.sim.dt),
            kin_only=limit_articulation_cfg(robot_cfg, "kin_only", self.sim.dt),
            s3n_act=limit_articulation_cfg(robot_cfg, "s3n_act", self.sim.dt),
            s3n_full=limit_articulation_cfg(robot_cfg, "s3n_full", self.sim.dt),
        )
        # The CPU recipe: 256 envs. `linkage-lab bench train` on a 2-core CPU: 1.8x the env-steps/s of 64
        # envs, while 1024 envs add only 17 % more at 3.4x fewer policy updates per second. A GPU takes
        # env.scene.num_envs=4096.
        self.scene.num_envs = 256
        self.scene.env_spacing = 1.0
        # Physics: a small robot with four small feet needs few constraint rows.
        mjwarp = self.sim.physics.newton_mjwarp
        mjwarp.solver_cfg.njmax = 80
        mjwarp.solver_cfg.nconmax = 40
        # One MuJoCo-Warp step per physics step: the joints carry armature (motor inertia), so
        # the explicit PD and the contacts stay stable, and kernel launches (what bounds CPU
        # throughput) drop by half: ~1.3x env-steps/s at 64 envs (`linkage-lab bench env`).
        mjwarp.num_substeps = 1
        # The feet meet the floor as they did at 5 ms, whatever the step (robots/limit/s3n.py, TASK_CONTACT_SOLREF).
        mjwarp.default_shape_cfg.ke, mjwarp.default_shape_cfg.kd = newton_shape_gains(*TASK_CONTACT_SOLREF)
        self.sim.physics.default = mjwarp

        # Commands: forward/backward speed and yaw rate only (planar legs cannot sidestep).
        command = self.commands.base_velocity
        command.heading_command = False
        command.rel_heading_envs = 0.0
        command.rel_standing_envs = 0.1
        command.ranges.lin_vel_x = (-0.4, 0.6)
        command.ranges.lin_vel_y = (0.0, 0.0)
        command.ranges.ang_vel_z = (-0.6, 0.6)
        # 70 % of the commands walk straight, 20 % turn on the spot, 10 % combine both. Turning on planar legs is
        # its own motion (the stance feet skid). At the old kp 20 it reached a few hundredths of a rad/s, and 80 / 10 %
        # was the recipe: 30 % turn-only commands spent samples that walking uses (one of three runs met every
        # forward target, all three at 80 / 10 %; docs/results/policy_histories.md, "The Limit"). The share went to
        # 20 % in the change that gave the legs kp 60 and put +-0.3 rad/s in place back into the acceptance.
        self.commands.base_velocity = split_command_cfg(command, rel_straight_envs=0.7, rel_turning_envs=0.2)

        # Actions: joint position offsets around the standing pose (rad per unit action), applied 0-8 physics
        # steps (0-20 ms) late, drawn per env at reset: the loop's latency, sensor sample to drive. For this policy
        # (no memory beyond its last action, no clock) a sample d old and a target d late make the same loop shifted
        # in time (tests/unit/test_sim2sim_latency.py), so the late targets stand for both delays. Not the 0-40 ms
        # Marvin trains on: 200 iterations of fine-tuning the shipped policy under 0-40 ms fell as often in the
        # reality-gap sweep (4 of 72 runs, all at 0.5 m/s under 20 or 40 ms) and tracked worse on the closed chain
        # (lin-vel RMS up to 0.102 against 0.084; policies/experiments/limit_latency_40ms/).
        self.actions.joint_pos.scale = 0.25
        self.actions.joint_pos.target_delay_range_steps = loop_latency_steps(self.sim.dt, (0.0, 0.020))
        # The joint targets pass a first-order filter once per control step, q_t = α q*_t + (1 − α) q_{t−1}, as the
        # robot's deploy runtime runs it (the bundle records α). At α = 0.7, 400 iterations from the policy shipped
        # before cut the Isaac Lab walks' RMS (10 episodes each: 0.058 / 0.057 / 0.063 / 0.064 against 0.057 / 0.061
        # / 0.066 / 0.069 at −0.3 / 0 / 0.3 / 0.5 m/s) and the closed chain's stress-set misses (5 of 36 rows, all at
        # 40 ms, against 8); at α = 0.5 the closed chain's 0.5 m/s walk missed (RMS 0.109;
        # policies/experiments/limit_fine_tune_3199/).
        self.actions.joint_pos.target_filter_alpha = TARGET_FILTER_ALPHA
        self.actions.joint_pos.joint_names = [".*"]
        self.actions.joint_pos.preserve_order = True
        # Each joint target stays TARGET_STOP_MARGIN_RAD inside its joint's range, as on the robot, whose deploy
        # runtime clamps every target into its motor's range. Unclamped, the policy asked the ankle for up to 1.2 rad
        # against its 0.60 rad stop: the motor then drives the light foot into the stop at its full torque, and on the
        # GIM6010-8's datasheet torque-speed line (which keeps 5 N·m up to 14.7 rad/s) the 5 ms step bounced an ankle
        # off its stop at 48-190 rad/s, a few envs in every training iteration until their state went non-finite.
        self.actions.joint_pos.clip = joint_target_clip(robot_cfg, TARGET_STOP_MARGIN_RAD)

        # Observations: the base velocity as the robot's estimator gives it, with the error measured on the closed
        # chain under the policy shipped before (20 s at -0.3 / 0 / 0.3 / 0.5 m/s; docs/design/base_velocity.md, "What
        # training observes"), rounded up: bias x / y within 0.031 / 0.007 m/s and z 0.04-0.14 m/s downward, noise
        # x / y / z up to 0.060 / 0.016 / 0.039 m/s, correlated over 0.04-0.10 s (two to five ticks, where white
        # noise would read 0.01 s). The white 0.11 m/s of vertical noise trained on before was the first estimator's.
        self.observations.policy.base_lin_vel.params.update(
            bias_mps=(0.05, 0.02, 0.15), noise_std_mps=(0.06, 0.02, 0.04), correlation_s=(0.05, 0.05, 0.05)
        )

        # Constants the robot does not pin down, drawn per env at startup (robot config's `randomization`), and its
        # sensors' error (`sensors`: a MEMS gyro's noise and bias, not Isaac Lab's 30x larger default).
        randomize_constants(self.events, robot_cfg.randomization)
        apply_sensor_noise(self.observations.policy, robot_cfg.sensors)

        # Events: body names of this robot; small pushes for a small robot.
        for term in (self.events.add_base_mass, self.events.base_com, self.events.base_external_force_torque):
            term.params["asset_cfg"] = SceneEntityCfg("robot", body_names="base_link")
        self.events.add_base_mass.params["mass_distribution_params"] = (1 / 1.15, 1.15)
        self.events.base_com.params["com_range"] = {
            "x": (-0.02, 0.02),
            "y": (-0.01, 0.01),
            "z": (-0.005, 0.005),
        }
        self.events.push_robot.params["velocity_range"] = {"x": (-0.2, 0.2), "y": (-0.2, 0.2)}
        self.events.reset_base.params["pose_range"] = {
            "x": (-0.2, 0.2),
            "y": (-0.2, 0.2),
            "yaw": (-3.14, 3.14),
        }
        self.events.reset_base.params["velocity_range"] = {
            axis: (-0.2, 0.2) for axis in ("x", "y", "z", "roll", "pitch", "yaw")
        }

        # Rewards: a trot at a few steps per second, feet only on the ground.
        self.rewards.base_height_l2.params["target_height"] = standing_height_m(robot_cfg)
        self.rewards.feet_air_time.params["sensor_cfg"].body_names = ".*_foot"
        self.rewards.airborne.params["sensor_cfg"].body_names = ".*_foot"
        self.rewards.feet_slide.params["sensor_cfg"].body_names = ".*_foot"
        self.rewards.foot_held_up.params["sensor_cfg"].body_names = ".*_foot"
        self.rewards.short_stance.params["sensor_cfg"].body_names = ".*_foot"
        self.rewards.feet_slide.params["asset_cfg"].body_names = ".*_foot"
        self.rewards.feet_air_time.params["threshold"] = 0.2
        self.rewards.feet_air_time.weight = 0.25
        pairs = robot_cfg.joint_table.trot_pairs
        self.rewards.trot_gait.params["synced_feet_pair_names"] = tuple(
            tuple(f"{leg}_foot" for leg in pairs[name]) for name in ("A", "B")
        )
        self.rewards.undesired_contacts = None  # only the base and the feet have collision shapes
        # Tracking: a 0.25 m/s kernel width. Isaac Lab's 0.5 m/s pays 0.96 of the reward for a 0.1 m/s
        # error, so a policy has little reason to track closer than that; with 0.25 m/s the same error
        # costs 15 %. Measured at 220 iterations × 256 envs with fixed commands (`linkage-lab eval`),
        # lin-vel RMS at 0.3 / 0.5 m/s: 0.063 / 0.069 m/s with 0.25 m/s against 0.086 / 0.116 with 0.5.
        self.rewards.track_lin_vel_xy_exp.weight = 2.0
        self.rewards.track_lin_vel_xy_exp.params["std"] = 0.25
        # Yaw tracking: a 0.25 rad/s kernel at weight 1.5. With Isaac Lab's 0.5 rad/s kernel at weight 1.0, standing
        # still on a 0.3 rad/s turn command kept 70 % of the reward, and the policy learnt to turn one way only
        # (-0.21 at -0.3, 0.02 at +0.3 rad/s).
        self.rewards.track_ang_vel_z_exp.weight = 1.5
        self.rewards.track_ang_vel_z_exp.params["std"] = 0.25
        self.rewards.flat_orientation_l2.weight = -2.5
        self.rewards.dof_torques_l2.weight = -2.0e-4
        self.rewards.action_rate_l2.weight = -0.005
        # Joint accelerations: a tenth of Isaac Lab's weight. At kp 60 on 0.004 kg m^2 rotors the drives' own
        # accelerations are several times those at kp 20 on 0.0162: with the stock -2.5e-7 the term cost 1.3-2.1 per
        # episode at 80 iterations, more than the tracking paid, and the tracking error stalled at 0.3 m/s.
        self.rewards.dof_acc_l2.weight = -2.5e-8
        # Joint stops: a stop is not an actuator. Paid past 95 % of each joint's range (the articulation's soft
        # limit factor); the former recipe stood its ankles on their stops with the stop carrying 0.34-0.49 N m.
        self.rewards.dof_pos_limits.weight = -10.0

        self.terminations.base_contact.params["sensor_cfg"].body_names = "base_link"


#: The clock task's trot frequency (cycles/s): each foot lands 3 times a second, where the policies trained without a
#: clock tap 7-9 times a second in Isaac Lab and 10-13 on the closed chain (docs/results/2026-12-06_touchdown.md). A
#: 0.5 m/s walk then takes 0.083 m steps (v / 2f), inside the scripted trot's 0.10 m (robots/limit/gait.py, 2.5 Hz).
CLOCK_FREQUENCY_HZ = 3.0


@configclass
class LimitClockFlatEnvCfg(LimitFlatEnvCfg):
    """``LinkageLab-Velocity-Flat-Limit-Clock``: the Limit's task with a gait clock.

    The actor observes the clock's phase (:mod:`~linkage_lab.tasks.velocity.gait_clock`; the robot counts its own
    control ticks) and is paid for feet on its trot schedule: the diagonal pairs of the robot config's
    ``joint_table.trot_pairs`` half a cycle apart, each foot down half its cycle.
    """

    def __post_init__(self):
        super().__post_init__()
        robot_cfg = limit_config()
        table = robot_cfg.joint_table
        feet = [f"{leg}_foot" for leg in table.leg_order]
        offsets = [0.0 if leg in table.trot_pairs["A"] else 0.5 for leg in table.leg_order]
        self.observations.policy.gait_clock = ObsTerm(
            func=gait_clock,
            params={"frequency_hz": CLOCK_FREQUENCY_HZ},
            modifiers=[ModifierCfg(func=faults.finite_or_zero)],
        )
        self.rewards.clock_contacts = RewTerm(
            func=clock_contacts,
            weight=2.0,
            params={
                "sensor_cfg": SceneEntityCfg("contact_forces", body_names=feet, preserve_order=True),
                "asset_cfg": SceneEntityCfg("robot", body_names=feet, preserve_order=True),
                "frequency_hz": CLOCK_FREQUENCY_HZ,
                "phase_offsets": offsets,
            },
        )

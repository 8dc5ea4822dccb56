"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Why the shipped policy (the lineage of its ``train.json``: 700 iterations from scratch with the foot terms, 300 on
#: the sharp tracking kernels, 600 on the robot drivers' diagonal leg gains, 400 with the yaw-rate error squared, 800
#: on the estimator's measured, correlated error with the planar velocity error squared, 400 with its joint targets
#: filtered at α 0.7, then 400 on the task's 2.5 ms physics step) misses what it misses; the numbers are its
#: ``sweep.json`` / ``closed_chain_sweep.json`` (policies/experiments/limit_physics_step/). It meets every walking and
#: foot target in Isaac Lab and every target on the closed chain.
_TURN = (
    "turning on the spot it reaches the command (+0.322 / -0.283 rad/s), but the yaw rate swings with each step: yaw "
    "RMS 0.108 / 0.102 in Isaac Lab (8 episodes each; another sweep of it 0.107 / 0.109; on the closed chain "
    "0.086 / 0.105, within its 0.12). Most of "
    "the swing the policies before showed here was Isaac Lab's physics step, which holds the drives' PD torque over "
    "the step: the policy shipped before swung 0.144 / 0.144 at the 5 ms step the task had and 0.116 / 0.116 at its "
    "2.5 ms (policies/experiments/limit_physics_step). The rest is the skid: the Limit's legs are planar and it turns "
    "only by skidding its stance feet sideways, and the robot's scripted trot, whose joint targets are smooth 2.5 Hz "
    "sinusoids, swings 0.065-0.129 rad/s above 6 Hz when it turns 0.27-0.35 rad/s "
    "(policies/experiments/limit_yaw_error_l2). A second seed of the 2.5 ms fine-tune swung 0.105 / 0.110. A sharper "
    "yaw kernel, a stronger action-rate penalty, a trot term, a cost on the yaw acceleration, a cost on flight, "
    "smoothed joint targets, a MEMS gyro's noise, a 3 Hz gait clock, the squared yaw error and mirrored rollouts each "
    "left a lineage swinging more in Isaac Lab or lost a closed-chain walk or turn (policies/experiments/"
    "limit_knee_stop, limit_action_rate, limit_trot_gait, limit_yaw_acceleration, limit_airborne, "
    "limit_target_filter, limit_sensor_noise, limit_gait_clock, limit_yaw_error_l2, limit_fine_tune_3199, "
    "limit_physics_step); neither the friction cone nor the yaw rate's frame is the swing "
    "(policies/experiments/limit_friction_cone)"
)
#: Every foot on the ground at least this share of the time, on every command: a trot puts each foot down about half
#: of it. A policy that holds a leg up walks on three, overloading their motors, and hops between them, which leaves
#: its base-velocity estimate without a planted foot (docs/results/2026-12-06_foot_loading.md).
MIN_DUTY_FACTOR = 0.2

#: Forward −0.3, 0, 0.3, 0.5 m/s and turning on the spot at ±0.3 rad/s, 8 envs × 20 s each, pushes on. In Isaac
#: Lab: planar-velocity RMS error ≤ 0.06 m/s, yaw-rate RMS error ≤ 0.10 rad/s, no fall. On the closed chain (the
#: sim2sim sweep and every condition of the reality-gap sweep): ≤ 0.08 m/s, ≤ 0.12 rad/s, no fall. Both: every
#: foot down at least :data:`MIN_DUTY_FACTOR` of the time.
#: Turning on the spot came back at kp 60 (``configs/robots/limit.yaml``, ``control``): at kp 20 the planar legs bent
#: instead of making the feet skid, and the former policy stood still on a ±0.5 rad/s command.
_CASES = (
    CommandCase(-0.3),
    CommandCase(0.0),
    CommandCase(0.3),
    CommandCase(0.5),
    CommandCase(0.0, 0.3),
    CommandCase(0.0, -0.3),
)
LIMIT_ACCEPTANCE = Acceptance(
    cases=_CASES,
    targets=TrackingTargets(
        lin_vel_rms_mps=0.06, yaw_rate_rms_radps=0.10, max_falls=0, min_duty_factor=MIN_DUTY_FACTOR
    ),
    closed_chain_targets=TrackingTargets(
        lin_vel_rms_mps=0.08, yaw_rate_rms_radps=0.12, max_falls=0, min_duty_factor=MIN_DUTY_FACTOR
    ),
    known_misses=tuple(KnownMiss("isaac_lab", case.name, "yaw_rate_rms_radps", _TURN) for case in _CASES[4:]),
)

"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Why the shipped policy (the lineage of its ``train.json``: 700 iterations from scratch with the foot terms, 300 on
#: the sharp tracking kernels, 600 on the robot drivers' diagonal leg gains, then 400 with the yaw-rate error squared)
#: misses what it misses; the numbers are its ``sweep.json`` / ``closed_chain_sweep.json``
#: (policies/experiments/limit_yaw_error_l2/, docs/results/2026-12-06_held_coupling.md).
_WALK = (
    "its walks in Isaac Lab track at lin-vel RMS 0.065-0.070 m/s at -0.3 / 0 / 0.3 / 0.5 m/s, the mean speed within "
    "0.021 m/s of the command (8 episodes each). It trains on the drivers the robot has: each motor's own share of "
    "the mapped gains (the export's leg_gains='diagonal'), where its lineage trained on the full coupled gain matrix "
    "every physics step, which no per-motor driver runs. The lineage met these targets there (0.058 / 0.028 / "
    "0.049 / 0.058 at iteration 999) and walked the closed chain 27 % slow (0.219 m/s at 0.3); on the drivers' "
    "gains it walks the closed chain at speed and lost this much in Isaac Lab, under its randomised latency, motors "
    "and velocity error. Fine-tunes that met these walking targets (a stronger action-rate penalty, a cost on "
    "flight, smoothed joint targets) lost the closed chain's backward walk or left turn, and milder doses of the "
    "first two on this policy (action rate -0.01, flight -0.5) ran its forward walks 0.09-0.10 m/s fast there. Most "
    "of the error is the forward velocity swinging with each step: at 0.3 m/s a swing of 0.058 (0.035 of it above "
    "12 Hz) beside a mean 0.023 slow (policies/experiments/limit_smoothing_on_yaw_l2)"
)
_CLOSED_CHAIN_WALK = (
    "on the closed chain it walks 0.364 m/s on a 0.3 m/s command (RMS 0.0800, 4 runs), as every policy of its "
    "lineage does there (0.35-0.38 m/s; the one shipped before it: 0.354, RMS 0.072). Neither the estimator, the "
    "motors, the rotors, the floor's friction nor the contacts' stiffness is the cause (each changed alone: "
    "0.358-0.387); it is the judge's zero latency, which the robot's loop never has (2-22 ms, sample to target): "
    "on the simulator's true velocity the same walk is 0.29-0.35 m/s with the targets 2-20 ms late, and 0.312 at "
    "RMS 0.041 at 20 ms on its estimate. On the estimate, at 12-16 ms, the estimator reads the walks up to 0.17 m/s "
    "off, once per tick (docs/results/2026-12-06_estimator_latency.md)"
)
_TURN = (
    "turning on the spot it reaches the command (+0.298 / -0.273 rad/s in Isaac Lab, +0.304 / -0.277 on the closed "
    "chain), but the yaw rate swings with each step: yaw RMS 0.148 / 0.134 in Isaac Lab and 0.126 turning right on "
    "the closed chain (0.111 turning left). The Limit turns only by skidding its stance feet sideways (its legs are "
    "planar), and a skid swings: the robot's scripted trot, whose joint targets are smooth 2.5 Hz sinusoids, swings "
    "0.065-0.129 rad/s above 6 Hz when it turns 0.27-0.35 rad/s, whatever the solver's substeps, against this "
    "policy's 0.11-0.12, which leaves the 0.10 target next to nothing for the slower bands and the mean "
    "(policies/experiments/limit_yaw_error_l2). A sharper yaw kernel, a stronger action-rate penalty, a trot term, a "
    "cost on the yaw acceleration, a cost on flight, smoothed joint targets, a MEMS gyro's noise, a 3 Hz gait clock "
    "and the squared yaw error itself each left a lineage swinging at 0.125-0.20 rad/s in Isaac Lab or lost a "
    "closed-chain walk or turn (policies/experiments/limit_knee_stop, limit_action_rate, limit_trot_gait, "
    "limit_yaw_acceleration, limit_airborne, limit_target_filter, limit_sensor_noise, limit_gait_clock, "
    "limit_yaw_error_l2)"
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
    known_misses=(
        *(KnownMiss("isaac_lab", case.name, "lin_vel_xy_rms_mps", _WALK) for case in _CASES[:4]),
        KnownMiss("closed_chain", _CASES[2].name, "lin_vel_xy_rms_mps", _CLOSED_CHAIN_WALK),
        *(KnownMiss("isaac_lab", case.name, "yaw_rate_rms_radps", _TURN) for case in _CASES[4:]),
        KnownMiss("closed_chain", _CASES[5].name, "yaw_rate_rms_radps", _TURN),
    ),
)

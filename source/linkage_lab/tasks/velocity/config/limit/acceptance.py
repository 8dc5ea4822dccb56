"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import SWEEP_FILES, Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Why the shipped policy (the lineage of its ``train.json``: 1,900 iterations to the policy shipped before, 800 on
#: drawn floor friction, then 800 on the GIM6010-8's datasheet torque-speed line with the joint targets clipped inside
#: the ranges, the last 400 with the sharp yaw kernel at weight 3.0) misses what it misses; the numbers are its
#: ``sweep.json`` / ``closed_chain_sweep.json`` (docs/results/2026-12-06_motor_line.md).
_TURN = (
    "turning on the spot is learnt both ways, its mean within 0.08 rad/s of the command (+0.313 / -0.271 in Isaac Lab, "
    "+0.226 / -0.219 on the closed chain), but the yaw rate swings with each step of the trot: yaw RMS 0.117 / 0.127 "
    "in Isaac Lab, 0.143 turning right on the closed chain (left 0.113, within 0.12). The policy shipped before swung "
    "as much (0.122 / 0.149 in Isaac Lab; 0.116 / 0.154 about the mean, most of it faster than the stepping: "
    "linkage_lab_experiments.turn.yaw_spectrum). A sharper yaw kernel, a stronger action-rate penalty, a trot term, a "
    "cost on the yaw acceleration, a cost on flight, smoothed joint targets and a MEMS gyro's noise each left it "
    "swinging at 0.125-0.20 rad/s or lost a closed-chain walk or turn (policies/experiments/limit_knee_stop, "
    "limit_action_rate, limit_trot_gait, limit_yaw_acceleration, limit_airborne, limit_target_filter, "
    "limit_sensor_noise); neither pushes nor the randomised constants make it (0.107 / 0.146 with both off)"
)
_BACKWARD = (
    "walking backward it runs a little fast in Isaac Lab: -0.323 m/s at lin-vel RMS 0.062 over its sweep's 8 "
    "episodes (-0.320 m/s, 0.060 over 16). On the closed chain it walks -0.266 m/s at RMS 0.090 and its trot stops "
    "alternating (0.04): its fr and rl feet never lift but skate (their contact points move -0.22 m/s under a base at "
    "-0.27), which the leg odometry cannot see (the estimate reads +0.15 m/s short). The branch from the drawn floors "
    "has done this on the closed chain since its first 400 iterations; neighbouring checkpoints of the run are worse "
    "(3450: 0.111; 3800 and 3899 stand still backward)"
)
_THREE_LEGS = (
    "it walks, turns and stands on three legs: its right rear foot is down 0-0.1 % of the time in Isaac Lab and on the "
    "closed chain (0.0005 over its eval.json), and it hops (no foot down 13 % of the time). The lineage has held that "
    "foot up since the fine-tunes of 2026-12-03 (0.09, then 0.01 at iteration 1899). Fine-tunes with the trot term, "
    "a cost on a foot held up, on taps and on flight brought it to 0.06-0.13 over 400-800 iterations and then walked "
    "at 60-75 % of the command on the closed chain (docs/results/2026-12-06_foot_loading.md)"
)
_FAST = (
    "at 0.5 m/s on the closed chain it walks slow and shakes: 0.437 m/s at lin-vel RMS 0.103 (Isaac Lab: 0.521 m/s, "
    "0.057). Its estimate is right there (bias -0.03 m/s); before the estimator's stance test it read the walk "
    "0.23 m/s short, and the policy made up the speed (0.521 m/s at RMS 0.105); the policy shipped before walked it at "
    "0.079 under the datasheet line, fine-tuned for the old line's weaker motors, while it missed Isaac Lab's walks"
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
        *(KnownMiss(sim, case.name, "min_duty_factor", _THREE_LEGS) for sim in SWEEP_FILES for case in _CASES),
        KnownMiss("isaac_lab", "vx-0.30_wz+0.00", "lin_vel_xy_rms_mps", _BACKWARD),
        *(KnownMiss("isaac_lab", case, "yaw_rate_rms_radps", _TURN) for case in ("vx+0.00_wz+0.30", "vx+0.00_wz-0.30")),
        KnownMiss("closed_chain", "vx-0.30_wz+0.00", "lin_vel_xy_rms_mps", _BACKWARD),
        KnownMiss("closed_chain", "vx+0.50_wz+0.00", "lin_vel_xy_rms_mps", _FAST),
        KnownMiss("closed_chain", "vx+0.00_wz-0.30", "yaw_rate_rms_radps", _TURN),
    ),
)

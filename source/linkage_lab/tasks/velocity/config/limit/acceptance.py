"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Why the shipped policy (the lineage of its ``train.json``: 700 iterations from scratch with the foot terms, 300 on
#: the sharp tracking kernels, 600 on the robot drivers' diagonal leg gains, 400 with the yaw-rate error squared, 800
#: on the estimator's measured, correlated error with the planar velocity error squared, then 400 with its joint
#: targets filtered at α 0.7) misses what it misses; the numbers are its ``sweep.json`` / ``closed_chain_sweep.json``
#: (policies/experiments/limit_fine_tune_3199/). On the closed chain it meets every target.
_WALK = (
    "its walks in Isaac Lab track at lin-vel RMS 0.058 / 0.060 / 0.065 / 0.067 m/s at -0.3 / 0 / 0.3 / 0.5 m/s, "
    "the mean speed within 0.017 m/s of the command (8 episodes each), under its randomised latency (0-20 ms), motors "
    "and the estimator's measured error, correlated over 0.05 s as the filter makes it (the policy shipped before: "
    "0.057 / 0.064 / 0.068 / 0.073). Most of the error is the forward velocity swinging with each step: at 0.3 m/s "
    "a swing of 0.058 (0.035 of it above 12 Hz) beside a mean 0.023 fast, for an earlier policy "
    "(policies/experiments/limit_smoothing_on_yaw_l2). The policy before it met 0.06 under any one of the sweep's "
    "randomised conditions alone (latency, constants, friction, sensor noise, the estimate's error) to within 0.005: "
    "the misses are their sum. Its joint targets' filter (α 0.7) took 0.002-0.006 off; a stronger filter (α 0.5), "
    "ten times the joint-acceleration cost, the squared velocity error at -90, 400 iterations more of the stage, "
    "0-40 ms of latency, a cost on leaving the standing pose or on short stances each came no closer here or lost a "
    "closed-chain target (policies/experiments/limit_fine_tune_3199)"
)
_DUTY = (
    "walking 0.5 m/s in Isaac Lab its least-loaded foot is down 19.98 % of the time (8 episodes), a hair under the "
    "20 %; on the closed chain 37 % or more. The joint-target filter it was fine-tuned with costs that foot's "
    "stance (the policy before: 21 %), and the branches without the filter that tracked as well lost it too (18 %; "
    "policies/experiments/limit_fine_tune_3199)"
)
_TURN = (
    "turning on the spot it reaches the command (+0.308 / -0.257 rad/s), but the yaw rate swings with each step: yaw "
    "RMS 0.144 / 0.144 in Isaac Lab (on the closed chain 0.082 / 0.101, within its 0.12). The policy before it "
    "swung 0.115 / 0.132 with nothing randomised in Isaac Lab and 0.074 / 0.117 on the "
    "closed chain; the estimator is not the difference (the closed chain on the true velocity: 0.067 / 0.115), and "
    "neither alone is Isaac Lab's contact stiffness (twice the closed chain's; softened there: 0.124 / 0.157) nor its "
    "step (two substeps: 0.112 / 0.123). The Limit turns only by "
    "skidding its stance feet sideways (its legs are planar), and a skid swings: the robot's scripted trot, whose "
    "joint targets are smooth 2.5 Hz sinusoids, swings 0.065-0.129 rad/s above 6 Hz when it turns 0.27-0.35 rad/s, "
    "whatever the solver's substeps, against the policies' 0.11-0.12, which leaves the 0.10 target next to nothing "
    "for the slower bands and the mean (policies/experiments/limit_yaw_error_l2). A sharper yaw kernel, a stronger "
    "action-rate penalty, a trot term, a cost on the yaw acceleration, a cost on flight, smoothed joint targets, a "
    "MEMS gyro's noise, a 3 Hz gait clock and the squared yaw error itself each left a lineage swinging at "
    "0.125-0.20 rad/s in Isaac Lab or lost a closed-chain walk or turn (policies/experiments/limit_knee_stop, "
    "limit_action_rate, limit_trot_gait, limit_yaw_acceleration, limit_airborne, limit_target_filter, "
    "limit_sensor_noise, limit_gait_clock, limit_yaw_error_l2, limit_fine_tune_3199). Most of the swing is Isaac "
    "Lab's 5 ms step, which holds the drives' PD torque for 5 ms where the robot's drivers and the closed chain "
    "update it every 2 ms or faster: judged at a 2.5 ms step the same policy swings 0.125 / 0.121 and turns "
    "symmetrically (+0.294 / -0.295), and two fine-tunes there 0.104-0.112, with every walk met; but at that step "
    "their feet are down as little as 14 % of the time, and one of them walks the closed chain fast under the stress "
    "set (8 rows missed against 6), so the task keeps 5 ms for now "
    "(policies/experiments/limit_physics_step; neither the friction cone nor the yaw rate's frame is the swing: "
    "policies/experiments/limit_friction_cone)"
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
        *(KnownMiss("isaac_lab", case.name, "lin_vel_xy_rms_mps", _WALK) for case in _CASES[2:4]),
        KnownMiss("isaac_lab", _CASES[3].name, "min_duty_factor", _DUTY),
        *(KnownMiss("isaac_lab", case.name, "yaw_rate_rms_radps", _TURN) for case in _CASES[4:]),
    ),
)

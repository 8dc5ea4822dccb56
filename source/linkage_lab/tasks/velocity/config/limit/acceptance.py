"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Why the shipped policy (the lineage of its ``train.json``: 700 iterations from scratch with the foot terms, 300 on
#: the sharp tracking kernels, 600 on the robot drivers' diagonal leg gains, 400 with the yaw-rate error squared, 800
#: on the estimator's measured, correlated error with the planar velocity error squared, 400 with its joint targets
#: filtered at α 0.7, then 800 on the task's 2.5 ms physics step) misses what it misses; the numbers are its
#: ``sweep.json`` / ``closed_chain_sweep.json`` (policies/experiments/limit_physics_step/). It meets every walking and
#: turning target in Isaac Lab and every target on the closed chain.
#:
#: Its turns meet 0.10 at the sweep's seed (yaw RMS 0.097 / 0.092) but not at every seed: at env seed 7 the same
#: sweep gives 0.111 / 0.110 (the policy before: 0.108 / 0.102 and 0.117 / 0.119). Eight episodes draw eight loop
#: latencies, motor constants and masses, and the turn on the spot, a skid of the stance feet, is the command most
#: sensitive to them (policies/experiments/limit_physics_step, "400 iterations more").
_BACKWARD_FOOT = (
    "walking backward at 0.3 m/s its least-loaded foot is down 19.6 % of the time, 0.4 points under the mark (8 "
    "episodes; 26.5 % in a sweep at env seed 7, 47 % on the closed chain). The policy before had 23.3 % there: the "
    "400 iterations that brought its turns from yaw RMS 0.108 / 0.102 to 0.097 / 0.092 rad/s cost 3.7 points of it "
    "(policies/experiments/limit_physics_step)"
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
    known_misses=(KnownMiss("isaac_lab", _CASES[0].name, "min_duty_factor", _BACKWARD_FOOT),),
)

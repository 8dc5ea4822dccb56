"""What a Marvin velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from dataclasses import replace

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, KnownMiss, TrackingTargets

#: Stand on a zero command and walk forward at 0.3, 0.4 and 0.5 m/s, 8 envs × 20 s each with the task's
#: randomisation: no fall, and a mean forward speed within 0.1 m/s of the command (the mean includes
#: the start from rest and the gait's ramp), and feet that alternate when walking: at least 0.8 of
#: successive touchdowns by the other foot (``footfalls.alternation``; a shuffle repeats a foot, a hop lands
#: both). Walking at 0.4 m/s it turns at ±0.2 rad/s (the trained range, which the sprint's lane keeping
#: steers within) with a mean yaw rate within 0.05 rad/s of the command: the RMS yaw-rate error is no
#: measure of steering for a biped, whose body swings in yaw with every step (0.5 rad/s RMS at a zero yaw
#: command). Marvin is not asked to turn on the spot or walk backward.
MARVIN_ACCEPTANCE = Acceptance(
    cases=(
        CommandCase(0.0),
        CommandCase(0.3),
        CommandCase(0.4),
        CommandCase(0.5),
        CommandCase(0.4, 0.2),
        CommandCase(0.4, -0.2),
    ),
    targets=TrackingTargets(
        lin_vel_rms_mps=None,
        yaw_rate_rms_radps=None,
        max_falls=0,
        forward_speed_error_mps=0.1,
        min_alternation=0.8,
        yaw_rate_error_radps=0.05,
    ),
)

_CLOSED_CHAIN_FALL = (
    "the shipped policy (iteration 2159: 1950 fine-tuned for 210 iterations on the estimator's velocity error, 0-20 ms "
    "latency and randomised constants) falls in 1 of 24 closed-chain runs on the estimator, at 0.5 m/s after 5.1 s "
    "of a kicked start (the policy before: 3 of 24 on the simulator's true velocity, 1 of 1 on the estimate); in "
    "Isaac Lab it falls in none"
)
_TURN_LONG = (
    "on the closed chain it turns right 0.063 rad/s faster than asked (-0.263 at -0.2; left: +0.247 at +0.2, within "
    "the target); in Isaac Lab it turns within 0.019 rad/s"
)

#: The residual task's shipped policy is held to the same targets; these are the checks it misses today.
MARVIN_RESIDUAL_ACCEPTANCE = replace(
    MARVIN_ACCEPTANCE,
    known_misses=(
        KnownMiss("closed_chain", "vx+0.50_wz+0.00", "falls", _CLOSED_CHAIN_FALL),
        KnownMiss("closed_chain", "vx+0.40_wz-0.20", "yaw_rate_error_radps", _TURN_LONG),
    ),
)

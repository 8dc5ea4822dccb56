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

#: The residual task's shipped policy (iteration 2709, the prior's hip raised to 0.60 m so that the swing ankle keeps
#: off its stop; docs/results/2026-12-04_marvin_swing_ankle.md) is held to the same targets. It meets all of them in
#: Isaac Lab and all but one on the closed chain: there the gait's turn, calibrated in Isaac Lab (0.6 s per rad/s),
#: turns it left faster than asked.
_LEFT_TURN = (
    "on the closed chain the left turn runs fast: +0.271 rad/s at +0.2 (4 runs) where Isaac Lab turns +0.209 on the "
    "same gait gain (0.6 s); the right turn is within the mark (-0.217). The turn is mostly the scripted gait's (the "
    "policy may move a hip yaw 0.03 rad), so one gain cannot suit both models; on 0.7 s Isaac Lab turned right "
    "-0.259 (a miss there) and the closed chain left about +0.30"
)
MARVIN_RESIDUAL_ACCEPTANCE = replace(
    MARVIN_ACCEPTANCE,
    known_misses=(KnownMiss("closed_chain", "vx+0.40_wz+0.20", "yaw_rate_error_radps", _LEFT_TURN),),
)

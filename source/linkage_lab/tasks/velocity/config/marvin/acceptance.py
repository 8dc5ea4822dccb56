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

#: The residual task's shipped policy (iteration 3459: observing its previous action, then paid off its joint stops) is
#: held to the same targets. It meets all of them on the closed chain and all but one in Isaac Lab, by 0.006 rad/s.
_RIGHT_TURN = (
    "in Isaac Lab the right turn runs 0.006 rad/s fast: -0.256 rad/s at -0.2 (8 envs x 8 episodes), where the closed "
    "chain turns -0.227 and the left turn is +0.215. The turn is mostly the scripted gait's (0.6 s per rad/s; the "
    "policy may move a hip yaw 0.03 rad); the 150 iterations that took the ankle rolls off their stops (on them 13 % "
    "of the time before) moved it from -0.237. A gait gain of 0.55 s run on the same policy meets it (+0.202 / -0.240) "
    "but slows the closed chain's left turn to +0.154 (one 20 s run), 0.004 inside its tolerance, and the latency rows "
    "of the reality gap already turn left too slowly: the gain stays"
)
MARVIN_RESIDUAL_ACCEPTANCE = replace(
    MARVIN_ACCEPTANCE,
    known_misses=(KnownMiss("isaac_lab", "vx+0.40_wz-0.20", "yaw_rate_error_radps", _RIGHT_TURN),),
)

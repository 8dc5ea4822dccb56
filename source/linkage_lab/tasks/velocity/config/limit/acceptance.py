"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import Acceptance, CommandCase, TrackingTargets

#: Forward −0.3, 0, 0.3, 0.5 m/s and turning on the spot at ±0.3 rad/s, 8 envs × 20 s each, pushes on. In Isaac
#: Lab: planar-velocity RMS error ≤ 0.06 m/s, yaw-rate RMS error ≤ 0.10 rad/s, no fall. On the closed chain (the
#: sim2sim sweep and every condition of the reality-gap sweep): ≤ 0.08 m/s, ≤ 0.12 rad/s, no fall.
#: Turning on the spot came back at kp 60 (``configs/robots/limit.yaml``, ``control``): at kp 20 the planar legs bent
#: instead of making the feet skid, and the former policy stood still on a ±0.5 rad/s command.
LIMIT_ACCEPTANCE = Acceptance(
    cases=(
        CommandCase(-0.3),
        CommandCase(0.0),
        CommandCase(0.3),
        CommandCase(0.5),
        CommandCase(0.0, 0.3),
        CommandCase(0.0, -0.3),
    ),
    targets=TrackingTargets(lin_vel_rms_mps=0.06, yaw_rate_rms_radps=0.10, max_falls=0),
    closed_chain_targets=TrackingTargets(lin_vel_rms_mps=0.08, yaw_rate_rms_radps=0.12, max_falls=0),
)

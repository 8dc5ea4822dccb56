"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import DEFAULT_CASES, Acceptance, TrackingTargets

#: Forward −0.3, 0, 0.3, 0.5 m/s and turning on the spot at ±0.5 rad/s, 8 envs × 20 s each, pushes on:
#: planar-velocity RMS error ≤ 0.06 m/s, yaw-rate RMS error ≤ 0.12 rad/s, no fall.
LIMIT_ACCEPTANCE = Acceptance(
    cases=DEFAULT_CASES,
    targets=TrackingTargets(lin_vel_rms_mps=0.06, yaw_rate_rms_radps=0.12, max_falls=0),
)

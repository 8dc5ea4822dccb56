"""What a Limit velocity policy is accepted on (``linkage-lab eval --sweep``, ``linkage-lab ship``)."""

from __future__ import annotations

from linkage_lab.evaluation.sweep import DEFAULT_CASES, Acceptance, KnownMiss, TrackingTargets

#: Forward −0.3, 0, 0.3, 0.5 m/s and turning on the spot at ±0.5 rad/s, 8 envs × 20 s each, pushes on:
#: planar-velocity RMS error ≤ 0.06 m/s, yaw-rate RMS error ≤ 0.12 rad/s, no fall.
LIMIT_ACCEPTANCE = Acceptance(
    cases=DEFAULT_CASES,
    targets=TrackingTargets(lin_vel_rms_mps=0.06, yaw_rate_rms_radps=0.12, max_falls=0),
    known_misses=tuple(
        KnownMiss(
            simulator,
            case,
            "yaw_rate_rms_radps",
            "the shipped policy does not turn on the spot (yaw-rate RMS 0.48-0.49 rad/s at ±0.5, i.e. it stands): "
            "at kp 20 / kd 0.5 the planar legs bend (foot stiffness about 580 N/m) instead of making the feet "
            "skid; a scripted differential trot turns 0.098 rad/s at these gains and 0.44 rad/s at kp 60 / kd 1.5",
        )
        for simulator in ("isaac_lab", "closed_chain")
        for case in ("vx+0.00_wz+0.50", "vx+0.00_wz-0.50")
    ),
)

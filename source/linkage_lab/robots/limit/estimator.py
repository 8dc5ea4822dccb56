"""The Limit's base-velocity estimator: its feet (each sole's centre and corners) and its stance test."""

from __future__ import annotations

from collections.abc import Sequence

from linkage_lab.deploy.base_velocity import GRAVITY_W, BaseVelocityEstimator, EstimatorCfg, leg_chains
from linkage_lab.robots.limit.config import LimitConfig
from linkage_lab.robots.limit.description import build_limit_model
from linkage_lab.robots.limit.joints import JOINT_NAMES, LEGS


def limit_feet(cfg: LimitConfig) -> dict[str, tuple[str, tuple[float, float, float]]]:
    """Foot name → (foot link, the sole plate's centre in that link's frame, m): the ankle's point
    moved forward by half the toe/heel difference and down to the sole."""
    foot = cfg.geometry.foot
    sole = ((foot.toe_ahead_m - foot.heel_behind_m) / 2, 0.0, -foot.sole_below_ankle_m)
    return {leg: (f"{leg}_foot", sole) for leg in LEGS}


def limit_sole_corners(cfg: LimitConfig) -> dict[str, tuple[tuple[float, float, float], ...]]:
    """Foot name → the four corners of its sole plate in the foot link's frame (m): toe and heel, either edge.
    Trotting, the sole rolls over its toe or heel for much of its stance (on the closed chain at 0.3 m/s its
    centre moved 0.11 m/s forward on average while touching the ground), so the estimator measures the lowest
    corner."""
    foot = cfg.geometry.foot
    half_width, below = foot.width_m / 2, -foot.sole_below_ankle_m
    corners = tuple((x, y, below) for x in (foot.toe_ahead_m, -foot.heel_behind_m) for y in (half_width, -half_width))
    return {leg: corners for leg in LEGS}


#: A foot counts as planted while its leg's joint torques hold up at least this share of the robot's weight
#: (:attr:`EstimatorCfg.stance_force_n`). The shipped policy's trot hops (no foot down 13-30 % of a walk on the closed
#: chain), so the lowest foot is often a swinging one: the height band alone read its walks short by 0.16 / 0.32 m/s
#: at 0.3 / 0.5 m/s (exact sensors), the simulator's true contacts by 0.04. With this test (37.6 N) and the sensors'
#: noise, -0.012 / -0.029 m/s, and -0.006 at rest. At 50 N the estimate at rest lost its feet (0.09 per tick); at
#: 15 N it kept the swinging ones (docs/results/2026-12-06_foot_loading.md).
STANCE_WEIGHT_SHARE = 0.4
#: While no foot holds that much, the feet holding this share of the weight each count if together they hold the
#: stance force (:attr:`EstimatorCfg.standing_force_n`): standing, four feet share the weight (a quarter each), and
#: on the accelerometer alone the estimate would drift with its bias; swinging through a flight phase, the legs
#: together hold less.
STANDING_WEIGHT_SHARE = 0.15
#: A landing foot counts fully from its second update in a row on the ground (:attr:`EstimatorCfg.settle_updates`).
#: The shipped trot lands each foot for two or three 20 ms ticks, and on its landing tick a foot is still skidding: on
#: the closed chain at -0.3 m/s its leg odometry read the walk 0.16 m/s short on that tick and within 0.01 after
#: (`python -m linkage_lab_experiments.validation.estimator_touchdown`, docs/results/2026-12-06_touchdown.md).
SETTLE_UPDATES = 1
#: On its landing tick a foot counts at twice the foot noise (:attr:`EstimatorCfg.settling_noise_scale`): trusted
#: less, not thrown away, which keeps 1.1-1.2 feet per tick at 0 ms where leaving it out kept 0.2-0.4.
SETTLING_NOISE_SCALE = 2.0
#: A foot that fails the χ² gate is never taken in (:attr:`EstimatorCfg.gate_fallback`). With the targets 16 ms late
#: each new target reaches the drives 4 ms before the next sample, and the PD's push reads as load on legs in the air:
#: 38 % of the feet the stance test counted were in the air, their torques implying more force (median 28.7 N) than the
#: feet on the ground (14.6 N). The fallback took them in when no foot passed the gate: the estimate read the walk at
#: 0.3 m/s 0.34 m/s slow with a spread of 0.62 m/s, and the policy ran at 0.45 m/s (RMS 0.264). Without it (and the
#: landing at twice the noise), 24 runs over 0-20 ms: mean lin-vel RMS 0.059 against 0.076, worst 0.083 against 0.264
#: (`python -m linkage_lab_experiments.validation.estimator_latency`, docs/results/2026-12-07_estimator_gate.md). With
#: the fallback on, counting the landing at twice the noise had measured worse than leaving it out
#: (docs/results/2026-12-06_estimator_latency.md).
GATE_FALLBACK = False


def limit_estimator_cfg(cfg: LimitConfig) -> EstimatorCfg:
    """The estimator's settings for the Limit: the default noise model, the stance test at
    :data:`STANCE_WEIGHT_SHARE` (standing: :data:`STANDING_WEIGHT_SHARE`) of its weight, the landing rule
    (:data:`SETTLE_UPDATES`, :data:`SETTLING_NOISE_SCALE`) and no gate fallback (:data:`GATE_FALLBACK`)."""
    weight_n = float(build_limit_model(cfg).total_mass() * -GRAVITY_W[2])
    return EstimatorCfg(
        stance_force_n=round(STANCE_WEIGHT_SHARE * weight_n, 1),
        standing_force_n=round(STANDING_WEIGHT_SHARE * weight_n, 1),
        settle_updates=SETTLE_UPDATES,
        settling_noise_scale=SETTLING_NOISE_SCALE,
        gate_fallback=GATE_FALLBACK,
    )


def limit_base_velocity_estimator(
    cfg: LimitConfig, joint_names: Sequence[str] = JOINT_NAMES, estimator_cfg: EstimatorCfg | None = None
) -> BaseVelocityEstimator:
    """The estimator on the Limit's four legs, joints indexed in ``joint_names`` (canonical order); ``None``
    settings: :func:`limit_estimator_cfg`'s."""
    chains = leg_chains(build_limit_model(cfg), limit_feet(cfg), joint_names, limit_sole_corners(cfg))
    return BaseVelocityEstimator(chains, limit_estimator_cfg(cfg) if estimator_cfg is None else estimator_cfg)

"""The robot side's estimator stepping once per tick or on every sample (``sim2sim --io-option estimator_rate``)."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from test_imu_average import _reading
from test_sim2sim_runner import limit_bundle  # noqa: F401 - the fixture: a Limit bundle, zero policy

from linkage_lab.deploy.base_velocity import BaseVelocityEstimator, ChainJoint, EstimatorCfg, LegChain
from linkage_lab.sim2sim.velocity_source import VelocitySource

pytestmark = pytest.mark.unit

#: The base accelerating at 1 m/s² along x, level: the IMU's specific force.
ACCELERATING_F = [1.0, 0.0, 9.81]


def _accelerometer_only() -> BaseVelocityEstimator:
    """One planted leg whose measurement is so noisy it moves nothing: the estimate is the accelerometer's integral."""
    chain = LegChain("a", (ChainJoint(0, (0.0, 0.0, 0.0)),), (0.0, 0.0, -0.2))
    return BaseVelocityEstimator([chain], EstimatorCfg(foot_noise_mps=1e4))


def _at(time_s: float):
    return dataclasses.replace(_reading(ACCELERATING_F), time_s=time_s)


def test_at_sample_rate_the_estimator_steps_on_each_sample_and_a_tick_only_reads_it():
    q, qd = np.zeros(1), np.zeros(1)
    per_sample = VelocitySource(_accelerometer_only(), "estimate", 0.02, rate="sample")
    for k in range(11):  # stamps 0, 2, ..., 20 ms: ten steps of 2 ms after the first
        per_sample.sample(_at(0.002 * k), q, qd)
    first = per_sample(_at(0.02), q, qd)
    np.testing.assert_allclose(first[0], 1.0 * 0.02, rtol=1e-6)  # v = a t over the samples' stamps
    np.testing.assert_allclose(per_sample(_at(0.02), q, qd), first)  # reading again changes nothing
    per_tick = VelocitySource(_accelerometer_only(), "estimate", 0.02)
    per_tick.sample(_at(0.0), q, qd)  # ignored at tick rate
    np.testing.assert_allclose(per_tick(_at(0.02), q, qd)[0], 1.0 * 0.02, rtol=1e-6)
    with pytest.raises(ValueError, match="estimator_rate"):
        VelocitySource(_accelerometer_only(), "estimate", 0.02, rate="often")


@pytest.mark.parametrize("rate", ["tick", "sample"])
def test_the_runner_hands_every_physics_steps_sample_to_a_sample_rate_estimator(limit_bundle, rate):  # noqa: F811
    from linkage_lab.sim2sim.runner import run_sim2sim

    stamps: list[float] = []
    original = VelocitySource._step

    def counting(self, dt_s, sensors, *args):
        stamps.append(float(sensors.time_s))
        return original(self, dt_s, sensors, *args)

    with mock.patch.object(VelocitySource, "_step", counting):
        report = run_sim2sim(limit_bundle, command=(0.0, 0.0), duration_s=0.1, io_options={"estimator_rate": rate})
    ticks, substeps = report["control_steps"], report["simulator"]["physics_steps_per_control_step"]
    if rate == "tick":
        assert len(stamps) == ticks
    else:
        # The reading at reset, then one per physics step: every step's sample once, in order.
        assert len(stamps) == 1 + ticks * substeps
        steps = np.diff(stamps)
        np.testing.assert_allclose(steps, steps[0])
        assert steps[0] == pytest.approx(0.02 / substeps)

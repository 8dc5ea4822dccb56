"""The velocity estimate's noise in training, white or correlated, and the correlation time sim-to-sim measures.

Oracles: the integral time scale of white noise (half a period) and of a first-order Gauss–Markov process in closed
form; the training model's noise measured back by the sim-to-sim measure (two pieces of code, one definition).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from linkage_lab.sim2sim.velocity_source import integral_time_s
from linkage_lab.tasks.velocity.estimate import VelocityError, gauss_markov_coefficient

pytestmark = pytest.mark.unit

PERIOD_S = 0.02


def _gauss_markov(a: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """A unit-variance first-order Gauss–Markov series with step coefficient ``a`` (the oracle's own generator)."""
    e = np.empty(n)
    e[0] = rng.standard_normal()
    for k in range(1, n):
        e[k] = a * e[k - 1] + math.sqrt(1.0 - a * a) * rng.standard_normal()
    return e


def test_white_noise_is_correlated_over_half_a_period():
    rng = np.random.default_rng(0)
    assert integral_time_s(rng.standard_normal(20000), PERIOD_S) == pytest.approx(PERIOD_S / 2, abs=0.2 * PERIOD_S)


def test_a_gauss_markov_series_has_its_closed_form_time_scale():
    """``period · (½ + a / (1 − a))``: for a = 0.8, 4.5 periods (90 ms at 50 Hz)."""
    rng = np.random.default_rng(1)
    measured = np.mean([integral_time_s(_gauss_markov(0.8, 5000, rng), PERIOD_S) for _ in range(8)])
    assert measured == pytest.approx(PERIOD_S * (0.5 + 0.8 / 0.2), rel=0.1)


def test_a_signal_without_swing_has_no_time_scale():
    assert integral_time_s(np.full(50, 0.3), PERIOD_S) == 0.0
    assert integral_time_s(np.array([0.1]), PERIOD_S) == 0.0


def test_the_coefficient_inverts_the_time_scale():
    assert gauss_markov_coefficient(0.0, PERIOD_S) == 0.0
    assert gauss_markov_coefficient(PERIOD_S / 2, PERIOD_S) == 0.0  # white noise's own time scale
    assert gauss_markov_coefficient(0.09, PERIOD_S) == pytest.approx(0.8)  # 4.5 periods = ½ + 0.8 / 0.2
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="noise correlation"):
            gauss_markov_coefficient(bad, PERIOD_S)
    with pytest.raises(ValueError, match="noise correlation"):
        gauss_markov_coefficient(0.1, 0.0)


def test_the_training_noise_keeps_its_spread_and_has_the_time_scale_asked_for():
    """2000 envs, 400 steps: the noise's spread is ``noise_std_mps`` on every axis (white on y, correlated on x and
    z), and the sim-to-sim measure reads back each axis's time scale."""
    torch.manual_seed(0)
    error = VelocityError(2000, (0.0, 0.0, 0.0), (0.06, 0.02, 0.1), "cpu", correlation_s=(0.1, 0.0, 0.3))
    truth = torch.zeros(2000, 3)
    series = torch.stack([error(truth) for _ in range(400)]).numpy()  # steps × envs × axes
    torch.testing.assert_close(
        torch.from_numpy(series.std(axis=(0, 1))).float(), torch.tensor([0.06, 0.02, 0.1]), rtol=0.03, atol=0.0
    )
    for axis, target in enumerate((0.1, PERIOD_S / 2, 0.3)):
        measured = np.mean([integral_time_s(series[:, env, axis], PERIOD_S) for env in range(0, 2000, 10)])
        # 400 steps per series: the sample autocorrelation's own bias (about −τ/T per lag) reads long scales short.
        assert measured == pytest.approx(target, rel=0.2), axis


def test_a_reset_redraws_the_reset_envs_noise_only():
    torch.manual_seed(3)
    error = VelocityError(6, (0.0, 0.0, 0.0), (0.06, 0.02, 0.1), "cpu", correlation_s=(0.2, 0.2, 0.2))
    error(torch.zeros(6, 3))
    before = error.noise.clone()
    error.reset([1, 4])
    assert torch.equal(error.noise[[0, 2, 3, 5]], before[[0, 2, 3, 5]])
    assert not torch.equal(error.noise[[1, 4]], before[[1, 4]])


def test_white_noise_draws_as_it_did_before_correlation_existed():
    """The same seed gives the same observations as the former model (bias, then one normal draw per call), so
    recorded evaluations replay."""
    torch.manual_seed(7)
    error = VelocityError(5, (0.05, 0.02, 0.03), (0.06, 0.02, 0.11), "cpu")
    got = error(torch.full((5, 3), 0.3))
    torch.manual_seed(7)
    bias = (2.0 * torch.rand(5, 3) - 1.0) * torch.tensor([0.05, 0.02, 0.03])
    expected = torch.full((5, 3), 0.3) + bias + torch.randn(5, 3) * torch.tensor([0.06, 0.02, 0.11])
    torch.testing.assert_close(got, expected)


def test_a_bad_correlation_is_refused():
    with pytest.raises(ValueError, match="one value per base axis"):
        VelocityError(2, (0.1, 0.1, 0.1), (0.1, 0.1, 0.1), "cpu", correlation_s=(0.1, 0.1))
    with pytest.raises(ValueError, match="non-negative"):
        VelocityError(2, (0.1, 0.1, 0.1), (0.1, 0.1, 0.1), "cpu", correlation_s=(0.1, -0.1, 0.1))

"""The robot-side smoothing of joint targets (``linkage_lab.deploy.target_filter``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab.deploy.target_filter import TargetFilter

pytestmark = pytest.mark.unit


def test_a_step_after_the_first_target_approaches_as_a_first_order_lag():
    # From 0, a step to 1 after n updates stands at 1 - (1 - α)^n (the discrete first-order response).
    alpha = 0.3
    smooth = TargetFilter(alpha)
    np.testing.assert_allclose(smooth(np.zeros(2)), 0.0)
    for n in range(1, 8):
        np.testing.assert_allclose(smooth(np.array([1.0, -2.0])), np.array([1.0, -2.0]) * (1.0 - (1.0 - alpha) ** n))


def test_the_corner_frequency_of_one_half_at_50_hz():
    # |H(e^{jωΔt})| = α / |1 - (1 - α) e^{-jωΔt}|; at the stated corner -ln(1 - α) / (2π Δt) it is close to -3 dB.
    alpha, dt = 0.5, 0.02
    corner_hz = -math.log(1.0 - alpha) / (2.0 * math.pi * dt)
    assert corner_hz == pytest.approx(5.52, abs=0.01)
    n, f = 4000, corner_hz
    smooth = TargetFilter(alpha)
    out = np.array([smooth(np.array([math.sin(2 * math.pi * f * k * dt)]))[0] for k in range(n)])
    gain = np.abs(out[n // 2 :]).max()
    exact = alpha / abs(1.0 - (1.0 - alpha) * np.exp(-2j * math.pi * f * dt))
    assert gain == pytest.approx(exact, abs=5e-3)
    assert 0.6 < exact < 0.8  # about -3 dB (0.707): the stated corner is the continuous-time approximation


def test_reset_restarts_and_alpha_one_passes_everything():
    smooth = TargetFilter(0.5)
    smooth(np.array([4.0]))
    np.testing.assert_allclose(smooth(np.array([0.0])), [2.0])
    smooth.reset()
    np.testing.assert_allclose(smooth(np.array([0.0])), [0.0])
    passing = TargetFilter()
    for value in (1.0, -3.0, 7.5):
        np.testing.assert_allclose(passing(np.array([value])), [value])


def test_the_output_is_a_copy():
    smooth = TargetFilter(0.5)
    first = smooth(np.array([1.0]))
    first[0] = 99.0
    np.testing.assert_allclose(smooth(np.array([1.0])), [1.0])


@pytest.mark.parametrize("alpha", [0.0, -0.5, 1.5, float("nan")])
def test_alpha_outside_its_range_is_refused(alpha):
    with pytest.raises(ValueError, match="alpha must be in"):
        TargetFilter(alpha)

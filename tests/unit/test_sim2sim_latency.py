"""Delays between the closed-chain robot and its controller: the queue, the rounding, and a run."""

from __future__ import annotations

import pytest
from test_sim2sim_runner import limit_bundle  # noqa: F401 - the fixture: a Limit bundle with a linear policy

from linkage_lab.sim2sim.latency import DelayLine, Latency
from linkage_lab.sim2sim.runner import run_sim2sim

pytestmark = pytest.mark.unit


def test_a_delay_line_returns_what_was_pushed_that_many_pushes_ago():
    line = DelayLine(2)
    assert [line.push(v) for v in "abcde"] == ["a", "a", "a", "b", "c"]
    direct = DelayLine(0)
    assert [direct.push(v) for v in "abc"] == ["a", "b", "c"]
    with pytest.raises(ValueError):
        DelayLine(-1)


def test_delays_round_to_the_physics_step_and_refuse_nonsense():
    latency = Latency.from_seconds(0.020, 0.0049, 0.002)
    assert (latency.observation_steps, latency.action_steps) == (10, 2)
    assert latency.report(0.002) == {"observation_delay_s": 0.02, "action_delay_s": 0.004, "physics_step_s": 0.002}
    for bad in (-0.001, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite number of seconds >= 0"):
            Latency.from_seconds(bad, 0.0, 0.002)


def test_no_delay_is_the_plain_run_and_a_delay_changes_it(limit_bundle):  # noqa: F811
    plain = run_sim2sim(limit_bundle, (0.3, 0.0), 0.6)
    zero = run_sim2sim(limit_bundle, (0.3, 0.0), 0.6, delays_s=(0.0, 0.0))
    late = run_sim2sim(limit_bundle, (0.3, 0.0), 0.6, delays_s=(0.04, 0.02))
    assert zero["tracking"] == plain["tracking"] and zero["motor_torques"] == plain["motor_torques"]
    assert zero["latency"] == {"observation_delay_s": 0.0, "action_delay_s": 0.0, "physics_step_s": 0.002}
    assert late["latency"]["observation_delay_s"] == 0.04 and late["latency"]["action_delay_s"] == 0.02
    assert late["tracking"] != plain["tracking"]

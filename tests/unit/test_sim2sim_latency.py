"""Delays between the closed-chain robot and its controller: the queue, the rounding, and a run."""

from __future__ import annotations

import json
import shutil

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


def test_no_delay_is_the_plain_run_and_a_delay_changes_it(limit_bundle, tmp_path):  # noqa: F811
    # The bundle's zero-action policy sends the same targets whatever it reads; with the coupling folded into the
    # targets from the sample (leg_gains="coupled") what the drivers get depends on the sample's age.
    bundle = tmp_path / "folded"
    shutil.copytree(limit_bundle, bundle)
    deploy = json.loads((bundle / "deploy.json").read_text())
    (bundle / "deploy.json").write_text(json.dumps({**deploy, "leg_gains": "coupled"}))
    plain = run_sim2sim(bundle, (0.3, 0.0), 0.6)
    zero = run_sim2sim(bundle, (0.3, 0.0), 0.6, delays_s=(0.0, 0.0))
    late = run_sim2sim(bundle, (0.3, 0.0), 0.6, delays_s=(0.04, 0.02))
    assert zero["tracking"] == plain["tracking"] and zero["motor_torques"] == plain["motor_torques"]
    assert zero["latency"] == {"observation_delay_s": 0.0, "action_delay_s": 0.0, "physics_step_s": 0.002}
    assert late["latency"]["observation_delay_s"] == 0.04 and late["latency"]["action_delay_s"] == 0.02
    assert late["tracking"] != plain["tracking"]


def _closed_loop(observation_steps: int, action_steps: int, push_step: int, steps: int = 400) -> list[float]:
    """A damped pendulum under a memoryless policy of its state and last action, decimation 4, the sample and the
    target run through delay lines as sim2sim runs them; pushed once, at ``push_step``."""
    import math

    samples, targets = DelayLine(observation_steps), DelayLine(action_steps)
    angle, rate, action, dt = 0.0, 0.0, 0.0, 0.005
    angles = []
    for step in range(steps):
        sample = samples.push((angle, rate))
        if step % 4 == 0:
            action = math.tanh(-3.0 * sample[0] - 0.5 * sample[1] + 0.3 * action)
        torque = targets.push(action)
        rate += dt * (-9.0 * math.sin(angle) - 0.2 * rate + 4.0 * torque + (200.0 if step == push_step else 0.0))
        angle += dt * rate
        angles.append(angle)
    return angles


@pytest.mark.parametrize("delay", [3, 6])
def test_a_late_sample_and_a_late_target_make_the_same_loop(delay):
    # Why training delays only the joint targets: for a policy without memory on time-invariant physics, a sample d
    # steps old and a target d steps late apply the same target to the same state, one trajectory shifted by d (the
    # loop's latency is their sum). Exact here, float for float, once the push is shifted with it.
    late_sample = _closed_loop(delay, 0, push_step=20)
    late_target = _closed_loop(0, delay, push_step=20 + delay)
    assert max(abs(a) for a in late_sample) > 0.1  # the push moved the pendulum
    assert late_target[delay:] == late_sample[:-delay]
    assert _closed_loop(0, 0, push_step=20) != late_sample  # and the delay changed the loop

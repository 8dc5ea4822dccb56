"""Footfall statistics against hand-counted contact sequences."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.evaluation.metrics import FootContactStats

pytestmark = pytest.mark.unit


def _run(sequence, mask=None, period=0.02, min_air_steps=1):
    """``sequence``: per step, per env, a string of 0/1 per foot."""
    num_envs, n_feet = len(sequence[0]), len(sequence[0][0])
    stats = FootContactStats([f"foot{i}" for i in range(n_feet)], num_envs, period, min_air_steps)
    for k, step in enumerate(sequence):
        contact = torch.tensor([[c == "1" for c in env] for env in step])
        stats.add(contact, torch.ones(num_envs, dtype=torch.bool) if mask is None else mask[k])
    return stats.summary()


def test_a_walk_alternates_and_counts_its_touchdowns():
    # Both down, lift left, left lands, lift right, right lands, ... : touchdowns L, R, L, R.
    steps = ["11", "01", "11", "10", "11", "01", "11", "10", "11"]
    summary = _run([[s] for s in steps])
    assert summary["touchdown_pairs"] == {"alternating": 3, "repeated": 0, "simultaneous": 0}
    assert summary["alternation"] == 1.0
    assert [f["touchdowns_per_s"] for f in summary["feet"]] == pytest.approx([2 / (9 * 0.02)] * 2)
    assert summary["feet"][0]["duty_factor"] == pytest.approx(7 / 9)
    assert summary["share_of_steps_by_feet_down"] == pytest.approx([0.0, 4 / 9, 5 / 9])
    assert summary["flight_share"] == 0.0


def test_a_shuffle_repeats_and_a_hop_lands_both_feet_at_once():
    shuffle = _run([[s] for s in ["11", "01", "11", "01", "11", "01", "11"]])
    assert shuffle["touchdown_pairs"] == {"alternating": 0, "repeated": 2, "simultaneous": 0}
    assert shuffle["alternation"] == 0.0
    hop = _run([[s] for s in ["11", "00", "11", "00", "11"]])
    assert hop["touchdown_pairs"] == {"alternating": 0, "repeated": 0, "simultaneous": 2}
    assert hop["alternation"] == 0.0 and hop["flight_share"] == pytest.approx(2 / 5)


def test_envs_are_counted_apart_and_an_ended_episode_restarts_the_history():
    walk = ["11", "01", "11", "10", "11"]
    shuffle = ["11", "01", "11", "01", "11"]
    both = _run([[w, s] for w, s in zip(walk, shuffle)])
    assert both["touchdown_pairs"] == {"alternating": 1, "repeated": 1, "simultaneous": 0}
    # Env 0 ends its episode at step 2 (the left landing): that touchdown and the history are dropped.
    mask = [torch.tensor([m]) for m in (True, True, False, True, True)]
    cut = _run([[w] for w in walk], mask)
    assert cut["touchdown_pairs"] == {"alternating": 0, "repeated": 0, "simultaneous": 0}
    assert cut["samples"] == 4


def test_no_samples_give_no_figures():
    summary = FootContactStats(["l", "r"], 1, 0.02).summary()
    assert summary["alternation"] is None and summary["feet"][0]["touchdowns_per_s"] is None


def test_a_lift_shorter_than_min_air_steps_is_chatter_not_a_step():
    # Left lifts for 3 steps and lands, bounces up for one step, settles; then right steps.
    steps = ["11", "01", "01", "01", "11", "01", "11", "10", "10", "11"]
    summary = _run([[s] for s in steps], min_air_steps=2)
    assert summary["touchdown_pairs"] == {"alternating": 1, "repeated": 0, "simultaneous": 0}
    assert summary["feet"][0]["touchdowns_per_s"] == pytest.approx(1 / (10 * 0.02))
    chatter = _run([[s] for s in steps], min_air_steps=1)
    assert chatter["touchdown_pairs"] == {"alternating": 1, "repeated": 1, "simultaneous": 0}

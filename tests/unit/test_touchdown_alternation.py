"""Touchdown order: the shared counter against a per-env scalar recount, and the reward term on stand-ins."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from linkage_lab.evaluation.metrics import FootContactStats
from linkage_lab.gait.footfalls import TouchdownSequence
from linkage_lab.tasks.velocity.rewards import airborne, foot_held_up, short_stance, touchdown_alternation

pytestmark = pytest.mark.unit


def _recount(contacts, masks, min_air_steps):
    """A second, scalar count of the same definition: per env, walk the steps one by one."""
    steps, num_envs, n_feet = contacts.shape
    totals = {"alternating": 0, "repeated": 0, "simultaneous": 0, "lift_steps": 0, "interval_steps": 0}
    for e in range(num_envs):
        air, last, previous = [0] * n_feet, None, -1
        for k in range(steps):
            if not masks[k, e]:
                air, last, previous = [0] * n_feet, None, k
                continue
            landed = [f for f in range(n_feet) if contacts[k, e, f] and air[f] >= min_air_steps]
            totals["lift_steps"] += sum(air[f] for f in landed)
            if landed:
                totals["interval_steps"] += k - previous
                previous = k
            air = [0 if contacts[k, e, f] else air[f] + 1 for f in range(n_feet)]
            if len(landed) > 1:
                totals["simultaneous"] += 1
                last = None
            elif landed:
                if last is not None:
                    totals["alternating" if landed[0] != last else "repeated"] += 1
                last = landed[0]
    return totals


@pytest.mark.parametrize("n_feet,min_air_steps", [(2, 1), (2, 3), (4, 2)])
def test_counts_match_a_scalar_recount_on_random_contacts(n_feet, min_air_steps):
    gen = torch.Generator().manual_seed(n_feet * 10 + min_air_steps)
    steps, num_envs = 400, 6
    # Runs of contact and lift several steps long, so touchdowns after long and short lifts both occur.
    contacts = torch.rand(steps // 4, num_envs, n_feet, generator=gen).repeat_interleave(4, 0) < 0.6
    contacts ^= torch.rand(steps, num_envs, n_feet, generator=gen) < 0.08
    masks = torch.rand(steps, num_envs, generator=gen) > 0.02
    sequence = TouchdownSequence(num_envs, n_feet, min_air_steps)
    totals = {"alternating": 0, "repeated": 0, "simultaneous": 0, "lift_steps": 0, "interval_steps": 0}
    for k in range(steps):
        step = sequence.step(contacts[k], masks[k])
        assert not (step.lift_steps[~step.touchdown]).any()
        assert not step.interval_steps[~step.touchdown.any(-1)].any()
        for key in totals:
            totals[key] += int(getattr(step, key).sum())
    expected = _recount(contacts, masks, min_air_steps)
    assert totals == expected
    assert min(expected.values()) > 0  # the random contacts exercise every case
    del expected["lift_steps"], expected["interval_steps"]
    stats = FootContactStats([f"f{i}" for i in range(n_feet)], num_envs, 0.02, min_air_steps)
    for k in range(steps):
        stats.add(contacts[k], masks[k])
    assert stats.summary()["touchdown_pairs"] == expected


class _Sensor:
    """A contact sensor stand-in: four bodies, the feet are ``left_foot`` (3) and ``right_foot`` (1)."""

    names = ["base", "right_foot", "shin", "left_foot"]

    def __init__(self, num_envs):
        self.data = SimpleNamespace(current_contact_time=SimpleNamespace(torch=torch.zeros(num_envs, 4)))

    def find_bodies(self, names, preserve_order=False):
        ids = [self.names.index(n) for n in names]
        return ids, list(names)

    def set(self, row_strings):
        """Per env, ``"LR"`` contact flags of the left and right foot."""
        for e, flags in enumerate(row_strings):
            self.data.current_contact_time.torch[e, 3] = 0.1 if flags[0] == "1" else 0.0
            self.data.current_contact_time.torch[e, 1] = 0.1 if flags[1] == "1" else 0.0


def _term(num_envs, min_air_steps=1, min_swing_s=0.0, step_period_s=0.0):
    sensor = _Sensor(num_envs)
    env = SimpleNamespace(num_envs=num_envs, device="cpu", step_dt=0.02, scene=SimpleNamespace(sensors={"cf": sensor}))
    params = {
        "sensor_cfg": SimpleNamespace(name="cf", body_names=["left_foot", "right_foot"]),
        "min_air_steps": min_air_steps,
        "min_swing_s": min_swing_s,
        "step_period_s": step_period_s,
    }
    term = touchdown_alternation(SimpleNamespace(params=params), env)
    return term, env, sensor, params


def test_reward_pays_one_weight_per_touchdown_by_its_order():
    term, env, sensor, params = _term(num_envs=3)
    # Env 0 walks (L, R, L), env 1 shuffles (L, L), env 2 hops (both, both).
    sequence = [("11", "11", "11"), ("01", "01", "00"), ("11", "11", "11"), ("10", "01", "00"), ("11", "11", "11")]
    per_touchdown = []
    for flags in sequence:
        sensor.set(flags)
        per_touchdown.append(term(env, **params) * env.step_dt)
    got = torch.stack(per_touchdown)
    # Step 2: first touchdowns (nothing known before) pay 0, the hop's landing -1. Step 4: R after L
    # +1, L after L -1, the second hop -1.
    expected = torch.tensor([[0, 0, 0], [0, 0, 0], [0, 0, -1], [0, 0, 0], [1, -1, -1]], dtype=torch.float32)
    torch.testing.assert_close(got, expected)


def test_quick_alternating_steps_pay_nothing_below_the_swing_time():
    # A swing of at least 0.06 s (3 steps of 20 ms) is paid. Env 0 steps with 3-step lifts, env 1
    # alternates 1-step taps; both alternate by the evaluation's count (min_air_steps = 1).
    term, env, sensor, params = _term(num_envs=2, min_swing_s=0.06)
    walk = ["11", "01", "01", "01", "11", "10", "10", "10", "11"]
    taps = ["11", "01", "11", "10", "11", "01", "11", "10", "11"]
    paid = []
    for w, t in zip(walk, taps):
        sensor.set((w, t))
        paid.append(term(env, **params) * env.step_dt)
    total = torch.stack(paid).sum(0)
    # Env 0: L lands (first, 0), R lands after 3 steps up (+1). Env 1: L, R, L, R quick taps: 0 each.
    torch.testing.assert_close(total, torch.tensor([1.0, 0.0]))


def _cadence(period_steps, total_steps):
    """``"LR"`` flags of feet touching down in turn every ``period_steps``, each lifted for half that before."""
    flags = []
    for k in range(total_steps):
        down = [True, True]
        landing = -(-k // period_steps) * period_steps  # the next touchdown at or after k
        if landing > 0 and landing - k <= period_steps // 2 and k != landing:
            down[(landing // period_steps) % 2] = False
        flags.append("".join("1" if d else "0" for d in down))
    return flags


def test_frequency_neutral_pay_is_capped_per_second_not_per_step():
    # Step period 8 control steps (0.16 s). Env 0 steps every 4 control steps, env 1 every 8, env 2 every 16:
    # over 65 steps they land 16, 8 and 4 times; every touchdown but the first alternates.
    term, env, sensor, params = _term(num_envs=3, step_period_s=0.16)
    patterns = [_cadence(p, 65) for p in (4, 8, 16)]
    total = torch.zeros(3)
    for k in range(65):
        sensor.set(tuple(pattern[k] for pattern in patterns))
        total += term(env, **params) * env.step_dt
    # Twice the gait's cadence earns half a touchdown each: 15 x 0.5; the gait's cadence 7 x 1; half of it 3 x 1.
    torch.testing.assert_close(total, torch.tensor([7.5, 7.0, 3.0]))
    # Per touchdown (the default), the quick steps would have earned 15.
    term, env, sensor, params = _term(num_envs=1)
    quick = torch.zeros(1)
    for flags in patterns[0]:
        sensor.set((flags,))
        quick += term(env, **params) * env.step_dt
    torch.testing.assert_close(quick, torch.tensor([15.0]))


def test_negative_step_period_is_refused():
    with pytest.raises(ValueError, match="step_period_s"):
        _term(num_envs=1, step_period_s=-0.1)


def test_airborne_counts_steps_with_no_foot_down_on_a_walking_command():
    sensor = _Sensor(4)
    command = torch.tensor([[0.3, 0.0, 0.0], [0.3, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.0, 0.0]])
    env = SimpleNamespace(
        scene=SimpleNamespace(sensors={"cf": sensor}),
        command_manager=SimpleNamespace(get_command=lambda name: command),
    )
    cfg = SimpleNamespace(name="cf", body_ids=[3, 1])
    # Both feet down, one down, none down (flight) while walking; none down on a standing command.
    sensor.set(("11", "10", "00", "00"))
    torch.testing.assert_close(airborne(env, cfg), torch.tensor([0.0, 0.0, 1.0, 1.0]))
    torch.testing.assert_close(airborne(env, cfg, command_name="base_velocity"), torch.tensor([0.0, 0.0, 1.0, 0.0]))


def _commanded_total(commands_mps, sequence, **extra_params):
    """Per env, the touchdowns' reward summed over ``sequence`` under fixed forward commands."""
    term, env, sensor, params = _term(num_envs=len(commands_mps))
    command = torch.tensor([[v, 0.0, 0.0] for v in commands_mps])
    env.command_manager = SimpleNamespace(get_command=lambda name: command)
    params = {**params, "command_name": "base_velocity", **extra_params}
    total = torch.zeros(len(commands_mps))
    for flags in sequence:
        sensor.set(flags)
        total += term(env, **params) * env.step_dt
    return total


def test_steps_are_paid_only_on_a_walking_command_and_shuffles_cost_at_any():
    # Envs 0 and 1 walk L, R; env 2 shuffles L, L.
    sequence = [("11", "11", "11"), ("01", "01", "01"), ("11", "11", "11"), ("10", "10", "01"), ("11", "11", "11")]
    total = _commanded_total([0.3, 0.05, 0.0], sequence, min_command_mps=0.1)
    torch.testing.assert_close(total, torch.tensor([1.0, 0.0, -1.0]))


def test_every_touchdown_costs_on_a_standing_command_when_asked():
    # Envs 0 and 1 step L, R (2 touchdowns); env 2 stands.
    sequence = [("11", "11", "11"), ("01", "01", "11"), ("11", "11", "11"), ("10", "10", "11"), ("11", "11", "11")]
    total = _commanded_total([0.3, 0.0, 0.0], sequence, standing_touchdown_cost=0.5)
    # Env 0 walks on a walking command: the R after L is paid (+1), the standing cost does not apply.
    # Env 1 marches on a zero command: nothing paid, 0.5 per touchdown (L, then R) = -1. Env 2: nothing.
    torch.testing.assert_close(total, torch.tensor([1.0, -1.0, 0.0]))


def test_reset_forgets_the_last_foot_of_the_reset_envs_only():
    term, env, sensor, params = _term(num_envs=2)
    for flags in [("11", "11"), ("01", "01"), ("11", "11"), ("10", "10")]:
        sensor.set(flags)
        term(env, **params)
    term.reset(torch.tensor([1]))
    sensor.set(("11", "11"))
    # Env 0 lands its right foot after the left one (+1); env 1's history is gone, and a foot must be
    # out of contact after the reset before it lands again: nothing.
    torch.testing.assert_close(term(env, **params) * env.step_dt, torch.tensor([1.0, 0.0]))


def test_one_foot_is_refused():
    env = SimpleNamespace(num_envs=1, device="cpu", step_dt=0.02, scene=SimpleNamespace(sensors={"cf": _Sensor(1)}))
    cfg = SimpleNamespace(params={"sensor_cfg": SimpleNamespace(name="cf", body_names=["left_foot"])})
    with pytest.raises(ValueError, match="two or more feet"):
        touchdown_alternation(cfg, env)


def test_marvin_residual_task_carries_the_term_on_both_feet():
    from linkage_lab.gait.biped import BIPED_SIDES
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

    cfg = MarvinResidualFlatEnvCfg()
    term = cfg.rewards.touchdown_alternation
    assert term.func is touchdown_alternation
    assert term.params["sensor_cfg"].body_names == [f"{side}_foot" for side in BIPED_SIDES]
    # The paid swing is shorter than the gait's own (its steps are paid) and longer than the
    # evaluation's chatter floor (3 control steps).
    swing_s = cfg.rewards.feet_air_time.params["threshold"]
    assert 3 * cfg.sim.dt * cfg.decimation < term.params["min_swing_s"] < swing_s
    # Gated by the task's velocity command: no steps paid on a zero command.
    assert term.params["command_name"] == "base_velocity" and cfg.commands.base_velocity is not None


def test_a_foot_held_up_costs_its_time_in_the_air_beyond_the_limit_up_to_the_cap():
    air = torch.tensor([[0.0, 0.3, 0.2, 0.4], [0.0, 0.9, 0.0, 0.1], [0.0, 3.0, 0.0, 0.7]])  # s, per body
    sensor = SimpleNamespace(data=SimpleNamespace(current_air_time=SimpleNamespace(torch=air)))
    env = SimpleNamespace(scene=SimpleNamespace(sensors={"cf": sensor}))
    cfg = SimpleNamespace(name="cf", body_ids=[3, 1])
    # A trot's swings (0.4 / 0.3 s) cost nothing; 0.9 s costs 0.4; 3 s costs the 1 s cap, plus 0.2 for 0.7 s.
    torch.testing.assert_close(foot_held_up(env, cfg), torch.tensor([0.0, 0.4, 1.2]))
    torch.testing.assert_close(foot_held_up(env, cfg, max_air_s=0.2, cap_s=2.0), torch.tensor([0.3, 0.7, 2.5]))


def test_a_tap_costs_its_stances_shortfall_once_when_the_foot_lifts():
    # Per env, two feet (bodies 3 and 1): air time now (s) and the length of the stance before it (s).
    air = torch.tensor([[0.0, 0.01, 0.0, 0.02], [0.0, 0.3, 0.0, 0.0], [0.0, 0.02, 0.0, 0.02]])
    stance = torch.tensor([[0.0, 0.04, 0.0, 0.3], [0.0, 0.02, 0.0, 0.5], [0.0, 0.1, 0.0, 0.2]])
    data = SimpleNamespace(current_air_time=SimpleNamespace(torch=air), last_contact_time=SimpleNamespace(torch=stance))
    env = SimpleNamespace(scene=SimpleNamespace(sensors={"cf": SimpleNamespace(data=data)}), step_dt=0.02)
    cfg = SimpleNamespace(name="cf", body_ids=[3, 1])
    # Env 0: foot 1 lifted after a 0.04 s tap (0.11 short), foot 3 after a 0.3 s stance (none). Env 1: foot 1 has
    # been up 0.3 s (its lift was charged then), foot 3 is down. Env 2: both lifted this step, 0.05 short in all.
    torch.testing.assert_close(short_stance(env, cfg) * env.step_dt, torch.tensor([0.11, 0.0, 0.05]))

"""A widened checkpoint acts and values exactly as before: rsl-rl's own networks load it and compute the same.

Oracle: the original rsl-rl ``MLPModel`` on the old observation against a model built for the wider one,
loaded from :func:`~linkage_lab.training.widen.widen_observation`'s output, on the same observation with
arbitrary values in the new inputs.
"""

from __future__ import annotations

import pytest
import torch

from linkage_lab.checkpoints import TRAINING_KEYS, CheckpointError, load_checkpoint
from linkage_lab.training import widen

pytestmark = pytest.mark.unit

OLD, NEW, AT = 7, 3, 5


def _model(size: int, outputs: int):
    from rsl_rl.models import MLPModel
    from tensordict import TensorDict

    obs = TensorDict({"policy": torch.zeros(1, size)}, batch_size=[1])
    return MLPModel(obs, {"net": ["policy"]}, "net", outputs, hidden_dims=[8, 8], obs_normalization=True)


def _trained_state() -> tuple[dict, torch.nn.Module, torch.nn.Module]:
    """A checkpoint as rsl-rl writes one: actor, critic (normalisers with statistics), Adam after a step."""
    torch.manual_seed(0)
    actor, critic = _model(OLD, 2), _model(OLD, 1)
    from tensordict import TensorDict

    for model in (actor, critic):
        model.train()
        model.update_normalization(TensorDict({"policy": 3.0 * torch.randn(64, OLD) + 1.0}, batch_size=[64]))
        model.eval()
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)
    obs = TensorDict({"policy": torch.randn(16, OLD)}, batch_size=[16])
    (actor(obs).square().sum() + critic(obs).square().sum()).backward()
    optimizer.step()
    state = {
        "actor_state_dict": actor.state_dict(),
        "critic_state_dict": critic.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "iter": 10,
    }
    return state, actor, critic


def test_widened_networks_compute_what_the_old_ones_did_whatever_the_new_inputs_hold():
    from tensordict import TensorDict

    state, actor, critic = _trained_state()
    wide = widen.widen_observation(state, AT, NEW, stats_like=slice(0, NEW))
    x = torch.randn(32, OLD)
    x_wide = torch.cat([x[:, :AT], 100.0 * torch.randn(32, NEW), x[:, AT:]], dim=1)
    for key, old_model, outputs in (("actor_state_dict", actor, 2), ("critic_state_dict", critic, 1)):
        new_model = _model(OLD + NEW, outputs)
        new_model.load_state_dict(wide[key], strict=True)
        new_model.eval()
        with torch.no_grad():
            before = old_model(TensorDict({"policy": x}, batch_size=[32]))
            after = new_model(TensorDict({"policy": x_wide}, batch_size=[32]))
        torch.testing.assert_close(after, before, rtol=0, atol=1e-6)
        # The new inputs' statistics are those of the block they were asked to copy.
        mean = wide[key]["obs_normalizer._mean"]
        torch.testing.assert_close(mean[..., AT : AT + NEW], state[key]["obs_normalizer._mean"][..., :NEW])
    # Adam's moments fit the widened first layers: zero for the new weights, the old ones kept.
    moments = [m for m in wide["optimizer_state_dict"]["state"].values() if m["exp_avg"].shape == (8, OLD + NEW)]
    assert len(moments) == 2
    for moment in moments:
        assert not moment["exp_avg"][:, AT : AT + NEW].any() and not moment["exp_avg_sq"][:, AT : AT + NEW].any()
    assert state["actor_state_dict"]["mlp.0.weight"].shape == (8, OLD)  # the input is not modified


def test_appending_without_statistics_starts_the_new_inputs_at_mean_0_variance_1():
    state, _, _ = _trained_state()
    wide = widen.widen_observation(state, OLD, NEW)
    network = wide["actor_state_dict"]
    assert network["mlp.0.weight"].shape == (8, OLD + NEW) and not network["mlp.0.weight"][:, OLD:].any()
    assert torch.equal(network["obs_normalizer._mean"][..., OLD:], torch.zeros(1, NEW))
    assert torch.equal(network["obs_normalizer._var"][..., OLD:], torch.ones(1, NEW))


@pytest.mark.parametrize(
    ("at", "width", "stats_like", "message"),
    [(OLD + 1, NEW, None, "outside"), (0, 0, None, "at least 1"), (0, NEW, slice(0, 2), "selects 2")],
)
def test_impossible_widening_is_refused(at, width, stats_like, message):
    state, _, _ = _trained_state()
    with pytest.raises(CheckpointError, match=message):
        widen.widen_observation(state, at, width, stats_like)


def test_the_command_writes_a_checkpoint_training_can_load_and_keeps_the_original(tmp_path, capsys):
    state, _, _ = _trained_state()
    source, out = tmp_path / "model.pt", tmp_path / "wide.pt"
    torch.save(state, source)
    assert widen.main([str(source), str(out), "--at", str(OLD), "--width", str(NEW), "--stats-like", "0:3"]) == 0
    assert load_checkpoint(out, TRAINING_KEYS)["actor_state_dict"]["mlp.0.weight"].shape == (8, OLD + NEW)
    assert load_checkpoint(source, TRAINING_KEYS)["actor_state_dict"]["mlp.0.weight"].shape == (8, OLD)
    assert widen.main([str(source), str(tmp_path / "x.pt"), "--at", "99", "--width", "1"]) == 2
    assert "outside" in capsys.readouterr().err and not (tmp_path / "x.pt").exists()

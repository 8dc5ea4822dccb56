"""Training curves: the series read back from a synthetic TensorBoard run equal what was written, and the PNGs."""

from __future__ import annotations

import time

import numpy as np
import pytest

from linkage_lab.cli.main import main
from linkage_lab.evaluation.curves import NoEventsError, curve_groups, read_scalars, write_training_curves

pytestmark = pytest.mark.unit

ITERATIONS = [0, 1, 2, 3, 5]  # a gap, as when logging skips an iteration
RETURNS = [-1.5, 0.25, 2.0, 3.75, 4.5]
LENGTHS = [20.0, 45.0, 80.0, 150.0, 300.0]
ERRORS = [0.5, 0.4, 0.3, 0.2, 0.1]
STEP_S = 12.5


@pytest.fixture
def run_dir(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    run = tmp_path / "limit_flat" / "2026-01-02_03-04-05"
    start = time.time()
    writer = SummaryWriter(log_dir=str(run))
    for k, it in enumerate(ITERATIONS):
        wall = start + 1.0 + STEP_S * k
        writer.add_scalar("Train/mean_reward", RETURNS[k], it, walltime=wall)
        writer.add_scalar("Train/mean_episode_length", LENGTHS[k], it, walltime=wall)
        writer.add_scalar("Train/mean_reward/time", RETURNS[k], 7 * k, walltime=wall)
        writer.add_scalar("Episode_Reward/track_lin_vel_xy_exp", 0.1 * k, it, walltime=wall)
        writer.add_scalar("Episode_Reward/action_rate_l2", -0.01 * k, it, walltime=wall)
        writer.add_scalar("Metrics/base_velocity/error_vel_xy", ERRORS[k], it, walltime=wall)
        writer.add_scalar("Loss/value", 1.0, it, walltime=wall)
    writer.close()
    return run


def test_series_equal_the_written_values(run_dir):
    series = read_scalars(run_dir)
    returns = series["Train/mean_reward"]
    assert returns.iteration.tolist() == ITERATIONS
    np.testing.assert_allclose(returns.value, RETURNS, rtol=1e-6)  # TensorBoard stores float32
    np.testing.assert_allclose(series["Train/mean_episode_length"].value, LENGTHS)
    np.testing.assert_allclose(series["Metrics/base_velocity/error_vel_xy"].value, ERRORS, rtol=1e-6)
    # Wall time counts from the writer's creation: 1 s to the first value, then the written spacing.
    np.testing.assert_allclose(np.diff(returns.wall_time_s), STEP_S, atol=1e-3)
    assert 0.5 < returns.wall_time_s[0] < 1.5


def test_groups_pick_return_length_and_tracking_only(run_dir):
    groups = curve_groups(read_scalars(run_dir))
    tags = {name: [[s.tag for s in row] for row in rows] for name, rows in groups.items()}
    assert tags == {
        "return": [["Train/mean_reward"]],
        "episode_length": [["Train/mean_episode_length"]],
        "tracking": [["Episode_Reward/track_lin_vel_xy_exp"], ["Metrics/base_velocity/error_vel_xy"]],
    }


def test_pngs_are_written_into_the_run(run_dir):
    written = write_training_curves(run_dir)
    assert [p.name for p in written] == ["return.png", "episode_length.png", "tracking.png"]
    for path in written:
        assert path.parent == run_dir / "curves"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_events_is_an_error(tmp_path):
    with pytest.raises(NoEventsError, match="no TensorBoard event files"):
        write_training_curves(tmp_path)


def test_plot_command(run_dir, tmp_path, capsys):
    out = tmp_path / "figures"
    assert main(["plot", str(run_dir), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["episode_length.png", "return.png", "tracking.png"]
    assert main(["plot", str(tmp_path / "missing")]) == 2
    assert main(["plot", "latest"]) == 2
    assert "needs --task" in capsys.readouterr().err

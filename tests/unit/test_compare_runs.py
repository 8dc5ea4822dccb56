"""Training runs side by side (linkage_lab_experiments.analysis.compare_runs) on event files with known values."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from linkage_lab.evaluation.curves import Series
from linkage_lab_experiments.analysis.compare_runs import main, parse_run, summarize

pytestmark = pytest.mark.unit


def _series(values):
    values = np.asarray(values, dtype=float)
    iterations = np.arange(values.size)
    return Series("Train/mean_reward", iterations, iterations.astype(float), values)


def test_summary_reads_the_end_and_the_peak():
    row = summarize(_series([0.0, 5.0, 9.0, 4.0, 2.0, 3.0]), window=3)
    assert row == {"last_iteration": 5, "last": 3.0, "mean_of_last_window": 3.0, "max": 9.0, "max_at_iteration": 2}


def test_a_run_needs_a_label():
    assert parse_run("box42=logs/x")[0] == "box42"
    with pytest.raises(argparse.ArgumentTypeError, match="LABEL=RUN_DIR"):
        parse_run("logs/x")


def test_two_runs_written_side_by_side(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    for name, slope in (("a", 1.0), ("b", 2.0)):
        writer = SummaryWriter(str(tmp_path / name))
        for it in range(10):
            writer.add_scalar("Train/mean_reward", slope * it, it)
            writer.add_scalar("Policy/mean_std", 0.4, it)
        writer.close()
    out = tmp_path / "out"
    assert main([f"a={tmp_path / 'a'}", f"b={tmp_path / 'b'}", "--out", str(out), "--window", "4"]) == 0
    runs = json.loads((out / "compare_runs.json").read_text())["runs"]
    assert runs["a"]["Train/mean_reward"]["mean_of_last_window"] == pytest.approx(7.5)  # mean of 6..9
    assert runs["b"]["Train/mean_reward"]["last"] == pytest.approx(18.0)
    assert runs["b"]["Policy/mean_std"]["max"] == pytest.approx(0.4)
    assert (out / "compare_runs.png").stat().st_size > 0

"""``linkage-lab ship``'s ``train.json``: the commit a run was trained at, read from the run's own git record, and
the training command, written from the run's record."""

from __future__ import annotations

import json

import pytest

from linkage_lab.cli.ship import run_commit, training_record
from linkage_lab.paths import REPO_ROOT

pytestmark = pytest.mark.unit

HASH = "0123456789abcdef0123456789abcdef01234567"


def _record(tmp_path, status: str):
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "main.diff").write_text(f"--- git commit ---\n{HASH}\n\n\n--- git status ---\n{status}\n")
    return tmp_path


def test_a_clean_run_records_its_commit(tmp_path):
    assert run_commit(_record(tmp_path, "On branch main\nnothing to commit, working tree clean")) == HASH


@pytest.mark.parametrize("change", ["Changes not staged for commit:", "Changes to be committed:"])
def test_changed_tracked_files_mark_it_dirty(tmp_path, change):
    status = f"On branch main\n{change}\n\tmodified:   README.md"
    assert run_commit(_record(tmp_path, status)) == f"{HASH}-dirty"


def test_untracked_files_alone_leave_it_clean(tmp_path):
    status = "On branch main\nUntracked files:\n\tnotes.txt\nnothing added to commit but untracked files present"
    assert run_commit(_record(tmp_path, status)) == HASH


def test_no_record_or_a_garbled_one_gives_none(tmp_path):
    assert run_commit(tmp_path) is None
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "main.diff").write_text("not a record")
    assert run_commit(tmp_path) is None


TASK = "LinkageLab-Velocity-Flat-Limit"


def _run(tmp_path, **record):
    run = tmp_path / "2026-12-07_01-11-43"
    run.mkdir()
    base = {"task": TASK, "num_envs": 256, "workers": 1, "overrides": ["env.rewards.x.weight=-60"]}
    (run / "training.json").write_text(json.dumps({**base, **record}))
    return run / "model_2799.pt"


def test_a_run_from_scratch_is_its_planned_iterations(tmp_path):
    record = training_record(_run(tmp_path, planned_iterations=700), 699)
    assert record["training_command"] == (
        f"linkage-lab train --task {TASK} --num-envs 256 --max-iterations 700 --workers 1 env.rewards.x.weight=-60"
    )
    assert record["fine_tuned_from"] is None and record["iterations"] == 700


def test_a_fine_tune_names_its_start_and_the_iterations_it_added(tmp_path):
    """Started from the shipped policy at iteration 2000, planned to 2800 over two sessions: the command that
    reproduces it resumes that checkpoint (repository-relative) for 800 more."""
    start = REPO_ROOT / "policies" / TASK / "model.pt"
    sessions = [{"first_iteration": 2000, "last_iteration": 2399}, {"first_iteration": 2400, "last_iteration": 2799}]
    checkpoint = _run(tmp_path, planned_iterations=2800, resumed_from=str(start), sessions=sessions)
    record = training_record(checkpoint, 2799)
    assert record["training_command"] == (
        f"linkage-lab train --task {TASK} --num-envs 256 --resume policies/{TASK}/model.pt --max-iterations 800 "
        "--workers 1 env.rewards.x.weight=-60"
    )
    assert record["fine_tuned_from"] == {"checkpoint": f"policies/{TASK}/model.pt", "iterations": 2000}
    assert record["iterations"] == 2800


def test_a_start_outside_the_repository_keeps_its_path(tmp_path):
    elsewhere = tmp_path / "elsewhere" / "model_99.pt"
    sessions = [{"first_iteration": 100}]
    record = training_record(
        _run(tmp_path, planned_iterations=300, resumed_from=str(elsewhere), sessions=sessions), 299
    )
    assert f"--resume {elsewhere} --max-iterations 200" in record["training_command"]

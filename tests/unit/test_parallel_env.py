"""The multi-process VecEnv's bookkeeping: env split, merged episode logs, errors (no simulation)."""

from __future__ import annotations

import pytest

from linkage_lab.training.errors import TrainingConfigError
from linkage_lab.training.parallel import merge_logs, split_envs
from linkage_lab.training.vec_env import check_workers

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("num_envs", "workers", "sizes"), [(256, 2, [128, 128]), (7, 2, [4, 3]), (10, 3, [4, 3, 3]), (5, 1, [5])]
)
def test_split_is_even_and_complete(num_envs, workers, sizes):
    assert split_envs(num_envs, workers) == sizes


@pytest.mark.parametrize(("num_envs", "workers"), [(4, 0), (2, 3)])
def test_impossible_splits_are_refused(num_envs, workers):
    with pytest.raises(ValueError, match="workers"):
        split_envs(num_envs, workers)


def test_logs_average_over_the_workers_that_report_a_key():
    merged = merge_logs([{"a": 1.0, "b": 4.0}, None, {"a": 3.0}])
    assert merged == {"a": 2.0, "b": 4.0}
    assert merge_logs([None, None]) == {}


@pytest.mark.parametrize(
    ("workers", "num_envs", "device", "message"),
    [
        (0, 8, "cpu", "at least 1"),
        (True, 8, "cpu", "at least 1"),
        (9, 8, "cpu", "needs at least 9 envs"),
        (2, 8, "cuda:0", "CPU simulations"),
    ],
)
def test_bad_worker_counts_are_clear_errors(workers, num_envs, device, message):
    with pytest.raises(TrainingConfigError, match=message):
        check_workers(workers, num_envs, device)


def test_default_is_one_process_per_core_with_enough_envs(monkeypatch):
    import os

    monkeypatch.delenv("LINKAGE_LAB_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert check_workers(None, 256, "cpu") == 2
    assert check_workers(None, 48, "cpu") == 1  # 24 envs a process would be too few
    assert check_workers(None, 8, "cpu") == 1
    assert check_workers(None, 256, "cuda:0") == 1
    monkeypatch.setenv("LINKAGE_LAB_WORKERS", "1")
    assert check_workers(None, 256, "cpu") == 1
    monkeypatch.setenv("LINKAGE_LAB_WORKERS", "two")
    with pytest.raises(TrainingConfigError, match="LINKAGE_LAB_WORKERS must be a whole number"):
        check_workers(None, 256, "cpu")


def test_shipped_wall_time_sums_sessions_not_the_pause_between_them():
    from linkage_lab.cli.ship import _session_seconds

    sessions = [
        {"started_at": "2026-12-01T09:00:00+00:00", "ended_at": "2026-12-01T09:20:00+00:00", "first_iteration": 0},
        {"started_at": "2026-12-01T12:00:00+00:00", "ended_at": "2026-12-01T12:10:00+00:00", "first_iteration": 300},
        {"started_at": "2026-12-01T13:00:00+00:00", "ended_at": "2026-12-01T13:05:00+00:00", "first_iteration": 600},
    ]
    assert _session_seconds(sessions, 599) == 1800.0  # the third session had not started by then
    assert _session_seconds(sessions, 700) == 2100.0
    assert _session_seconds([{"started_at": "bad"}], 10) is None
    # A checkpoint saved inside a session (its last iteration is later): the record cannot say when it came.
    ended = [{**session, "last_iteration": last} for session, last in zip(sessions, (299, 599, 899))]
    assert _session_seconds(ended, 599) == 1800.0 and _session_seconds(ended, 899) == 2100.0
    assert _session_seconds(ended, 700) is None

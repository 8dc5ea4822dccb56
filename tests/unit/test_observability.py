"""Every actor observation of every task is something the robot measures or estimates, or a recorded gap."""

from __future__ import annotations

import pytest

from linkage_lab.evaluation.policies import actor_groups
from linkage_lab.runtime import resolve_configs
from linkage_lab.tasks.observability import ROBOT_SOURCES, UNMEASURED, actor_terms, unsourced_terms
from linkage_lab.tasks.registry import project_task_ids

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("task", project_task_ids())
def test_each_actor_term_has_a_robot_source_or_a_recorded_gap(task):
    env_cfg, agent_cfg = resolve_configs(task, [], "cpu")
    groups = actor_groups(agent_cfg)
    terms = actor_terms(env_cfg, groups)
    assert terms, f"{task}'s actor reads nothing"
    assert unsourced_terms(env_cfg, groups) == [], f"{task}: give these terms a robot source"
    # No actor reads the simulator's truth: the base velocity is the estimator's (with its measured error).
    assert {func for _, func in terms if func in UNMEASURED} == set()
    assert "base_lin_vel" not in {func for _, func in terms}
    assert ("base_lin_vel", "base_lin_vel_estimate") in terms


def test_a_term_without_a_source_is_found():
    from types import SimpleNamespace as NS

    def height_scan():  # a terrain scan: no such sensor on these robots
        return None

    cfg = NS(
        observations=NS(policy=NS(gyro=NS(func=ROBOT_SOURCES and _named("base_ang_vel")), scan=NS(func=height_scan)))
    )
    assert unsourced_terms(cfg, ["policy"]) == ["scan"]
    assert all(reason for reason in UNMEASURED.values()) and not set(UNMEASURED) & set(ROBOT_SOURCES)


def _named(name: str):
    def func():
        return None

    func.__name__ = name
    return func

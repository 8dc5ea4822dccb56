"""One leg body for S3N: the Limit's ``s3n table``, fidelity benchmark and task actuator share it."""

from __future__ import annotations

import math

import pytest

from linkage_lab.robots.limit.s3n import described_leg, leg_body, s3n_cfg
from linkage_lab.robots.registry import get_robot, load_robot_config

pytestmark = pytest.mark.unit


def test_registry_leg_body_is_the_description_body():
    spec = get_robot("limit")
    assert spec.extra("leg_body")() == leg_body() == described_leg()[0]
    assert spec.extra("s3n_cfg")("s3n_full").serial_link_kgm2 == leg_body().serial_link_kgm2()


def test_s3n_table_uses_the_leg_body_the_task_actuator_gets():
    from linkage_lab.robots.limit.articulation import leg_actuator_cfg
    from linkage_lab_experiments.analysis.fidelity import FidelityCfg
    from linkage_lab_experiments.cli.s3n import inertia_table

    actuator = leg_actuator_cfg(get_robot("limit").config(), "s3n_full")
    task_abc = tuple(actuator.serial_link_kgm2)
    assert s3n_cfg("s3n_full").serial_link_kgm2 == pytest.approx(task_abc, rel=1e-12)
    assert FidelityCfg.for_robot("limit").oracle.body.serial_link_kgm2() == pytest.approx(task_abc, rel=1e-12)
    # At α = 90° Kin-Only integrates M_link^s + diag(J̄) = [[a + J̄₁, c], [c, c + J̄₂]].
    a, _, c = task_abc
    reflected = load_robot_config("limit")["s3n"]["reflected_inertia_kgm2"]
    table = inertia_table("limit", 90.0)["kin_only"]
    assert table[0][0] == pytest.approx(a + reflected[0], rel=1e-9)
    assert table[0][1] == pytest.approx(c, rel=1e-9)
    assert table[1][1] == pytest.approx(c + reflected[1], rel=1e-9)


def test_described_leg_lumps_the_generated_lower_leg_by_hand():
    body, across_m = described_leg("fl", ankle_rad=0.6)
    # From configs/robots/limit.yaml and robots/limit/description.py: the lower link is the 0.085 m
    # rod (0.10 kg) and the ankle motor 15 mm below the knee (0.38 kg), then, turned 0.6 rad with the
    # ankle about the ankle axis 85 mm below the knee, the ankle block's centre 2 mm below that axis
    # (0.08 kg) and the foot plate's at (+10 mm, -7 mm) (0.05 kg).
    c, s = math.cos(0.6), math.sin(0.6)
    block_x, block_z = s * -0.002, c * -0.002
    foot_x, foot_z = c * 0.010 + s * -0.007, -s * 0.010 + c * -0.007
    mass = 0.10 + 0.38 + 0.08 + 0.05
    along = (0.10 * 0.0425 + 0.38 * 0.015 + 0.08 * (0.085 - block_z) + 0.05 * (0.085 - foot_z)) / mass
    assert body.shank.mass_kg == pytest.approx(mass)
    assert body.shank.com_m == pytest.approx(along, rel=1e-9)
    assert across_m == pytest.approx((0.08 * block_x + 0.05 * foot_x) / mass, rel=1e-9)
    assert body.thigh.mass_kg == pytest.approx(0.15) and body.thigh.com_m == pytest.approx(0.05)
    assert body.thigh_length_m == pytest.approx(0.100)

"""The robot registry and the typed robot configs: lookups, clear errors, nothing silent."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys

import pytest

from linkage_lab.config import ConfigError
from linkage_lab.robots.registry import (
    MissingCapability,
    UnknownRobot,
    get_robot,
    load_robot_config,
    robot_for_joints,
    robot_names,
    robots_with,
    sole_robot_with,
)
from linkage_lab.typed_config import parse

pytestmark = pytest.mark.unit


def test_both_robots_are_found_with_their_joint_order():
    assert {"limit", "marvin"} <= set(robot_names())
    limit, marvin = get_robot("limit"), get_robot("marvin")
    assert len(limit.joint_names) == 12 and len(marvin.joint_names) == 16
    assert robot_for_joints(list(limit.joint_names)) is limit
    assert robot_for_joints(sorted(marvin.joint_names), any_order=True) is marvin
    with pytest.raises(UnknownRobot, match="in that order"):
        robot_for_joints(sorted(marvin.joint_names))
    # The Limit's own numbering (docs/design/robots.md §1.1): ids 1-12 in canonical order.
    assert limit.joint_ids == tuple(range(1, 13)) and marvin.joint_ids is None


def test_unknown_robot_and_missing_capability_are_clear_errors():
    with pytest.raises(UnknownRobot, match="unknown robot 'walker3'; registered: .*limit.*marvin"):
        get_robot("walker3")
    with pytest.raises(MissingCapability, match="'limit' has no sprint_gait"):
        get_robot("limit").require("sprint_gait")
    with pytest.raises(MissingCapability, match="provides no 'nothing'"):
        get_robot("marvin").extra("nothing")
    assert sole_robot_with("rsu_ankles") == "marvin"
    assert "limit" in robots_with("leg_body") and "marvin" not in robots_with("leg_body")


def test_robot_transmissions_come_from_the_registry():
    from linkage_lab.actuators.transmissions import known_transmissions, make_transmission

    robot_names()  # registers every robot, and with it its transmissions
    assert {"identity", "parallelogram", "marvin_ankle_left", "marvin_ankle_right"} <= set(known_transmissions())
    assert make_transmission("marvin_ankle_right:calf").geometry.preset == "calf"
    with pytest.raises(KeyError, match="unknown transmission 'nope'"):
        make_transmission("nope")


@pytest.mark.parametrize("robot", ["limit", "marvin"])
def test_typed_config_is_the_yaml(robot):
    spec = get_robot(robot)
    config = spec.config()
    raw = load_robot_config(robot)
    assert dataclasses.is_dataclass(config) and config is spec.config()  # parsed once
    assert config.geometry.thigh_length_m == raw["geometry"]["thigh_length_m"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.name = "other"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("geometry", "thigh_length_m"), -0.1, r"limit.yaml: geometry.thigh_length_m: must be > 0, got -0.1"),
        (("joint_limits", "knee", "effort_nm"), "ten", r"joint_limits.knee.effort_nm: expected a finite number"),
        (("base", "size_m"), [0.4, 0.1], r"base.size_m: expected 3 values, got 2"),
        (("geometry", "thigh_lenght_m"), 0.1, r"geometry.thigh_lenght_m: unknown key"),
    ],
)
def test_bad_config_names_the_file_and_key(path, value, message):
    spec = get_robot("limit")
    raw = copy.deepcopy(load_robot_config("limit"))
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=message):
        parse(spec.config_type, raw, "configs/robots/limit.yaml")


def test_missing_key_and_unknown_motor_are_errors():
    spec = get_robot("marvin")
    raw = copy.deepcopy(load_robot_config("marvin"))
    del raw["geometry"]["shin_length_m"]
    with pytest.raises(ConfigError, match="geometry.shin_length_m: missing"):
        parse(spec.config_type, raw, "marvin.yaml")
    raw = copy.deepcopy(load_robot_config("marvin"))
    raw["leg_joints"]["knee"]["motor"] = "RS99"
    with pytest.raises(ConfigError, match="motor 'RS99' is not in motors"):
        parse(spec.config_type, raw, "marvin.yaml")


def test_robot_packages_import_without_torch_or_yaml():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "sys.modules['yaml'] = None\n"
        "import linkage_lab.robots.limit, linkage_lab.robots.marvin\n"
        "from linkage_lab.robots.limit import SPEC\n"
        "assert SPEC.joint_ids[0] == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

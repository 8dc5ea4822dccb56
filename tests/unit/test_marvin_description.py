"""Config -> URDF -> USD for Marvin (docs/design/robots.md §2): joints, masses, standing geometry, freshness."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import linkage_lab
from linkage_lab.robots.assets import asset_paths, generate_urdf, staleness

pytestmark = pytest.mark.unit

SIDES = ("left", "right")
# docs/design/robots.md §2.1, left leg: joint -> (axis, (lower, upper) rad).
LEFT_LEG = {
    "hip_yaw": ((0, 0, 1), (-0.6, 0.6)),
    "hip_roll": ((1, 0, 0), (-0.4, 0.6)),
    "hip_pitch": ((0, 1, 0), (-2.0, 1.0)),
    "knee": ((0, 1, 0), (0.0, 2.3)),
    "ankle_pitch": ((0, -1, 0), (-0.698, 0.698)),
    "ankle_roll": ((1, 0, 0), (-0.349, 0.349)),
}
ARM = {"shoulder_pitch": ((0, 1, 0), (-2.5, 2.5)), "elbow": ((0, 1, 0), (0.0, 2.0))}
# docs/design/robots.md §2.3 (peak N·m, no-load rad/s) per motor, and §2.4 box limits of the serial ankle.
RS02, RS03, RS04 = (17.0, 42.0), (60.0, 20.4), (120.0, 20.9)
EFFORT_VELOCITY = {
    "hip_yaw": RS03,
    "hip_roll": RS04,
    "hip_pitch": RS04,
    "knee": RS04,
    "ankle_pitch": (118.8, 20.6),
    "ankle_roll": (80.4, 30.5),
    "shoulder_pitch": RS02,
    "elbow": RS02,
}
# docs/design/robots.md §2.2: link masses (kg) per leg and per arm; the pelvis carries 19.0 kg.
LEG_MASSES = {
    "hip_yaw_link": 1.0,
    "hip_roll_link": 1.5,
    "thigh": 3.0,
    "shin": 2.6,
    "ankle_cross": 0.1,
    "foot": 0.7,
}
ARM_MASSES = {"upper_arm": 1.0, "forearm": 0.6}


@pytest.fixture(scope="module")
def urdf():
    return ET.fromstring(generate_urdf("marvin"))


@pytest.fixture(scope="module")
def joints(urdf):
    return {j.get("name"): j for j in urdf.findall("joint")}


@pytest.fixture(scope="module")
def links(urdf):
    return {link.get("name"): link for link in urdf.findall("link")}


def _floats(text):
    return np.array([float(v) for v in text.split()])


def _link_origin(joints, link):
    """Position of ``link``'s frame in the pelvis frame, composing the (unrotated) joint origins."""
    by_child = {j.find("child").get("link"): j for j in joints.values()}
    position = np.zeros(3)
    while link in by_child:
        joint = by_child[link]
        assert _floats(joint.find("origin").get("rpy")).tolist() == [0, 0, 0]
        position += _floats(joint.find("origin").get("xyz"))
        link = joint.find("parent").get("link")
    assert link == "pelvis"
    return position


def _mass(link):
    return float(link.find("inertial/mass").get("value"))


def test_total_mass_and_link_masses(links):
    assert sum(_mass(link) for link in links.values()) == pytest.approx(40.0, abs=0.5)
    assert _mass(links["pelvis"]) == pytest.approx(19.0)
    for side in SIDES:
        for name, mass in {**LEG_MASSES, **ARM_MASSES}.items():
            assert _mass(links[f"{side}_{name}"]) == pytest.approx(mass)
    assert len(links) == 1 + 2 * (len(LEG_MASSES) + len(ARM_MASSES))


def test_pelvis_com_above_hip_line(links):
    # The pelvis frame is on the hip line; the upper body's CoM is 0.20 m above it.
    assert _floats(links["pelvis"].find("inertial/origin").get("xyz")) == pytest.approx([0, 0, 0.20])


def test_sixteen_revolute_joints_with_exact_names(joints):
    expected = {f"{side}_{j}" for side in SIDES for j in (*LEFT_LEG, *ARM)}
    assert len(expected) == 16
    assert set(joints) == expected
    assert all(j.get("type") == "revolute" for j in joints.values())


@pytest.mark.parametrize("side", SIDES)
def test_axes_ranges_and_limits(joints, side):
    for name, (axis, (lower, upper)) in {**LEFT_LEG, **ARM}.items():
        if side == "right" and name in ("hip_yaw", "hip_roll", "ankle_roll"):
            lower, upper = -upper, -lower  # the mirror in y negates yaw and roll ranges
        node = joints[f"{side}_{name}"]
        assert _floats(node.find("axis").get("xyz")).tolist() == list(axis), name
        limit = node.find("limit")
        assert float(limit.get("lower")) == pytest.approx(lower, abs=1e-3), name
        assert float(limit.get("upper")) == pytest.approx(upper, abs=1e-3), name
        effort, velocity = EFFORT_VELOCITY[name]
        # The spec's ankle numbers use ratios rounded to two digits (0.99, 0.67): 0.5 % tolerance.
        assert float(limit.get("effort")) == pytest.approx(effort, rel=5e-3), name
        assert float(limit.get("velocity")) == pytest.approx(velocity, rel=5e-3), name


@pytest.mark.parametrize("side", SIDES)
def test_standing_geometry_in_zero_pose(joints, links, side):
    sign = 1 if side == "left" else -1
    hip = _link_origin(joints, f"{side}_thigh")  # the hip pitch joint's frame
    ankle = _link_origin(joints, f"{side}_foot")  # the ankle roll joint's frame
    assert hip == pytest.approx([0, sign * 0.09, 0])
    assert ankle - hip == pytest.approx([0, 0, -0.64])
    # Hip axes: yaw, roll and pitch share the hip centre.
    for name in ("hip_yaw_link", "hip_roll_link"):
        assert _link_origin(joints, f"{side}_{name}") == pytest.approx(hip)
    foot = links[f"{side}_foot"]
    center = _floats(foot.find("collision/origin").get("xyz"))
    size = _floats(foot.find("collision/geometry/box").get("size"))
    sole_z = ankle[2] + center[2] - size[2] / 2
    assert hip[2] - sole_z == pytest.approx(0.70)
    assert ankle[2] - sole_z == pytest.approx(0.06)
    # Foot 0.22 x 0.11 m, the ankle 0.07 m from the heel.
    assert size[:2] == pytest.approx([0.22, 0.11])
    assert center[0] - size[0] / 2 == pytest.approx(-0.07)
    assert center[1] == pytest.approx(0.0)


@pytest.mark.parametrize("side", SIDES)
def test_ankle_axes_intersect(joints, side):
    assert _floats(joints[f"{side}_ankle_roll"].find("origin").get("xyz")).tolist() == [0, 0, 0]
    assert joints[f"{side}_ankle_roll"].find("parent").get("link") == joints[f"{side}_ankle_pitch"].find("child").get(
        "link"
    )


@pytest.mark.parametrize("side", SIDES)
def test_shin_mass_sits_where_the_ankle_motors_are(links, side):
    # Shin frame at the knee, ankle 0.32 m below. Parts: 0.8 kg structure spread evenly along
    # the shin (0.16 m above the ankle), two 0.90 kg motors 0.08 and 0.18 m above the ankle.
    com_above_ankle = (0.8 * 0.16 + 0.9 * 0.08 + 0.9 * 0.18) / 2.6
    com = _floats(links[f"{side}_shin"].find("inertial/origin").get("xyz"))
    assert com[2] == pytest.approx(-0.32 + com_above_ankle, abs=1e-6)
    # Lower than a uniform shin, higher than with the motors at the ankle.
    assert -0.32 + 0.8 * 0.16 / 2.6 < com[2] < -0.16
    # docs/design/robots.md §2: about the hip (0.64 m above the ankle) the motors add ~0.47 kg·m², not 0.74.
    inertia = links[f"{side}_shin"].find("inertial/inertia")
    iyy_hip = float(inertia.get("iyy")) + 2.6 * (com[0] ** 2 + (com[2] - 0.32) ** 2)
    structure = 0.8 * (0.32**2 / 12 + 0.48**2)
    assert iyy_hip == pytest.approx(structure + 0.47, abs=0.01)
    assert iyy_hip - structure < 0.7 * 0.74  # at least 30 % below the motors-at-the-ankle design


def test_collisions_are_torso_and_feet(links):
    colliders = {name for name, link in links.items() if link.find("collision") is not None}
    assert colliders == {"pelvis", "left_foot", "right_foot"}


def test_inertias_are_physical(links):
    for link in links.values():
        inertia = link.find("inertial/inertia")
        ixx, iyy, izz = (float(inertia.get(k)) for k in ("ixx", "iyy", "izz"))
        assert min(ixx, iyy, izz) > 0
        assert ixx + iyy >= izz * (1 - 1e-9) and iyy + izz >= ixx * (1 - 1e-9) and ixx + izz >= iyy * (1 - 1e-9)


def test_committed_assets_are_current():
    reasons = staleness("marvin")
    assert reasons == [], f"assets/marvin is out of date ({'; '.join(reasons)}): run `linkage-lab assets build marvin`"


def test_usd_has_floating_base_and_no_external_references():
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(str(asset_paths("marvin")["usd"]))
    prims = list(stage.Traverse())
    assert not [p for p in prims if p.IsA(UsdPhysics.FixedJoint)]
    assert not [p for p in prims if p.GetName() == "root_joint"]
    revolute = {p.GetName() for p in prims if p.IsA(UsdPhysics.RevoluteJoint)}
    assert revolute == {f"{side}_{j}" for side in SIDES for j in (*LEFT_LEG, *ARM)}
    roots = [p for p in prims if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
    assert [p.GetName() for p in roots] == ["pelvis"]
    for layer in stage.GetUsedLayers():
        assert not layer.externalReferences


def _linkage_lab_imports(module: str, package_dir: Path, seen: set[str]) -> set[str]:
    """Top-level modules imported by ``module`` and, recursively, by the linkage_lab modules it imports."""
    if module in seen:
        return set()
    seen.add(module)
    relative = Path(*module.split(".")[1:])
    path = package_dir / relative.with_suffix(".py")
    if not path.is_file():
        path = package_dir / relative / "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            found.add(name.split(".")[0])
            if name.startswith("linkage_lab."):
                found |= _linkage_lab_imports(name, package_dir, seen)
    return found


def test_generator_is_free_of_isaac_lab():
    imported = _linkage_lab_imports("linkage_lab.robots.marvin.description", Path(linkage_lab.__file__).parent, set())
    assert "linkage_lab" in imported  # the walk did follow the imports
    assert not {"isaaclab", "isaacsim", "omni"} & imported

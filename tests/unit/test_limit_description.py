"""Config -> URDF -> USD for the Limit (docs/design/robots.md §1.2-1.3) and the artifacts' freshness."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from linkage_lab.robots.assets import asset_paths, generate_urdf, staleness

pytestmark = pytest.mark.unit

LEGS = ("fl", "fr", "rl", "rr")
# docs/design/robots.md §1.2: hip origins (x, y) in base_link, REP-103 (left legs at +y, rear hips at x = -0.240).
HIP_XY = {"fl": (0.130, 0.105), "fr": (0.130, -0.105), "rl": (-0.240, 0.105), "rr": (-0.240, -0.105)}
# docs/design/robots.md §1.3: (limit rad, effort N·m, velocity rad/s).
LIMITS = {"hip": ((-1.20, 1.20), 10.0, 10.0), "knee": ((-1.57, -0.25), 10.0, 10.0), "ankle": ((-0.60, 0.60), 5.0, 10.0)}


@pytest.fixture(scope="module")
def urdf():
    return ET.fromstring(generate_urdf("limit"))


def _floats(text):
    return [float(v) for v in text.split()]


def test_links_and_joints(urdf):
    links = {link.get("name") for link in urdf.findall("link")}
    expected_links = {"base_link"} | {f"{leg}_{part}" for leg in LEGS for part in ("hip", "thigh", "shank", "foot")}
    assert links == expected_links and len(links) == 17
    joints = {j.get("name"): j for j in urdf.findall("joint")}
    assert len(joints) == 16
    for leg in LEGS:
        chain = [
            ("hip", "revolute", "base_link", f"{leg}_hip"),
            ("knee", "revolute", f"{leg}_hip", f"{leg}_thigh"),
            ("ankle", "revolute", f"{leg}_thigh", f"{leg}_shank"),
            ("foot", "fixed", f"{leg}_shank", f"{leg}_foot"),
        ]
        for joint, kind, parent, child in chain:
            node = joints[f"{leg}_{joint}"]
            assert node.get("type") == kind
            assert node.find("parent").get("link") == parent
            assert node.find("child").get("link") == child


def test_axes_limits_and_hip_positions(urdf):
    joints = {j.get("name"): j for j in urdf.findall("joint")}
    for leg in LEGS:
        hip_xyz = _floats(joints[f"{leg}_hip"].find("origin").get("xyz"))
        assert hip_xyz == pytest.approx([*HIP_XY[leg], 0.0])
        assert _floats(joints[f"{leg}_knee"].find("origin").get("xyz")) == pytest.approx([0, 0, -0.100])
        assert _floats(joints[f"{leg}_ankle"].find("origin").get("xyz")) == pytest.approx([0, 0, -0.085])
        for joint, ((lower, upper), effort, velocity) in LIMITS.items():
            node = joints[f"{leg}_{joint}"]
            assert _floats(node.find("axis").get("xyz")) == [0.0, 1.0, 0.0]
            limit = node.find("limit")
            assert float(limit.get("lower")) == pytest.approx(lower)
            assert float(limit.get("upper")) == pytest.approx(upper)
            assert float(limit.get("effort")) == effort
            assert float(limit.get("velocity")) == velocity


def test_masses(urdf):
    mass = {link.get("name"): float(link.find("inertial/mass").get("value")) for link in urdf.findall("link")}
    # Base 3.5 kg plus the two co-axial hip/knee motors (2 x 0.38 kg) of each of the four legs.
    assert mass["base_link"] == pytest.approx(3.5 + 4 * 2 * 0.38)
    for leg in LEGS:
        assert mass[f"{leg}_hip"] == pytest.approx(0.15)
        assert mass[f"{leg}_thigh"] == pytest.approx(0.10 + 0.38)
        assert mass[f"{leg}_shank"] == pytest.approx(0.08)
        assert mass[f"{leg}_foot"] == pytest.approx(0.05)
    assert sum(mass.values()) == pytest.approx(3.5 + 4 * (0.76 + 0.15 + 0.10 + 0.38 + 0.08 + 0.05))


def test_inertias_are_physical(urdf):
    for link in urdf.findall("link"):
        inertia = link.find("inertial/inertia")
        ixx, iyy, izz = (float(inertia.get(k)) for k in ("ixx", "iyy", "izz"))
        assert min(ixx, iyy, izz) > 0
        # Triangle inequality of principal moments.
        assert ixx + iyy >= izz * (1 - 1e-9) and iyy + izz >= ixx * (1 - 1e-9) and ixx + izz >= iyy * (1 - 1e-9)


def test_feet_are_the_only_leg_collisions(urdf):
    colliders = {link.get("name") for link in urdf.findall("link") if link.find("collision") is not None}
    assert colliders == {"base_link"} | {f"{leg}_foot" for leg in LEGS}
    # Sole 0.010 m below the ankle axis, toe +0.040 and heel -0.020 m, 0.030 m wide.
    foot = next(link for link in urdf.findall("link") if link.get("name") == "fl_foot")
    size = _floats(foot.find("collision/geometry/box").get("size"))
    center = _floats(foot.find("collision/origin").get("xyz"))
    assert center[0] - size[0] / 2 == pytest.approx(-0.020)
    assert center[0] + size[0] / 2 == pytest.approx(0.040)
    assert size[1] == pytest.approx(0.030)
    assert center[2] - size[2] / 2 == pytest.approx(-0.010)


def test_committed_assets_are_current():
    reasons = staleness("limit")
    assert reasons == [], f"assets/limit is out of date ({'; '.join(reasons)}): run `linkage-lab assets build`"


def test_usd_has_floating_base_and_no_external_references():
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(str(asset_paths("limit")["usd"]))
    prims = list(stage.Traverse())
    fixed = [p for p in prims if p.IsA(UsdPhysics.FixedJoint)]
    # Only the four foot plates are welded; nothing ties the base to the world.
    assert sorted(p.GetName() for p in fixed) == [f"{leg}_foot" for leg in LEGS]
    revolute = sorted(p.GetName() for p in prims if p.IsA(UsdPhysics.RevoluteJoint))
    assert revolute == sorted(f"{leg}_{j}" for leg in LEGS for j in ("hip", "knee", "ankle"))
    roots = [p for p in prims if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
    assert len(roots) == 1
    for layer in stage.GetUsedLayers():
        assert not layer.externalReferences


def test_standing_height_matches_leg_geometry():
    from linkage_lab.robots.registry import load_robot_config

    cfg = load_robot_config("limit")
    pose = cfg["control"]["standing_pose_rad"]
    # Sole-flat standing pose: the three pitch angles sum to zero.
    assert pose["hip"] + pose["knee"] + pose["ankle"] == pytest.approx(0.0)
    height = 0.100 * math.cos(0.5) + 0.085 * math.cos(0.5 - 1.0) + 0.010
    from linkage_lab.robots.limit.articulation import standing_height_m
    from linkage_lab.robots.registry import get_robot

    assert standing_height_m(get_robot("limit").config()) == pytest.approx(height)

"""``linkage-lab assets build``: robot config → URDF → USD, with a freshness stamp.

Each robot's artifacts live in ``assets/<robot>/``: ``<robot>.urdf`` (generated from the config),
``<robot>.usd`` (converted from the URDF with ``urdf-usd-converter``, the fixed ``root_joint`` it
adds removed so the base floats) and ``build_info.json`` (hashes of the config, the URDF and the
generator version). :func:`check_up_to_date` compares the stamp and the URDF with a fresh
generation, which is what the freshness test and the task loaders use.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from linkage_lab.description.model import RobotModel, to_urdf
from linkage_lab.io import write_bytes_atomic, write_json_atomic, write_text_atomic
from linkage_lab.paths import ASSET_DIR, REPO_ROOT
from linkage_lab.robots.registry import get_robot, robot_config_path, robot_names

#: Bump when the generator's output changes for the same config.
GENERATOR_VERSION = 1


def buildable_robots() -> list[str]:
    """Robots with a description generator: every registered robot."""
    return robot_names()


def build_model(robot: str) -> RobotModel:
    """The robot's description model, from its config (``RobotSpec.description``).

    Raises:
        UnknownRobot: ``robot`` is not registered.
    """
    return get_robot(robot).description_model()


def _asset_dir(robot: str, asset_dir: Path | None) -> Path:
    """Where the robot's artifacts live: ``asset_dir``, else its ``RobotSpec.asset_dir``, else ``assets/``."""
    if asset_dir is not None:
        return Path(asset_dir)
    return get_robot(robot).asset_dir or ASSET_DIR


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def generate_urdf(robot: str) -> str:
    """URDF text of ``robot``, generated from its config."""
    path = robot_config_path(robot).resolve()
    source = path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.name
    return to_urdf(build_model(robot), header_comment=f"generated from {source}; do not edit")


def expected_stamp(robot: str, urdf_text: str) -> dict[str, Any]:
    """The ``build_info.json`` content that matches the current config and generator."""
    config_bytes = robot_config_path(robot).read_bytes()
    return {
        "robot": robot,
        "generator_version": GENERATOR_VERSION,
        "config_sha256": _sha256(config_bytes),
        "urdf_sha256": _sha256(urdf_text.encode()),
    }


def asset_paths(robot: str, asset_dir: Path | None = None) -> dict[str, Path]:
    """Paths of a robot's artifacts (``asset_dir``: see :func:`_asset_dir`)."""
    folder = _asset_dir(robot, asset_dir) / robot
    return {
        "dir": folder,
        "urdf": folder / f"{robot}.urdf",
        "usd": folder / f"{robot}.usd",
        "stamp": folder / "build_info.json",
    }


def convert_urdf_to_usd(urdf_path: Path, usd_path: Path) -> None:
    """Convert a URDF to a single-layer USD whose articulation has a floating base.

    ``urdf-usd-converter`` authors a ``root_joint`` (a fixed joint from the asset root to the
    base link) that would pin the robot to the world; it is removed. The result holds no
    external references (no meshes, no remote materials).
    """
    from pxr import Usd, UsdPhysics
    from urdf_usd_converter import Converter

    with tempfile.TemporaryDirectory() as tmp:
        result = Converter(layer_structure=False, scene=False).convert(str(urdf_path), tmp)
        stage = Usd.Stage.Open(str(result.path))
        removed = 0
        for prim in list(stage.Traverse()):
            if prim.IsA(UsdPhysics.FixedJoint) and prim.GetName() == "root_joint":
                stage.RemovePrim(prim.GetPath())
                removed += 1
        if removed != 1:
            raise RuntimeError(f"expected one root_joint in the converted USD, found {removed}")
        for layer in stage.GetUsedLayers():
            if layer.externalReferences:
                raise RuntimeError(f"converted USD references external files: {list(layer.externalReferences)}")
        stage.GetRootLayer().Save()
        tmp_usd = Path(tmp) / "out.usd"
        stage.GetRootLayer().Export(str(tmp_usd), args={"format": "usdc"})
        del stage
        write_bytes_atomic(usd_path, tmp_usd.read_bytes())


def build_robot(robot: str, asset_dir: Path | None = None, force: bool = False) -> dict[str, Any]:
    """Generate (or keep, when current) the URDF, USD and stamp of ``robot``.

    Returns:
        The stamp, with ``"rebuilt": bool``.
    """
    paths = asset_paths(robot, asset_dir)
    urdf_text = generate_urdf(robot)
    stamp = expected_stamp(robot, urdf_text)
    if not force and is_current(robot, asset_dir, urdf_text=urdf_text):
        return {**stamp, "rebuilt": False}
    paths["dir"].mkdir(parents=True, exist_ok=True)
    write_text_atomic(paths["urdf"], urdf_text)
    convert_urdf_to_usd(paths["urdf"], paths["usd"])
    stamp["usd_sha256"] = _sha256(paths["usd"].read_bytes())
    write_json_atomic(paths["stamp"], stamp)
    return {**stamp, "rebuilt": True}


def staleness(robot: str, asset_dir: Path | None = None, urdf_text: str | None = None) -> list[str]:
    """Reasons why a robot's artifacts are out of date with its config (empty when current)."""
    paths = asset_paths(robot, asset_dir)
    urdf_text = generate_urdf(robot) if urdf_text is None else urdf_text
    reasons = [f"missing {p.name}" for key, p in paths.items() if key != "dir" and not p.is_file()]
    if reasons:
        return reasons
    stamp = json.loads(paths["stamp"].read_text())
    expected = expected_stamp(robot, urdf_text)
    for key, value in expected.items():
        if stamp.get(key) != value:
            reasons.append(f"build_info.json {key} differs (config or generator changed)")
    if paths["urdf"].read_text() != urdf_text:
        reasons.append(f"{paths['urdf'].name} differs from a fresh generation")
    if stamp.get("usd_sha256") != _sha256(paths["usd"].read_bytes()):
        reasons.append(f"{paths['usd'].name} was modified after it was built")
    return reasons


def is_current(robot: str, asset_dir: Path | None = None, urdf_text: str | None = None) -> bool:
    """True when the artifacts match the config and generator."""
    return not staleness(robot, asset_dir, urdf_text)


def ensure_assets(robot: str) -> Path:
    """Build the robot's assets when they are missing or stale; return the USD path."""
    build_robot(robot)
    return asset_paths(robot)["usd"]

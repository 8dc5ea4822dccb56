"""Marvin's robot-side files in an exported bundle: the ankle bridge (ONNX) of the trained geometry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.robots.marvin.config import marvin_config
from linkage_lab.robots.marvin.joints import JOINT_NAMES
from linkage_lab.robots.registry import DeployFiles

#: Folder of the ankle bridge inside a bundle.
ANKLE_BRIDGE_DIR = "ankle_bridge"


def bundle_deploy_writer(metadata: dict[str, Any]) -> DeployFiles:
    """The files of the ankle bridge: the writer exports the ankle bridge of ``metadata["ankle_preset"]``
    (the geometry the policy was trained with: another preset's IK would send the cranks elsewhere)."""
    from linkage_lab.deploy import ankle_bridge

    preset = metadata["ankle_preset"]

    from linkage_lab.deploy.base_velocity import write_estimator
    from linkage_lab.robots.marvin.estimator import marvin_base_velocity_estimator

    def write(out_dir: Path, metadata: dict[str, Any]) -> dict[str, str]:
        paths = ankle_bridge.export_ankle_bridge(out_dir / ANKLE_BRIDGE_DIR, preset=preset, robot="marvin")
        files = {str(p.relative_to(out_dir)): _bridge_description(p.name) for p in paths}
        joints = metadata.get("joint_names") or list(JOINT_NAMES)
        estimator = write_estimator(out_dir, marvin_base_velocity_estimator(marvin_config(), joints), joints)
        files[str(estimator.relative_to(out_dir))] = (
            "the base-velocity estimator (IMU + leg kinematics + contact): leg chains in the policy's joint order "
            "and its noise model (linkage_lab.deploy.base_velocity)"
        )
        return files

    # How the ankle's joint-space PD reaches the motors on the robot (docs/design/ankle_linkage.md §8): never by
    # copying joint kp/kd to the motors.
    extra = {
        "ankle_bridge": f"{ANKLE_BRIDGE_DIR}/ankle_<side>_<function>.onnx",
        "ankle_gain_mode": getattr(ankle_bridge, "EXPORT_GAIN_MODE", None),
    }
    return DeployFiles(write, extra, "\n## Ankle bridge\n\n" + ankle_bridge.BRIDGE_DOC)


def _bridge_description(filename: str) -> str:
    side, function = filename.removesuffix(".onnx").split("_")[1:3]
    text = {
        "ik": "pose targets (pitch, roll) → crank targets, with reachability",
        "fk": "crank angles (+ warm start) → pose (pitch, roll)",
        "velocity": "crank rates + pose → pitch/roll rates",
        "gains": "joint kp/kd + pose → coupled 2×2 motor-space gains",
        "torque": "joint torque + pose → motor torques (this export's mode: host PD, motor kp = kd = 0)",
    }.get(function, function)
    return f"{side} ankle bridge, {text}"

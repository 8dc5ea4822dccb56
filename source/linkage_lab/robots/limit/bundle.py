"""The Limit's robot-side files in an exported bundle: ``deploy.json`` for :mod:`linkage_lab.robots.limit.deploy`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.limit.deploy import write_deploy_config
from linkage_lab.robots.limit.joints import JOINT_NAMES
from linkage_lab.robots.registry import DeployFiles


def bundle_deploy_writer(metadata: dict[str, Any]) -> DeployFiles:
    """The writer of ``deploy.json`` into a bundle folder."""
    from linkage_lab.deploy.base_velocity import write_estimator
    from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator

    def write(out_dir: Path, metadata: dict[str, Any]) -> dict[str, str]:
        path = write_deploy_config(out_dir, metadata)
        estimator = write_estimator(out_dir, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
        return {
            str(Path(path).relative_to(out_dir)): "the Limit deploy module's config: JointTarget/JointSample "
            "mapping by canonical joint id (docs/design/robots.md §1.4)",
            str(estimator.relative_to(out_dir)): "the base-velocity estimator (IMU + leg kinematics + contact): "
            "leg chains in canonical joint order and its noise model (linkage_lab.deploy.base_velocity)",
        }

    return DeployFiles(write)

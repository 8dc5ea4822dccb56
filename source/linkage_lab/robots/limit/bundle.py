"""The Limit's robot-side files in an exported bundle: ``deploy.json`` for :mod:`linkage_lab.robots.limit.deploy`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.robots.registry import DeployFiles


def bundle_deploy_writer(metadata: dict[str, Any]) -> DeployFiles:
    """The writer of ``deploy.json`` into a bundle folder."""
    from linkage_lab.robots.limit.deploy import write_deploy_config

    def write(out_dir: Path, metadata: dict[str, Any]) -> dict[str, str]:
        path = write_deploy_config(out_dir, metadata)
        return {
            str(Path(path).relative_to(out_dir)): "the Limit deploy module's config: JointTarget/JointSample "
            "mapping by canonical joint id (robots.md §1.4)"
        }

    return DeployFiles(write)

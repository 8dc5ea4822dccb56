"""Marvin: a 1.44 m humanoid whose ankles are two-motor parallel RSU linkages (docs/design/robots.md §2).

What the generic code may ask about it is :data:`SPEC`; the modules of this package hold the rest
(joint order, description, articulation, ankle, gaits, deploy files). Importing this package imports
neither torch nor Isaac Lab.
"""

from __future__ import annotations

from typing import Any

from linkage_lab.paths import ROBOT_CONFIG_DIR
from linkage_lab.robots.marvin.config import MarvinConfig
from linkage_lab.robots.marvin.joints import JOINT_NAMES, SIDES
from linkage_lab.robots.registry import RobotSpec, register_robot


def _description(cfg: MarvinConfig) -> Any:
    from linkage_lab.robots.marvin.description import build_marvin_model

    return build_marvin_model(cfg)


def _articulation(**options: Any) -> Any:
    from linkage_lab.robots.marvin.articulation import marvin_articulation_cfg

    return marvin_articulation_cfg(**options)


def _ankle(side: str, preset: str | None = None) -> Any:
    from linkage_lab.robots.marvin.ankle import ankle_transmission

    return ankle_transmission(side, preset)


def _scripted_gait(joint_names: Any = None, **overrides: Any) -> Any:
    from linkage_lab.gait.biped import BipedGait
    from linkage_lab.robots.marvin.gait import marvin_gait_cfg

    return BipedGait(marvin_gait_cfg(**overrides))


def _sprint_gait(**overrides: Any) -> Any:
    from linkage_lab.gait.biped import BipedGait
    from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg

    return BipedGait(marvin_sprint_gait_cfg(**overrides))


def _deploy(metadata: dict[str, Any]) -> Any:
    from linkage_lab.robots.marvin.bundle import bundle_deploy_writer

    return bundle_deploy_writer(metadata)


def _ankle_parts(side: str = "left") -> Any:
    from linkage_lab.robots.marvin.ankle_model import ankle_parts

    return ankle_parts(side)


def _ankle_drive_cfg(reflected_armature: bool, dt: float = 0.005, side: str = "left") -> Any:
    from linkage_lab.robots.marvin.ankle_model import ankle_drive_cfg

    return ankle_drive_cfg(reflected_armature, dt, side)


def _ankle_geometry(side: str = "left") -> Any:
    from linkage_lab.robots.marvin.ankle_model import ankle_geometry

    return ankle_geometry(side)


def _closed_chain(**options: Any) -> Any:
    from linkage_lab.robots.marvin.closed_chain import marvin_closed_chain

    return marvin_closed_chain(**options)


def _sim2sim_io(bundle: Any, chain: Any, **options: Any) -> Any:
    from linkage_lab.robots.marvin.sim2sim import MarvinSim2SimIO

    return MarvinSim2SimIO(bundle, chain, **options)


#: The options ``MarvinSim2SimIO`` takes (``sim2sim --io-option KEY=VALUE``), named here so the import stays lazy.
_sim2sim_io.options = ("ankle_mode", "base_velocity")


def _deploy_wire(chain: Any) -> Any:
    from linkage_lab.robots.marvin.wire import marvin_wire

    return marvin_wire(chain)


SPEC = register_robot(
    RobotSpec(
        name="marvin",
        config_path=ROBOT_CONFIG_DIR / "marvin.yaml",
        joint_names=JOINT_NAMES,
        config_type=MarvinConfig,
        description=_description,
        articulation=_articulation,
        transmissions={
            "marvin_ankle_left": lambda preset=None: _ankle("left", preset),
            "marvin_ankle_right": lambda preset=None: _ankle("right", preset),
        },
        scripted_gait=_scripted_gait,
        sprint_gait=_sprint_gait,
        deploy=_deploy,
        closed_chain=_closed_chain,
        rsu_ankles={side: (f"{side}_ankle_pitch", f"{side}_ankle_roll") for side in SIDES},
        extras={
            # The ankle armature experiments (robots/marvin/ankle_model.py).
            "ankle_parts": _ankle_parts,
            "ankle_drive_cfg": _ankle_drive_cfg,
            "ankle_geometry": _ankle_geometry,
            # sim2sim (robots/marvin/sim2sim.py): the bundle's ankle bridge on the closed-chain model.
            "sim2sim_io": _sim2sim_io,
            # deploy runtime (robots/marvin/wire.py): the per-motor records of its DDS wire.
            "deploy_wire": _deploy_wire,
        },
    )
)

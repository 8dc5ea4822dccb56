"""The Limit: a 12-joint quadruped with parallel-link (parallelogram) hip/knee legs (docs/design/robots.md §1).

What the generic code may ask about it is :data:`SPEC`; the modules of this package hold the rest
(joint table, description, articulation, trot, deploy files). Importing this package imports
neither torch nor Isaac Lab.
"""

from __future__ import annotations

from typing import Any

from linkage_lab.paths import ROBOT_CONFIG_DIR
from linkage_lab.robots.limit.config import LimitConfig
from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_NAMES
from linkage_lab.robots.registry import RobotSpec, register_robot


def _description(cfg: LimitConfig) -> Any:
    from linkage_lab.robots.limit.description import build_limit_model

    return build_limit_model(cfg)


def _articulation(**options: Any) -> Any:
    from linkage_lab.robots.limit.articulation import limit_articulation_cfg

    return limit_articulation_cfg(**options)


def _scripted_gait(joint_names: Any = None, **overrides: Any) -> Any:
    from linkage_lab.gait.trot import TrotGait
    from linkage_lab.robots.limit.gait import limit_trot_cfg

    return TrotGait(limit_trot_cfg(**overrides))


def _deploy(metadata: dict[str, Any]) -> Any:
    from linkage_lab.robots.limit.bundle import bundle_deploy_writer

    return bundle_deploy_writer(metadata)


def _leg_body(leg: str | None = None, ankle_rad: float | None = None) -> Any:
    from linkage_lab.robots.limit.s3n import DEFAULT_LEG, leg_body

    return leg_body(leg or DEFAULT_LEG, ankle_rad)


def _s3n_cfg(model: str = "s3n_full") -> Any:
    from linkage_lab.robots.limit.s3n import s3n_cfg

    return s3n_cfg(model)


def _leg_drive_cfg(model: str = "s3n_full", **overrides: Any) -> Any:
    from linkage_lab.robots.limit.s3n import leg_drive_cfg

    return leg_drive_cfg(model, **overrides)


def _leg_task() -> tuple[str, float]:
    from linkage_lab.robots.limit.s3n import TASK, TASK_PHYSICS_DT_S

    return TASK, TASK_PHYSICS_DT_S


def _task_leg_drive_cfg(model: str, physics_dt_s: float | None = None) -> Any:
    from linkage_lab.robots.limit.articulation import task_leg_drive_cfg
    from linkage_lab.robots.limit.s3n import TASK_PHYSICS_DT_S

    return task_leg_drive_cfg(model, TASK_PHYSICS_DT_S if physics_dt_s is None else physics_dt_s)


def _leg_joint_names(leg: str | None = None) -> tuple[str, str, str]:
    from linkage_lab.robots.limit.s3n import DEFAULT_LEG, leg_joint_names

    return leg_joint_names(leg or DEFAULT_LEG)


def _stance_mass_kg() -> float:
    from linkage_lab.robots.limit.s3n import stance_mass_kg

    return stance_mass_kg()


def _closed_chain(**options: Any) -> Any:
    from linkage_lab.robots.limit.closed_chain import limit_closed_chain

    return limit_closed_chain(**options)


def _sim2sim_io(bundle: Any, chain: Any, **options: Any) -> Any:
    from linkage_lab.robots.limit.sim2sim import LimitSim2SimIO

    return LimitSim2SimIO(bundle, chain, **options)


#: The options ``LimitSim2SimIO`` takes (``sim2sim --io-option KEY=VALUE``), named here so the import stays lazy.
_sim2sim_io.options = ("base_velocity", "drivers", "leg_gains", "estimator_rate")


def _deploy_wire(chain: Any) -> Any:
    from linkage_lab.robots.limit.wire import limit_wire

    return limit_wire(chain)


SPEC = register_robot(
    RobotSpec(
        name="limit",
        config_path=ROBOT_CONFIG_DIR / "limit.yaml",
        joint_names=JOINT_NAMES,
        joint_ids=JOINT_IDS,
        config_type=LimitConfig,
        description=_description,
        articulation=_articulation,
        scripted_gait=_scripted_gait,
        deploy=_deploy,
        closed_chain=_closed_chain,
        extras={
            # S3N (robots/limit/s3n.py): the one leg body (from the description), its S3N parameters and drives.
            "leg_body": _leg_body,
            "s3n_cfg": _s3n_cfg,
            "leg_drive_cfg": _leg_drive_cfg,
            "leg_task": _leg_task,
            "task_leg_drive_cfg": _task_leg_drive_cfg,
            "leg_joint_names": _leg_joint_names,
            "stance_mass_kg": _stance_mass_kg,
            # sim2sim (robots/limit/sim2sim.py): the deploy module's wire records on the closed-chain model.
            "sim2sim_io": _sim2sim_io,
            # deploy runtime (robots/limit/wire.py): the per-motor records of its DDS wire.
            "deploy_wire": _deploy_wire,
        },
    )
)

"""The spawner every project robot uses: its generated local USD, floating base, no self-collision."""

from __future__ import annotations

import isaaclab.sim as sim_utils
from isaaclab_newton.sim.schemas import NewtonArticulationCfg
from isaaclab_physx.sim.schemas import PhysxArticulationCfg, PhysxRigidBodyCfg

from linkage_lab.robots.assets import ensure_assets


def local_usd_spawn(robot: str) -> sim_utils.UsdFileCfg:
    """Spawn ``assets/<robot>/<robot>.usd`` (built from its config when missing or stale).

    Both backends' articulation settings are given, so the PhysX preset works where Isaac Sim is
    installed; contact sensors are on for the feet and base terms.
    """
    return sim_utils.UsdFileCfg(
        usd_path=str(ensure_assets(robot)),
        activate_contact_sensors=True,
        rigid_props=PhysxRigidBodyCfg(disable_gravity=False, max_depenetration_velocity=1.0),
        articulation_props=[
            PhysxArticulationCfg(enabled_self_collisions=False, solver_position_iteration_count=4),
            NewtonArticulationCfg(self_collision_enabled=False),
        ],
    )

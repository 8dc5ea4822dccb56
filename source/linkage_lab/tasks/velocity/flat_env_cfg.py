"""The flat-ground delta of the velocity tasks: a local USD plane, no height scan, no terrain curriculum.

A rough-terrain task is the same kind of delta on
:class:`~linkage_lab.tasks.velocity.base_env_cfg.LinkageVelocityEnvCfg` (a terrain generator, the height scanner and
its curriculum).
"""

from __future__ import annotations

from isaaclab.terrains import TerrainImporterCfg
from isaaclab.utils import configclass

from linkage_lab.description.ground import build_ground
from linkage_lab.tasks.velocity.base_env_cfg import LinkageVelocityEnvCfg


@configclass
class LinkageVelocityFlatEnvCfg(LinkageVelocityEnvCfg):
    """Velocity tracking on a flat local ground plane."""

    def __post_init__(self):
        super().__post_init__()
        # A local USD plane: the stock ground and terrain materials are fetched from a remote
        # server, and a flat generator mesh fails MuJoCo's compile.
        self.scene.terrain = TerrainImporterCfg(
            prim_path="/World/ground",
            terrain_type="usd",
            usd_path=str(build_ground()),
            collision_group=-1,
            physics_material=self.scene.terrain.physics_material,
            debug_vis=False,
        )
        self.sim.physics_material = self.scene.terrain.physics_material
        self.scene.height_scanner = None
        self.observations.policy.height_scan = None
        self.curriculum.terrain_levels = None

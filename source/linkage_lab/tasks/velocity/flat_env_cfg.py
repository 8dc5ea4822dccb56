"""Shared base of the project's velocity tasks: Isaac Lab's velocity task on a local flat ground.

Imports Isaac Lab's ``LocomotionVelocityRoughEnvCfg`` and overrides only what an offline,
flat-ground, Newton-by-default task needs; robot folders override the rest.
"""

from __future__ import annotations

from isaaclab.terrains import TerrainImporterCfg
from isaaclab.utils import configclass
from isaaclab_tasks.core.velocity.velocity_env_cfg import LocomotionVelocityRoughEnvCfg

from linkage_lab.description.ground import build_ground


@configclass
class LinkageVelocityFlatEnvCfg(LocomotionVelocityRoughEnvCfg):
    """Velocity tracking on a flat local ground plane, Newton (MuJoCo-Warp) physics by default.

    The PhysX presets of the parent (``physics=physx``) stay selectable for users with Isaac Sim.
    """

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
        # The sky light's texture is remote; a headless run does not need a light.
        self.scene.sky_light = None
        # urdf-usd-converter nests bodies under <Robot>/Geometry/..., so match them at any depth.
        self.scene.contact_forces.prim_path = "{ENV_REGEX_NS}/Robot/.*"
        # Custom (explicit, Python) actuator classes run on the Isaac Lab actuator path.
        self.sim.use_newton_actuators = False
        self.commands.base_velocity.debug_vis = False

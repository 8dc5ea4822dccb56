"""A local flat ground for the simulator: a USD plane with a collision API (no remote assets)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from linkage_lab.io import write_bytes_atomic
from linkage_lab.paths import ASSET_DIR

GROUND_USD = ASSET_DIR / "ground" / "ground_plane.usd"


def build_ground(path: Path = GROUND_USD, half_size_m: float = 500.0) -> Path:
    """Write a flat collision plane at z = 0 (a ``UsdGeom.Plane``; MuJoCo compiles planes natively).

    A flat trimesh from the terrain generator fails MuJoCo's compile ("mesh volume is too small"),
    and the stock ground plane is fetched from a remote server; this plane avoids both.
    """
    if path.is_file():
        return path
    from pxr import Usd, UsdGeom, UsdPhysics

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp) / "ground.usda"
        stage = Usd.Stage.CreateNew(str(tmp_path))
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        root = UsdGeom.Xform.Define(stage, "/ground")
        stage.SetDefaultPrim(root.GetPrim())
        plane = UsdGeom.Plane.Define(stage, "/ground/plane")
        plane.CreateAxisAttr(UsdGeom.Tokens.z)
        plane.CreateWidthAttr(2 * half_size_m)
        plane.CreateLengthAttr(2 * half_size_m)
        UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
        stage.GetRootLayer().Save()
        write_bytes_atomic(path, tmp_path.read_bytes())
    return path

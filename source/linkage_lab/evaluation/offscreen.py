"""A robot's URDF as a MuJoCo scene (visuals, free base, floor, lights) and an offscreen renderer for it.

The renderer picks its OpenGL backend itself (``MUJOCO_GL``, else EGL), so it works in a process
that imported ``mujoco`` before (a simulator does). Nothing here imports the simulator.
"""

from __future__ import annotations

import importlib
import os
import platform
import re
from pathlib import Path
from typing import Any

import numpy as np

#: MuJoCo's URDF reader drops visual geometry unless told not to, and the flag must be in the XML it parses.
_KEEP_VISUALS = "<mujoco><compiler discardvisual='false'/></mujoco>"
#: Geom groups: MuJoCo's URDF reader puts visual geoms in group 1 and collision geoms in group 0.
VISUAL_GROUP, FLOOR_GROUP = 1, 2
_ROBOT_RGBA = (0.78, 0.74, 0.68, 1.0)


class RenderUnavailable(RuntimeError):
    """No OpenGL backend can render offscreen on this machine."""


def build_scene(robot_urdf: str | Path, width: int = 640, height: int = 480) -> Any:
    """The robot's URDF as a MuJoCo model with a free base, a checkered floor and lights.

    Args:
        robot_urdf: The robot's generated URDF.
        width: Largest frame width it will render (pixels).
        height: Largest frame height it will render (pixels).

    Returns:
        The compiled :class:`mujoco.MjModel`.
    """
    import mujoco

    text = Path(robot_urdf).read_text()
    text, found = re.subn(r"(<robot\b[^>]*>)", lambda m: m.group(1) + _KEEP_VISUALS, text, count=1)
    if not found:
        raise ValueError(f"{robot_urdf}: no <robot> element")
    spec = mujoco.MjSpec.from_string(text)
    for geom in spec.geoms:
        if geom.group == VISUAL_GROUP and tuple(geom.rgba) == (0.5, 0.5, 0.5, 1.0):
            geom.rgba = _ROBOT_RGBA  # MuJoCo's default grey, i.e. the URDF gave no colour
    spec.worldbody.bodies[0].add_freejoint()
    spec.add_texture(
        name="floor_checker",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.42, 0.48, 0.55],
        rgb2=[0.30, 0.35, 0.41],
        width=256,
        height=256,
    )
    spec.add_texture(
        name="sky",
        type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
        rgb1=[0.62, 0.72, 0.84],
        rgb2=[0.95, 0.96, 0.98],
        width=64,
        height=64,
    )
    floor = spec.add_material(name="floor", texrepeat=[2.0, 2.0], texuniform=True)
    floor.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "floor_checker"
    # A 0.5 m checker (texrepeat 2 per metre) makes the robot's speed readable off the floor.
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="floor", group=FLOOR_GROUP)
    spec.worldbody.add_light(
        pos=[0, 0, 4], dir=[0.3, 0.2, -1.0], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, castshadow=True
    )
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.45, 0.45, 0.45]
    spec.visual.global_.offwidth = max(width, spec.visual.global_.offwidth)
    spec.visual.global_.offheight = max(height, spec.visual.global_.offheight)
    return spec.compile()


class OffscreenRenderer:
    """MuJoCo's offscreen renderer on an explicitly chosen OpenGL backend.

    :class:`mujoco.Renderer` takes its backend from ``MUJOCO_GL`` as it was when ``mujoco`` was
    first imported, which in a simulator process is before this module runs; choosing the context
    class here makes EGL (headless, Mesa's software rasteriser on a CPU machine) the default
    whatever was imported first. ``MUJOCO_GL=osmesa|glfw|egl`` still selects another.
    """

    def __init__(self, model: Any, width: int, height: int):
        import mujoco

        self.backend, self._context = _gl_context(width, height)
        self._mjr = None
        try:
            self._mjr = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100)
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._mjr)
        except Exception as exc:
            self.close()
            raise RenderUnavailable(f"OpenGL ({self.backend}) could not render offscreen: {exc}") from exc
        self._model = model
        self._scene = mujoco.MjvScene(model, maxgeom=max(1000, 4 * model.ngeom))
        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = 0
        self._option.geomgroup[VISUAL_GROUP] = 1
        self._option.geomgroup[FLOOR_GROUP] = 1
        self._perturb = mujoco.MjvPerturb()
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._pixels = np.empty((height, width, 3), dtype=np.uint8)

    def render(self, data: Any, camera: Any) -> np.ndarray:
        """One RGB frame ``(height, width, 3)`` of ``data`` seen from ``camera``."""
        import mujoco

        self._context.make_current()
        mujoco.mjv_updateScene(
            self._model, data, self._option, self._perturb, camera, mujoco.mjtCatBit.mjCAT_ALL, self._scene
        )
        mujoco.mjr_render(self._rect, self._scene, self._mjr)
        mujoco.mjr_readPixels(self._pixels, None, self._rect, self._mjr)
        return np.flipud(self._pixels).copy()  # OpenGL's rows run bottom-up

    def close(self) -> None:
        """Free the GL resources now (EGL complains at interpreter exit about contexts left open)."""
        if self._mjr is not None:
            self._mjr.free()
            self._mjr = None
        if self._context is not None:
            self._context.free()
            self._context = None

    def __enter__(self) -> OffscreenRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _gl_context(width: int, height: int) -> tuple[str, Any]:
    """A current GL context on ``MUJOCO_GL``'s backend, else EGL (CGL on macOS)."""
    requested = os.environ.get("MUJOCO_GL", "").strip().lower()
    default = "cgl" if platform.system() == "Darwin" else "egl"
    backend = requested if requested in ("egl", "osmesa", "glfw", "cgl") else default
    try:
        context = importlib.import_module(f"mujoco.{backend}").GLContext(width, height)
        context.make_current()
    except Exception as exc:  # each backend fails in its own way: ImportError, RuntimeError, GLError, ...
        hint = "" if requested else "; set MUJOCO_GL=osmesa or glfw to try another backend"
        raise RenderUnavailable(f"no OpenGL backend for offscreen rendering: {backend}: {exc}{hint}") from exc
    return backend, context

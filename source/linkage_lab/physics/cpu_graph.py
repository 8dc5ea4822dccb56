"""MuJoCo-Warp on the CPU with the physics step replayed as a captured Warp graph.

Isaac Lab 3.0 captures the Newton physics step into a CUDA graph on a GPU and runs it eagerly on
the CPU, where every MuJoCo-Warp step then pays Python for each of its ~120 kernel launches
(argument packing, launch bookkeeping, the solver's host-side loop): on a 2-core CPU that is
about a third of an env step of the Limit at 64 envs (``linkage-lab bench env --profile``). Warp
(≥ 1.13) records CPU launches too and replays them in a native loop (``wp.ScopedCapture`` on the
CPU device, ``wp.capture_launch``); the solver's data-dependent iteration loop
(``wp.capture_while``) is recorded as such, so convergence still decides the iteration count.

:class:`NewtonCpuGraphMJWarpManager` is Isaac Lab's :class:`NewtonMJWarpManager` with that one change:
the collision + solver substeps + sensor part of a physics step (what Isaac Lab itself graphs on a
GPU when actuators run outside the graph, as the project's Python linkage actuators do) is
captured on its first call and replayed after; it is recaptured whenever Isaac Lab invalidates its
own graph (scene setup, a full reset). The replay launches the same kernels on the same buffers in
the same order, so the physics is the same to the bit: ``tests/sim/test_cpu_graph.py`` compares a
5 s rollout with and without it. ``env.sim.physics.use_cuda_graph=false`` turns it off (the flag
Isaac Lab reads for the GPU graph); on a GPU the class changes nothing.
"""

from __future__ import annotations

import warp as wp
from isaaclab.physics import PhysicsManager
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager


class NewtonCpuGraphMJWarpManager(NewtonMJWarpManager):
    """:class:`NewtonMJWarpManager` that replays the physics step as a Warp graph on the CPU too.

    The name starts with ``Newton``: Isaac Lab picks the asset backends (``isaaclab_newton``) from
    the physics manager's class name.
    """

    #: The captured physics step on the CPU; ``None`` until the first step after an invalidation.
    _cpu_graph: wp.Graph | None = None

    @classmethod
    def cpu_graph_active(cls) -> bool:
        """Whether physics steps replay a CPU graph (the device is the CPU and the graph flag is on)."""
        cfg, device = PhysicsManager._cfg, PhysicsManager._device
        return cfg is not None and device is not None and "cuda" not in device and bool(cfg.use_cuda_graph)

    @classmethod
    def _simulate_physics_only(cls) -> None:
        if not cls.cpu_graph_active():
            super()._simulate_physics_only()
            return
        if NewtonCpuGraphMJWarpManager._cpu_graph is None:
            # A CPU capture records the launches without running them: replay right after.
            with wp.ScopedCapture(device=PhysicsManager._device) as capture:
                super()._simulate_physics_only()
            NewtonCpuGraphMJWarpManager._cpu_graph = capture.graph
        wp.capture_launch(NewtonCpuGraphMJWarpManager._cpu_graph)

    @classmethod
    def _invalidate_graph(cls) -> None:
        NewtonCpuGraphMJWarpManager._cpu_graph = None
        super()._invalidate_graph()

    @classmethod
    def clear(cls) -> None:
        NewtonCpuGraphMJWarpManager._cpu_graph = None
        super().clear()

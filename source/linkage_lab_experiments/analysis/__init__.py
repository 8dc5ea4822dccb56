"""analysis: experiments, benchmarks and reports on the models (no Isaac Lab).

The S3N fidelity benchmark against the closed-chain oracle (:mod:`~linkage_lab_experiments.analysis.fidelity`,
:mod:`~linkage_lab_experiments.analysis.oracle`,
:mod:`~linkage_lab_experiments.analysis.identify`), the shared leg drive loop
(:mod:`~linkage_lab_experiments.analysis.leg_run`) and the ankle design report, its plots and its timing
(:mod:`~linkage_lab.kinematics.ankle_report`, :mod:`~linkage_lab.evaluation.ankle_plots`,
:mod:`~linkage_lab_experiments.analysis.ankle_bench`). The pure math they run lives in ``kinematics/`` and
``dynamics/``; a robot's own data comes from the registry (:mod:`linkage_lab.robots.registry`).
"""

from __future__ import annotations

from linkage_lab.robots.registry import MissingCapability, get_robot, robots_with


def pick_robot(capability: str, robot: str | None = None) -> str:
    """The robot an experiment runs on: ``robot`` if given, else the one registered robot with ``capability``.

    Args:
        capability: A :class:`~linkage_lab.robots.registry.RobotSpec` field or ``extras`` key, e.g. ``leg_body``.
        robot: An explicit choice (checked to have ``capability``); ``None``: pick the only one.

    Raises:
        MissingCapability: ``robot`` lacks ``capability``.
        ValueError: ``robot`` is ``None`` and no robot, or more than one, has ``capability``.
    """

    candidates = robots_with(capability)
    if robot is not None:
        get_robot(robot)  # raises UnknownRobot with the registered names
        if robot not in candidates:
            raise MissingCapability(f"robot {robot!r} provides no {capability!r}; robots that do: {candidates}")
        return robot
    if len(candidates) != 1:
        found = ", ".join(candidates) or "none"
        raise ValueError(f"pick a robot: the robots providing {capability!r} are {found}")
    return candidates[0]

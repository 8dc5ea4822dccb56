"""The robot side a closed-chain run drives: the bundle's robot, its ``sim2sim_io`` factory and its options."""

from __future__ import annotations

from typing import Any

from linkage_lab.robots.registry import MissingCapability, UnknownRobot, get_robot
from linkage_lab.sim2sim.bundle import Bundle, BundleError


def resolve_robot(bundle: Bundle) -> tuple[Any, Any]:
    """The bundle's robot spec and its ``sim2sim_io`` factory.

    Raises:
        BundleError: The robot is unknown, has no closed-chain model, or no sim2sim robot side.
    """

    try:
        spec = get_robot(bundle.robot)
        spec.require("closed_chain")
        factory = spec.extra("sim2sim_io")
    except (UnknownRobot, MissingCapability) as exc:
        raise BundleError(f"bundle {bundle.path}: {exc}") from None
    if tuple(spec.joint_names) != bundle.joint_names:
        raise BundleError(f"bundle {bundle.path}: its joint_names are not robot {spec.name!r}'s policy joint order")
    return spec, factory


def check_io_options(factory: Any, io_options: dict[str, Any], robot: str) -> None:
    """Refuse options the robot side's ``factory(bundle, chain, **options)`` does not take, listing the ones it does
    (its ``options`` attribute, else its signature).

    Raises:
        BundleError: An unknown option.
    """
    import inspect

    known = getattr(factory, "options", None)  # a lazy wrapper (``**options``) names its target's options
    if known is None:
        parameters = list(inspect.signature(factory).parameters.values())[2:]
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return
        known = [p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(io_options) - set(known))
    if unknown:
        raise BundleError(
            f"unknown --io-option {', '.join(unknown)} for {robot}'s robot side; "
            f"it takes: {', '.join(known) if known else 'no options'}"
        )

"""Entry point of the ``linkage-lab`` console script: one sub-command per module.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` to a callable taking the parsed namespace (and the unparsed trailing tokens, for the
commands that accept hydra overrides). Modules import heavy dependencies (torch, Isaac Lab)
inside their functions, so ``linkage-lab --help`` stays fast.
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import signal
import sys
from importlib.metadata import entry_points

#: Command modules under ``linkage_lab.cli``, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "demo",
    "assets",
    "train",
    "ankle",
    "marvin",
    "evaluate",
    "export",
    "sprint",
    "sim2sim",
    "deploy",
    "plot",
    "ship",
)


#: Entry point group of commands other packages add: each names a module with ``register(subparsers)``.
COMMAND_GROUP = "linkage_lab.commands"

#: Commands that build Isaac Lab simulations (and so start Warp).
SIMULATION_COMMANDS = frozenset({"demo", "train", "bench", "eval", "export", "sprint", "ship"})


class CliError(RuntimeError):
    """An error the user caused (bad input, missing file); printed without a traceback."""


#: Error types a user causes, by module, that print as one line wherever below a command they are
#: raised (the command may not catch them all). Only modules already imported are looked at, so
#: this adds no import to the CLI's start.
USER_ERRORS = {
    "linkage_lab.runtime": ("OverrideError", "DeviceError"),
    "linkage_lab.tasks.registry": ("UnknownTaskError",),
    "linkage_lab.evaluation.policies": ("PolicyLoadError",),
    "linkage_lab.outputs": ("OutputDirError",),
    "linkage_lab.export.bundle": ("DeployModuleUnavailable",),
    "linkage_lab.config": ("ConfigError",),
    "linkage_lab.training.trainer": ("TrainingConfigError",),
    "linkage_lab.training.resume": ("ResumeError",),
    "linkage_lab.checkpoints": ("CheckpointError",),
    "linkage_lab.runs": ("RunBusyError",),
    "linkage_lab.sim2sim.bundle": ("BundleError",),
}


def user_error_types() -> tuple[type[BaseException], ...]:
    """The :data:`USER_ERRORS` types of the modules imported so far, plus :class:`CliError`."""
    found: list[type[BaseException]] = [CliError]
    for module_name, names in USER_ERRORS.items():
        module = sys.modules.get(module_name)
        found += [getattr(module, name) for name in names if module is not None and hasattr(module, name)]
    return tuple(found)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available sub-command."""
    parser = argparse.ArgumentParser(
        prog="linkage-lab",
        description="Train, evaluate and export legged-robot policies for parallel-linkage robots.",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the frameworks' output (Isaac Lab's manager tables, rsl-rl's iteration blocks, warnings) "
        "here instead of logs/framework.log; also LINKAGE_LAB_VERBOSE=1",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"linkage_lab.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"linkage_lab.cli.{name}":
                continue
            raise
        module.register(subparsers)
    # Commands of other packages (the experiments' bench and s3n), found by entry point, never imported here.
    for entry in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        entry.load().register(subparsers)
    return parser


def enable_stack_dumps() -> None:
    """For a command that looks stuck: ``kill -USR1 <pid>`` prints every thread's Python stack.

    The stacks go to file descriptor 2 (the framework log while framework output goes there); the command
    carries on. Nothing happens where the platform has no SIGUSR1.
    """
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=2, all_threads=True)  # fd 2, whatever sys.stderr is


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from linkage_lab.console import init_warp_quietly, log_python_warnings, set_verbose

    if args.verbose:
        set_verbose(True)
    log_python_warnings()
    if args.command in SIMULATION_COMMANDS:
        init_warp_quietly()  # some imports start Warp, which prints a CUDA notice on a CPU machine
    enable_stack_dumps()
    accepts_overrides = getattr(args, "accepts_overrides", False)
    if extra and not accepts_overrides:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        result = args.func(args, extra) if accepts_overrides else args.func(args)
    except Exception as exc:
        if not isinstance(exc, user_error_types()):
            raise
        print(f"linkage-lab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())

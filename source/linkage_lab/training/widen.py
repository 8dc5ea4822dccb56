"""A checkpoint whose networks read a wider observation and act exactly as before.

A task that gains an observation term (a sensor, or the policy's own earlier outputs) need not train its
policy again from scratch: the first layer of the actor and of the critic gets zero weights for the new
inputs, so the widened networks compute the same action and value on every observation, whatever the new
inputs hold, and fine-tuning starts from the old policy. The observation normalisers get statistics for
the new inputs (those of an existing block of the same kind, e.g. ``last_action``'s for an older action,
or mean 0 and variance 1), and Adam's moments zeros for the new weights.

    python -m linkage_lab.training.widen IN.pt OUT.pt --at 64 --width 16 --stats-like 44:60
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any

import torch

from linkage_lab.checkpoints import TRAINING_KEYS, CheckpointError, load_checkpoint
from linkage_lab.io import write_bytes_atomic

#: The networks of an rsl-rl checkpoint that read the observation.
NETWORKS = ("actor_state_dict", "critic_state_dict")
FIRST_LAYER = "mlp.0.weight"
NORMALISER = "obs_normalizer"


def _insert_columns(tensor: torch.Tensor, at: int, columns: torch.Tensor) -> torch.Tensor:
    return torch.cat([tensor[..., :at], columns.to(tensor.dtype), tensor[..., at:]], dim=-1)


def widen_observation(state: dict[str, Any], at: int, width: int, stats_like: slice | None = None) -> dict[str, Any]:
    """``state`` with ``width`` new observation inputs inserted before index ``at`` (a new dict; ``state`` kept).

    Args:
        state: An rsl-rl checkpoint (MLP actor and critic with a first layer ``mlp.0.weight``).
        at: Where the new inputs go in the old observation (its length: appended).
        width: How many inputs are added.
        stats_like: Old inputs whose normaliser statistics the new ones start from (``width`` of them);
            ``None``: mean 0, variance 1.

    Raises:
        CheckpointError: No network reads an observation, ``at`` or ``stats_like`` lies outside it, the
            networks disagree on its size, or the optimiser's moments cannot be matched to the first layers.
    """
    if width < 1:
        raise CheckpointError(f"width must be at least 1, got {width}")
    widened = dict(state)
    shapes = []
    for key in NETWORKS:
        network = state.get(key)
        if not isinstance(network, dict) or FIRST_LAYER not in network:
            continue
        weight = network[FIRST_LAYER]
        size = weight.shape[1]
        if not 0 <= at <= size:
            raise CheckpointError(f"{key}: --at {at} lies outside its observation of {size}")
        network = dict(network)
        network[FIRST_LAYER] = _insert_columns(weight, at, torch.zeros(weight.shape[0], width))
        for stat, fill in (("_mean", 0.0), ("_var", 1.0), ("_std", 1.0)):
            name = f"{NORMALISER}.{stat}"
            if name not in network:
                continue
            old = network[name]
            if stats_like is None:
                columns = torch.full((*old.shape[:-1], width), fill)
            else:
                columns = old[..., stats_like]
                if columns.shape[-1] != width:
                    raise CheckpointError(
                        f"--stats-like selects {columns.shape[-1]} of {size} inputs; {width} are added"
                    )
            network[name] = _insert_columns(old, at, columns)
        widened[key] = network
        shapes.append(tuple(weight.shape))
    if not shapes:
        raise CheckpointError(f"the checkpoint has no network with a first layer {FIRST_LAYER!r}")
    if len({shape[1] for shape in shapes}) > 1:
        raise CheckpointError(f"the networks read observations of different sizes {shapes}: widen them one by one")
    optimizer = state.get("optimizer_state_dict")
    if isinstance(optimizer, dict) and "state" in optimizer:
        moments = dict(optimizer["state"])
        matched = 0
        for index, entry in moments.items():
            if tuple(entry.get("exp_avg", torch.empty(0)).shape) in shapes:
                entry = dict(entry)
                for name in ("exp_avg", "exp_avg_sq"):
                    entry[name] = _insert_columns(entry[name], at, torch.zeros(entry[name].shape[0], width))
                moments[index] = entry
                matched += 1
        if matched != len(shapes):
            raise CheckpointError(
                f"the optimiser holds {matched} moment(s) of a first layer's shape, expected {len(shapes)}"
            )
        widened["optimizer_state_dict"] = {**optimizer, "state": moments}
    return widened


def _slice(text: str) -> slice:
    start, sep, stop = text.partition(":")
    try:
        if not sep:
            raise ValueError(text)
        return slice(int(start), int(stop))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--stats-like takes START:STOP (e.g. 44:60), got {text!r}") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m linkage_lab.training.widen", description=__doc__.split("\n")[0])
    parser.add_argument("checkpoint", type=Path, help="the rsl-rl checkpoint to widen")
    parser.add_argument("out", type=Path, help="where the widened checkpoint is written (atomically)")
    parser.add_argument("--at", type=int, required=True, help="index of the first new input (old size: append)")
    parser.add_argument("--width", type=int, required=True, help="number of new inputs")
    parser.add_argument("--stats-like", type=_slice, default=None, help="old inputs START:STOP to copy statistics of")
    args = parser.parse_args(argv)
    if args.out.resolve() == args.checkpoint.resolve():
        parser.error("OUT must differ from the checkpoint: the original is kept")
    try:
        state = widen_observation(load_checkpoint(args.checkpoint, TRAINING_KEYS), args.at, args.width, args.stats_like)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_bytes_atomic(args.out, buffer.getvalue())
    size = state["actor_state_dict"][FIRST_LAYER].shape[1]
    print(f"{args.out}: observation {size} wide ({args.width} new at {args.at})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""rsl-rl checkpoints: loaded as data only (never unpickled code), saved atomically, restored into a runner.

A checkpoint is what rsl-rl's ``runner.save`` writes: ``actor_state_dict`` and ``critic_state_dict``
(network weights and observation normalisers), ``optimizer_state_dict``, ``iter`` (the last finished
iteration) and ``infos``. The project's saves put the logger's running totals in ``infos``
(``tot_timesteps``, ``tot_time``) so a resumed run's TensorBoard curves continue where they stopped.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import torch

from linkage_lab.io import write_bytes_atomic

#: Keys a checkpoint must hold to continue training from it (``actor_state_dict`` alone suffices to act).
TRAINING_KEYS = ("actor_state_dict", "critic_state_dict", "optimizer_state_dict", "iter")


class CheckpointError(RuntimeError):
    """A checkpoint is missing, unreadable, unsafe to load, or does not fit the runner."""


def load_checkpoint(path: Path, require: tuple[str, ...] = ("actor_state_dict",)) -> dict[str, Any]:
    """Load a checkpoint on the CPU as data: tensors, numbers, strings and plain containers only.

    ``torch.load(weights_only=True)`` refuses any other pickled object, so a crafted file cannot run
    code while it is read (a full unpickle calls whatever ``__reduce__`` names).

    Args:
        path: The ``.pt`` file.
        require: Keys the checkpoint must hold (:data:`TRAINING_KEYS` to train on from it).

    Raises:
        CheckpointError: Missing; unreadable (truncated, corrupt, not a PyTorch file); holding other
            objects; or not an rsl-rl checkpoint (a required key is missing).
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if is_onnx_file(path):
        raise CheckpointError(
            f"{path} is an ONNX file (an exported policy), not an rsl-rl checkpoint: evaluate it with "
            "eval --onnx FILE, or run its bundle on the closed chain with sim2sim --bundle DIR"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only load failed" in str(exc).lower():
            raise CheckpointError(
                f"checkpoint {path} holds Python objects besides tensors and plain data; it is not loaded, "
                "since reading them could run arbitrary code (not an rsl-rl checkpoint, or a tampered one)"
            ) from exc
        raise CheckpointError(f"checkpoint {path} is not a readable PyTorch checkpoint: {exc}") from exc
    except Exception as exc:  # torch raises zip, EOF and runtime errors for damaged files
        raise CheckpointError(
            f"checkpoint {path} is not a readable PyTorch checkpoint (truncated or corrupt?): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(state, dict) or "actor_state_dict" not in state:
        raise CheckpointError(f"checkpoint {path} is not an rsl-rl checkpoint (no 'actor_state_dict')")
    missing = [key for key in require if key not in state]
    if missing:
        raise CheckpointError(
            f"checkpoint {path} cannot be trained on: it lacks {', '.join(missing)} (an exported or trimmed policy?)"
        )
    return state


def is_onnx_file(path: Path) -> bool:
    """Whether ``path`` holds an ONNX model: a ``.onnx`` name, or (not a zip, as torch's checkpoints are)
    protobuf bytes that parse as an ONNX model with a graph."""
    path = Path(path)
    if path.suffix.lower() == ".onnx":
        return True
    with path.open("rb") as handle:
        if handle.read(4) == b"PK\x03\x04":
            return False
    try:
        import onnx

        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - protobuf raises its own decode errors: not an ONNX file
        return False
    return len(model.graph.node) > 0


def save_checkpoint(runner: Any, path: Path) -> Path:
    """Write the runner's state as ``runner.save`` does, atomically, with the logger's totals in ``infos``.

    Readers (evaluation of a running training, a resume after a crash) see the previous file or the
    whole new one, never a half-written checkpoint.
    """
    state = runner.alg.save()
    state["iter"] = runner.current_learning_iteration
    logger = getattr(runner, "logger", None)
    state["infos"] = {
        "tot_timesteps": int(getattr(logger, "tot_timesteps", 0)),
        "tot_time": float(getattr(logger, "tot_time", 0.0)),
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_bytes_atomic(path, buffer.getvalue())
    if logger is not None:
        logger.save_model(str(path), runner.current_learning_iteration)  # uploads for wandb/neptune writers
    return Path(path)


def restore_runner(runner: Any, state: dict[str, Any], load_optimizer: bool = True) -> int:
    """Load a checkpoint's state into a runner (what ``runner.load`` does, without reading the file).

    Networks with their observation normalisers, the optimiser (with its learning rate) when
    ``load_optimizer``, the iteration counter (``runner.current_learning_iteration = iter``, as rsl-rl
    sets it) and the logger's totals.

    Returns:
        The checkpoint's iteration.

    Raises:
        CheckpointError: The checkpoint's networks or optimiser do not fit the runner's.
    """
    load_cfg = None if load_optimizer else {"actor": True, "critic": True, "optimizer": False, "iteration": True}
    try:
        runner.alg.load(state, load_cfg, True)
    except (RuntimeError, KeyError, ValueError) as exc:
        # torch lists every mismatched tensor over many lines: the first line says what does not fit.
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise CheckpointError(f"checkpoint does not fit the task's networks: {first}") from exc
    iteration = int(state.get("iter", 0))
    runner.current_learning_iteration = iteration
    infos = state.get("infos") if isinstance(state.get("infos"), dict) else {}
    logger = getattr(runner, "logger", None)
    if logger is not None:
        logger.tot_timesteps = int(infos.get("tot_timesteps", logger.tot_timesteps))
        logger.tot_time = float(infos.get("tot_time", logger.tot_time))
    return iteration

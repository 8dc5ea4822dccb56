"""``linkage-lab export``: a checkpoint as a deployable bundle (ONNX actor, metadata, robot-side files).

The bundle is written into a temp folder beside the target and renamed at the end, so a failed
export leaves nothing behind. Robot-side files come from the robot's ``RobotSpec.deploy`` (the
robot registry): e.g. an ankle bridge of ONNX graphs, or a deploy config for the robot's wire mapping.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

POLICY_FILE = "policy.onnx"
METADATA_FILE = "metadata.json"
README_FILE = "README.md"
#: The command name in the bundle folder's manifest (:mod:`linkage_lab.outputs`).
EXPORT_COMMAND = "export"
#: Largest |onnxruntime − torch| accepted on random observations before the export fails.
PARITY_TOLERANCE = 1e-4


class DeployModuleUnavailable(ImportError):
    """A robot-side deploy module the bundle needs cannot be imported."""


@dataclass(frozen=True)
class BundleResult:
    """What :func:`export_bundle` wrote.

    Attributes:
        out_dir: The bundle folder.
        files: Bundle-relative paths written.
        metadata: The metadata (as in ``metadata.json`` and the ONNX ``metadata_props``).
        parity_max_abs: Max |onnxruntime − torch inference policy| on random observations.
    """

    out_dir: Path
    files: list[str]
    metadata: dict[str, Any]
    parity_max_abs: float


def export_bundle(
    task: str,
    checkpoint: Path,
    out_dir: Path,
    overrides: Sequence[str] = (),
    device: str | None = None,
    with_deploy: bool = True,
    parity_samples: int = 64,
    force: bool = False,
) -> BundleResult:
    """Export ``checkpoint`` of ``task`` as a bundle in ``out_dir`` (replacing it as a whole).

    Args:
        task: Registered task id.
        checkpoint: rsl-rl checkpoint file.
        out_dir: Bundle folder.
        overrides: Hydra overrides (must match the training's, e.g. ``presets=box``).
        device: Device for the env; ``None`` picks one.
        with_deploy: Add the robot-side deploy files (Marvin's ankle bridge, the Limit's deploy config).
        parity_samples: Random observations for the onnxruntime-vs-torch check.
        force: Replace a previous export bundle in ``out_dir`` (never a folder export did not write).

    Raises:
        PolicyLoadError: The checkpoint is missing, unreadable or of another task, or its run was
            trained with another ankle geometry preset than ``overrides`` select.
        DeployModuleUnavailable: ``with_deploy`` and the robot's deploy module is not importable.
        OutputDirError: ``out_dir`` must not be written (checked before the env is built).
        RuntimeError: The ONNX actor does not match the torch actor.
    """
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.evaluation.policies import load_runner, read_checkpoint
    from linkage_lab.export.extensions import (
        bundle_extensions,
        extension_metadata,
        extension_readme,
        write_extension_files,
    )
    from linkage_lab.export.metadata import check_ankle_preset, policy_metadata
    from linkage_lab.outputs import check_output_dir, staged_directory
    from linkage_lab.runtime import make_env

    checkpoint = Path(checkpoint)
    read_checkpoint(checkpoint, task)  # fail on a bad file or output folder before building the env
    check_output_dir(out_dir, EXPORT_COMMAND, force)
    with make_env(task, num_envs=1, device=device, overrides=overrides) as (env, agent_cfg):
        wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
        runner = load_runner(checkpoint, wrapped, agent_cfg, task)
        metadata = policy_metadata(wrapped, agent_cfg, task, str(checkpoint.resolve()))
        metadata["overrides"] = list(overrides)
        # The ankle bridge follows this config's geometry, which must be the one the policy learned on.
        check_ankle_preset(checkpoint, metadata)
        deploy = robot_deploy(metadata) if with_deploy else None
        if deploy is not None:
            metadata.update(deploy.metadata)
        # Action terms with robot-side parts of their own (a residual policy's gait prior).
        extensions = bundle_extensions(env)
        metadata.update(extension_metadata(extensions))
        with staged_directory(out_dir, EXPORT_COMMAND, force) as staging:
            write_policy_onnx(runner, staging / POLICY_FILE, metadata)
            parity = onnx_parity(runner, staging / POLICY_FILE, metadata["observation_size"], parity_samples)
            if parity > PARITY_TOLERANCE:
                raise RuntimeError(f"ONNX actor differs from the torch actor by {parity:.3g} (> {PARITY_TOLERANCE})")
            files = {POLICY_FILE: "the actor with its observation normaliser (ONNX, opset 18)"}
            if deploy is not None:
                files.update(deploy.write(staging, metadata))
            files.update(write_extension_files(extensions, staging))
            if with_deploy:
                files.update(write_wire_messages(metadata["robot"], staging))
            files[METADATA_FILE] = "the metadata of policy.onnx as plain JSON"
            files[README_FILE] = "this file"
            readme = (deploy.readme if deploy is not None else "") + extension_readme(extensions)
            _write_text_files(staging, metadata, files, parity, readme)
    return BundleResult(Path(out_dir), list(files), metadata, parity)


def write_wire_messages(robot: str, folder: Path) -> dict[str, str]:
    """The ROS 2 ``.msg`` files of the robot's deploy wire (``RobotSpec.extras["deploy_wire"]``), under ``msg/``;
    nothing for a robot without one."""
    from linkage_lab.robots.registry import get_robot

    spec = get_robot(robot)
    if "deploy_wire" not in spec.extras or spec.closed_chain is None:
        return {}
    from linkage_lab.deploy.idl import MessageTypes

    wire = spec.extra("deploy_wire")(spec.closed_chain())
    types = MessageTypes([wire.msg_dir])
    files = {}
    for message in dict.fromkeys(m for root in wire.messages() for m in types.closure(root)):
        package, name = message.split("/")
        relative = f"msg/{package}/msg/{name}.msg"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(types.path(message).read_text())
        files[relative] = f"ROS 2 message of the deploy wire ({message})"
    return files


def write_policy_onnx(runner: Any, path: Path, metadata: dict[str, Any]) -> Path:
    """The runner's ONNX actor (normaliser included) with ``metadata`` as ``metadata_props``, checked.

    Each top-level metadata key becomes one property whose value is its JSON string.
    """
    import tempfile

    import onnx

    from linkage_lab.console import framework_output
    from linkage_lab.io import write_bytes_atomic

    # torch's ONNX exporter warns about its own internals: the framework log's, not the console's.
    with tempfile.TemporaryDirectory() as scratch, framework_output("export policy.onnx"):
        runner.export_policy_to_onnx(path=scratch, filename=POLICY_FILE)
        model = onnx.load(str(Path(scratch) / POLICY_FILE))
    onnx.helper.set_model_props(model, {key: json.dumps(value) for key, value in metadata.items()})
    model.doc_string = f"linkage-lab policy for {metadata['task']}: obs -> actions (see metadata_props)"
    onnx.checker.check_model(model, full_check=True)
    return write_bytes_atomic(path, model.SerializeToString())


def onnx_parity(runner: Any, path: Path, obs_dim: int, samples: int = 64, seed: int = 0) -> float:
    """Max |onnxruntime − torch| over ``samples`` random observations, one at a time (batch 1).

    The torch side is the runner's inference policy (deterministic actor, normaliser included).
    """
    import onnxruntime as ort
    from tensordict import TensorDict

    model = runner.get_inference_policy(device="cpu")
    groups = list(model.obs_groups)
    if len(groups) != 1:
        raise ValueError(f"parity check supports one actor observation group, got {groups}")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    generator = torch.Generator().manual_seed(seed)
    obs = torch.randn(samples, obs_dim, generator=generator)
    worst = 0.0
    with torch.inference_mode():
        reference = model(TensorDict({groups[0]: obs}, batch_size=[samples])).cpu()
    for k in range(samples):
        (actions,) = session.run(None, {"obs": obs[k : k + 1].numpy()})
        worst = max(worst, float((torch.from_numpy(actions) - reference[k : k + 1]).abs().max()))
    runner.get_inference_policy(device=runner.device)
    return worst


def robot_deploy(metadata: dict[str, Any]) -> Any:
    """The robot's robot-side files for a bundle (``RobotSpec.deploy``): a
    :class:`~linkage_lab.robots.registry.DeployFiles` (writer, metadata it adds, README section).

    Args:
        metadata: The policy's metadata (:func:`~linkage_lab.export.metadata.policy_metadata`).

    Raises:
        MissingCapability: The robot has no robot-side files registered (export with ``--skip-deploy``).
        DeployModuleUnavailable: The robot's deploy module cannot be imported.
    """
    from linkage_lab.robots.registry import MissingCapability, get_robot

    spec = get_robot(metadata["robot"])
    try:
        make = spec.require("deploy")
    except MissingCapability as exc:
        raise MissingCapability(f"{exc}; export without robot-side files with --skip-deploy") from None
    try:
        return make(metadata)
    except ImportError as exc:
        raise DeployModuleUnavailable(
            f"the bundle's robot-side files for {spec.name!r} need a module that cannot be imported ({exc}); "
            "export without robot-side files with --skip-deploy"
        ) from exc


def _write_text_files(
    out_dir: Path, metadata: dict[str, Any], files: dict[str, str], parity: float, extra_readme: str = ""
) -> None:
    from linkage_lab.export.readme import bundle_readme
    from linkage_lab.io import write_json_atomic, write_text_atomic

    write_json_atomic(out_dir / METADATA_FILE, metadata)
    text = bundle_readme(metadata, files, parity)
    write_text_atomic(out_dir / README_FILE, text + extra_readme)

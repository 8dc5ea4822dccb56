"""``linkage-lab export``: a checkpoint as a deployable bundle (ONNX actor, metadata, robot-side files).

The bundle is written into a temp folder beside the target and renamed at the end, so a failed
export leaves nothing behind. Robot-side files come from :mod:`linkage_lab.deploy`: Marvin's ankle
bridge graphs, the Limit's deploy config.
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
ANKLE_BRIDGE_DIR = "ankle_bridge"
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
        deploy_writer, deploy_metadata = _deploy_writer(metadata) if with_deploy else (None, {})
        metadata.update(deploy_metadata)
        # Action terms with robot-side parts of their own (a residual policy's gait prior).
        extensions = bundle_extensions(env)
        metadata.update(extension_metadata(extensions))
        with staged_directory(out_dir, EXPORT_COMMAND, force) as staging:
            write_policy_onnx(runner, staging / POLICY_FILE, metadata)
            parity = onnx_parity(runner, staging / POLICY_FILE, metadata["observation_size"], parity_samples)
            if parity > PARITY_TOLERANCE:
                raise RuntimeError(f"ONNX actor differs from the torch actor by {parity:.3g} (> {PARITY_TOLERANCE})")
            files = {POLICY_FILE: "the actor with its observation normaliser (ONNX, opset 18)"}
            if deploy_writer is not None:
                files.update(deploy_writer(staging, metadata))
            files.update(write_extension_files(extensions, staging))
            files[METADATA_FILE] = "the metadata of policy.onnx as plain JSON"
            files[README_FILE] = "this file"
            _write_text_files(staging, metadata, files, parity, extension_readme(extensions))
    return BundleResult(Path(out_dir), list(files), metadata, parity)


def write_policy_onnx(runner: Any, path: Path, metadata: dict[str, Any]) -> Path:
    """The runner's ONNX actor (normaliser included) with ``metadata`` as ``metadata_props``, checked.

    Each top-level metadata key becomes one property whose value is its JSON string.
    """
    import tempfile

    import onnx

    from linkage_lab.io import write_bytes_atomic

    with tempfile.TemporaryDirectory() as scratch:
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


def _deploy_writer(metadata: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The robot's deploy-file writer ``(out_dir, metadata) -> {relative path: description}`` (or
    ``None``) and the metadata it adds.

    Args:
        metadata: The policy's metadata (:func:`~linkage_lab.export.metadata.policy_metadata`): its
            ``robot``, and for Marvin the ``ankle_preset`` the policy was trained with.

    Raises:
        DeployModuleUnavailable: The robot's deploy module cannot be imported.
    """
    robot = metadata.get("robot")
    if robot == "marvin":
        try:
            from linkage_lab.deploy import ankle_bridge
            from linkage_lab.deploy.ankle_bridge import export_ankle_bridge
        except ImportError as exc:
            raise DeployModuleUnavailable(_missing("linkage_lab.deploy.ankle_bridge.export_ankle_bridge", exc)) from exc

        # The geometry the policy was trained with: another preset's IK would send the cranks elsewhere.
        preset = metadata["ankle_preset"]

        def write_bridge(out_dir: Path, metadata: dict[str, Any]) -> dict[str, str]:
            paths = export_ankle_bridge(out_dir / ANKLE_BRIDGE_DIR, preset=preset)
            return {str(p.relative_to(out_dir)): _bridge_description(p.name) for p in paths}

        # How the ankle's joint-space PD reaches the motors on the robot (ankle_linkage.md §8):
        # never by copying joint kp/kd to the motors.
        extra = {
            "ankle_bridge": f"{ANKLE_BRIDGE_DIR}/ankle_<side>_<function>.onnx",
            "ankle_gain_mode": getattr(ankle_bridge, "EXPORT_GAIN_MODE", None),
        }
        return write_bridge, extra
    if robot == "limit":
        try:
            from linkage_lab.deploy.limit import write_deploy_config
        except ImportError as exc:
            raise DeployModuleUnavailable(_missing("linkage_lab.deploy.limit.write_deploy_config", exc)) from exc

        def write_limit(out_dir: Path, metadata: dict[str, Any]) -> dict[str, str]:
            path = write_deploy_config(out_dir, metadata)
            return {
                str(Path(path).relative_to(out_dir)): "the Limit deploy module's config: JointTarget/JointSample "
                "mapping by canonical joint id (robots.md §1.4)"
            }

        return write_limit, {}
    return None, {}


def _missing(name: str, exc: ImportError) -> str:
    return (
        f"the bundle needs {name}, which cannot be imported ({exc}); export without robot-side files with --skip-deploy"
    )


def _bridge_description(filename: str) -> str:
    side, function = filename.removesuffix(".onnx").split("_")[1:3]
    text = {
        "ik": "pose targets (pitch, roll) → crank targets, with reachability",
        "fk": "crank angles (+ warm start) → pose (pitch, roll)",
        "velocity": "crank rates + pose → pitch/roll rates",
        "gains": "joint kp/kd + pose → coupled 2×2 motor-space gains",
        "torque": "joint torque + pose → motor torques (this export's mode: host PD, motor kp = kd = 0)",
    }.get(function, function)
    return f"{side} ankle bridge, {text}"


def _write_text_files(
    out_dir: Path, metadata: dict[str, Any], files: dict[str, str], parity: float, extra_readme: str = ""
) -> None:
    from linkage_lab.export.readme import bundle_readme
    from linkage_lab.io import write_json_atomic, write_text_atomic

    write_json_atomic(out_dir / METADATA_FILE, metadata)
    text = bundle_readme(metadata, files, parity)
    if any(path.startswith(ANKLE_BRIDGE_DIR) for path in files):
        try:
            from linkage_lab.deploy.ankle_bridge import BRIDGE_DOC

            text += "\n## Ankle bridge\n\n" + BRIDGE_DOC
        except ImportError:
            pass
    write_text_atomic(out_dir / README_FILE, text + extra_readme)

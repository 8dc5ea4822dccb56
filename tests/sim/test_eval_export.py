"""Evaluation and export end to end: one 2-iteration training per robot, then eval, export and the errors."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

pytestmark = pytest.mark.sim

LIMIT = "LinkageLab-Velocity-Flat-Limit"
MARVIN = "LinkageLab-Velocity-Flat-Marvin"
#: Tiny training: 4 envs, 2 iterations of 16 steps.
TRAIN_OVERRIDES = ["env.scene.num_envs=4", "agent.max_iterations=2", "agent.num_steps_per_env=16"]


#: Marvin with the ``calf`` ankle geometry (docs/design/ankle_linkage.md §7), selected through the ankle
#: transmissions; with the motor-armature model, whose native armature does not depend on the geometry.
CALF_OVERRIDES = [
    "presets=motor_armature",
    'env.scene.robot.actuators.ankles.transmissions=["marvin_ankle_left:calf","marvin_ankle_right:calf"]',
]


def _train(task: str, root, overrides=()):
    from linkage_lab.training import train

    result = train(task, [*TRAIN_OVERRIDES, *overrides], device="cpu", log_root=root / "logs")
    assert result.checkpoint is not None
    return result.checkpoint


@pytest.fixture(scope="module")
def limit_checkpoint(tmp_path_factory):
    return _train(LIMIT, tmp_path_factory.mktemp("limit"))


@pytest.fixture(scope="module")
def marvin_checkpoint(tmp_path_factory):
    return _train(MARVIN, tmp_path_factory.mktemp("marvin"))


@pytest.fixture(scope="module")
def limit_bundle(limit_checkpoint, tmp_path_factory):
    from linkage_lab.export.bundle import export_bundle

    return export_bundle(LIMIT, limit_checkpoint, tmp_path_factory.mktemp("export") / "limit", device="cpu")


#: Episodes of 1 s: every env ends at least one within the tests' step caps, so the episode statistics are checked.
SHORT_EPISODES = ("env.episode_length_s=1.0",)


def _check_report(report: dict, requested: int, action_delay_steps: tuple[int, int]) -> None:
    assert report["episodes"] >= requested and report["stopped_by"] == "episodes", report["stopped_by"]
    assert report["steps"] <= report["max_steps"]
    for key in ("return", "episode_length", "fall_rate", "tracking", "joint_torques", "policy"):
        assert key in report
    assert report["fall_rate"] == pytest.approx(report["falls"] / report["episodes"])
    assert report["falls"] + report["timeouts"] == report["episodes"]
    assert report["episode_length"]["mean_s"] == pytest.approx(
        report["episode_length"]["mean_steps"] * report["control_period_s"]
    )
    env_steps = report["steps"] * report["num_envs"]
    tracking = report["tracking"]
    # Every env-step is a tracking sample except the ones that ended an episode (one per episode).
    assert tracking["samples"] == env_steps - report["episodes"]
    stops = report["joint_stops"]  # sampled at the same steps as tracking; one row per policy joint
    assert stops["samples"] == tracking["samples"]
    assert [row["name"] for row in stops["joints"]] == [row["name"] for row in report["joint_torques"]["joints"]]
    assert all(0.0 <= row["share_on_stop"] <= 1.0 for row in stops["joints"])
    # The delay of the joint targets the run used, in physics steps and seconds.
    latency = report["latency"]
    steps = list(action_delay_steps)
    physics_dt = report["control_period_s"] / report["joint_torques"]["physics_steps_per_control_step"]
    assert latency["action_delay_range_steps"] == steps
    assert latency["action_delay_range_s"] == pytest.approx([s * physics_dt for s in steps])
    # RMS of the error vector ≥ RMS of its x part ≥ |mean x error| (no simulated robot tracks exactly).
    mean_x_error = abs(tracking["mean_commanded_forward_speed_mps"] - tracking["mean_forward_speed_mps"])
    assert tracking["lin_vel_xy_rms_mps"] >= mean_x_error - 1e-9 and tracking["lin_vel_xy_rms_mps"] > 0.0
    torques = report["joint_torques"]
    decimation = torques["physics_steps_per_control_step"]
    assert torques["sampling"] == "every physics substep" and decimation > 1
    assert torques["physics_steps"] == report["steps"] * decimation
    assert torques["samples"] == env_steps * decimation
    assert torques["joints"], "no joint torque rows"
    for row in torques["joints"]:
        # Gravity loads every joint; a motor group's applied torque never exceeds its effort limit.
        assert row["limit_nm"] > 0 and row["peak_nm"] >= row["rms_nm"] > 0.0, row
        if row["limit_source"] == "DCMotor effort limit":
            assert row["peak_nm"] <= row["limit_nm"] * (1 + 1e-5), row


def _onnx_actions(path, obs):
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return torch.cat([torch.from_numpy(session.run(None, {"obs": row[None].numpy()})[0]) for row in obs])


def _reference_actor(checkpoint, obs):
    """The actor from the checkpoint's weights by hand: normaliser (x − μ) / (σ + 0.01), ELU MLP, mean."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)["actor_state_dict"]
    x = (obs - state["obs_normalizer._mean"]) / (state["obs_normalizer._std"] + 0.01)
    layers = sorted({int(k.split(".")[1]) for k in state if k.startswith("mlp.")})
    for k, index in enumerate(layers):
        x = x @ state[f"mlp.{index}.weight"].T + state[f"mlp.{index}.bias"]
        if k < len(layers) - 1:
            x = torch.nn.functional.elu(x)
    return x


def _check_bundle(bundle, checkpoint) -> dict:
    import onnx

    policy = bundle.out_dir / "policy.onnx"
    model = onnx.load(str(policy))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["obs"] and [o.name for o in model.graph.output] == ["actions"]
    props = {p.key: json.loads(p.value) for p in model.metadata_props}
    metadata = json.loads((bundle.out_dir / "metadata.json").read_text())
    assert props == metadata == json.loads(json.dumps(bundle.metadata))
    assert (bundle.out_dir / "README.md").read_text().startswith("# Policy bundle")
    assert bundle.parity_max_abs <= 1e-5
    obs = torch.randn(16, metadata["observation_size"], generator=torch.Generator().manual_seed(1)) * 2.0
    assert (_onnx_actions(policy, obs) - _reference_actor(checkpoint, obs)).abs().max() <= 1e-5
    assert sum(t["size"] for t in metadata["observation_layout"]) == metadata["observation_size"]
    assert not [p for p in bundle.out_dir.parent.iterdir() if p.name.startswith(".")], "staging left behind"
    return metadata


def test_limit_export_bundle_in_canonical_joint_order(limit_bundle, limit_checkpoint):
    from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_NAMES

    metadata = _check_bundle(limit_bundle, limit_checkpoint)
    assert metadata["robot"] == "limit" and metadata["task"] == LIMIT
    assert metadata["joint_names"] == list(JOINT_NAMES) and metadata["joint_ids"] == list(JOINT_IDS)
    joint_terms = [t for t in metadata["observation_layout"] if "joint_names" in t]
    assert joint_terms and all(t["joint_names"] == list(JOINT_NAMES) for t in joint_terms)
    assert metadata["control_period_s"] == pytest.approx(0.02)
    assert len(metadata["kp"]) == len(metadata["default_joint_pos"]) == 12
    # The robot's gains from its config, not env 0's randomised draw (the task scales them by 0.8-1.2 per env).
    from linkage_lab.robots.limit.config import limit_config

    control = limit_config().control
    nominal_kp = [
        control.ankle_stiffness_nm_per_rad if n.endswith("ankle") else control.stiffness_nm_per_rad for n in JOINT_NAMES
    ]
    nominal_kd = [
        control.ankle_damping_nms_per_rad if n.endswith("ankle") else control.damping_nms_per_rad for n in JOINT_NAMES
    ]
    assert metadata["kp"] == pytest.approx(nominal_kp) and metadata["kd"] == pytest.approx(nominal_kd)
    deploy = json.loads((limit_bundle.out_dir / "deploy.json").read_text())
    assert [j["id"] for j in deploy["joints"]] == list(JOINT_IDS)


def test_limit_eval_of_the_exported_onnx(limit_bundle, tmp_path):
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    request = EvalRequest(
        task=LIMIT,
        policy="onnx",
        onnx=limit_bundle.out_dir / "policy.onnx",
        episodes=2,
        num_envs=4,
        max_steps=60,
        overrides=SHORT_EPISODES,
        out_dir=tmp_path / "eval",
        device="cpu",
        progress=False,
    )
    out_dir, report = evaluate(request)
    assert json.loads((out_dir / "eval.json").read_text()) == json.loads(json.dumps(report))
    _check_report(report, 2, (0, 8))  # the Limit task trains with its targets 0-20 ms late (2.5 ms steps)
    assert report["policy"]["type"] == "onnx" and report["ankle_replay"] is None
    assert [row["name"] for row in report["joint_torques"]["joints"]] == limit_bundle.metadata["joint_names"]


def test_marvin_eval_replays_the_ankles(marvin_checkpoint, tmp_path):
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    request = EvalRequest(
        task=MARVIN,
        checkpoint=marvin_checkpoint,
        episodes=4,
        num_envs=4,
        max_steps=150,
        overrides=SHORT_EPISODES,
        out_dir=tmp_path / "eval",
        device="cpu",
        progress=False,
    )
    out_dir, report = evaluate(request)
    _check_report(report, 4, (0, 0))  # the plain Marvin task without
    replay = report["ankle_replay"]
    assert replay["motor"] == {"peak_nm": 60.0, "rated_nm": 20.0}
    assert set(replay["ankles"]) == {"left", "right"}
    overall = replay["overall"]
    decimation = replay["physics_steps_per_control_step"]
    assert replay["sampling"] == "every physics substep" and replay["physics_steps"] == report["steps"] * decimation
    assert overall["samples"] == report["steps"] * decimation * report["num_envs"]
    assert overall["fraction_outside"] == pytest.approx(overall["outside_samples"] / overall["samples"])
    assert overall["fraction_above_rated"] == pytest.approx(overall["above_rated_samples"] / overall["samples"])
    # A sample is outside exactly when some motor exceeds its peak: worst ratio > 1 iff any is outside.
    assert (overall["worst_ratio"] > 1.0) == (overall["outside_samples"] > 0)
    assert overall["above_rated_samples"] >= overall["outside_samples"]
    assert report["plots"] == ["ankle_motor_torque.png", "ankle_poses.png"]
    for name in report["plots"]:
        assert (out_dir / name).read_bytes()[:4] == b"\x89PNG"
    print("marvin replay:", json.dumps(replay["overall"], indent=1))


def test_marvin_export_bundle_with_the_ankle_bridge(marvin_checkpoint, tmp_path):
    from linkage_lab.export.bundle import export_bundle
    from linkage_lab.robots.marvin.articulation import JOINT_NAMES

    bundle = export_bundle(MARVIN, marvin_checkpoint, tmp_path / "marvin", device="cpu")
    metadata = _check_bundle(bundle, marvin_checkpoint)
    assert metadata["robot"] == "marvin" and metadata["joint_names"] == list(JOINT_NAMES)
    assert metadata["joint_ids"] is None and metadata["ankle_gain_mode"] == "host_torque"
    # The task's ankle transmissions name no preset: the default geometry, in the metadata and every graph.
    assert metadata["ankle_preset"] == "marvin"
    bridge = [f for f in bundle.files if f.startswith("ankle_bridge/")]
    assert bridge and all((bundle.out_dir / f).is_file() for f in bridge)


def test_marvin_export_bridge_follows_the_trained_ankle_preset(tmp_path):
    """A policy trained on the ``calf`` geometry gets the ``calf`` bridge; exported with the default
    geometry's config it is refused before anything is written."""
    import onnx
    import onnxruntime as ort

    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.export.bundle import export_bundle
    from linkage_lab.kinematics import inverse_kinematics
    from linkage_lab.robots.ankles import load_ankle_geometry

    checkpoint = _train(MARVIN, tmp_path, CALF_OVERRIDES)
    bundle = export_bundle(MARVIN, checkpoint, tmp_path / "calf", overrides=CALF_OVERRIDES, device="cpu")
    assert bundle.metadata["ankle_preset"] == "calf"
    assert json.loads((bundle.out_dir / "metadata.json").read_text())["ankle_preset"] == "calf"
    poses = torch.tensor([[0.3, 0.1], [-0.4, -0.2], [0.0, 0.25]], dtype=torch.float64)
    for side in ("left", "right"):
        path = bundle.out_dir / "ankle_bridge" / f"ankle_{side}_ik.onnx"
        assert {p.key: p.value for p in onnx.load(path).metadata_props}["linkage_lab.preset"] == "calf"
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        crank = torch.from_numpy(session.run(None, {"joint_pos_target": poses.float().numpy()})[0]).double()
        calf = inverse_kinematics(load_ankle_geometry("calf", side=side), poses)
        assert (crank - calf).abs().max() < 1e-5
        assert (crank - inverse_kinematics(load_ankle_geometry("marvin", side=side), poses)).abs().max() > 0.01
    with pytest.raises(PolicyLoadError, match="trained with ankle geometry preset 'calf'"):
        export_bundle(MARVIN, checkpoint, tmp_path / "default", overrides=["presets=motor_armature"], device="cpu")
    assert not (tmp_path / "default").exists()


def test_bad_checkpoints_and_task_ids_fail_clearly_and_write_nothing(
    limit_checkpoint, marvin_checkpoint, tmp_path, capsys
):
    from linkage_lab.cli.main import main

    garbage = tmp_path / "garbage" / "model_3.pt"
    garbage.parent.mkdir()
    garbage.write_bytes(b"\x80\x02this is not a checkpoint" * 10)
    foreign_run = tmp_path / "marvin_run"
    shutil.copytree(marvin_checkpoint.parent, foreign_run, ignore=shutil.ignore_patterns("events.*"))
    bare = tmp_path / "bare" / "model_1.pt"  # the Marvin model without its run.json
    bare.parent.mkdir()
    shutil.copy(marvin_checkpoint, bare)
    cases = [
        (["eval", "--task", LIMIT, "--checkpoint", str(garbage)], "not a readable PyTorch checkpoint"),
        (["export", "--task", LIMIT, "--checkpoint", str(garbage)], "not a readable PyTorch checkpoint"),
        (
            ["eval", "--task", LIMIT, "--checkpoint", str(foreign_run)],
            f"trained on task {MARVIN}, not {LIMIT}",
        ),
        (
            ["export", "--task", LIMIT, "--checkpoint", str(foreign_run)],
            f"trained on task {MARVIN}, not {LIMIT}",
        ),
        (["eval", "--task", LIMIT, "--checkpoint", str(tmp_path / "none.pt")], "does not exist"),
        (["eval", "--task", "LinkageLab-Nope", "--checkpoint", "latest"], "Linkage Lab tasks are: "),
        (
            ["export", "--task", "LinkageLab-Nope", "--checkpoint", "latest"],
            "unknown task id 'LinkageLab-Nope'",
        ),
        (
            ["eval", "--task", LIMIT, "--checkpoint", str(bare), "--num-envs", "1", "--no-progress"],
            "trained with 60 observations and 16 actions",
        ),
    ]
    for k, (argv, message) in enumerate(cases):
        out = tmp_path / f"out{k}"
        flag = [] if "--out" in argv else ["--out", str(out)]
        assert main([*argv, *flag]) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        if "LinkageLab-Nope" in argv:
            assert LIMIT in err and MARVIN in err
        assert not out.exists(), argv
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(f".out{k}")], "staging left behind"


class _ZeroPolicy:
    description = {"type": "zero"}

    def __init__(self, num_envs: int, num_actions: int):
        self.shape = (num_envs, num_actions)

    def __call__(self, obs):
        return torch.zeros(self.shape)

    def reset(self, dones):
        pass


def test_probe_and_eval_sample_every_physics_substep():
    """Tiny (2 Marvin envs, a few steps): ``decimation`` samples per control step, the first at the
    pose the step began with, the last what the articulation shows after it; eval counts them all."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.evaluation.evaluate import EvalRequest, run_evaluation
    from linkage_lab.evaluation.probe import substep_probe
    from linkage_lab.evaluation.robot_info import joint_index, linkage_ankles, policy_joint_names, robot_of
    from linkage_lab.runtime import make_env

    with make_env(MARVIN, num_envs=2, device="cpu") as (env, agent_cfg):
        wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
        decimation = env.unwrapped.cfg.decimation
        robot = robot_of(env)
        names = policy_joint_names(env)
        columns = joint_index(robot, names)
        ankle_columns = joint_index(robot, [j for pair in linkage_ankles(env).values() for j in pair])
        generator = torch.Generator().manual_seed(0)
        probe, replay = substep_probe(env, columns)
        assert replay is not None and probe.ankle_names == ["left", "right"]
        try:
            for _ in range(3):
                before = robot.data.joint_pos.torch[:, ankle_columns].clone()
                actions = torch.rand(2, len(names), generator=generator) - 0.5  # a new target every step
                _, _, dones, _ = wrapped.step(actions)
                samples = probe.drain()
                assert samples.substeps == decimation > 1
                assert samples.ankle_torque_nm.shape == (decimation, 2, 2, 2)
                assert torch.equal(samples.ankle_pose_rad[0].reshape(2, 4), before)
                assert not torch.equal(samples.ankle_pose_rad[0], samples.ankle_pose_rad[-1])
                assert not torch.equal(samples.ankle_torque_nm[0], samples.ankle_torque_nm[-1])
                if not dones.any():
                    assert torch.equal(samples.applied_torque_nm[-1], robot.data.applied_torque.torch[:, columns])
                    assert torch.equal(samples.commanded_torque_nm[-1], robot.data.computed_torque.torch[:, columns])
            assert probe.physics_steps == 3 * decimation
        finally:
            probe.close()
        assert "step" not in vars(env.unwrapped.sim)
        request = EvalRequest(task=MARVIN, episodes=1, num_envs=2, max_steps=5, progress=False)
        report, _ = run_evaluation(wrapped, _ZeroPolicy(2, len(names)), agent_cfg, request)
    assert report["steps"] == 5
    torques, replay = report["joint_torques"], report["ankle_replay"]
    assert torques["physics_steps"] == replay["physics_steps"] == 5 * decimation
    assert torques["samples"] == replay["overall"]["samples"] == 5 * decimation * 2


def test_an_evaluation_repeats_exactly_with_its_seed(tmp_path):
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    def run(name: str, seed: int) -> dict:
        request = EvalRequest(
            task="LinkageLab-Velocity-Flat-Limit",
            policy="scripted",
            episodes=1,
            num_envs=2,
            max_steps=60,
            out_dir=tmp_path / name,
            device="cpu",
            progress=False,
            seed=seed,
        )
        return evaluate(request)[1]

    first, again, other = run("a", 3), run("b", 3), run("c", 4)
    assert first["seed"] == again["seed"] == 3
    assert first["tracking"] == again["tracking"]
    assert other["tracking"] != first["tracking"], "the seed does not reach the commands and pushes"

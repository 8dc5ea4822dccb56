"""The deploy runtime over loopback DDS in lockstep: a walk on the simulated robot, and the faults that stop it.

Each test has its own DDS domain. The fault tests drive the runtime with a scripted robot (a thread on the same
wire) that injects one fault and records every target it receives; the walk and the killed-robot tests run the
closed-chain robot node as its own process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from test_sim2sim_runner import limit_bundle  # noqa: F401 (fixture)

from linkage_lab.deploy.runtime import EXIT_DONE, EXIT_FAULT, DeployRuntime, Refused, RunSettings

pytestmark = pytest.mark.sim

PERIOD_S = 0.02
#: How long the runtime may take to decide and send a tick (s): a policy step is 2-8 ms on this machine.
PROCESSING_S = 0.015


def _settings(domain: int, **changes) -> RunSettings:
    base = {"domain": domain, "lockstep": True, "keyboard": False, "verbose": False, "damping_hold_s": 0.3, "wait_s": 5}
    return RunSettings(**{**base, **changes})


class ScriptedRobot(threading.Thread):
    """The Limit's wire answered in lockstep with the standing pose; at sample ``fault_at`` one fault."""

    def __init__(self, domain: int, fault: str | None = None, fault_at: int = 20, info: dict | None = None, twist=None):
        super().__init__(daemon=True)
        from linkage_lab.deploy.transport import Bus
        from linkage_lab.robots.registry import get_robot

        chain = get_robot("limit").closed_chain()
        self.wire = get_robot("limit").extra("deploy_wire")(chain)
        self.bus = Bus(self.wire, domain)
        self.ids = self.wire.ids(chain.motor_names)
        self.pose = chain.motor_position(chain.default_joint_pos)
        self.fault, self.fault_at = fault, fault_at
        self.targets: list[tuple[int, float, np.ndarray]] = []  # (seq, received time, records)
        self.published: list[tuple[int, float]] = []
        settings = {"robot": "limit", "control_period_s": PERIOD_S, "ids": self.ids, "names": tuple(chain.motor_names)}
        settings.update(info or {})
        self._info = self.bus.info_writer()  # kept: a latched message lives as long as its writer
        self._info.write(
            self.bus.info_message(settings["robot"], settings["control_period_s"], settings["ids"], settings["names"])
        )
        self._samples, self._imu = self.bus.samples_writer(), self.bus.imu_writer()
        self._targets = self.bus.targets_reader()
        self._estop = self.bus.estop_writer()
        self._cmd_vel, self.twist = self.bus.cmd_vel_writer(), twist
        self.stop = threading.Event()

    def publish(self, seq: int) -> None:
        n = len(self.ids)
        values = np.column_stack(
            [self.pose, np.zeros(n), np.zeros(n), np.zeros(n), np.full(n, 25.0)] + [np.zeros(n)] * 2
        )
        ids = self.ids.copy()
        if self.fault == "nan" and seq >= self.fault_at:
            values[1, 0] = np.nan
        if self.fault == "wrong_id" and seq >= self.fault_at:
            ids[-1] = 13
        self._samples.write(self.bus.sample_message(seq, ids, values))
        self._imu.write(self.bus.imu_message(np.zeros(3), np.array([0.0, 0.0, 9.81]), np.array([1.0, 0, 0, 0])))
        if self.twist is not None:  # an operator's command stream
            vector = self.bus.types.get("geometry_msgs/Vector3")
            twist = self.bus.types.get("geometry_msgs/Twist")
            self._cmd_vel.write(
                twist(linear=vector(self.twist[0], self.twist[1], 0.0), angular=vector(0, 0, self.twist[2]))
            )
        self.published.append((seq, time.monotonic()))

    def run(self) -> None:
        seq, last = 0, time.monotonic()
        self.publish(seq)
        while not self.stop.is_set():
            for message in self._targets.take(N=16):
                if not hasattr(message, "targets"):
                    continue
                records = np.array([[t.pos, t.vel, t.kp, t.kd, t.max_tq] for t in message.targets])
                self.targets.append((int(message.seq), time.monotonic(), records))
                if message.seq == seq:
                    seq += 1
                    if self.fault == "estop" and seq == self.fault_at:
                        self._estop.write(self.bus.types.get("std_msgs/Bool")(data=True))
                    if self.fault == "stale" and seq >= self.fault_at:
                        continue  # the robot goes silent
                    self.publish(seq)
                    last = time.monotonic()
            if not self.targets and time.monotonic() - last > 0.1:  # a runtime that joins late
                self.publish(seq)
                last = time.monotonic()
            time.sleep(2e-4)


@pytest.mark.parametrize(
    "domain, fault, reason",
    [
        (41, "nan", "non-finite sample for id 2"),
        (42, "wrong_id", "unknown id 13"),
        (43, "stale", "stale sample"),
        (44, "estop", "e-stop"),
    ],
)
def test_a_fault_sends_damping_from_the_next_target_on(limit_bundle, domain, fault, reason):  # noqa: F811
    robot = ScriptedRobot(domain, fault, fault_at=20)
    robot.start()
    try:
        result = DeployRuntime(limit_bundle, _settings(domain)).run()
    finally:
        robot.stop.set()
        robot.join(2)
    assert result.exit_code == EXIT_FAULT and reason in result.reason, result
    seqs = np.array([seq for seq, _, _ in robot.targets])
    kp = np.array([records[:, 2] for _, _, records in robot.targets])
    kd = np.array([records[:, 3] for _, _, records in robot.targets])
    damping = np.all(kp == 0.0, axis=1)
    assert damping.any(), "no damping target"
    first = int(np.argmax(damping))
    # Before: the soft start's targets, one per sample up to the fault; from the fault on: damping only (no
    # stiffness, each motor's own damping), never a policy target again.
    assert first >= robot.fault_at - 1 and np.all(kp[:first] > 0.0)
    assert np.all(damping[first:]) and np.all(kd[first:] > 0.0)
    if fault == "stale":
        last_sample = robot.published[-1][1]
        assert robot.targets[first][1] - last_sample <= 3 * PERIOD_S + PROCESSING_S
    else:  # the target answering the faulty sample (or the first sample after the e-stop) is damping
        assert seqs[first] == robot.fault_at


@pytest.mark.parametrize(
    "domain, info, problem",
    [
        (45, {"robot": "marvin"}, "the bundle is for robot 'limit'"),
        (46, {"control_period_s": 0.025}, "control period"),
        (47, {"names": ("fl_hip",) * 12}, "renamed"),
    ],
)
def test_a_bundle_for_another_robot_is_refused_before_any_target(limit_bundle, domain, info, problem):  # noqa: F811
    robot = ScriptedRobot(domain, info=info)
    robot.start()
    try:
        with pytest.raises(Refused, match=problem):
            DeployRuntime(limit_bundle, _settings(domain)).run()
        time.sleep(0.2)
    finally:
        robot.stop.set()
        robot.join(2)
    assert robot.targets == []


def test_the_policy_takes_its_command_from_cmd_vel(limit_bundle, tmp_path):  # noqa: F811
    from linkage_lab.deploy.recording import read_recording

    robot = ScriptedRobot(48, twist=(0.25, 0.0, -0.1))
    robot.start()
    try:
        settings = _settings(48, duration_s=0.2, command=(0.0, 0.0, 0.0), record=tmp_path / "run.mcap")
        result = DeployRuntime(limit_bundle, settings).run()
    finally:
        robot.stop.set()
        robot.join(2)
    assert result.exit_code == EXIT_DONE and result.policy_ticks == 10, result
    observations = [m["values"] for topic, _, m in read_recording(tmp_path / "run.mcap")[1] if topic == "/observation"]
    # The hand-made bundle's layout: base_lin_vel, base_ang_vel, projected_gravity (3 each), then the command.
    assert observations and all(v[9:12] == pytest.approx([0.25, 0.0, -0.1]) for v in observations)


def _robot_process(domain: int, log) -> subprocess.Popen:
    command = [sys.executable, "-m", "linkage_lab.cli.main", "deploy", "robot", "--robot", "limit", "--lockstep"]
    command += ["--domain", str(domain), "--log", str(log)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _shipped_limit_bundle():
    from linkage_lab.pretrained import PRETRAINED_DIR

    bundle = PRETRAINED_DIR / "LinkageLab-Velocity-Flat-Limit" / "bundle"
    assert (bundle / "metadata.json").is_file(), f"the shipped Limit policy has no bundle at {bundle}"
    return bundle


def test_the_shipped_limit_walks_through_the_runtime_as_in_sim2sim(tmp_path):
    from linkage_lab.deploy.report import report
    from linkage_lab.deploy.sim_robot import walk_summary
    from linkage_lab.sim2sim.runner import run_sim2sim

    bundle = _shipped_limit_bundle()
    process = _robot_process(51, tmp_path / "truth.json")
    try:
        settings = _settings(51, duration_s=4.0, command=(0.3, 0.0, 0.0), record=tmp_path / "run.mcap")
        result = DeployRuntime(bundle, settings).run()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
    assert result.exit_code == EXIT_DONE and result.policy_ticks == 200, result
    # The soft start is 2 s of robot time; the policy walks from 2 s to 6 s. Skip its first second (the start).
    walk = walk_summary(json.loads((tmp_path / "truth.json").read_text()), start_s=3.0, end_s=6.0)
    reference = run_sim2sim(bundle, (0.3, 0.0), duration_s=4.0)
    assert not walk["fell"] and reference["falls"] == 0
    # Tolerance: the runtime's robot starts from the soft start's pose, sim2sim's from rest; both on the estimator.
    assert walk["mean_forward_mps"] == pytest.approx(reference["tracking"]["mean_forward_speed_mps"], abs=0.05)
    table = report(tmp_path / "run.mcap")
    assert table["ticks"] == result.ticks and (tmp_path / "run.png").is_file()
    assert [s["state"] for s in table["states"]] == ["policy", "damping"]


def test_the_runtime_stops_within_three_periods_when_the_robot_dies(tmp_path):
    from linkage_lab.deploy.recording import read_recording

    bundle = _shipped_limit_bundle()
    process = _robot_process(52, tmp_path / "truth.json")
    killer = threading.Timer(4.0, lambda: os.kill(process.pid, signal.SIGKILL))
    killer.start()
    try:
        result = DeployRuntime(bundle, _settings(52, command=(0.3, 0.0, 0.0), record=tmp_path / "run.mcap")).run()
    finally:
        killer.cancel()
        process.kill()
        process.wait(20)
    assert result.exit_code == EXIT_FAULT and "stale sample" in result.reason, result
    _, messages = read_recording(tmp_path / "run.mcap")
    messages = list(messages)
    last_sample = max(t for topic, t, m in messages if topic == "/sample" and m["seq"] == max_seq(messages))
    damping = [(t, m) for topic, t, m in messages if topic == "/target" and m["state"] == "damping"]
    assert damping, "no damping target"
    assert 1e-9 * (damping[0][0] - last_sample) <= 3 * PERIOD_S + PROCESSING_S
    assert all(all(k == 0.0 for k in m["kp"]) for _, m in damping)


def max_seq(messages) -> int:
    return max(m["seq"] for topic, _, m in messages if topic == "/sample")

"""The deploy runtime's parts without a transport: .msg types, the per-motor records, the safety state machine."""

from __future__ import annotations

import numpy as np
import pytest
from test_sim2sim_runner import limit_bundle, marvin_bundle  # noqa: F401 (fixtures)

from linkage_lab.deploy.controller import DAMPING, POLICY, SOFT_START, WAIT, Controller, SafetyCfg
from linkage_lab.deploy.idl import MessageError, MessageTypes, dds_type_name, parse_msg
from linkage_lab.deploy.wire import WireError, coupling_shift, decode_samples, records_from_command
from linkage_lab.sim2sim.sensors import Sensors

pytestmark = pytest.mark.unit


def _limit_types() -> MessageTypes:
    from linkage_lab.robots.limit.wire import MSG_DIR

    return MessageTypes([MSG_DIR])


def test_limit_records_carry_the_robot_notes_fields_and_ros2_type_names():
    types = _limit_types()
    # docs/design/robots.md §1.4: JointTarget id, pos, vel, kp, kd, max_tq;
    # JointSample joint_id, pos_rad, vel_rads, tq_nnm,
    # cur_a, temp_c, flags, fault_code.
    assert [f.name for f in types.fields("limit_msgs/JointTarget")] == ["id", "pos", "vel", "kp", "kd", "max_tq"]
    assert [f.name for f in types.fields("limit_msgs/JointSample")] == [
        "joint_id",
        "pos_rad",
        "vel_rads",
        "tq_nnm",
        "cur_a",
        "temp_c",
        "flags",
        "fault_code",
    ]
    assert dds_type_name("limit_msgs/JointTarget") == "limit_msgs::msg::dds_::JointTarget_"
    array, record = types.get("limit_msgs/JointSampleArray"), types.get("limit_msgs/JointSample")
    message = array(seq=7, samples=[record(joint_id=3, pos_rad=0.5, vel_rads=-1.25, flags=4)])
    back = array.deserialize(message.serialize())
    assert back.seq == 7 and back.samples[0].joint_id == 3 and back.samples[0].vel_rads == -1.25
    imu = types.get("sensor_msgs/Imu")()
    assert imu.orientation.w == 1.0 and len(imu.orientation_covariance) == 9  # ROS 2's defaults


def test_a_msg_line_that_is_not_a_field_is_refused():
    with pytest.raises(MessageError, match="line 2"):
        parse_msg("float32 x\nint32 LIMIT=5\n", "pkg")
    with pytest.raises(MessageError, match="no nope_msgs/msg/Thing.msg"):
        MessageTypes().get("nope_msgs/Thing")


def test_folded_per_motor_records_give_the_coupled_torque_at_the_sample():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 4))
    kp, kd = a @ a.T + 4 * np.eye(4), 0.1 * (a @ a.T + np.eye(4))  # positive definite, coupled
    target, speed = rng.normal(size=4), rng.normal(size=4)
    pos, vel = rng.normal(size=4), rng.normal(size=4)
    records = records_from_command(target, speed, kp, kd, np.full(4, 100.0), pos, vel)
    per_motor = records[:, 2] * (records[:, 0] - pos) + records[:, 3] * (records[:, 1] - vel)
    np.testing.assert_allclose(per_motor, kp @ (target - pos) + kd @ (speed - vel), atol=1e-12)
    np.testing.assert_allclose(records[:, 2], np.diag(kp))
    assert np.all(coupling_shift(np.diag([0.0, 2.0]), np.ones(2)) == 0.0)  # no coupling, no shift


class _Record:
    def __init__(self, joint_id, pos=0.0, vel=0.0, tq=0.0):
        self.joint_id, self.pos_rad, self.vel_rads, self.tq_nnm = joint_id, pos, vel, tq
        self.cur_a, self.temp_c, self.flags, self.fault_code = 0.0, 25.0, 0, 0


def test_samples_decode_in_any_order_and_bad_ones_name_the_id():
    ids = np.array([1, 2, 3])
    rows = decode_samples([_Record(3, 0.3), _Record(1, 0.1), _Record(2, 0.2)], "joint_id", ids)
    np.testing.assert_allclose(rows[:, 0], [0.1, 0.2, 0.3])
    with pytest.raises(WireError, match="unknown id 9"):
        decode_samples([_Record(1), _Record(2), _Record(9)], "joint_id", ids)
    with pytest.raises(WireError, match="two samples for id 2"):
        decode_samples([_Record(1), _Record(2), _Record(2)], "joint_id", ids)
    with pytest.raises(WireError, match="no sample for id"):
        decode_samples([_Record(1), _Record(2)], "joint_id", ids)
    with pytest.raises(WireError, match="non-finite sample for id 2"):
        decode_samples([_Record(1), _Record(2, vel=float("nan")), _Record(3)], "joint_id", ids)


def _sensors(interface, joint_pos=None, chain=None) -> Sensors:
    from linkage_lab.deploy.interface import sensors_at_rest

    joint_pos = interface.default_joint_pos if joint_pos is None else joint_pos
    return sensors_at_rest(chain.motor_position(dict(zip(chain.joint_names, joint_pos))))


@pytest.fixture
def limit_controller(limit_bundle):  # noqa: F811
    from linkage_lab.deploy.interface import load_robot_side
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sim2sim.bundle import load_bundle

    io, interface = load_robot_side(load_bundle(limit_bundle))
    return Controller(io, interface, SafetyCfg()), get_robot("limit").closed_chain()


def test_the_soft_start_ramps_from_the_measured_pose_at_reduced_gains_then_hands_over(limit_controller):
    controller, chain = limit_controller
    interface = controller.interface
    start_pose = interface.default_joint_pos + 0.05
    command = np.zeros(3)
    assert controller.tick(0.0, None, 0.0, command).state == WAIT  # nothing sent before the first sample
    first = controller.tick(0.0, _sensors(interface, start_pose, chain), 0.0, command)
    assert first.state == SOFT_START
    # At t = 0: targets at the measured pose (motor angles), 30 % of the bundle's own motor gains.
    np.testing.assert_allclose(first.records[:, 0], chain.motor_position(dict(zip(chain.joint_names, start_pose))))
    full = controller.tick(1.0, _sensors(interface, start_pose, chain), 0.0, command)
    np.testing.assert_allclose(first.records[:, 2], 0.3 * full.records[:, 2], rtol=1e-9)
    done = controller.tick(2.0, _sensors(interface, start_pose, chain), 0.0, command)
    assert done.reason == "soft start done" and controller.state == POLICY
    default_motor = chain.motor_position(dict(zip(chain.joint_names, interface.default_joint_pos)))
    # The Limit's coupled hip/knee gains fold the measured offset into the targets: compare the joint-space end.
    assert np.abs(done.records[[2, 5, 8, 11], 0] - default_motor[[2, 5, 8, 11]]).max() < 1e-9  # the ankles
    policy = controller.tick(2.02, _sensors(interface, None, chain), 0.0, command)
    assert policy.state == POLICY and policy.observation is not None and policy.action is not None


@pytest.mark.parametrize(
    "fault, reason",
    [
        ("stale", "stale sample"),
        ("range", "beyond its range"),
        ("imu", "non-finite IMU"),
    ],
)
def test_faults_send_damping_with_zero_stiffness_and_stay_there(limit_controller, fault, reason):
    controller, chain = limit_controller
    interface = controller.interface
    command = np.zeros(3)
    controller.tick(0.0, _sensors(interface, None, chain), 0.0, command)
    sensors, age = _sensors(interface, None, chain), 0.0
    if fault == "stale":
        age = 3 * interface.control_period_s
    elif fault == "range":
        pose = interface.default_joint_pos.copy()
        pose[0] = interface.joint_upper_rad[0] + 0.15
        sensors = _sensors(interface, pose, chain)
    else:
        sensors = Sensors(**{**sensors.__dict__, "gyro_b": np.array([0.0, np.nan, 0.0])})
    tick = controller.tick(0.1, sensors, age, command)
    assert tick.state == DAMPING and reason in tick.reason
    np.testing.assert_array_equal(tick.records[:, 2], 0.0)  # kp
    assert np.all(tick.records[:, 3] > 0.0)  # each motor's own kd
    later = controller.tick(0.2, _sensors(interface, None, chain), 0.0, command)
    assert later.state == DAMPING and np.all(later.records[:, 2] == 0.0)


def test_the_final_guard_clamps_targets_and_torques_and_refuses_non_finite(limit_controller):
    from linkage_lab.deploy.controller import Tick

    controller, _ = limit_controller
    interface = controller.interface
    n = len(interface.motor_names)
    wild = np.column_stack([np.full(n, 9.0), np.zeros(n), np.full(n, 5.0), np.full(n, -1.0), np.full(n, 99.0)])
    tick = controller.finish(Tick(POLICY, wild))
    np.testing.assert_allclose(tick.records[:, 0], interface.motor_upper_rad)
    np.testing.assert_allclose(tick.records[:, 4], interface.max_torque_nm)
    assert np.all(tick.records[:, 3] == 0.0) and tick.clamped > 0
    wild[3, 1] = np.inf
    assert controller.finish(Tick(POLICY, wild)).state == DAMPING


def test_the_limit_knee_motor_range_is_the_sum_of_hip_and_knee_ranges(limit_controller):
    controller, _ = limit_controller
    interface = controller.interface
    knee_motor = interface.motor_names.index("fl_knee_motor")
    # q_knee_motor = q_hip + q_knee over the box [-1.2, 1.2] x [-1.57, -0.25] (docs/design/robots.md §1.3).
    assert interface.motor_lower_rad[knee_motor] == pytest.approx(-2.77)
    assert interface.motor_upper_rad[knee_motor] == pytest.approx(0.95)


def test_marvin_runs_its_ankles_in_motor_pd_over_the_wire(marvin_bundle):  # noqa: F811
    from linkage_lab.deploy.interface import load_robot_side
    from linkage_lab.sim2sim.bundle import load_bundle

    io, interface = load_robot_side(load_bundle(marvin_bundle))
    assert io.ankle_mode == "motor_pd"  # a host loop at the physics rate cannot run over the wire
    assert sorted(interface.motor_ids.tolist()) == list(range(1, 17))
    with pytest.raises(ValueError, match="at least 2 s"):
        SafetyCfg(soft_start_s=1.0)


def test_a_recording_round_trips_and_a_corrupt_one_is_refused_clearly(tmp_path):
    from linkage_lab.deploy.recording import Recorder, read_recording
    from linkage_lab.deploy.report import format_table, report

    recorder = Recorder(tmp_path / "run.mcap", {"robot": "limit", "control_period_s": "0.02", "motor_names": "a"})
    assert not (tmp_path / "run.mcap").exists()  # written under a temporary name until closed
    for tick, period in enumerate([None, 0.020, 0.021, 0.019, 0.030]):
        recorder.write(
            "/timing",
            {
                "tick": tick,
                "period_s": period,
                "sample_age_s": 0.0,
                "latency_s": 0.002,
                "policy_s": 0.001,
                "deadline_missed": period == 0.030,
            },
        )
    recorder.write("/state", {"state": "policy", "reason": "soft start done"})
    recorder.close()
    metadata, messages = read_recording(tmp_path / "run.mcap")
    assert metadata["robot"] == "limit" and sum(1 for topic, _, _ in messages if topic == "/timing") == 5
    table = report(tmp_path / "run.mcap")
    assert table["period"]["count"] == 4 and table["period"]["max_ms"] == pytest.approx(30.0)
    assert table["deadline_misses"] == 1 and table["period"]["p50_ms"] == pytest.approx(20.5)
    assert "deadline misses: 1 of 5 ticks" in format_table(table) and (tmp_path / "run.png").is_file()
    (tmp_path / "bad.mcap").write_bytes(b"not an mcap file")
    with pytest.raises(ValueError, match="not a readable MCAP"):
        read_recording(tmp_path / "bad.mcap")
    with pytest.raises(ValueError, match="no recording"):
        read_recording(tmp_path / "missing.mcap")


@pytest.mark.parametrize("robot", ["limit", "marvin"])
def test_every_message_of_a_robot_wire_builds_and_every_motor_has_an_id(robot):
    from linkage_lab.robots.registry import get_robot

    spec = get_robot(robot)
    chain = spec.closed_chain()
    wire = spec.extra("deploy_wire")(chain)
    types = MessageTypes([wire.msg_dir])
    for message in wire.messages():
        for name in types.closure(message):
            assert types.get(name).__name__ == name.split("/")[1]
    ids = wire.ids(chain.motor_names)
    assert len(set(ids.tolist())) == len(chain.motor_names)
    target = types.fields(wire.target_record)
    assert [f.name for f in target] == ["id", "pos", "vel", "kp", "kd", "max_tq"]
    assert types.fields(wire.sample_record)[0].name == wire.sample_id_field

"""The linkage actuator's config and the drive's share their fields: one name, one default each."""

from __future__ import annotations

import dataclasses

import pytest

from linkage_lab.actuators.linkage_actuator import DRIVE_FIELDS, S3N_FIELDS, LinkageActuatorCfg, drive_cfg
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg

pytestmark = pytest.mark.unit

#: Drive fields the actuator does not carry: the joint gains come from Isaac Lab's stiffness/damping,
#: motor gains from ``control_space="motor"`` mapping them.
NOT_ON_THE_ACTUATOR = {"s3n", "joint_kp", "joint_kd", "motor_kp", "motor_kd"}


def _defaults(cls) -> dict:
    return {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


def test_every_drive_and_s3n_field_is_an_actuator_field_with_the_same_default():
    drive = {f.name for f in dataclasses.fields(LinkageDriveCfg)} - NOT_ON_THE_ACTUATOR
    assert set(DRIVE_FIELDS) == drive
    assert set(S3N_FIELDS) == {f.name for f in dataclasses.fields(S3NCfg)}
    actuator = LinkageActuatorCfg(coupled_joints=[["a", "b"]], transmissions=["identity"], motor_peak_torque_nm=[1, 2])
    for cls, names in ((LinkageDriveCfg, DRIVE_FIELDS), (S3NCfg, S3N_FIELDS)):
        defaults = _defaults(cls)
        for name in names:
            if name in defaults and name != "motor_peak_torque_nm":  # required on the actuator
                value = getattr(actuator, name)
                value = tuple(value) if isinstance(value, list) else value
                assert value == defaults[name], name


def test_drive_cfg_copies_every_shared_field():
    actuator = LinkageActuatorCfg(
        coupled_joints=[["a", "b"]],
        transmissions=["identity"],
        control_space="motor",
        motor_peak_torque_nm=[3.0, 4.0],
        motor_no_load_speed_rads=[5.0, 6.0],
        saturation_mode="scale",
        model="s3n_full",
        reflected_inertia_kgm2=[0.1, 0.2],
        motor_damping_nms_per_rad=[0.3, 0.4],
        mp_kgm2=[0.5, 0.06, 0.7],
        serial_link_kgm2=[0.8, 0.09, 1.0],
        command_delay_steps=2,
        accel_filter_time_constant_s=0.02,
        acceleration_estimate="torque_predicted",
        explicit_split="paper",
        reference_joint_pos_rad=[0.6, -1.2],
    )
    cfg = drive_cfg(actuator, [20.0, 21.0], [0.5, 0.6])
    assert (cfg.joint_kp, cfg.joint_kd) == ((20.0, 21.0), (0.5, 0.6))
    for name in DRIVE_FIELDS:
        expected = getattr(actuator, name)
        assert getattr(cfg, name) == (tuple(expected) if isinstance(expected, list) else expected), name
    for name in S3N_FIELDS:
        expected = getattr(actuator, name)
        assert getattr(cfg.s3n, name) == (tuple(expected) if isinstance(expected, list) else expected), name

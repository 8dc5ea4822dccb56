"""kinematics."""

from linkage_lab.kinematics.ankle_transmission import RSUAnkleTransmission, rsu_ankle_transmission
from linkage_lab.kinematics.rsu_ankle import (
    AnkleState,
    UnreachablePoseError,
    evaluate,
    ik_and_jacobian,
    inverse_kinematics,
    jacobian,
    transmission_quality,
)
from linkage_lab.kinematics.rsu_fk import ForwardKinematicsError, ForwardKinematicsResult, forward_kinematics
from linkage_lab.kinematics.rsu_geometry import (
    MotorSpec,
    RSUAnkleGeometry,
    available_motors,
    available_presets,
    load_ankle_geometry,
    motor_spec,
)

__all__ = [
    "AnkleState",
    "ForwardKinematicsError",
    "ForwardKinematicsResult",
    "MotorSpec",
    "RSUAnkleGeometry",
    "RSUAnkleTransmission",
    "UnreachablePoseError",
    "available_motors",
    "available_presets",
    "evaluate",
    "forward_kinematics",
    "ik_and_jacobian",
    "inverse_kinematics",
    "jacobian",
    "load_ankle_geometry",
    "rsu_ankle_transmission",
    "motor_spec",
    "transmission_quality",
]

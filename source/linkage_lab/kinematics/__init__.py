"""kinematics."""

from linkage_lab.kinematics.ankle_transmission import RSUAnkleTransmission
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
    "evaluate",
    "forward_kinematics",
    "ik_and_jacobian",
    "inverse_kinematics",
    "jacobian",
    "motor_spec",
    "transmission_quality",
]

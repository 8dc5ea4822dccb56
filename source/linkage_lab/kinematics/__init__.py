"""kinematics."""

"""Statics of a robot model: forward kinematics, centre of mass, static joint torques, stair check."""

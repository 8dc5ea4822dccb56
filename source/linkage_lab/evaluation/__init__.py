"""Policy evaluation: the bounded eval loop, policies, the ankle-torque replay (§9) and its plots."""

"""actuators."""

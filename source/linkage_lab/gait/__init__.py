"""gait."""

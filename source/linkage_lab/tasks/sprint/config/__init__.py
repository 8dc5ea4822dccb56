"""Per-robot sprint task configs."""

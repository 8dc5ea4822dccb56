"""Physics-backend extensions of the project's tasks (Isaac Lab's Newton managers, subclassed by config)."""

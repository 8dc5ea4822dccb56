"""Per-robot velocity task configs (only the deltas from the shared base)."""

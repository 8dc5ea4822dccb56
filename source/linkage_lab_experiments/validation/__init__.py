"""validation: cross-checks between the project's implementations (e.g. Isaac Lab vs the standalone math)."""

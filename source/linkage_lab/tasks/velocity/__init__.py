"""Velocity-tracking tasks; each robot folder under ``config/`` registers its task ids
(:func:`linkage_lab.tasks.registry.register_tasks`)."""

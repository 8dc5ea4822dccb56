"""Linkage Lab's Isaac Lab tasks: a family per folder (``velocity``, ``sprint``), a robot's task delta in each
family's ``config/<robot>/``.

Importing this package registers nothing: :func:`linkage_lab.tasks.registry.register_tasks` finds and registers
every task id (the task registry's lookups call it), and ``linkage_lab.tasks.registered``, Isaac Lab's entry
point, calls it on import.
"""

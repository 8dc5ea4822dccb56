"""The exit statuses of ``linkage-lab`` commands, for scripts and CI (documented in docs/guide/commands.md).

- 0: done; for a command with a verdict (``eval --sweep``, ``sim2sim --sweep``, ``ship``, ``demo``), "met".
- 2: a usage or user error (bad option, missing file, refused output folder), printed as one line.
- 3: done, but the verdict is "missed": a sweep below its acceptance targets, a demo policy that
  does not walk as commanded. The outputs are written as usual.
- 4: done and the report written, but a file asked for could not be made (``--video`` on a machine that
  cannot render); the line before says why.
- 5: ``deploy run`` stopped on a safety fault and went to damping; the line before says why.
- 130 / 143: stopped by Ctrl-C (SIGINT) / SIGTERM; training saved its last finished iteration.
"""

from __future__ import annotations

OK = 0
USAGE_ERROR = 2
MISSED = 3
INCOMPLETE = 4
FAULT = 5
INTERRUPTED = 130  # 128 + SIGINT
TERMINATED = 143  # 128 + SIGTERM


def verdict_exit(passed: bool | None) -> int:
    """:data:`MISSED` when a verdict says ``passed: false``; :data:`OK` when met or when there is no target."""
    return MISSED if passed is False else OK

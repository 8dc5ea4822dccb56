"""A run's TensorBoard events cut back to a checkpoint, so that continued curves never run past what was saved.

A run killed between two checkpoints (SIGKILL, a crash, power) leaves events for iterations its
newest checkpoint does not hold. Continuing from that checkpoint would log those iterations a
second time, and TensorBoard would draw both: the curves would lie. :func:`cut_events` drops every
event past the checkpoint's iteration from the run's event files (each rewritten atomically).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: rsl-rl's SummaryWriter files, directly in the run folder.
EVENTS_GLOB = "events.out.tfevents.*"


def cut_events(run_dir: str | Path, last_iteration: int) -> int:
    """Remove the events logged after ``last_iteration`` (their ``step``) from ``run_dir``'s event files.

    Events without a summary (the file version, graphs) are kept. A file that holds nothing past the
    iteration is left untouched.

    Returns:
        How many events were removed.
    """
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    removed = 0
    for path in sorted(Path(run_dir).glob(EVENTS_GLOB)):
        kept, dropped = [], 0
        for record in RawEventFileLoader(str(path)).Load():
            event = event_pb2.Event.FromString(record)
            if event.HasField("summary") and event.step > last_iteration:
                dropped += 1
            else:
                kept.append(record)
        if not dropped:
            continue
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                writer = RecordWriter(handle)
                for record in kept:
                    writer.write(record)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        removed += dropped
    return removed

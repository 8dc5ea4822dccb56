"""A deploy run's recording: MCAP (the ROS 2 bag container; Foxglove opens it), one JSON channel per stream.

Channels: ``/sample`` (motor angles, speeds, torques and the IMU as the runtime received them), ``/target`` (the
per-motor records it sent), ``/observation`` and ``/action`` (policy ticks), ``/state`` (each change of safety
state and its reason), ``/timing`` (per tick: the loop period, the age of the sample used, the sample → target
latency, the robot-side code's time, deadline misses). Log times are wall-clock nanoseconds. The file is written to
a temporary name and renamed when the run closes it, so a crash never leaves a half file under the asked name.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: The channels and the JSON schema each message follows (title + property names; values are numbers or lists).
CHANNELS = {
    "/sample": ["seq", "stamp_s", "motor_pos_rad", "motor_vel_rads", "motor_torque_nm", "gyro", "accelerometer"],
    "/target": ["seq", "state", "motor_ids", "pos", "vel", "kp", "kd", "max_tq"],
    "/observation": ["seq", "values"],
    "/action": ["seq", "values", "joint_pos_rad"],
    "/state": ["state", "reason"],
    "/timing": ["tick", "period_s", "sample_age_s", "latency_s", "policy_s", "deadline_missed"],
}


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [None if not np.isfinite(v) else float(v) for v in value.reshape(-1)]
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


class Recorder:
    """Writes one run's MCAP file.

    Args:
        path: The ``.mcap`` to write (created when the run ends; parents are made).
        metadata: Key/values stored in the file's ``deploy`` metadata record (bundle, robot, settings).
    """

    def __init__(self, path: str | Path, metadata: dict[str, str]):
        from mcap.writer import Writer

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        self._file = open(self._partial, "wb")  # noqa: SIM115 (closed in close())
        self._writer = Writer(self._file)
        self._writer.start(profile="", library="linkage-lab")
        self._writer.add_metadata("deploy", {k: str(v) for k, v in metadata.items()})
        self._channels = {}
        for topic, fields in CHANNELS.items():
            schema = {"title": topic.strip("/"), "type": "object", "properties": {f: {} for f in fields}}
            schema_id = self._writer.register_schema(topic.strip("/"), "jsonschema", json.dumps(schema).encode())
            self._channels[topic] = self._writer.register_channel(topic, "json", schema_id)
        self._sequence = 0

    def write(self, topic: str, message: dict[str, Any], log_time_ns: int | None = None) -> None:
        """One message on ``topic`` (one of :data:`CHANNELS`)."""
        now = time.time_ns() if log_time_ns is None else int(log_time_ns)
        data = json.dumps({k: _plain(v) for k, v in message.items()}).encode()
        self._sequence += 1
        self._writer.add_message(self._channels[topic], now, data, now, self._sequence)

    def close(self) -> Path:
        """Finish the file and move it to its name."""
        self._writer.finish()
        self._file.close()
        os.replace(self._partial, self.path)
        return self.path


def read_recording(path: str | Path) -> tuple[dict[str, str], Iterator[tuple[str, int, dict[str, Any]]]]:
    """A recording's ``deploy`` metadata and its messages as ``(topic, log_time_ns, message)``.

    Raises:
        ValueError: The file is missing or not an MCAP recording of a deploy run.
    """
    from mcap.reader import make_reader

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no recording at {path}")
    try:
        with open(path, "rb") as stream:
            reader = make_reader(stream)
            metadata = {}
            for record in reader.iter_metadata():
                if record.name == "deploy":
                    metadata = dict(record.metadata)
            messages = [
                (channel.topic, message.log_time, json.loads(message.data))
                for _, channel, message in reader.iter_messages()
            ]
    except Exception as exc:  # the mcap reader raises its own types on a truncated or foreign file
        raise ValueError(f"{path} is not a readable MCAP recording: {exc}") from None
    return metadata, iter(messages)

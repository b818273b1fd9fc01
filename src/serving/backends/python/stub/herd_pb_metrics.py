# pb_utils.MetricFamily and the Metric objects it makes, as Triton's python_backend defines them (custom
# metrics on /metrics). Arguments are checked here with Triton's messages; the values live in Herd,
# reached through the stub's metric channel (herd_stub_metrics.py), so every instance sees the same ones.
import json
import re
import sys

_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _pb():
    return sys.modules["triton_python_backend_utils"]


def _fail(message):
    raise _pb().TritonModelException(message)


def _channel():
    runtime = _pb()._runtime
    channel = getattr(runtime, "metrics", None)
    if channel is None:
        _fail("custom metrics are not available here (Triton offers them in initialize, execute and finalize)")
    return channel


def _text(value, what):
    """A str, or bytes as UTF-8 (pybind11 takes both where Triton's C++ takes a std::string)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    raise TypeError(f"{what} must be str or bytes, got {type(value).__name__}")


def _number(value):
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        raise TypeError(f"a metric value must be a number, got {type(value).__name__}")
    return float(value)


class MetricKind:
    """Triton's MetricKind enum (pb_utils.MetricFamily.COUNTER, GAUGE, HISTOGRAM)."""

    def __init__(self, name, value):
        self.name = name
        self.value = value

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        return isinstance(other, MetricKind) and other.value == self.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"<MetricKind.{self.name}: {self.value}>"


COUNTER = MetricKind("COUNTER", 0)
GAUGE = MetricKind("GAUGE", 1)
HISTOGRAM = MetricKind("HISTOGRAM", 2)
_KINDS = (COUNTER, GAUGE, HISTOGRAM)


class Metric:
    """One labelled series of a family; made by MetricFamily.Metric(labels, buckets)."""

    def __init__(self, metric_id, kind):
        self._id = metric_id
        self._kind = kind
        self._cleared = False

    def _check(self, action, unsupported):
        if self._cleared:
            _fail(f"Failed to {action}: Invalid metric operation as the corresponding 'MetricFamily' has been deleted. "
                  "The 'MetricFamily' object should be deleted AFTER its corresponding 'Metric' objects have been deleted.")
        if self._kind in unsupported:
            _fail(f"Failed to {action}: TRITONSERVER_METRIC_KIND_{self._kind.name} does not support {unsupported[self._kind]}")

    def increment(self, value):
        value = _number(value)
        self._check("increment metric value", {HISTOGRAM: "Increment"})
        if self._kind == COUNTER and not value >= 0:
            _fail("Failed to increment metric value: TRITONSERVER_METRIC_KIND_COUNTER can only be incremented "
                  "monotonically by non-negative values.")
        _channel().record({"op": "inc", "id": self._id, "value": value})

    def set(self, value):
        value = _number(value)
        self._check("set metric value", {COUNTER: "Set", HISTOGRAM: "Set"})
        _channel().record({"op": "set", "id": self._id, "value": value})

    def observe(self, value):
        value = _number(value)
        self._check("observe metric value", {COUNTER: "Observe", GAUGE: "Observe"})
        _channel().record({"op": "observe", "id": self._id, "value": value})

    def value(self):
        self._check("get metric value", {HISTOGRAM: "Value"})
        reply = _channel().ask({"op": "value", "id": self._id})
        if "error" in reply:
            _fail(f"Failed to get metric value: {reply['error']}")
        return float(reply.get("value", 0.0))


class MetricFamily:
    """A named family of metrics of one kind; Metric(labels) adds a series with those labels."""

    COUNTER = COUNTER
    GAUGE = GAUGE
    HISTOGRAM = HISTOGRAM

    def __init__(self, name, description, kind):
        self._id = None
        name = _text(name, "name")
        description = _text(description, "description")
        if kind not in _KINDS:
            raise TypeError("kind must be pb_utils.MetricFamily.COUNTER, GAUGE or HISTOGRAM")
        self._name = name
        self._kind = kind
        self._metrics = []
        channel = _channel()
        family_id = channel.new_id()
        reply = channel.ask({"op": "family", "id": family_id, "name": name, "description": description,
                             "kind": kind.name.lower()})
        if "error" in reply:
            _fail(f"Error when creating MetricFamily: {reply['error']}")
        self._id = family_id

    def Metric(self, labels=None, buckets=None):  # noqa: N802  (Triton's name)
        if labels is not None and not isinstance(labels, dict):
            _fail("Failed to create metric. Labels must be a dictionary.")
        if buckets is not None:
            if not isinstance(buckets, list):
                _fail("Failed to create metric. Buckets must be a list.")
            if self._kind != HISTOGRAM:
                _fail("Failed to create metric. Unexpected buckets found.")
            buckets = [_number(b) for b in buckets]
            if any(later <= earlier for earlier, later in zip(buckets, buckets[1:])):
                _fail("Error when creating Metric: Bucket Boundaries must be strictly sorted")
        elif self._kind == HISTOGRAM:
            _fail("Failed to create metric. Missing required buckets.")
        labels = dict(labels or {})
        for key, value in labels.items():
            if not isinstance(key, str) or not _LABEL_NAME.match(key) or key.startswith("__"):
                _fail(f"Error when creating Metric: Invalid label name {json.dumps(str(key))}")
            if not isinstance(value, str):
                _fail(f"Error when creating Metric: label '{key}' must have a string value")
        channel = _channel()
        metric = Metric(channel.new_id(), self._kind)
        op = {"op": "metric", "id": metric._id, "family": self._id, "labels": labels}
        if buckets is not None:
            op["buckets"] = buckets
        channel.record(op)
        self._metrics.append(metric)
        return metric

    def __del__(self):
        # As in Triton: deleting the family deletes its metrics (they refuse further operations).
        if self._id is None:
            return
        try:
            channel = _channel()
            for metric in self._metrics:
                metric._cleared = True
                channel.record({"op": "drop", "id": metric._id})
            channel.record({"op": "drop_family", "id": self._id})
        except Exception:  # noqa: BLE001  (the interpreter or the pipe is going away)
            pass

# The stub's side of custom metrics (pb_utils.MetricFamily / Metric): updates are queued and go to Herd
# as one "metrics" frame just ahead of the next frame the stub writes, so a response never overtakes the
# metric updates made while computing it, or within FLUSH_SECONDS when the stub writes nothing else.
# A question (creating a family, value()) goes at once with the queue and waits for "metrics_reply".
import threading
import time

FLUSH_SECONDS = 0.05
_MERGEABLE = ("inc", "set")


class _Ask:
    def __init__(self):
        self.done = threading.Event()
        self.header = None


class MetricChannel:
    def __init__(self, stub, wire):
        self._stub = stub
        self._wire = wire
        # Re-entrant: a MetricFamily's __del__ may run (garbage collection) while this thread holds it.
        self._lock = threading.RLock()
        self._pending = []
        self._asks = {}
        self._next_ask = 0
        self._next_id = 0
        self._wake = threading.Event()
        self._flusher = None

    def new_id(self):
        with self._lock:
            self._next_id += 1
            return self._next_id

    def has_pending(self):
        return bool(self._pending)

    def record(self, op):
        """Queues an update; increments and sets of one metric fold into one, observations into a list."""
        with self._lock:
            if not self._merge(op):
                if op["op"] == "observe":
                    op = {"op": "observe", "id": op["id"], "values": [op["value"]]}
                self._pending.append(op)
            if self._flusher is None:
                self._flusher = threading.Thread(target=self._flush_soon, daemon=True, name="herd-metrics")
                self._flusher.start()
        self._wake.set()

    def _merge(self, op):
        for previous in reversed(self._pending):
            if previous.get("id") != op["id"]:
                continue
            if op["op"] == "inc" and previous["op"] in _MERGEABLE:
                previous["value"] += op["value"]
                return True
            if op["op"] == "set" and previous["op"] in _MERGEABLE:
                previous["op"], previous["value"] = "set", op["value"]
                return True
            if op["op"] == "observe" and previous["op"] == "observe":
                previous["values"].append(op["value"])
                return True
            return False
        return False

    def flush(self):
        with self._lock:
            if not self._pending:
                return
            ops, self._pending = self._pending, []
            self._wire.write({"type": "metrics", "ops": ops})

    def ask(self, op):
        """Sends the queue and `op`, waits for Herd's answer to `op`: the reply header (with "error" when it failed)."""
        call = _Ask()
        with self._lock:
            self._next_ask += 1
            number = self._next_ask
            self._asks[number] = call
            ops, self._pending = self._pending + [op], []
            self._wire.write({"type": "metrics", "ops": ops, "ask": number})
        self._stub.pump(call.done.is_set)
        return call.header

    def on_reply(self, header):
        call = self._asks.pop(header.get("ask"), None)
        if call is not None:
            call.header = header
            call.done.set()

    def _flush_soon(self):
        while True:
            self._wake.wait()
            self._wake.clear()
            time.sleep(FLUSH_SECONDS)
            try:
                self.flush()
            except Exception:  # noqa: BLE001  (the pipe is gone: the stub is ending)
                return


class _FlushingWire:
    """The stub's wire, with queued metric updates written ahead of every frame."""

    def __init__(self, wire, channel):
        self._wire = wire
        self._channel = channel

    def write(self, *args, **kwargs):
        if self._channel.has_pending():
            self._channel.flush()
        return self._wire.write(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._wire, name)


def install_metric_channel(stub):
    """Gives the stub its channel (stub.metrics) and routes its writes through the flushing wire."""
    channel = MetricChannel(stub, stub.wire)
    stub.metrics = channel
    stub.wire = _FlushingWire(stub.wire, channel)
    return channel

# Herd's Python stub wire format: length-framed messages on two inherited file descriptors, so the
# model's own stdout/stderr never mix with the protocol. A frame is an 8-byte little-endian header
# (JSON length, body length), a UTF-8 JSON header, then raw tensor bytes the JSON points into. Large
# tensors may instead lie in a shared-memory segment Herd hands over as an inherited descriptor.
import json
import mmap
import os
import select
import struct
import threading
import time
import weakref

_HEADER = struct.Struct("<II")
_CHUNK = 1 << 16


class WireClosed(Exception):
    """Herd closed the pipe: the server is shutting down or the instance was unloaded."""


class Wire:
    def __init__(self, read_fd, write_fd, poll_us=0):
        self._read_fd = read_fd
        self._write_fd = write_fd
        # Polling a little before sleeping saves the wake-up of an idle CPU when the next frame follows soon.
        self._poll_ns = poll_us * 1000
        if self._poll_ns:
            os.set_blocking(read_fd, False)
        self._write_lock = threading.Lock()
        self._buffer = bytearray()
        self._pos = 0
        # Whoever holds this lock reads the next frame and dispatches it (see HerdStub.pump).
        self.read_lock = threading.Lock()

    def _fill(self, size):
        """Reads until `size` bytes are buffered; one read usually brings a whole small frame."""
        while len(self._buffer) - self._pos < size:
            chunk = self._read_some(max(_CHUNK, size))
            if not chunk:
                raise WireClosed()
            if self._pos:
                del self._buffer[:self._pos]
                self._pos = 0
            self._buffer += chunk

    def _read_some(self, size):
        if not self._poll_ns:
            return os.read(self._read_fd, size)
        deadline = time.perf_counter_ns() + self._poll_ns
        while True:
            try:
                return os.read(self._read_fd, size)
            except BlockingIOError:
                if time.perf_counter_ns() > deadline:
                    select.select([self._read_fd], [], [])

    def _take(self, size):
        self._fill(size)
        start = self._pos
        self._pos += size
        return memoryview(self._buffer)[start:self._pos]

    def read(self):
        """The next frame as (header dict, body memoryview); blocks. The body is a writable copy of its own."""
        json_size, body_size = _HEADER.unpack(self._take(_HEADER.size))
        header = json.loads(bytes(self._take(json_size)))
        buffered = len(self._buffer) - self._pos
        body = bytearray(body_size)
        view = memoryview(body)
        first = min(buffered, body_size)
        view[:first] = memoryview(self._buffer)[self._pos:self._pos + first]
        self._pos += first
        filled = first
        while filled < body_size:
            # Large bodies are read straight into their own buffer.
            try:
                count = os.readv(self._read_fd, [view[filled:]])
            except BlockingIOError:
                select.select([self._read_fd], [], [])
                continue
            if count == 0:
                raise WireClosed()
            filled += count
        if self._pos == len(self._buffer):
            self._buffer = bytearray()
            self._pos = 0
        return header, view

    def readable(self):
        """True when a frame (or its first bytes) is waiting."""
        if len(self._buffer) > self._pos:
            return True
        ready, _, _ = select.select([self._read_fd], [], [], 0)
        return bool(ready)

    def write(self, header, parts=()):
        """Sends one frame; `parts` are bytes-like objects concatenated into the body."""
        encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
        body_size = 0
        for part in parts:
            body_size += len(part) if isinstance(part, (bytes, bytearray)) else memoryview(part).nbytes
        views = [memoryview(_HEADER.pack(len(encoded), body_size)), memoryview(encoded)]
        views.extend(memoryview(part).cast("B") for part in parts)
        with self._write_lock:
            # One writev per frame in the common case; a short write (a full pipe) resumes where it stopped.
            while views:
                written = os.writev(self._write_fd, views)
                while views and written >= len(views[0]):
                    written -= len(views[0])
                    views.pop(0)
                if views and written > 0:
                    views[0] = views[0][written:]


MIN_SHM_TENSOR = 64 * 1024
_ALIGN = 64


class SharedSegment:
    """Herd's segment for this stub: inputs in its first half, read as numpy views; outputs written to its second."""

    def __init__(self, fd, size):
        self._fd = fd
        self._view = memoryview(mmap.mmap(fd, size))
        self.input_bytes = size // 2 // _ALIGN * _ALIGN
        self._output_bytes = size - self.input_bytes
        self._out_at = 0
        self._released = []
        self._lock = threading.Lock()

    def input(self, slot, offset, size, make):
        """A tensor made by make(view) over the segment's bytes; the slot is released when its arrays are all gone."""
        tensor = make(self._view[offset:offset + size])
        # Every numpy view of these bytes keeps this object (the buffer numpy took) alive, however derived.
        base = tensor.as_numpy()
        while not isinstance(base, memoryview) and getattr(base, "base", None) is not None:
            base = base.base
        slot.hold(base)
        return tensor

    def slot(self, slot_id):
        return _Slot(self, slot_id)

    def _release(self, slot_id):
        with self._lock:
            self._released.append(slot_id)

    def take_released(self):
        with self._lock:
            released, self._released = self._released, []
        return released

    def begin_outputs(self):
        self._out_at = 0

    def put_output(self, data):
        """Writes one output into the second half; its offset there, or None when it does not fit (the pipe takes it)."""
        size = memoryview(data).nbytes
        if size < MIN_SHM_TENSOR or self._out_at + size > self._output_bytes:
            return None
        view = memoryview(data).cast("B")
        at = self._out_at
        try:
            done = 0
            while done < size:
                done += os.pwrite(self._fd, view[done:], self.input_bytes + at + done)
        except OSError:
            # tmpfs full (ENOSPC): written with os.pwrite rather than through the map, which would SIGBUS.
            return None
        self._out_at = at + (size + _ALIGN - 1) // _ALIGN * _ALIGN
        return at


class _Slot:
    """One batch's range of the input half: free again once every array viewing it is gone."""

    def __init__(self, segment, slot_id):
        self._segment = segment
        self._id = slot_id
        self._live = 0
        self._lock = threading.Lock()

    def hold(self, base):
        with self._lock:
            self._live += 1
        try:
            weakref.finalize(base, self._drop)
        except TypeError:
            pass  # not trackable: the slot stays held for good, never reused under a live array

    def _drop(self):
        with self._lock:
            self._live -= 1
            last = self._live == 0
        if last:
            self._segment._release(self._id)

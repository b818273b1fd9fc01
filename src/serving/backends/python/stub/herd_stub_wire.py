# Herd's Python stub wire format: length-framed messages on two inherited file descriptors, so the
# model's own stdout/stderr never mix with the protocol. A frame is an 8-byte little-endian header
# (JSON length, body length), a UTF-8 JSON header, then raw tensor bytes the JSON points into.
import json
import os
import select
import struct
import threading

_HEADER = struct.Struct("<II")
_CHUNK = 1 << 16


class WireClosed(Exception):
    """Herd closed the pipe: the server is shutting down or the instance was unloaded."""


class Wire:
    def __init__(self, read_fd, write_fd):
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._write_lock = threading.Lock()
        self._buffer = bytearray()
        self._pos = 0
        # Whoever holds this lock reads the next frame and dispatches it (see HerdStub.pump).
        self.read_lock = threading.Lock()

    def _fill(self, size):
        """Reads until `size` bytes are buffered; one read usually brings a whole small frame."""
        while len(self._buffer) - self._pos < size:
            chunk = os.read(self._read_fd, max(_CHUNK, size))
            if not chunk:
                raise WireClosed()
            if self._pos:
                del self._buffer[:self._pos]
                self._pos = 0
            self._buffer += chunk

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
            count = os.readv(self._read_fd, [view[filled:]])
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

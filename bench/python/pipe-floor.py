# bench/python/pipe-floor.ts's far end: echoes every read back on the other descriptor, optionally
# polling a while before it sleeps (as the stub does with stub-poll-microseconds).
import os
import select
import sys
import time

read_fd, write_fd, poll_ns = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) * 1000
if poll_ns:
    os.set_blocking(read_fd, False)
while True:
    deadline = time.perf_counter_ns() + poll_ns
    while True:
        try:
            data = os.read(read_fd, 65536)
            break
        except BlockingIOError:
            if time.perf_counter_ns() > deadline:
                select.select([read_fd], [], [])
    if not data:
        break
    os.write(write_fd, data)

# The process Herd starts for each Python-backend model instance (and briefly for auto_complete_config):
# imports the model's model.py, calls initialize / execute / finalize as Herd asks over the wire
# (fd 3 in, fd 4 out), and answers BLS calls, logs and decoupled responses the same way.
# Usage: herd_python_stub.py <model.py path> <read fd> <write fd>
import asyncio
import importlib.util
import json
import os
import sys
import threading
import time
import traceback


def _fail_early(message):
    sys.stderr.write(f"herd python stub: {message}\n")
    sys.exit(3)


try:
    import numpy  # noqa: F401  (pb_utils needs it; say so before anything else fails)
except ImportError as err:
    # Exit code 3 with this line on stderr is how Herd learns numpy is missing.
    sys.stderr.write(f"HERD_NUMPY_MISSING {sys.executable}: {err}\n")
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_python_backend_utils as pb_utils  # noqa: E402
from herd_stub_metrics import install_metric_channel  # noqa: E402
from herd_stub_wire import SharedSegment, Wire, WireClosed  # noqa: E402


def _last_line(exc):
    # As pybind11 names the exception in Triton's messages: the class's own name, never its module
    # ("TritonModelException: …", not "triton_python_backend_utils.TritonModelException: …").
    if isinstance(exc, SyntaxError):
        return traceback.format_exception_only(type(exc), exc)[-1].strip()
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _describe(exc):
    return _last_line(exc), "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class _BlsCall:
    def __init__(self):
        self.done = threading.Event()
        self.header = None
        self.body = None
        # For a decoupled BLS call: every response frame as it arrives.
        self.stream = None


class HerdStub:
    def __init__(self, model_path, wire, shm=None):
        self.model_path = model_path
        self.shm = shm
        self.model_dir = os.path.dirname(os.path.dirname(os.path.abspath(model_path)))
        self.wire = wire
        self.decoupled = False
        self.model = None
        self.instance_name = ""
        self._pending_frames = []
        self._bls_calls = {}
        self._bls_seq = 0
        self._requests = {}
        self._loop = None
        self._lock = threading.Lock()

    # ---- frames ----

    def _dispatch(self, header, body):
        """Routes a frame that is not the main loop's: BLS answers and cancellations."""
        kind = header["type"]
        if kind == "bls_response":
            call = self._bls_calls.get(header["call"])
            if call is None:
                return
            if call.stream is not None:
                call.stream.append((header, body))
                if header.get("final", True):
                    self._bls_calls.pop(header["call"], None)
            else:
                self._bls_calls.pop(header["call"], None)
                call.header, call.body = header, body
            call.done.set()
        elif kind == "metrics_reply":
            self.metrics.on_reply(header)
        elif kind == "cancel":
            for rid in header["rids"]:
                request = self._requests.get(rid)
                if request is not None:
                    request._cancelled = True
        else:
            with self._lock:
                self._pending_frames.append((header, body))

    def pump(self, until):
        """Reads and dispatches frames until until() is true; any thread may pump, one at a time."""
        while not until():
            with self.wire.read_lock:
                if until():
                    return
                header, body = self.wire.read()
                self._dispatch(header, body)

    def poll(self):
        """Dispatches frames already waiting, without blocking (is_cancelled uses it)."""
        if not self.wire.read_lock.acquire(blocking=False):
            return
        try:
            while self.wire.readable():
                header, body = self.wire.read()
                self._dispatch(header, body)
        finally:
            self.wire.read_lock.release()

    def next_command(self):
        while True:
            with self._lock:
                if self._pending_frames:
                    return self._pending_frames.pop(0)
            with self.wire.read_lock:
                with self._lock:
                    if self._pending_frames:
                        continue
                header, body = self.wire.read()
            if header["type"] in ("bls_response", "cancel", "metrics_reply"):
                self._dispatch(header, body)
            else:
                return header, body

    # ---- API calls from pb_utils ----

    def log(self, level, message):
        self.wire.write({"type": "log", "level": level, "message": message})

    def send_decoupled(self, request, response, final):
        header, parts = encode_response(response, request._requested)
        header["type"] = "response"
        header["rid"] = request._wire_id
        header["final"] = final
        self.wire.write(header, parts)
        if final:
            self._requests.pop(request._wire_id, None)

    def exec_bls(self, request, decoupled):
        if not isinstance(request, pb_utils.InferenceRequest):
            raise pb_utils.TritonModelException("exec: not an InferenceRequest")
        inputs, parts = encode_tensors(request.inputs())
        with self._lock:
            self._bls_seq += 1
            call_id = self._bls_seq
        call = _BlsCall()
        if decoupled:
            call.stream = []
        self._bls_calls[call_id] = call
        self.wire.write({
            "type": "bls_request", "call": call_id, "model": request.model_name(), "version": request.model_version(),
            "id": request.request_id(), "correlation_id": request.correlation_id(), "flags": request.flags(),
            "parameters": request.parameters(), "outputs": request.requested_output_names(), "inputs": inputs,
            "timeout": request.timeout(), "decoupled": bool(decoupled),
        }, parts)
        if decoupled:
            return _BlsResponseIterator(self, call, call_id)
        self.pump(call.done.is_set)
        return decode_bls_response(call.header, call.body)

    # ---- commands ----

    def load_model_class(self):
        # As in Triton, model.py can import the files beside it (also during auto_complete_config).
        version_dir = os.path.dirname(os.path.abspath(self.model_path))
        if version_dir not in sys.path:
            sys.path.append(version_dir)
        spec = importlib.util.spec_from_file_location("model", self.model_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["model"] = module
        spec.loader.exec_module(module)
        if not hasattr(module, "TritonPythonModel"):
            raise AttributeError(f"{self.model_path} does not define class TritonPythonModel")
        return module.TritonPythonModel

    def auto_complete(self, header):
        model_class = self.load_model_class()
        config = pb_utils.ModelConfig(header["config"])
        if hasattr(model_class, "auto_complete_config"):
            returned = model_class.auto_complete_config(config)
            if not isinstance(returned, pb_utils.ModelConfig):
                raise TypeError(f"auto_complete_config returned {type(returned).__name__}, not the pb_utils.ModelConfig it was given")
            config = returned
        self.wire.write({"type": "auto_complete_done", "seq": header.get("seq"), "config": json.dumps(config.as_dict())})

    def initialize(self, header):
        self.decoupled = bool(header.get("decoupled"))
        args = header["args"]
        self.instance_name = args.get("model_instance_name", "")
        model_class = self.load_model_class()
        self.model = model_class()
        if hasattr(self.model, "initialize"):
            self.model.initialize(args)
        if not hasattr(self.model, "execute"):
            raise AttributeError(f"Python model {self.model_path} does not implement `execute` method.")
        self.wire.write({"type": "init_done", "seq": header.get("seq")})

    def execute(self, header, body):
        requests = self._read_requests(header, body)
        started = time.perf_counter_ns()
        try:
            returned = self.model.execute(requests)
            if asyncio.iscoroutine(returned):
                returned = self._run_coroutine(returned)
        except Exception as exc:  # noqa: BLE001  (a model bug fails this batch, never the stub)
            spent = time.perf_counter_ns() - started
            self._fail_batch(header, requests, exc, spent)
            return
        spent = time.perf_counter_ns() - started
        shm_out = self.shm if header.get("shm_out") else None
        if shm_out is not None:
            shm_out.begin_outputs()
        try:
            responses = self._check_returned(requests, returned)
            encoded = [encode_response(r, q._requested, shm_out) if r is not None else ({"none": True}, []) for r, q in zip(responses, requests)]
        except Exception as exc:  # noqa: BLE001
            self._fail_batch(header, requests, exc, spent)
            return
        if not self.decoupled:
            for wire_id in [request._wire_id for request in requests]:
                self._requests.pop(wire_id, None)
        # Dropped before the reply so that a batch whose arrays the model let go frees its segment slot now.
        del requests, returned, responses
        parts = []
        headers = []
        offset = 0
        for response_header, response_parts in encoded:
            in_body = [tensor for tensor in response_header.get("outputs", []) if not tensor.get("shm")]
            for tensor in in_body:
                tensor["offset"] += offset
            offset += sum(tensor["size"] for tensor in in_body)
            headers.append(response_header)
            parts.extend(response_parts)
        reply = {"type": "execute_done", "seq": header["seq"], "responses": headers, "execute_ns": spent}
        if self.shm is not None:
            reply["released"] = self.shm.take_released()
        self.wire.write(reply, parts)

    def _read_requests(self, header, body):
        slot = self.shm.slot(header["slot"][0]) if self.shm is not None and header.get("slot") else None
        requests = []
        for item in header["requests"]:
            inputs = [self._input_tensor(t, body, slot) for t in item["inputs"]]
            request = pb_utils.InferenceRequest._from_wire(item, inputs, item["outputs"])
            requests.append(request)
            self._requests[request._wire_id] = request
        return requests

    def _input_tensor(self, t, body, slot):
        def make(view):
            return pb_utils.Tensor._from_wire(t["name"], t["datatype"], t["shape"], view)
        if t.get("shm") and slot is not None:
            return self.shm.input(slot, t["offset"], t["size"], make)
        return make(body[t["offset"]:t["offset"] + t["size"]])

    def _check_returned(self, requests, returned):
        if self.decoupled:
            if returned is not None:
                raise pb_utils.TritonModelException(
                    f"Python model '{self.instance_name}' is using the decoupled mode and the execute function must return None.")
            return []
        if not isinstance(returned, list):
            raise pb_utils.TritonModelException(f"Expected a list in the execute return, found type '{type(returned)}'.")
        if len(returned) != len(requests):
            raise pb_utils.TritonModelException(
                "Number of InferenceResponse objects do not match the number of InferenceRequest objects. "
                f"InferenceRequest(s) size is:{len(requests)}, and InferenceResponse(s) size is:{len(returned)}")
        for item in returned:
            if item is not None and not isinstance(item, pb_utils.InferenceResponse):
                raise pb_utils.TritonModelException(
                    f"Expected an 'InferenceResponse' object in the execute function return list, found type '{type(item)}'.")
        return returned

    def _fail_batch(self, header, requests, exc, spent):
        reason, trace = _describe(exc)
        message = f"Failed to process the request(s) for model '{self.instance_name}', message: {reason}"
        self.log(pb_utils.Logger.ERROR, f"{message}\n{trace}")
        for request in requests:
            if request._sender is not None:
                request._sender._close()
            self._requests.pop(request._wire_id, None)
        reply = {"type": "execute_error", "seq": header["seq"], "error": message, "execute_ns": spent}
        if self.shm is not None:
            reply["released"] = self.shm.take_released()
        self.wire.write(reply)

    def _run_coroutine(self, coroutine):
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, daemon=True, name="herd-asyncio").start()
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        if self.decoupled:
            future.add_done_callback(self._log_background_failure)
            return None
        return future.result()

    def _log_background_failure(self, future):
        exc = future.exception()
        if exc is not None:
            self.log(pb_utils.Logger.ERROR, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    def finalize(self):
        if self.model is not None and hasattr(self.model, "finalize"):
            self.model.finalize()

    def run(self):
        while True:
            try:
                header, body = self.next_command()
            except WireClosed:
                return
            kind = header["type"]
            if kind == "execute":
                self.execute(header, body)
            elif kind in ("init", "auto_complete"):
                try:
                    self.initialize(header) if kind == "init" else self.auto_complete(header)
                except Exception as exc:  # noqa: BLE001
                    reason, trace = _describe(exc)
                    self.wire.write({"type": "init_error", "seq": header.get("seq"), "error": reason, "traceback": trace})
            elif kind == "finalize":
                try:
                    self.finalize()
                    self.wire.write({"type": "finalize_done", "seq": header.get("seq")})
                except Exception as exc:  # noqa: BLE001
                    reason, trace = _describe(exc)
                    self.wire.write({"type": "finalize_done", "seq": header.get("seq"), "error": reason, "traceback": trace})
                return


class _BlsResponseIterator:
    """What exec(decoupled=True) returns: the called model's responses as they arrive."""

    def __init__(self, stub, call, call_id):
        self._stub = stub
        self._call = call
        self._call_id = call_id
        self._index = 0
        self._finished = False

    def __iter__(self):
        return self

    def __next__(self):
        call = self._call
        while True:
            if self._index < len(call.stream):
                header, body = call.stream[self._index]
                self._index += 1
                if header.get("final", True):
                    self._finished = True
                if header.get("empty"):
                    raise StopIteration
                return decode_bls_response(header, body)
            if self._finished:
                raise StopIteration
            self._stub.pump(lambda: self._index < len(call.stream))

    def cancel(self):
        self._stub.wire.write({"type": "bls_cancel", "call": self._call_id})


def encode_tensors(tensors, shm_out=None):
    """Descriptors and body parts; with shm_out, large non-BYTES tensors go into the segment's output half instead."""
    descs = []
    parts = []
    offset = 0
    for tensor in tensors:
        if not isinstance(tensor, pb_utils.Tensor):
            raise pb_utils.TritonModelException(f"expected a pb_utils.Tensor, got {type(tensor).__name__}")
        array = tensor.as_numpy()
        if tensor._datatype == "BYTES":
            data = pb_utils.serialize_byte_tensor(array)
            data = data.tobytes() if data.size else b""
        else:
            data = array.data if array.flags.c_contiguous else numpy.ascontiguousarray(array).data
        size = memoryview(data).nbytes
        at = shm_out.put_output(data) if shm_out is not None and tensor._datatype != "BYTES" else None
        if at is not None:
            descs.append({"name": tensor.name(), "datatype": tensor._datatype, "shape": list(array.shape), "offset": at, "size": size, "shm": 1})
            continue
        descs.append({"name": tensor.name(), "datatype": tensor._datatype, "shape": list(array.shape), "offset": offset, "size": size})
        parts.append(data)
        offset += size
    return descs, parts


def encode_response(response, requested, shm_out=None):
    """One InferenceResponse -> (header dict, body parts); outputs pruned to the requested names (as Triton)."""
    if response is None:
        return {}, []
    header = {}
    if response.has_error():
        header["error"] = {"message": response.error().message(), "code": response.error().code()}
        return header, []
    wanted = set(requested)
    outputs = [t for t in response.output_tensors() if not wanted or t.name() in wanted]
    header["outputs"], parts = encode_tensors(outputs, shm_out)
    if response.parameters() != "{}":
        header["parameters"] = response.parameters()
    return header, parts


def decode_bls_response(header, body):
    if header.get("error"):
        error = header["error"]
        return pb_utils.InferenceResponse(error=pb_utils.TritonError(error["message"], error.get("code", pb_utils.TritonError.INTERNAL)))
    outputs = [pb_utils.Tensor._from_wire(t["name"], t["datatype"], t["shape"], body[t["offset"]:t["offset"] + t["size"]])
               for t in header.get("outputs", [])]
    return pb_utils.InferenceResponse(output_tensors=outputs, parameters=header.get("parameters"))


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        _fail_early("usage: herd_python_stub.py <model.py> <read fd> <write fd> [--shm <fd> <size>] [--poll-us <n>]")
    options = {}
    rest = args[3:]
    while rest:
        if rest[0] == "--shm" and len(rest) >= 3:
            options["shm"] = SharedSegment(int(rest[1]), int(rest[2]))
            rest = rest[3:]
        elif rest[0] == "--poll-us" and len(rest) >= 2:
            options["poll_us"] = int(rest[1])
            rest = rest[2:]
        else:
            _fail_early(f"unknown argument {rest[0]}")
    wire = Wire(int(args[1]), int(args[2]), options.get("poll_us", 0))
    stub = HerdStub(args[0], wire, options.get("shm"))
    install_metric_channel(stub)
    pb_utils._runtime = stub
    stub.run()


if __name__ == "__main__":
    main()

# Herd's own implementation of the `triton_python_backend_utils` API that Triton Python-backend
# model.py files import (`import triton_python_backend_utils as pb_utils`). Written for Herd: tensors
# are numpy arrays, and everything that talks to the server goes through the stub's runtime object.
import json
import os
import sys

import numpy as np

from herd_pb_metrics import MetricFamily, MetricKind  # noqa: F401  (pb_utils.MetricFamily, as in Triton)

# Set by herd_python_stub before model.py is imported.
_runtime = None

TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

# Config type name -> numpy dtype (BF16 has none in numpy).
TRITON_STRING_TO_NUMPY = {
    "TYPE_BOOL": np.bool_,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}

# TRITONSERVER_DataType numbering, as Tensor.triton_dtype() returns it.
_DTYPE_NUMBERS = {
    "INVALID": 0, "BOOL": 1, "UINT8": 2, "UINT16": 3, "UINT32": 4, "UINT64": 5, "INT8": 6, "INT16": 7,
    "INT32": 8, "INT64": 9, "FP16": 10, "FP32": 11, "FP64": 12, "BYTES": 13, "BF16": 14,
}
_NUMBER_TO_WIRE = {number: name for name, number in _DTYPE_NUMBERS.items()}
_WIRE_TO_NUMPY = {
    "BOOL": np.dtype(np.bool_), "UINT8": np.dtype(np.uint8), "UINT16": np.dtype(np.uint16),
    "UINT32": np.dtype(np.uint32), "UINT64": np.dtype(np.uint64), "INT8": np.dtype(np.int8),
    "INT16": np.dtype(np.int16), "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16), "FP32": np.dtype(np.float32), "FP64": np.dtype(np.float64),
    "BYTES": np.dtype(np.object_),
}


def _as_str(value, what):
    """A str, or bytes read as UTF-8: pybind11 accepts both wherever Triton's C++ takes a std::string
    (examples/bls/sync_model.py passes model_name as the bytes it read from a BYTES tensor)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    raise TypeError(f"{what} must be str or bytes, got {type(value).__name__}")


class TritonModelException(Exception):
    """Raised by the API when a call cannot be done (Triton's c_python_backend_utils exception)."""


class TritonError:
    """An error a model puts on an InferenceResponse, with one of Triton's error codes."""

    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    def __init__(self, message, code=INTERNAL):
        if message is None:
            raise TypeError("TritonError: message must not be None")
        self._message = _as_str(message, "TritonError: message") if isinstance(message, (bytes, bytearray)) else str(message)
        self._code = int(code)

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __repr__(self):
        return f"TritonError({self._message!r}, code={self._code})"


def _dtype_to_wire(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in ("O", "S", "U"):
        return "BYTES"
    for name, candidate in _WIRE_TO_NUMPY.items():
        if candidate == dtype:
            return name
    raise TritonModelException(f"numpy dtype {dtype} has no Triton datatype")


class _DLPackCapsule:
    """Lets numpy.from_dlpack read a bare DLPack capsule (it wants an object with __dlpack__)."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


class Tensor:
    """A named tensor backed by a numpy array (BYTES: an object array of bytes, as in Triton)."""

    def __init__(self, name, data, *_):
        name = _as_str(name, "Tensor: name")
        if not isinstance(data, np.ndarray):
            raise TritonModelException(f"Tensor '{name}': data must be a numpy array, got {type(data).__name__}")
        self._name = name
        self._datatype = _dtype_to_wire(data.dtype)
        if self._datatype == "BYTES" and data.dtype.kind != "O":
            data = data.astype(np.object_)
        self._array = np.ascontiguousarray(data)

    @classmethod
    def _from_wire(cls, name, datatype, shape, view):
        tensor = cls.__new__(cls)
        tensor._name = name
        tensor._datatype = datatype
        if datatype == "BYTES":
            tensor._array = deserialize_bytes_tensor(view).reshape(shape)
        elif datatype == "BF16":
            # numpy has no bfloat16: the raw bits, as uint16.
            tensor._array = np.frombuffer(view, dtype=np.uint16).reshape(shape)
        else:
            tensor._array = np.frombuffer(view, dtype=_WIRE_TO_NUMPY[datatype]).reshape(shape)
        return tensor

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array

    def shape(self):
        return list(self._array.shape)

    def triton_dtype(self):
        return _DTYPE_NUMBERS[self._datatype]

    def is_cpu(self):
        return True

    def to_dlpack(self):
        if self._datatype == "BYTES":
            raise TritonModelException(f"Tensor '{self._name}': BYTES tensors cannot be exported to DLPack")
        return self._array.__dlpack__()

    def __dlpack__(self, stream=None):
        return self.to_dlpack()

    def __dlpack_device__(self):
        return (1, 0)

    @staticmethod
    def from_dlpack(name, capsule):
        source = capsule if hasattr(capsule, "__dlpack__") else _DLPackCapsule(capsule)
        try:
            array = np.from_dlpack(source)
        except (AttributeError, TypeError, RuntimeError, BufferError) as err:
            raise TritonModelException(f"Tensor.from_dlpack('{name}'): {err}") from err
        return Tensor(name, array)

    def __repr__(self):
        return f"Tensor({self._name!r}, {self._datatype}, shape={list(self._array.shape)})"


class InferenceResponse:
    """What execute() returns for one request: output tensors, or an error."""

    def __init__(self, output_tensors=None, error=None, parameters=None):
        self._outputs = list(output_tensors) if output_tensors is not None else []
        for tensor in self._outputs:
            if not isinstance(tensor, Tensor):
                raise TritonModelException(f"InferenceResponse: output_tensors must hold pb_utils.Tensor, got {type(tensor).__name__}")
        if error is not None and not isinstance(error, TritonError):
            raise TritonModelException(f"InferenceResponse: error must be a pb_utils.TritonError, got {type(error).__name__}")
        self._error = error
        self._parameters = _parameters_to_json(parameters)

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        return self._parameters


def _parameters_to_json(parameters):
    if parameters is None:
        return "{}"
    if isinstance(parameters, str):
        parameters = json.loads(parameters)
    if not isinstance(parameters, dict):
        raise TritonModelException("parameters must be a dict of str keys to str, int or bool values")
    for key, value in parameters.items():
        if not isinstance(key, str) or not isinstance(value, (str, int, bool, float)):
            raise TritonModelException(f"parameter '{key}': values must be str, int, float or bool")
    return json.dumps(parameters)


class InferenceResponseSender:
    """A decoupled model's way to answer a request: any number of responses, then the final flag."""

    def __init__(self, request):
        self._request = request
        self._closed = False

    def send(self, response=None, flags=0):
        if self._closed:
            raise TritonModelException("Unable to send response. Response sender has been closed.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TritonModelException(f"send: response must be a pb_utils.InferenceResponse, got {type(response).__name__}")
        final = bool(flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        if response is None and not final:
            raise TritonModelException("send: a response of None needs flags=TRITONSERVER_RESPONSE_COMPLETE_FINAL")
        if final:
            self._closed = True
        _runtime.send_decoupled(self._request, response, final)

    def is_cancelled(self):
        return self._request.is_cancelled()

    def _close(self):
        self._closed = True

    def _is_closed(self):
        return self._closed


class InferenceRequest:
    """A request: as execute() receives it, or built by the model for BLS (exec / async_exec)."""

    def __init__(self, request_id="", correlation_id=0, inputs=(), requested_output_names=(), model_name="",
                 model_version=-1, flags=0, timeout=0, preferred_memory=None, trace=None, parameters=None):
        model_name = _as_str(model_name, "InferenceRequest: model_name")
        if not model_name:
            raise TritonModelException("InferenceRequest: model_name is required")
        if not isinstance(correlation_id, (int, str)):
            raise TritonModelException("Correlation ID must be integer or string")
        self._id = _as_str(request_id, "InferenceRequest: request_id")
        self._correlation_id = correlation_id
        self._inputs = list(inputs)
        self._requested = [_as_str(name, "InferenceRequest: requested_output_names") for name in requested_output_names]
        self._model_name = model_name
        self._model_version = int(model_version)
        self._flags = int(flags)
        self._timeout = int(timeout)
        self._parameters = _parameters_to_json(parameters)
        self._wire_id = None
        self._cancelled = False
        self._sender = None

    @classmethod
    def _from_wire(cls, header, inputs, requested):
        request = cls.__new__(cls)
        request._id = header.get("id", "")
        request._correlation_id = header.get("correlation_id", 0)
        request._inputs = inputs
        request._requested = requested
        request._model_name = header.get("model", "")
        request._model_version = header.get("version", -1)
        request._flags = header.get("flags", 0)
        request._timeout = 0
        request._parameters = header.get("parameters", "{}")
        request._wire_id = header["rid"]
        request._cancelled = False
        request._sender = None
        return request

    def inputs(self):
        return self._inputs

    def requested_output_names(self):
        return self._requested

    def request_id(self):
        return self._id

    def correlation_id(self):
        return self._correlation_id

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        self._flags = int(flags)

    def timeout(self):
        return self._timeout

    def parameters(self):
        return self._parameters

    def model_name(self):
        return self._model_name

    def model_version(self):
        return self._model_version

    def trace(self):
        return None

    def set_release_flags(self, flags):
        if flags != TRITONSERVER_REQUEST_RELEASE_ALL:
            raise TritonModelException("Herd does not reschedule requests: only TRITONSERVER_REQUEST_RELEASE_ALL is supported")

    def get_response_sender(self):
        if self._wire_id is None:
            raise TritonModelException("get_response_sender: only requests given to execute() have a response sender")
        if not _runtime.decoupled:
            raise TritonModelException("get_response_sender: the model is not decoupled (set model_transaction_policy { decoupled: true })")
        if self._sender is None:
            self._sender = InferenceResponseSender(self)
        return self._sender

    def is_cancelled(self):
        if self._wire_id is not None and not self._cancelled:
            _runtime.poll()
        return self._cancelled

    def exec(self, decoupled=False):
        return _runtime.exec_bls(self, decoupled)

    def async_exec(self, decoupled=False):
        import asyncio

        return asyncio.get_running_loop().run_in_executor(None, _runtime.exec_bls, self, decoupled)


def serialize_byte_tensor(input_tensor):
    """A numpy array of bytes/str (any shape) -> Triton's BYTES encoding (4-byte length + bytes each)."""
    if input_tensor.size == 0:
        return np.empty([0], dtype=np.object_)
    parts = []
    for item in input_tensor.flat:
        if isinstance(item, str):
            item = item.encode("utf-8")
        elif not isinstance(item, (bytes, bytearray, np.bytes_)):
            item = str(item).encode("utf-8")
        parts.append(len(item).to_bytes(4, "little"))
        parts.append(bytes(item))
    return np.frombuffer(b"".join(parts), dtype=np.uint8)


def deserialize_bytes_tensor(encoded_tensor):
    """Triton's BYTES encoding -> a flat numpy object array of bytes."""
    view = memoryview(encoded_tensor).cast("B")
    items = []
    offset = 0
    end = len(view)
    while offset < end:
        if offset + 4 > end:
            raise TritonModelException("BYTES tensor: truncated length prefix")
        size = int.from_bytes(view[offset:offset + 4], "little")
        offset += 4
        if offset + size > end:
            raise TritonModelException("BYTES tensor: element runs past the end of the data")
        items.append(bytes(view[offset:offset + size]))
        offset += size
    array = np.empty(len(items), dtype=np.object_)
    array[:] = items
    return array


def get_input_tensor_by_name(inference_request, name):
    for tensor in inference_request.inputs():
        if tensor.name() == name:
            return tensor
    return None


def get_output_tensor_by_name(inference_response, name):
    for tensor in inference_response.output_tensors():
        if tensor.name() == name:
            return tensor
    return None


def get_input_config_by_name(model_config, name):
    for item in model_config.get("input", []):
        if item.get("name") == name:
            return item
    return None


def get_output_config_by_name(model_config, name):
    for item in model_config.get("output", []):
        if item.get("name") == name:
            return item
    return None


def using_decoupled_model_transaction_policy(model_config):
    return bool(model_config.get("model_transaction_policy", {}).get("decoupled", False))


def triton_to_numpy_type(data_type):
    """TRITONSERVER_DataType number -> numpy type (None for BF16 and unknown numbers)."""
    wire = _NUMBER_TO_WIRE.get(data_type)
    dtype = _WIRE_TO_NUMPY.get(wire) if wire else None
    return None if dtype is None else dtype.type


def numpy_to_triton_type(data_type):
    """numpy type -> TRITONSERVER_DataType number (None when there is none)."""
    try:
        return _DTYPE_NUMBERS[_dtype_to_wire(data_type)]
    except (TritonModelException, TypeError):
        return None


def triton_string_to_numpy(triton_type_string):
    return TRITON_STRING_TO_NUMPY[triton_type_string]


def get_model_dir():
    return _runtime.model_dir


class Logger:
    """Writes into Herd's log as Triton's logger does: the level, the calling file:line, the message."""

    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3

    @staticmethod
    def log(message, level=0):
        _log(int(level), message)

    @staticmethod
    def log_info(message):
        _log(Logger.INFO, message)

    @staticmethod
    def log_warn(message):
        _log(Logger.WARNING, message)

    @staticmethod
    def log_error(message):
        _log(Logger.ERROR, message)

    @staticmethod
    def log_verbose(message):
        _log(Logger.VERBOSE, message)


def _log(level, message):
    # The model's frame: two up from here (Logger.log_*, then its caller), as Triton's inspect.currentframe().
    caller = sys._getframe(2)
    text = _as_str(message, "Logger: message") if isinstance(message, (bytes, bytearray)) else str(message)
    _runtime.wire.write({"type": "log", "level": level, "message": text,
                         "file": os.path.basename(caller.f_code.co_filename), "line": caller.f_lineno})


def _no_model_control(what):
    raise TritonModelException(
        f"{what}: Herd does not offer the model loading API to Python models; load and unload models with "
        "the repository API (POST /v2/repository/models/<name>/load) instead")


def load_model(model_name, config="", files=None):
    _no_model_control("load_model")


def unload_model(model_name, unload_dependents=False):
    _no_model_control("unload_model")


def is_model_ready(model_name, model_version=""):
    _no_model_control("is_model_ready")


class PreferredMemory:
    """Where BLS outputs should be placed: Herd keeps every tensor in CPU memory, so this is accepted and ignored."""

    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


# PreferredMemory::MemoryType's numbering.
TRITONSERVER_MEMORY_GPU = 0
TRITONSERVER_MEMORY_CPU = 1


class ModelConfig:
    """The config auto_complete_config(auto_complete_model_config) receives and returns."""

    def __init__(self, model_config):
        self._config = json.loads(model_config) if isinstance(model_config, str) else model_config
        self._config.setdefault("input", [])
        self._config.setdefault("output", [])
        self._config.setdefault("max_batch_size", 0)

    def as_dict(self):
        return self._config

    @property
    def _model_config(self):
        # Triton's attribute for the dict; some models read it directly.
        return self._config

    def _name(self):
        return self._config.get("name", "")

    def set_max_batch_size(self, max_batch_size):
        current = self._config.get("max_batch_size", 0)
        if current > max_batch_size:
            raise ValueError(
                f"configuration specified max_batch_size {current}, but in auto-complete-config function "
                f"for model '{self._name()}' specified max_batch_size {max_batch_size}")
        self._config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for scheduler in ("sequence_batching", "ensemble_scheduling"):
            if scheduler in self._config:
                raise ValueError(
                    f"Configuration specified scheduling_choice as '{scheduler}', but auto-complete-config "
                    f"function for model '{self._name()}' tries to set scheduling_choice as 'dynamic_batching'")
        self._config.setdefault("dynamic_batching", {})

    def add_input(self, input):
        self._add_tensor("input", input, ("name", "data_type", "dims", "optional"))

    def add_output(self, output):
        self._add_tensor("output", output, ("name", "data_type", "dims"))

    def _add_tensor(self, kind, spec, allowed):
        label = spec.get("name", "")
        extra = [key for key in spec if key not in allowed]
        if extra:
            raise ValueError(
                f"{kind} '{label}' in auto-complete-config function for model '{self._name()}' contains "
                f"property other than {', '.join(repr(a) for a in allowed)}.")
        for key in ("name", "data_type", "dims"):
            if key not in spec:
                where = f"{kind} '{label}'" if key != "name" else kind
                raise ValueError(f"{where} in auto-complete-config function for model '{self._name()}' is missing '{key}' property.")
        for existing in self._config[kind]:
            if existing.get("name") != spec["name"]:
                continue
            if existing.get("data_type", "TYPE_INVALID") not in ("TYPE_INVALID", spec["data_type"]):
                raise ValueError(
                    f"unable to load model '{self._name()}', configuration expects datatype {existing['data_type']} "
                    f"for {kind} '{label}', model provides {spec['data_type']}")
            if existing.get("dims") and list(existing["dims"]) != list(spec["dims"]):
                raise ValueError(
                    f"model '{self._name()}', tensor '{label}': the model expects dims {list(spec['dims'])} "
                    f"but the model configuration specifies dims {list(existing['dims'])}")
            if "optional" in existing and "optional" in spec and existing["optional"] != spec["optional"]:
                raise ValueError(
                    f"model '{self._name()}', tensor '{label}': the model expects optional {spec['optional']} "
                    f"but the model configuration specifies optional {existing['optional']}")
            existing["data_type"] = spec["data_type"]
            existing["dims"] = list(spec["dims"])
            if "optional" in spec:
                existing["optional"] = spec["optional"]
            return
        self._config[kind].append(dict(spec))

    def set_model_transaction_policy(self, transaction_policy_dict):
        extra = [key for key in transaction_policy_dict if key != "decoupled"]
        if extra:
            raise ValueError(
                f"model transaction property in auto-complete-config function for model '{self._name()}' "
                "contains property other than 'decoupled'.")
        policy = self._config.setdefault("model_transaction_policy", {})
        if "decoupled" in transaction_policy_dict:
            wanted = transaction_policy_dict["decoupled"]
            if "decoupled" in policy and policy["decoupled"] != wanted:
                raise ValueError(
                    f"trying to change decoupled property in auto-complete-config for model '{self._name()}', "
                    f"which is already set to '{policy['decoupled']}'.")
            policy["decoupled"] = wanted

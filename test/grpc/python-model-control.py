# tritonclient's simple_grpc_model_control.py, step for step, over raw stubs (tritonclient itself is not
# installed here), plus a model loaded from the bytes of its file. Prints "PASS: model control" or why not.
# Usage: python3 python-model-control.py <stubs dir> <grpc host:port> <onnx file>
import sys

stubs, address, onnx_path = sys.argv[1:4]
sys.path.insert(0, stubs)

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402

stub = pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address))


def fail(why):
    print("FAILED: " + why)
    sys.exit(1)


def load(model, config=None, files=None):
    request = pb.RepositoryModelLoadRequest(model_name=model)
    if config is not None:
        request.parameters["config"].string_param = config
    for name, content in (files or {}).items():
        request.parameters[name].bytes_param = content
    stub.RepositoryModelLoad(request)


def ready(model):
    return stub.ModelReady(pb.ModelReadyRequest(name=model)).ready


if len(stub.RepositoryIndex(pb.RepositoryIndexRequest()).models) != 8:
    fail("Repository Index")
load("simple")
if not ready("simple"):
    fail("Load Model")

try:
    load("simple", config='"parameters": {"config": {{"max_batch_size": "16"}}}')
    fail("Expect error occurs for invalid override config.")
except grpc.RpcError as e:
    if "failed to load" not in e.details():
        fail("invalid override config: " + e.details())

load("simple", config='{"max_batch_size":"16"}')
if stub.ModelConfig(pb.ModelConfigRequest(name="simple")).config.max_batch_size != 16:
    fail("Expect max_batch_size = 16")

stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="simple"))
if ready("simple"):
    fail("Unload Model")

# Single path component longer than NAME_MAX: Triton's status and words, and the server still live.
try:
    load("simple", config="{}", files={"file:" + ("A" * 256): b"a"})
    fail("expected error for oversized file parameter")
except grpc.RpcError as e:
    if e.code() != grpc.StatusCode.INTERNAL:
        fail("expected status 'StatusCode.INTERNAL' for oversized file parameter, got status={!r}".format(e.code()))
    if "failed to poll from model repository" not in e.details():
        fail("expected 'failed to poll from model repository', got message={!r}".format(e.details()))
if not stub.ServerLive(pb.ServerLiveRequest()).live:
    fail("server not live after rejected load")

# Beyond the example: a model built from the bytes of its file, under a name no repository has.
with open(onnx_path, "rb") as f:
    load("simple_sent", config='{"backend": "onnxruntime", "max_batch_size": 8}', files={"file:1/model.onnx": f.read()})
if not ready("simple_sent"):
    fail("Load Model with files")

try:
    load("wrong_model_name")
except grpc.RpcError as e:
    if "failed to load" in e.details() and "model not found in any model repository" in e.details():
        print("PASS: model control")
        sys.exit(0)
fail("wrong model name")

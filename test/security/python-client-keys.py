# A Python Triton client calling Herd the way tritonclient does (its wire formats and its headers=, which
# tritonclient.grpc passes on as metadata tuples and tritonclient.http as HTTP headers); prints one JSON report.
# Usage: python3 python-client-keys.py <stubs dir> <http host:port> <grpc host:port> <model> <stream model> [key]
import http.client
import json
import struct
import sys

stubs, http_address, grpc_address, model, stream_model = sys.argv[1:6]
key = sys.argv[6] if len(sys.argv) > 6 else None
sys.path.insert(0, stubs)

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402

PROMPT = b"hello from python"


def serialize_bytes(items):
    """A BYTES tensor as tritonclient.utils.serialize_byte_tensor lays it out: 4-byte little-endian length, then the bytes."""
    return b"".join(struct.pack("<I", len(item)) + item for item in items)


def deserialize_bytes(raw):
    items, offset = [], 0
    while offset < len(raw):
        (length,) = struct.unpack_from("<I", raw, offset)
        items.append(raw[offset + 4 : offset + 4 + length])
        offset += 4 + length
    return items


def call_http():
    """tritonclient.http's InferenceServerClient.infer with headers={'Authorization': ...}: an InferInput set from numpy
    (binary_data=True), no requested outputs (so binary_data_output), the JSON header's size in Inference-Header-Content-Length."""
    raw = serialize_bytes([PROMPT])
    header = json.dumps(
        {
            "inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES", "parameters": {"binary_data_size": len(raw)}}],
            "parameters": {"binary_data_output": True},
        }
    ).encode()
    headers = {"Inference-Header-Content-Length": str(len(header))}
    if key is not None:
        headers["Authorization"] = "Bearer " + key
    connection = http.client.HTTPConnection(http_address)
    connection.request("POST", "/v2/models/%s/infer" % model, body=header + raw, headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    report = {"status": response.status, "content_type": response.getheader("Content-Type")}
    json_length = response.getheader("Inference-Header-Content-Length")
    if json_length is None:
        report["json"] = json.loads(body) if body else None
        return report
    report["json"] = json.loads(body[: int(json_length)])
    report["text"] = [t.decode() for t in deserialize_bytes(body[int(json_length) :])]
    return report


def infer_request(name):
    """A ModelInferRequest as tritonclient.grpc builds it: tensor metadata in inputs, the bytes in raw_input_contents."""
    request = pb.ModelInferRequest(model_name=name)
    tensor = request.inputs.add()
    tensor.name = "text_input"
    tensor.datatype = "BYTES"
    tensor.shape.extend([1])
    request.raw_input_contents.append(serialize_bytes([PROMPT]))
    return request


def output_text(response):
    return [t.decode() for raw in response.raw_output_contents for t in deserialize_bytes(raw)]


def call_grpc():
    """tritonclient.grpc's _get_metadata: the headers dict's items() as the call's metadata; gRPC Python accepts only
    lowercase metadata keys, so the key is passed as headers={'authorization': 'Bearer <key>'}."""
    metadata = (("authorization", "Bearer " + key),) if key is not None else ()
    report = {}
    with grpc.insecure_channel(grpc_address) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        try:
            response = stub.ModelInfer(request=infer_request(model), metadata=metadata, timeout=30)
            report["infer"] = {"code": "OK", "text": output_text(response)}
        except grpc.RpcError as err:
            report["infer"] = {"code": err.code().name, "details": err.details()}
        # tritonclient.grpc's start_stream: ModelStreamInfer over a request iterator, with the same metadata.
        events = []
        try:
            for event in stub.ModelStreamInfer(iter([infer_request(stream_model)]), metadata=metadata, timeout=30):
                events.append({"error": event.error_message, "text": output_text(event.infer_response)})
            report["stream"] = {"code": "OK", "events": events}
        except grpc.RpcError as err:
            report["stream"] = {"code": err.code().name, "details": err.details(), "events": events}
    return report


print(json.dumps({"http": call_http(), "grpc": call_grpc()}))

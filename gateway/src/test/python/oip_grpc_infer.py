#!/usr/bin/env python3
"""An Open Inference Protocol gRPC client outside the JVM, for GrpcPythonClientIT.

It uses Debian's python3-grpcio and python3-protobuf, with message classes that Debian's protoc
generated from the gateway's grpc_predict_v2.proto (protoc --python_out). No stub generator is
needed: the call goes through grpc.Channel.unary_unary with the method's full name.

Usage: oip_grpc_infer.py GENERATED_DIR HOST:PORT API_KEY < request.json
request.json: {"model": "demo", "raw": false,
               "inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 8], "data": [...]}]}
Prints the response as JSON: {"model_name", "outputs": [{"name", "datatype", "shape", "data"}]}.
On a gRPC error prints {"code": "...", "message": "..."} and exits 2.
"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import grpc_predict_v2_pb2 as pb  # noqa: E402

METHOD = "/inference.GRPCInferenceService/ModelInfer"


def main():
    target, key = sys.argv[2], sys.argv[3]
    spec = json.load(sys.stdin)
    request = pb.ModelInferRequest(model_name=spec["model"], id=spec.get("id", ""))
    for t in spec["inputs"]:
        tensor = request.inputs.add(name=t["name"], datatype=t["datatype"], shape=t["shape"])
        if t["datatype"] != "FP32":
            raise SystemExit("this client sends FP32 only")
        if spec.get("raw"):
            request.raw_input_contents.append(struct.pack("<%df" % len(t["data"]), *t["data"]))
        else:
            tensor.contents.fp32_contents.extend(t["data"])
    with grpc.insecure_channel(target) as channel:
        infer = channel.unary_unary(METHOD, request_serializer=pb.ModelInferRequest.SerializeToString,
                                    response_deserializer=pb.ModelInferResponse.FromString)
        try:
            response = infer(request, metadata=[("authorization", "Bearer " + key)], timeout=30)
        except grpc.RpcError as e:
            print(json.dumps({"code": e.code().name, "message": e.details()}))
            sys.exit(2)
    outputs = []
    for i, o in enumerate(response.outputs):
        if len(response.raw_output_contents) > 0:
            raw = response.raw_output_contents[i]
            data = list(struct.unpack("<%df" % (len(raw) // 4), raw))
        else:
            data = list(o.contents.fp32_contents)
        outputs.append({"name": o.name, "datatype": o.datatype, "shape": list(o.shape), "data": data})
    print(json.dumps({"model_name": response.model_name, "id": response.id, "outputs": outputs}))


if __name__ == "__main__":
    main()

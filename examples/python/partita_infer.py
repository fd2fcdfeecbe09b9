#!/usr/bin/env python3
"""Ask Partita for one inference straight over Kafka, with nothing but confluent-kafka and avro.

It follows docs/wire-format.md step by step:

  1. Encode an InferenceRequest in Avro single-object encoding:
     C3 01 | CRC-64-AVRO fingerprint of the writer schema (8 bytes, little-endian) | Avro binary body.
  2. Produce it to <prefix>.requests.<base model> (one topic per base model, shared by all its
     service models; for a model served without weight files the base model is the model itself)
     with key = request id and the headers service-model, reply-to, correlation-id and deadline.
  3. Read <prefix>.replies.<client id> (this script's own topic, read from its end) until the reply
     whose correlation-id is ours arrives; any other reply, and a second copy of ours, is dropped.
  4. Decode the reply with the writer schema its fingerprint names, taken from the schema history
     (schemas/src/main/resources/io/partita/schemas/history), so replies written by a newer Partita
     still decode.

Requirements: confluent-kafka and avro (pip install confluent-kafka avro; on Debian/Ubuntu
apt install python3-confluent-kafka python3-avro). Run ./partita local first, then:

  python3 examples/python/partita_infer.py --base-model demo-mlp --model demo-a --data 1,2,3,4,5,6,7,8
"""

import argparse
import io
import json
import pathlib
import struct
import sys
import time
import uuid

import avro.io
import avro.schema
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

HISTORY = pathlib.Path(__file__).resolve().parents[2] / "schemas/src/main/resources/io/partita/schemas/history"
MAGIC = b"\xc3\x01"

# --- 1. Single-object encoding: the schema fingerprint --------------------------------------------

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def canonical(schema, namespace=None, seen=None):
    """Avro's Parsing Canonical Form of a schema given as parsed JSON (the Avro specification's rules:
    full names, only the attributes that matter for parsing, in a fixed order, no whitespace)."""
    seen = set() if seen is None else seen
    if isinstance(schema, list):
        return "[" + ",".join(canonical(s, namespace, seen) for s in schema) + "]"
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return json.dumps(schema)
        return json.dumps(schema if "." in schema or not namespace else namespace + "." + schema)
    kind = schema["type"]
    if isinstance(kind, (dict, list)):
        return canonical(kind, namespace, seen)
    if kind in PRIMITIVES:
        return json.dumps(kind)
    if kind == "array":
        return '{"type":"array","items":' + canonical(schema["items"], namespace, seen) + "}"
    if kind == "map":
        return '{"type":"map","values":' + canonical(schema["values"], namespace, seen) + "}"
    if kind in ("record", "error", "enum", "fixed"):
        name = schema["name"]
        if "." in name:
            full, namespace = name, name.rsplit(".", 1)[0]
        else:
            namespace = schema.get("namespace", namespace)
            full = namespace + "." + name if namespace else name
        if full in seen:
            return json.dumps(full)
        seen.add(full)
        out = '{"name":' + json.dumps(full) + ',"type":' + json.dumps(kind)
        if kind in ("record", "error"):
            fields = ",".join('{"name":' + json.dumps(f["name"]) + ',"type":' + canonical(f["type"], namespace, seen) + "}"
                              for f in schema["fields"])
            out += ',"fields":[' + fields + "]"
        elif kind == "enum":
            out += ',"symbols":[' + ",".join(json.dumps(s) for s in schema["symbols"]) + "]"
        else:
            out += ',"size":' + str(schema["size"])
        return out + "}"
    return canonical(kind, namespace, seen)  # a reference to a named type


EMPTY = 0xC15D213AA4D7A795
TABLE = []
for _i in range(256):
    _fp = _i
    for _ in range(8):
        _fp = (_fp >> 1) ^ (EMPTY & -(_fp & 1))
    TABLE.append(_fp)


def fingerprint(schema_json):
    """CRC-64-AVRO (Rabin) fingerprint of the schema's canonical form, as 8 little-endian bytes."""
    fp = EMPTY
    for b in canonical(schema_json).encode("utf-8"):
        fp = (fp >> 8) ^ TABLE[(fp ^ b) & 0xFF]
    return fp.to_bytes(8, "little")


def load_history(directory):
    """Every released schema version, by fingerprint: {fingerprint: (full name, parsed schema)}."""
    schemas = {}
    for path in sorted(pathlib.Path(directory).glob("*.avsc")):
        text = path.read_text()
        parsed = json.loads(text)
        name = parsed["name"] if "." in parsed["name"] else parsed.get("namespace", "") + "." + parsed["name"]
        schemas[fingerprint(parsed)] = (name, avro.schema.parse(text))
    return schemas


def latest(schemas, full_name):
    """The newest released version of a record (history files are named <Name>-v<N>.avsc)."""
    versions = [(fp, s) for fp, (name, s) in schemas.items() if name == full_name]
    if not versions:
        sys.exit(f"no schema for {full_name} in the schema history")
    return versions[-1]


def encode(fp, schema, record):
    out = io.BytesIO()
    out.write(MAGIC + fp)
    avro.io.DatumWriter(schema).write(record, avro.io.BinaryEncoder(out))
    return out.getvalue()


def decode(schemas, full_name, value):
    if value[:2] != MAGIC:
        raise ValueError("not Avro single-object encoding")
    entry = schemas.get(value[2:10])
    if entry is None or entry[0] != full_name:
        raise ValueError(f"unknown writer schema fingerprint {value[2:10].hex()} (update the schema history)")
    reader = avro.io.DatumReader(entry[1], entry[1])
    return reader.read(avro.io.BinaryDecoder(io.BytesIO(value[10:])))


# --- 2.-4. Produce the request, read the reply -----------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", default="localhost:19092", help="Kafka bootstrap servers (default: %(default)s)")
    ap.add_argument("--prefix", default="partita", help="Partita's topic prefix (default: %(default)s)")
    ap.add_argument("--model", default="demo-a", help="service model (default: %(default)s)")
    ap.add_argument("--base-model", default=None,
                    help="the base model the service model is built on, which names the request topic "
                         "(default: demo-mlp for the demo service models, else the service model itself)")
    ap.add_argument("--input", default="input", help="input tensor name (default: %(default)s)")
    ap.add_argument("--data", default="1,2,3,4,5,6,7,8", help="one FP32 row, comma-separated (default: %(default)s)")
    ap.add_argument("--client-id", default="py-" + uuid.uuid4().hex[:8], help="names this script's reply topic")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the reply (default: %(default)s)")
    ap.add_argument("--schemas", default=str(HISTORY), help="the schema history directory")
    args = ap.parse_args()

    schemas = load_history(args.schemas)
    request_fp, request_schema = latest(schemas, "io.partita.avro.InferenceRequest")

    row = [float(v) for v in args.data.split(",")]
    request_id = str(uuid.uuid4())
    request = {
        "id": request_id,
        "serviceModel": args.model,
        "version": None,
        "inputs": [{
            "name": args.input,
            "datatype": "FP32",
            "shape": [1, len(row)],
            "data": struct.pack("<%df" % len(row), *row),  # little-endian raw bytes, row-major
        }],
        "outputs": [],
        "parameters": {},
    }
    base_model = args.base_model or ("demo-mlp" if args.model in ("demo", "demo-a", "demo-b", "demo-c") else args.model)
    request_topic = f"{args.prefix}.requests.{base_model}"
    reply_topic = f"{args.prefix}.replies.{args.client_id}"

    # The reply topic is ours: create it if it is missing.
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    for topic, future in admin.create_topics([NewTopic(reply_topic, num_partitions=1, replication_factor=1)]).items():
        try:
            future.result()
        except KafkaException as e:
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise

    # Read the reply topic from its end, fixed before the request goes out, so no reply is missed.
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": args.client_id, "enable.auto.commit": False})
    _, end = consumer.get_watermark_offsets(TopicPartition(reply_topic, 0), timeout=10)
    consumer.assign([TopicPartition(reply_topic, 0, end)])

    producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True})
    deadline_ms = int(time.time() * 1000 + args.timeout * 1000)
    producer.produce(request_topic, key=request_id, value=encode(request_fp, request_schema, request),
                     headers=[("service-model", args.model.encode()),
                              ("reply-to", reply_topic.encode()), ("correlation-id", request_id.encode()),
                              ("deadline", str(deadline_ms).encode())])
    producer.flush(10)

    try:
        while time.time() * 1000 < deadline_ms:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            headers = dict(message.headers() or [])
            correlation = headers.get("correlation-id", message.key() or b"").decode()
            if correlation != request_id:
                continue  # someone else's, or a late one: drop it
            reply = decode(schemas, "io.partita.avro.InferenceReply", message.value())
            if reply["error"]:
                print(json.dumps({"error": reply["error"]["message"], "code": reply["error"]["code"]}))
                return 1
            outputs = []
            for t in reply["outputs"]:
                count = len(t["data"]) // 4
                values = struct.unpack("<%df" % count, t["data"]) if t["datatype"] == "FP32" else list(t["data"])
                outputs.append({"name": t["name"], "datatype": t["datatype"], "shape": t["shape"], "data": list(values)})
            print(json.dumps({"model_name": reply["serviceModel"], "model_version": reply["modelVersion"],
                              "id": reply["id"], "outputs": outputs}))
            return 0
        print(json.dumps({"error": f"no reply within {args.timeout} s"}))
        return 2
    finally:
        consumer.close()


if __name__ == "__main__":
    sys.exit(main())

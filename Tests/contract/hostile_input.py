#!/usr/bin/env python3
"""Sends every operation in openapi.yaml hostile values — in each path, query and header parameter, in each field of
its JSON body, and as whole malformed bodies — against the real binary, and checks that the service never answers
5xx and that every error is application/problem+json with a JSON body. Driven by the document: a new operation or
parameter is covered without editing this file.

    hostile_input.py BINARY        (DATABASE_URL must point at an empty or migrated database)
"""
import http.client, json, os, pathlib, signal, socket, subprocess, sys, time, urllib.parse

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())
ADMIN = "hostile-admin-token-0123456789"
METRICS = "hostile-metrics-token-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HOSTILE_STRINGS = ["\u0000", "a\u0000b", "\ud800", "\udfff x", "x" * 70000, "", " ", "\u202e\u200b", "../../etc/passwd",
                   "' OR 1=1 --", "%00", "\\", "😀" * 300, "\r\nX-Injected: 1"]
HOSTILE_VALUES = HOSTILE_STRINGS + [-1, 0, 2**63, -(2**63) - 1, 1e309, 1.5, True, None, [], {}, [1, 2], {"a": {"b": None}}]
HOSTILE_PARAMS = ["", "-1", "0", "99999999999999999999", "abc", "%00", "\u0000", "..", "x" * 5000, "1e309",
                  "djEuOTIyMzM3MjAzNjg1NDc3NTgwNy4wMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA",  # v1.2^63-1.<uuid>
                  "djEuLTkyMjMzNzIwMzY4NTQ3NzU4MDguMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAw",  # v1.-2^63.<uuid>
                  "\ud800", "😀", "null", "[]", "{}", "true"]
STRUCTURAL = {"", ".."}
HOSTILE_HEADERS = ["", "-1", "x" * 300, "99999999999999999999", "abc def", "\u00e9", "9223372036854775807"]
RAW_BODIES = [b'{"a":1,"a":2}', b"{,}", b"[1,2,]", b'{"a":1,}', b"{", b"]", b"null", b"[]", b'"text"', b"42",
              b"\xff\xfe", b'{"x":"\xc0\xaf"}', b"[" * 200 + b"]" * 200, b'{"a":' * 100 + b"1" + b"}" * 100,
              b'{"t":"\\ud800"}', b'{"t":"\\u0000"}', b"\x00", b"{} {}", b'{"a":NaN}', b"// c\n{}"]


class Service:
    def __init__(self, binary):
        self.port = free_port()
        env = dict(os.environ, PORT=str(self.port), STREAM_PORT="off", HOST="127.0.0.1", LOG_LEVEL="error",
                   SWITCHBOARD_ADMIN_TOKEN=ADMIN, METRICS_TOKEN=METRICS, RATE_LIMIT_PER_MINUTE="0",
                   STREAMS_PER_PRINCIPAL="100000")
        self.process = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if self.call("GET", "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("hostile: the service did not become ready")

    def call(self, method, path, headers=None, body=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            if body is not None:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            content_type = response.getheader("Content-Type", "")
            if content_type.startswith("text/event-stream"):
                return response.status, content_type, b""
            return response.status, content_type, response.read()
        finally:
            connection.close()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def png_chunk(kind, data):
    import zlib
    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


def hostile_files():
    """Files that lie about what they are: other types' magic, truncations, impossible lengths, bombs."""
    import zlib
    png_signature = b"\x89PNG\r\n\x1a\n"
    bomb = png_signature + png_chunk(b"IHDR", (100000).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])) \
        + png_chunk(b"IDAT", zlib.compress(bytes(2 << 20), 9)) + png_chunk(b"IEND", b"")
    return {
        "random": os.urandom(1024), "empty": b"", "png-signature-only": png_signature,
        "png-truncated-ihdr": png_signature + b"\x00\x00\x00\x0dIHDR\x00\x00",
        "png-chunk-length-huge": png_signature + b"\xff\xff\xff\xffIHDR" + b"\x00" * 64,
        "png-decompression-bomb": bomb,
        "jpeg-segment-past-end": b"\xff\xd8\xff\xe1\xff\xffExif\x00\x00" + b"\x00" * 100,
        "jpeg-no-eoi": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xda\x00\x02",
        "gif-huge-screen": b"GIF89a\xff\xff\xff\xff\x00\x00\x00;",
        "webp-riff-size-lies": b"RIFF\xff\xff\xff\x7fWEBPVP8X\x0a\x00\x00\x00" + b"\x00" * 10,
        "heic-box-size-zero": b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic\x00\x00\x00\x00meta",
        "zip-bomb": b"PK\x03\x04" + bytes(26) + zlib.compress(bytes(4 << 20), 9),
        "pdf-magic": b"%PDF-1.7\n%%EOF\n", "nul-text": b"hello\x00world", "bad-utf8": b"caf\xc3(",
    }


def raw_exchange(port, data, half_close=True, timeout=5):
    """Sends `data` on a fresh connection (then closes its sending side) and reads until the server closes or answers;
    returns (status or None, seconds). None means the connection closed without an answer."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        received = b""
        try:
            while b"\r\n" not in received:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                received += chunk
        except ConnectionResetError:
            pass
    status = int(received.split(b" ")[1]) if received.startswith(b"HTTP/1.") else None
    return status, time.monotonic() - started


def encode(value):
    """Percent-encodes any text, lone surrogates included (as the bytes a careless client would send)."""
    return urllib.parse.quote(str(value).encode("utf-8", "surrogatepass"), safe="")


def example(schema):
    """A plausible valid value for a JSON schema (required fields only)."""
    schema = resolve(schema)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = [k for k in kind if k != "null"][0]
    if kind == "object":
        return {name: example(sub) for name, sub in schema.get("properties", {}).items() if name in schema.get("required", [])}
    if kind == "integer":
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if schema.get("format") == "uri":
        return "https://example.com/a"
    if schema.get("format") == "date-time":
        return "2024-01-01T00:00:00Z"
    return "hostile"


def resolve(schema):
    while isinstance(schema, dict) and "$ref" in schema:
        node = SPEC
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema or {}


def main():
    service = Service(sys.argv[1])
    checked, problems, statuses = 0, [], {}
    try:
        tenant = json.loads(service.call("POST", "/v1/admin/tenants", {"Authorization": f"Bearer {ADMIN}",
                                                                       "Content-Type": "application/json"},
                                         b'{"name":"Hostile"}')[2])
        key = tenant["api_key"]

        def session(user, role):
            body = json.dumps({"user_id": user, "role": role}).encode()
            return json.loads(service.call("POST", "/v1/sessions", {"Authorization": f"Bearer {key}",
                                                                   "Content-Type": "application/json"}, body)[2])["token"]

        tokens = {"adminToken": ADMIN, "apiKey": key, "metricsToken": METRICS,
                  "session": session("agent-h", "agent")}
        customer = session("customer-h", "customer")
        interaction = json.loads(service.call("POST", "/v1/interactions", {"Authorization": f"Bearer {customer}",
                                                                          "Content-Type": "application/json"}, b"{}")[2])["id"]
        item = json.loads(service.call("POST", "/v1/feeds/news/items", {"Authorization": f"Bearer {key}",
                                                                        "Content-Type": "application/json"},
                                       b'{"title":"t"}')[2])["id"]
        valid = {"id": interaction, "key": "news", "key_id": "00000000-0000-0000-0000-000000000000",
                 "user_id": "nobody-h"}

        undocumented = set()

        def check(method, path, headers, body, what, documented=()):
            nonlocal checked
            try:
                status, content_type, raw = service.call(method, path, headers, body, timeout=5)
            except (TimeoutError, socket.timeout):
                problems.append(f"{what}: no answer within 5 s")
                return
            except (ConnectionError, http.client.HTTPException) as error:
                problems.append(f"{what}: {type(error).__name__}")
                return
            checked += 1
            statuses[status] = statuses.get(status, 0) + 1
            if documented and str(status) not in documented:
                undocumented.add(f"{what.split(' ')[0]} {what.split(' ')[1]} answers {status}, not in openapi.yaml")
            if status >= 500:
                problems.append(f"{what}: {status} {raw[:200]!r}")
            elif status >= 400:
                if not content_type.startswith("application/problem+json"):
                    problems.append(f"{what}: {status} with {content_type!r}")
                else:
                    try:
                        body_json = json.loads(raw)
                        if body_json.get("status") != status:
                            problems.append(f"{what}: problem status {body_json.get('status')} != {status}")
                    except ValueError:
                        problems.append(f"{what}: problem body is not JSON")

        operations = 0
        for template, item_ops in SPEC["paths"].items():
            shared = item_ops.get("parameters", [])
            for method, operation in item_ops.items():
                if method not in ("get", "post", "patch", "delete", "put"):
                    continue
                operations += 1
                parameters = [resolve(p) for p in shared + operation.get("parameters", [])]
                security = (operation.get("security") or [{}])[0]
                auth = {"Authorization": f"Bearer {tokens[next(iter(security))]}"} if security else {}
                path_values = {p["name"]: (item if p["name"] == "id" and "/items/" in template else valid.get(p["name"], "x"))
                               for p in parameters if p["in"] == "path"}
                body_schema = None
                content = (operation.get("requestBody") or {}).get("content", {})
                if "application/json" in content:
                    body_schema = resolve(content["application/json"]["schema"])

                def build(path_override=None, query=None):
                    values = dict(path_values, **(path_override or {}))
                    path = template
                    for name, value in values.items():
                        path = path.replace("{" + name + "}", encode(value))
                    if query:
                        path += "?" + "&".join(f"{encode(k)}={encode(v)}" for k, v in query.items())
                    return path

                documented = set(operation.get("responses", {}))

                def check_here(verb, path, headers, body, what):
                    check(verb, path, headers, body, what, documented)

                base_body = json.dumps(example(body_schema)).encode() if body_schema else None
                json_headers = dict(auth, **({"Content-Type": "application/json"} if body_schema else {}))
                verb = method.upper()
                for p in parameters:
                    for value in HOSTILE_PARAMS:
                        if p["in"] == "path":
                            # "" and ".." make another path (another operation's answers): checked, not charged here.
                            checker = check if value in STRUCTURAL else check_here
                            checker(verb, build({p["name"]: value}), json_headers, base_body, f"{verb} {template} path {p['name']}={value[:20]!r}")
                        elif p["in"] == "query":
                            check_here(verb, build(query={p["name"]: value}), json_headers, base_body, f"{verb} {template} ?{p['name']}={value[:20]!r}")
                    if p["in"] == "header" and p["name"].lower() != "authorization":
                        for value in HOSTILE_HEADERS:
                            headers = dict(json_headers, **{p["name"]: value})
                            check_here(verb, build(), headers, base_body, f"{verb} {template} header {p['name']}={value[:20]!r}")
                binary_types = [kind for kind in content if kind != "application/json"]
                if binary_types:
                    upload_path = build()
                    for kind in binary_types:
                        for name, raw in hostile_files().items():
                            check_here(verb, upload_path, dict(auth, **{"Content-Type": kind}), raw,
                                       f"{verb} {template} {kind} {name}")
                    check_here(verb, upload_path, dict(auth, **{"Content-Type": "application/x-msdownload"}), b"MZ" + bytes(100),
                               f"{verb} {template} unaccepted type")
                    check_here(verb, upload_path, auth, b"hello", f"{verb} {template} no type")
                    head = (f"{verb} {upload_path} HTTP/1.1\r\nHost: x\r\n{'Authorization: ' + auth['Authorization'] + chr(13) + chr(10) if auth else ''}"
                            f"Content-Type: {binary_types[-1]}\r\n")
                    wire = {
                        "truncated body": head + "Content-Length: 100000\r\n\r\n" + "a" * 1000,
                        "length shorter than body": head + "Content-Length: 10\r\n\r\n" + "a" * 2000,
                        "chunk size not hex": head + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
                        "chunk size negative": head + "Transfer-Encoding: chunked\r\n\r\n-1\r\nabc\r\n0\r\n\r\n",
                        "chunk size overflowing": head + "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nabc\r\n",
                        "chunk longer than sent": head + "Transfer-Encoding: chunked\r\n\r\n1000\r\nabc",
                        "length and chunked": head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                        "length over the limit": head + f"Content-Length: {(10 << 20) + 1}\r\n\r\n" + "a" * 5000,
                    }
                    for name, text in wire.items():
                        try:
                            status, seconds = raw_exchange(service.port, text.encode())
                        except (TimeoutError, socket.timeout):
                            problems.append(f"{verb} {template} {name}: stuck (no answer or close within 5 s)")
                            continue
                        checked += 1
                        statuses[status or 0] = statuses.get(status or 0, 0) + 1
                        if status is not None and status >= 500:
                            problems.append(f"{verb} {template} {name}: {status}")
                if body_schema:
                    for name in resolve(body_schema).get("properties", {}):
                        for value in HOSTILE_VALUES:
                            body = dict(example(body_schema), **{name: value})
                            raw = json.dumps(body, ensure_ascii=True, allow_nan=True).encode()
                            check_here(verb, build(), json_headers, raw, f"{verb} {template} {name}={str(value)[:20]!r}")
                    for raw in RAW_BODIES:
                        check_here(verb, build(), json_headers, raw, f"{verb} {template} body {raw[:20]!r}")
                    check_here(verb, build(), dict(auth, **{"Content-Type": "text/plain"}), base_body, f"{verb} {template} text/plain")
        problems += sorted(undocumented)
        if problems:
            print("\n".join(problems[:50]), file=sys.stderr)
            raise SystemExit(f"hostile input: {len(problems)} problems in {checked} requests")
        seen = ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items()))
        print(f"hostile input: {checked} requests over {operations} operations, no 5xx, every error problem+json ({seen})")
    finally:
        service.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The README's walk-through against the real binary, with every response validated against openapi.yaml
(status, headers and JSON body schema for that status) by openapi-core.

    walkthrough.py BINARY        (DATABASE_URL must point at an empty or migrated database)
"""
import json, os, pathlib, re, signal, socket, subprocess, sys, time, urllib.error, urllib.request

from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = OpenAPI.from_file_path(str(ROOT / "openapi.yaml"),
                              config=Config(extra_media_type_deserializers={"application/problem+json": json.loads}))
ADMIN = "walkthrough-admin-token-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port, stream_port, dead_port = free_port(), free_port(), free_port()
env = dict(os.environ, PORT=str(port), STREAM_PORT=str(stream_port), HOST="127.0.0.1", LOG_LEVEL="error",
           SWITCHBOARD_ADMIN_TOKEN=ADMIN, RATE_LIMIT_PER_MINUTE="600",
           # Webhooks go to a local port nobody listens on: attempts fail at once and show in the attempt log.
           WEBHOOK_ALLOW_PRIVATE_TARGETS="1")
server = subprocess.Popen([sys.argv[1], "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{port}"
checked = 0


def call(method, path, token=None, body=None, headers=None, expect=None, raw=None, content_type=None):
    """One request; `raw` sends bytes as the body with `content_type` instead of `body` as JSON."""
    global checked
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", content_type or "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw, response_headers = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, raw, response_headers = error.code, error.read(), dict(error.headers)
    mock_request = MockRequest("http://localhost:8080", method.lower(), path.split("?")[0],
                               args=dict(p.split("=", 1) for p in path.split("?")[1].split("&")) if "?" in path else {},
                               headers={k: v for k, v in request.header_items()},
                               data=data)
    content_type = response_headers.get("Content-Type", "application/json").split(";")[0]
    mock_response = MockResponse(raw, status_code=status, headers=response_headers, content_type=content_type)
    spec.validate_response(mock_request, mock_response)
    checked += 1
    if expect is not None and status != expect:
        raise SystemExit(f"{method} {path}: expected {expect}, got {status}: {raw[:300]!r}")
    return json.loads(raw) if raw and content_type.endswith("json") else None


try:
    for _ in range(200):
        try:
            if urllib.request.urlopen(base + "/readyz", timeout=1).status == 200:
                break
        except Exception:
            time.sleep(0.1)
    call("GET", "/healthz", expect=200)
    call("GET", "/openapi.yaml", expect=200)
    call("GET", "/readyz", expect=200)
    tenant = call("POST", "/v1/admin/tenants", ADMIN, {"name": "Acme Bank"}, expect=201)
    key = tenant["api_key"]
    call("POST", f"/v1/admin/tenants/{tenant['id']}/keys", ADMIN, expect=201)
    customer = call("POST", "/v1/sessions", key, {"user_id": "alice", "role": "customer"}, expect=201)["token"]
    agent = call("POST", "/v1/sessions", key, {"user_id": "agent-7", "role": "agent", "ttl_seconds": 3600}, expect=201)["token"]
    call("GET", "/v1/sessions/current", customer, expect=200)
    call("POST", "/v1/feeds/news/items", key, {"title": "Rates are changing", "url": "https://example.com/rates"}, expect=201)
    item = call("POST", "/v1/feeds/news/items", agent, {"title": "Second", "body": "text"}, expect=201)
    call("PATCH", f"/v1/feeds/news/items/{item['id']}", agent, {"image_url": None, "title": "Second, edited"}, expect=200)
    page = call("GET", "/v1/feeds/news?limit=1", customer, expect=200)
    call("GET", f"/v1/feeds/news?limit=1&cursor={page['next_cursor']}", customer, expect=200)
    call("DELETE", f"/v1/feeds/news/items/{item['id']}", agent, expect=204)
    interaction = call("POST", "/v1/interactions", customer, {"subject": "Card blocked"}, expect=201)
    iid = interaction["id"]
    call("GET", f"/v1/interactions/{iid}", customer, expect=200)
    call("GET", "/v1/interactions?state=started", agent, expect=200)
    call("POST", f"/v1/interactions/{iid}/messages", customer, {"text": "Hello?"}, headers={"Idempotency-Key": "m-1"}, expect=201)
    call("POST", f"/v1/interactions/{iid}/messages", customer, {"text": "Hello?"}, headers={"Idempotency-Key": "m-1"}, expect=201)
    call("POST", f"/v1/interactions/{iid}/messages", agent, {"text": "Hi, how can I help?"}, expect=201)
    call("GET", f"/v1/interactions/{iid}/messages?limit=10", customer, expect=200)
    # Attachments: an upload, sent with a message, downloaded whole, in a range and conditionally; each error.
    upload = f"/v1/interactions/{iid}/attachments"
    statement = b"Statement for March\n" * 100
    attachment = call("POST", upload + "?filename=march.txt", customer, raw=statement, content_type="text/plain",
                      headers={"Idempotency-Key": "a-1"}, expect=201)
    call("POST", upload + "?filename=march.txt", customer, raw=statement, content_type="text/plain",
         headers={"Idempotency-Key": "a-1"}, expect=201)
    call("POST", upload, customer, raw=b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="application/pdf", expect=415)
    call("POST", upload, customer, raw=b"MZ", content_type="application/x-msdownload", expect=415)
    call("POST", upload, None, raw=statement, content_type="text/plain", expect=401)
    call("POST", "/v1/interactions/00000000-0000-0000-0000-000000000000/attachments", customer, raw=statement,
         content_type="text/plain", expect=404)
    call("GET", f"/v1/attachments/{attachment['id']}", agent, expect=404)  # not sent yet: its uploader's only
    call("POST", f"/v1/interactions/{iid}/messages", customer, {"attachment_ids": [attachment["id"]]}, expect=201)
    call("POST", f"/v1/interactions/{iid}/messages", customer, {"text": "again", "attachment_ids": [attachment["id"]]},
         expect=422)
    call("GET", f"/v1/attachments/{attachment['id']}", agent, expect=200)
    call("GET", f"/v1/attachments/{attachment['id']}?inline=1", agent, headers={"Range": "bytes=-10"}, expect=206)
    call("GET", f"/v1/attachments/{attachment['id']}", agent, headers={"Range": "bytes=99999-"}, expect=416)
    call("GET", f"/v1/attachments/{attachment['id']}", None, expect=401)
    call("GET", "/v1/attachments/00000000-0000-0000-0000-000000000000", agent, expect=404)
    call("POST", f"/v1/interactions/{iid}/typing", agent, {"typing": True}, expect=202)
    call("POST", f"/v1/interactions/{iid}/media", agent, {"kind": "video", "state": "requested"},
         headers={"Idempotency-Key": "k-7"}, expect=201)
    # Read positions and assignment, with each documented error.
    colleague = call("POST", "/v1/sessions", key, {"user_id": "agent-8", "role": "agent"}, expect=201)["token"]
    call("GET", "/v1/interactions?assigned=none", agent, expect=200)
    claimed = call("POST", f"/v1/interactions/{iid}/claim", agent, expect=200)
    assert claimed["assigned_agent_id"] == "agent-7", claimed
    call("POST", f"/v1/interactions/{iid}/claim", agent, headers={"Idempotency-Key": "c-1"}, expect=200)
    call("POST", f"/v1/interactions/{iid}/claim", colleague, expect=409)
    call("POST", f"/v1/interactions/{iid}/claim", customer, expect=403)
    call("POST", f"/v1/interactions/{iid}/claim", key, expect=401)
    call("POST", f"/v1/interactions/{iid}/claim", agent, headers={"Idempotency-Key": "k-7"}, expect=422)
    call("POST", "/v1/interactions/00000000-0000-0000-0000-000000000000/claim", agent, expect=404)
    call("GET", "/v1/interactions?assigned=me", agent, expect=200)
    call("GET", "/v1/interactions?assigned=me", customer, expect=400)
    call("POST", f"/v1/interactions/{iid}/assign", key, {"agent_id": "agent-8"}, expect=200)
    call("POST", f"/v1/interactions/{iid}/assign", colleague, {"agent_id": None}, expect=200)
    call("POST", f"/v1/interactions/{iid}/assign", agent, {"agent_id": ""}, expect=400)
    call("POST", f"/v1/interactions/{iid}/assign", customer, {"agent_id": "agent-7"}, expect=403)
    call("POST", f"/v1/interactions/{iid}/assign", "sbk_unknown", {"agent_id": "agent-7"}, expect=401)
    call("POST", "/v1/interactions/00000000-0000-0000-0000-000000000000/assign", agent, {"agent_id": None}, expect=404)
    call("POST", f"/v1/interactions/{iid}/assign", agent, {"agent_id": "agent-7"},
         headers={"Content-Type": "text/plain"}, expect=415)
    call("POST", f"/v1/interactions/{iid}/assign", agent, {"agent_id": "agent-7"}, headers={"Idempotency-Key": "c-1"}, expect=422)
    unread = call("GET", f"/v1/interactions/{iid}", customer, expect=200)["unread_count"]
    assert unread == 1, unread
    last = call("GET", f"/v1/interactions/{iid}/messages?limit=10", customer, expect=200)["items"][-1]["seq"]
    position = call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": last}, expect=200)
    assert position == {"read_through": last, "unread_count": 0}, position
    call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": 1}, expect=200)
    call("POST", f"/v1/interactions/{iid}/read", agent, {"event_id": last}, headers={"Idempotency-Key": "r-1"}, expect=200)
    call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": 10**6}, expect=400)
    call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": -1}, expect=400)
    call("POST", f"/v1/interactions/{iid}/read", key, {"event_id": 1}, expect=401)
    call("POST", "/v1/interactions/00000000-0000-0000-0000-000000000000/read", customer, {"event_id": 1}, expect=404)
    call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": 1}, headers={"Content-Type": "text/plain"}, expect=415)
    call("POST", f"/v1/interactions/{iid}/read", customer, {"event_id": 1}, headers={"Idempotency-Key": "m-1"}, expect=422)
    other = call("GET", f"/v1/interactions/{iid}", agent, expect=200)
    assert other["read_by_other_through"] == last and other["unread_count"] == 0, other
    # The agents' side: notes, presence, settings, and the inbox stream's refusals.
    note = call("POST", f"/v1/interactions/{iid}/notes", agent, {"text": "private"}, expect=201)
    assert note["note_seq"] == 1, note
    call("POST", f"/v1/interactions/{iid}/notes", customer, {"text": "x"}, expect=403)
    call("POST", f"/v1/interactions/{iid}/notes", agent, {"text": ""}, expect=400)
    call("POST", "/v1/interactions/00000000-0000-0000-0000-000000000000/notes", agent, {"text": "x"}, expect=404)
    assert [n["text"] for n in call("GET", f"/v1/interactions/{iid}/notes", agent, expect=200)["items"]] == ["private"]
    call("GET", f"/v1/interactions/{iid}/notes?cursor=x", agent, expect=400)
    call("GET", f"/v1/interactions/{iid}/notes", customer, expect=403)
    assert call("POST", "/v1/agents/me/status", agent, {"status": "away"}, expect=200)["agent_id"] == "agent-7"
    call("POST", "/v1/agents/me/status", agent, {"status": "offline"}, expect=400)
    call("POST", "/v1/agents/me/status", customer, {"status": "away"}, expect=403)
    call("GET", "/v1/agents", key, expect=200)
    call("GET", "/v1/agents", agent, expect=200)
    call("GET", "/v1/agents", customer, expect=403)
    assert call("GET", "/v1/support/status", customer, expect=200)["agents_online"] == 0
    call("GET", "/v1/settings", key, expect=200)
    call("PATCH", "/v1/settings", key, {"auto_assign": "round_robin", "max_open_per_agent": 3}, expect=200)
    call("PATCH", "/v1/settings", key, {"auto_assign": "sometimes"}, expect=400)
    call("PATCH", "/v1/settings", agent, {"auto_assign": "off"}, expect=401)
    call("PATCH", "/v1/settings", key, {"auto_assign": "off"}, expect=200)
    call("PATCH", "/v1/settings", key, {"retention_days": 365}, expect=200)
    call("PATCH", "/v1/settings", key, {"retention_days": 0}, expect=400)
    call("PATCH", "/v1/settings", key, {"retention_days": None}, expect=200)
    call("GET", "/v1/users/held-user/hold", key, expect=404)
    call("POST", "/v1/users/held-user/hold", key, {"reason": "litigation"}, expect=201)
    call("POST", "/v1/users/held-user/hold", key, expect=200)
    call("GET", "/v1/users/held-user/hold", key, expect=200)
    call("POST", "/v1/users/held-user/hold", key, {"reason": ""}, expect=400)
    call("POST", "/v1/users/held-user/hold", agent, expect=401)
    call("DELETE", "/v1/users/held-user/data", key, expect=409)
    call("DELETE", "/v1/users/held-user/hold", key, expect=204)
    call("DELETE", "/v1/users/held-user/hold", key, expect=404)
    # An erasure: accepted, followed by id, and while it is pending the user cannot sign in.
    call("POST", "/v1/sessions", key, {"user_id": "gone-user", "role": "customer"}, expect=201)
    erasure = call("DELETE", "/v1/users/gone-user/data", key, expect=202)
    assert erasure["state"] == "pending" and "user_id" not in erasure, erasure
    assert call("DELETE", "/v1/users/gone-user/data", key, expect=202)["id"] == erasure["id"]
    assert call("GET", f"/v1/erasures/{erasure['id']}", key, expect=200)["id"] == erasure["id"]
    call("POST", "/v1/sessions", key, {"user_id": "gone-user", "role": "customer"}, expect=409)
    call("GET", "/v1/erasures/00000000-0000-0000-0000-000000000000", key, expect=404)
    call("DELETE", "/v1/users/gone-user/data", agent, expect=401)
    # Alice's data, with a signed link to her file that needs no credentials.
    export = call("GET", "/v1/users/alice/export?include_notes=1", key, expect=200)
    links = [a["download_url"] for i in export["interactions"] for m in i["messages"] for a in m["attachments"]]
    assert links, "the export carries alice's attachment"
    call("GET", links[0], None, expect=200)
    call("GET", links[0].replace("signature=", "signature=00")[:-2], None, expect=403)
    call("GET", "/v1/users/alice/export?include_notes=2", key, expect=400)
    call("GET", "/v1/users/alice/export", agent, expect=401)
    call("GET", "/v1/inbox/events", customer, expect=403)
    call("GET", "/v1/inbox/events?assigned=mine", agent, expect=400)
    call("GET", "/v1/inbox/events", agent, headers={"Last-Event-ID": "forged"}, expect=400)
    call("POST", f"/v1/interactions/{iid}/end", customer, expect=200)
    call("GET", f"/v1/interactions/{iid}/events", customer, headers={"Last-Event-ID": "999"}, expect=204)
    live = call("POST", "/v1/interactions", customer, {"subject": "Still open"}, expect=201)["id"]
    call("GET", f"/v1/interactions/{live}/events", customer, headers={"Last-Event-ID": "999"}, expect=400)
    failed = call("POST", "/v1/interactions", customer, {}, expect=201)["id"]
    call("POST", f"/v1/interactions/{failed}/fail", agent, {"reason": "line dropped"}, expect=200)
    # Webhooks: register, read, change, rotate, one event's attempts, redelivery, the operator's view, removal.
    hook = call("POST", "/v1/webhooks/endpoints", key,
                {"url": f"http://127.0.0.1:{dead_port}/hook", "events": ["message.created", "interaction.ended"]},
                expect=201)
    assert hook["secret"].startswith("whsec_"), hook
    hid = hook["id"]
    call("GET", "/v1/webhooks/endpoints?limit=5", key, expect=200)
    call("GET", f"/v1/webhooks/endpoints/{hid}", key, expect=200)
    call("PATCH", f"/v1/webhooks/endpoints/{hid}", key, {"events": ["message.created"]}, expect=200)
    call("POST", f"/v1/webhooks/endpoints/{hid}/rotate-secret", key, expect=200)
    hooked = call("POST", "/v1/interactions", customer, {"subject": "Webhooks"}, expect=201)["id"]
    call("POST", f"/v1/interactions/{hooked}/messages", agent, {"text": "This one goes out by webhook"}, expect=201)
    attempts = {"items": []}
    for _ in range(100):
        attempts = call("GET", f"/v1/webhooks/endpoints/{hid}/attempts?limit=5", key, expect=200)
        if attempts["items"]:
            break
        time.sleep(0.1)
    assert attempts["items"], "no attempt within 10 s"
    call("POST", f"/v1/webhooks/messages/{attempts['items'][0]['webhook_id']}/redeliver", key, expect=202)
    call("GET", f"/v1/admin/tenants/{tenant['id']}/webhooks/endpoints", ADMIN, expect=200)
    call("POST", "/v1/webhooks/endpoints", key, {"url": "ftp://example.com/x", "events": ["message.created"]}, expect=400)
    call("POST", "/v1/webhooks/endpoints", customer, {"url": "https://example.com/x", "events": ["message.created"]}, expect=401)
    call("GET", "/v1/webhooks/endpoints/00000000-0000-0000-0000-000000000000", key, expect=404)
    call("POST", "/v1/webhooks/messages/msg_00000000000000000000000000000000/redeliver", key, expect=404)
    call("DELETE", f"/v1/webhooks/endpoints/{hid}", key, expect=204)
    call("GET", f"/v1/webhooks/endpoints/{hid}", key, expect=404)
    # The audit trail: what was just done is there, users by pseudonym; the operator sees every tenant's.
    trail = call("GET", "/v1/audit?limit=500", key, expect=200)
    actions = [item["action"] for item in trail["items"]]
    assert "webhook_endpoint.deleted" in actions and "session.created" in actions, actions
    call("GET", "/v1/audit?action=session.created&limit=2", key, expect=200)
    call("GET", "/v1/admin/audit?limit=5", ADMIN, expect=200)
    call("GET", f"/v1/admin/audit?tenant={tenant['id']}&since=2026-01-01T00:00:00Z", ADMIN, expect=200)
    call("GET", "/v1/audit?since=yesterday", key, expect=400)
    call("GET", "/v1/audit", customer, expect=401)
    call("GET", "/v1/admin/audit", key, expect=401)
    # Error paths, each validated against its documented problem response.
    call("GET", "/v1/sessions/current", expect=401)
    call("GET", "/v1/feeds/news?limit=0", customer, expect=400)
    call("GET", "/v1/feeds/missing", customer, expect=404)
    call("POST", "/v1/feeds/news/items", customer, {"title": "x"}, expect=403)
    call("POST", f"/v1/interactions/{iid}/messages", customer, {"text": "late"}, expect=409)
    call("POST", f"/v1/interactions/{iid}/end", customer, headers={"Idempotency-Key": "m-1"}, expect=422)
    call("POST", f"/v1/interactions/{iid}/claim", agent, expect=409)
    call("POST", f"/v1/interactions/{iid}/assign", key, {"agent_id": "agent-7"}, expect=409)
    call("DELETE", "/v1/sessions/current", customer, expect=204)
    print(f"walkthrough: {checked} responses match openapi.yaml")
finally:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)

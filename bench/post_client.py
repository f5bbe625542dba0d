"""Opens a tenant, an agent and an interaction through PORT, then sends COUNT text messages as the agent, one after
another on one kept-alive connection, each answer read in full (bench/post-instructions.sh, bench/post-switches.sh).

    python3 -I bench/post_client.py PORT COUNT ADMIN_TOKEN
"""
import http.client, json, sys
port, count, admin = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
def post(path, token, body, expected):
    connection.request("POST", path, body=json.dumps(body),
                       headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    if response.status != expected:
        sys.exit(f"{path}: status {response.status}: {data[:200]!r}")
    return json.loads(data)
key = post("/v1/admin/tenants", admin, {"name": "instructions"}, 201)["api_key"]
agent = post("/v1/sessions", key, {"user_id": "agent-1", "role": "agent"}, 201)["token"]
customer = post("/v1/sessions", key, {"user_id": "customer-1", "role": "customer"}, 201)["token"]
interaction = post("/v1/interactions", customer, {"subject": "instructions"}, 201)["id"]
for n in range(count):
    post(f"/v1/interactions/{interaction}/messages", agent, {"text": f"message {n} of the count"}, 201)

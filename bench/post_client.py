"""Text messages POSTed one after another on one kept-alive connection, each answer read in full
(bench/post-instructions.sh, bench/post-switches.sh).

    python3 -I bench/post_client.py PORT COUNT ADMIN_TOKEN
        opens a tenant, an agent and an interaction through Switchboard on PORT, then sends COUNT messages as the agent
    python3 -I bench/post_client.py --open PORT ADMIN_TOKEN
        opens them only, and prints "TENANT_ID INTERACTION_ID"
    python3 -I bench/post_client.py --peer PORT COUNT TOKEN INTERACTION_ID
        sends COUNT messages to interaction INTERACTION_ID with bearer TOKEN (the C peer, bench/c-baseline/message.c)
"""
import http.client, json, sys

arguments = sys.argv[1:]
mode = arguments.pop(0) if arguments and arguments[0].startswith("--") else "--all"
connection = http.client.HTTPConnection("127.0.0.1", int(arguments[0]), timeout=300)

def post(path, token, body, expected):
    connection.request("POST", path, body=json.dumps(body),
                       headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    if response.status != expected:
        sys.exit(f"{path}: status {response.status}: {data[:200]!r}")
    return json.loads(data)

def open_interaction(admin):
    tenant = post("/v1/admin/tenants", admin, {"name": "instructions"}, 201)
    agent = post("/v1/sessions", tenant["api_key"], {"user_id": "agent-1", "role": "agent"}, 201)["token"]
    customer = post("/v1/sessions", tenant["api_key"], {"user_id": "customer-1", "role": "customer"}, 201)["token"]
    interaction = post("/v1/interactions", customer, {"subject": "instructions"}, 201)["id"]
    # One problem answer in every run: the first one a process writes sets up its JSON encoder (about 4.4 million
    # instructions). Without this, a run whose readiness poll was answered 503 paid for that and the other did not,
    # and the difference moved by 11,000 instructions per POST from one sitting to the next.
    post(f"/v1/interactions/{interaction}/messages", agent, {"text": ""}, 400)
    return tenant["id"], agent, interaction

def send(count, token, interaction):
    for n in range(count):
        post(f"/v1/interactions/{interaction}/messages", token, {"text": f"message {n} of the count"}, 201)

if mode == "--open":
    tenant, _, interaction = open_interaction(arguments[1])
    print(tenant, interaction)
elif mode == "--peer":
    send(int(arguments[1]), arguments[2], arguments[3])
else:
    _, agent, interaction = open_interaction(arguments[2])
    send(int(arguments[1]), agent, interaction)

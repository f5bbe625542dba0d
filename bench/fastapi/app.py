"""The feed reference for bench/feeds.sh: FastAPI on uvicorn (uvloop, httptools) with asyncpg, serving the page
Switchboard serves (the newest 20 items of a feed, with has_more and next_cursor) from the same tables.

  GET /feeds/{key}      one query per request (the cold path)
  GET /hot/feeds/{key}  the page's JSON bytes from this worker's memory after the first read (the hot path)
  POST /interactions/{id}/messages  a message, in the transaction the service used before it wrote a message in one
                        statement (lock, append with its inbox change, notice), as an agent (bench/writes.sh)

It checks no credentials: Switchboard does more per request (a bearer token, the tenant's access), so the
comparison flatters the reference, not Switchboard.
Settings: DATABASE_URL (libpq key=value form, as the benchmarks pass it), BENCH_TENANT (the tenant id of the feeds
or of the interactions).
"""
import base64
import json
import os
import uuid
from contextlib import asynccontextmanager

import asyncpg
from fastapi import FastAPI, HTTPException, Request, Response

PAGE_SQL = """
SELECT f.version, i.id, i.title, i.body, i.url, i.image_url, i.published_at, i.updated_at
FROM feeds f
LEFT JOIN LATERAL (
    SELECT * FROM feed_items WHERE feed_id = f.id ORDER BY published_at DESC, id DESC LIMIT $3
) i ON true
WHERE f.tenant_id = $1::uuid AND f.key = $2
"""
LIMIT = 20

LOCK_SQL = """
SELECT state FROM interactions WHERE id = $1::uuid AND tenant_id = $2::uuid FOR UPDATE
"""
APPEND_SQL = """
WITH next AS (
    UPDATE interactions SET last_seq = last_seq + 1,
        customer_messages = customer_messages + ($2::jsonb->>'sender_role' = 'customer')::int,
        agent_messages = agent_messages + ($2::jsonb->>'sender_role' = 'agent')::int,
        inbox_preview = jsonb_build_object('id', $2::jsonb->>'id', 'kind', 'message',
            'text', left($2::jsonb->>'text', 200), 'sender_role', $2::jsonb->>'sender_role',
            'created_micros', (extract(epoch FROM now()) * 1000000)::bigint)
    WHERE id = $1::uuid RETURNING last_seq, tenant_id
), changed AS (
    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next
)
INSERT INTO interaction_events (interaction_id, seq, kind, payload)
SELECT $1::uuid, last_seq, 'message', $2::jsonb FROM next
RETURNING seq, created_at
"""


def connect_arguments(dsn: str) -> dict:
    """asyncpg's keyword arguments from a libpq key=value string."""
    names = {"host": "host", "port": "port", "user": "user", "dbname": "database", "password": "password"}
    fields = dict(part.split("=", 1) for part in dsn.split())
    return {names[k]: (int(v) if k == "port" else v) for k, v in fields.items() if k in names}


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.pool = await asyncpg.create_pool(min_size=4, max_size=10, **connect_arguments(os.environ["DATABASE_URL"]))
    yield
    await app.state.pool.close()


app = FastAPI(lifespan=lifespan)
TENANT = os.environ["BENCH_TENANT"]
hot_pages: dict[str, bytes] = {}


def stamp(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def load_page(key: str) -> dict:
    rows = await app.state.pool.fetch(PAGE_SQL, TENANT, key, LIMIT + 1)
    if not rows:
        raise HTTPException(status_code=404, detail=f"No feed '{key}'.")
    found = [row for row in rows if row["id"] is not None]
    page = found[:LIMIT]
    has_more = len(found) > LIMIT
    cursor = None
    if has_more:
        last = page[-1]
        micros = int(last["published_at"].timestamp() * 1_000_000)
        cursor = base64.urlsafe_b64encode(f"v1.{micros}.{last['id']}".encode()).decode().rstrip("=")
    items = [{"body": row["body"], "id": str(row["id"]), "image_url": row["image_url"],
              "published_at": stamp(row["published_at"]), "title": row["title"],
              "updated_at": stamp(row["updated_at"]), "url": row["url"]} for row in page]
    return {"has_more": has_more, "items": items, "next_cursor": cursor}


@app.get("/feeds/{key}")
async def cold_feed(key: str) -> dict:
    return await load_page(key)


@app.get("/hot/feeds/{key}")
async def hot_feed(key: str) -> Response:
    body = hot_pages.get(key)
    if body is None:
        body = json.dumps(await load_page(key), separators=(",", ":")).encode()
        hot_pages[key] = body
    return Response(content=body, media_type="application/json")


@app.post("/interactions/{interaction_id}/messages", status_code=201)
async def post_message(interaction_id: str, request: Request) -> dict:
    body = await request.json()
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not 1 <= len(text) <= 4000:
        raise HTTPException(status_code=400, detail="text must be 1 to 4000 characters.")
    message = {"id": str(uuid.uuid4()), "sender_id": "agent-1", "sender_role": "agent", "text": text}
    async with app.state.pool.acquire() as connection:
        async with connection.transaction():
            row = await connection.fetchrow(LOCK_SQL, interaction_id, TENANT)
            if row is None:
                raise HTTPException(status_code=404, detail="No such interaction.")
            if row["state"] != "started":
                raise HTTPException(status_code=409, detail="The interaction is over.")
            event = await connection.fetchrow(APPEND_SQL, interaction_id, json.dumps(message, sort_keys=True))
            await connection.execute("SELECT pg_notify('switchboard_interactions', $1)", f"{interaction_id}:{event['seq']}")
    return {**message, "seq": event["seq"], "created_at": stamp(event["created_at"])}


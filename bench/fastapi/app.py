"""The feed reference for bench/feeds.sh: FastAPI on uvicorn (uvloop, httptools) with asyncpg, serving the page
Switchboard serves (the newest 20 items of a feed, with has_more and next_cursor) from the same tables.

  GET /feeds/{key}      one query per request (the cold path)
  GET /hot/feeds/{key}  the page's JSON bytes from this worker's memory after the first read (the hot path)

It checks no credentials: Switchboard does more per request (a bearer token, the tenant's access), so the
comparison flatters the reference, not Switchboard.
Settings: DATABASE_URL (libpq key=value form, as the benchmarks pass it), BENCH_TENANT (the feeds' tenant id).
"""
import base64
import os
from contextlib import asynccontextmanager

import asyncpg
from fastapi import FastAPI, HTTPException, Response

PAGE_SQL = """
SELECT f.version, i.id, i.title, i.body, i.url, i.image_url, i.published_at, i.updated_at
FROM feeds f
LEFT JOIN LATERAL (
    SELECT * FROM feed_items WHERE feed_id = f.id ORDER BY published_at DESC, id DESC LIMIT $3
) i ON true
WHERE f.tenant_id = $1::uuid AND f.key = $2
"""
LIMIT = 20


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
        import json
        body = json.dumps(await load_page(key), separators=(",", ":")).encode()
        hot_pages[key] = body
    return Response(content=body, media_type="application/json")

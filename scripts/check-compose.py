#!/usr/bin/env python3
"""Static checks of docker/compose.yaml and docker/Dockerfile (no Docker engine needed): the services, ports,
healthchecks and start-up order a deployment relies on."""
import pathlib, re, sys

root = pathlib.Path(__file__).resolve().parent.parent
try:
    import yaml
except ImportError:
    sys.exit("check-compose: PyYAML is missing (python3-yaml)")

compose = yaml.safe_load((root / "docker/compose.yaml").read_text())
dockerfile = (root / "docker/Dockerfile").read_text()
services = compose.get("services", {})
problems = []

def need(condition, message):
    if not condition:
        problems.append(message)

for name in ["postgres", "switchboard-1", "switchboard-2", "nginx"]:
    need(name in services, f"service {name} is missing")
pg = services.get("postgres", {})
need(str(pg.get("image", "")).startswith("postgres:15"), "postgres must use postgres:15")
need(any(str(v).endswith(":/var/lib/postgresql/data") for v in pg.get("volumes", [])), "postgres needs a data volume")
need("healthcheck" in pg, "postgres needs a healthcheck")
for name in ["switchboard-1", "switchboard-2"]:
    s = services.get(name, {})
    need(s.get("depends_on", {}).get("postgres", {}).get("condition") == "service_healthy",
         f"{name} must wait for a healthy postgres")
    need("readyz" in " ".join(s.get("healthcheck", {}).get("test", [])), f"{name} healthcheck must call /readyz")
    env = s.get("environment", {})
    need("DATABASE_URL" in env and "postgres:5432" in env["DATABASE_URL"], f"{name} must reach postgres:5432")
nginx = services.get("nginx", {})
need(any(str(p).endswith(":80") for p in nginx.get("ports", [])), "nginx must publish port 80")
for name in ["switchboard-1", "switchboard-2"]:
    need(nginx.get("depends_on", {}).get(name, {}).get("condition") == "service_healthy",
         f"nginx must wait for a healthy {name}")
conf = (root / "docker/nginx.conf").read_text()
need("proxy_buffering off" in conf, "nginx must not buffer event streams")
need(re.search(r"proxy_read_timeout\s+\d+[hm]", conf) is not None, "nginx needs a long read timeout for streams")
for line in ["FROM swift:6.3-bookworm", "FROM debian:bookworm-slim", "HEALTHCHECK", "STOPSIGNAL SIGTERM", "USER switchboard",
             "make build", "libmicrohttpd12", "libpq5", "ca-certificates"]:
    need(line in dockerfile, f"Dockerfile lacks '{line}'")

if problems:
    sys.exit("check-compose:\n  " + "\n  ".join(problems))
print("check-compose: docker/compose.yaml and docker/Dockerfile look right")

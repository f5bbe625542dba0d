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
need(str(pg.get("image", "")).startswith("docker.io/library/postgres:15"), "postgres must use postgres:15")
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
for line in ["FROM docker.io/library/swift:6.3-bookworm", "FROM docker.io/library/debian:bookworm-slim", "HEALTHCHECK",
             "STOPSIGNAL SIGTERM", "USER switchboard", "make build", "libmicrohttpd12", "libpq5", "ca-certificates"]:
    need(line in dockerfile, f"Dockerfile lacks '{line}'")

# Image names resolve the same under docker and podman (which has no default registry): registry/namespace/name.
qualified = re.compile(r"^[a-z0-9.-]+\.[a-z]+(:\d+)?/[^/]+/[^/]+$")
for image in re.findall(r"^FROM\s+(\S+)", dockerfile, flags=re.M):
    need(qualified.match(image) is not None, f"Dockerfile: FROM {image} is not fully qualified")
for name, service in services.items():
    if "image" in service:
        need(qualified.match(str(service["image"])) is not None, f"{name}: image {service['image']} is not fully qualified")
# The build stage installs build dependencies only: `make build` must not pull in the PostgreSQL server.
makefile = (root / "Makefile").read_text()
build_rule = re.search(r"^build:.*?(?=^\S|\Z)", makefile, flags=re.M | re.S)
need(build_rule is not None and "--build-only" in build_rule.group(0) and "deps" not in build_rule.group(0).split("\n")[0],
     "make build must install build dependencies only (scripts/ensure-deps.sh --build-only)")
need("postgresql" not in dockerfile.split("FROM docker.io/library/debian")[0], "the build stage must not install PostgreSQL")
# Health checks follow PORT rather than a fixed port.
need(re.search(r"HEALTHCHECK[^\n]*\\?\n?.*\$\{PORT", dockerfile) is not None, "the image's HEALTHCHECK must follow PORT")
for name in ["switchboard-1", "switchboard-2"]:
    test = " ".join(services.get(name, {}).get("healthcheck", {}).get("test", []))
    need("$${PORT" in test, f"{name} healthcheck must follow PORT")
    token = str(services.get(name, {}).get("environment", {}).get("SWITCHBOARD_ADMIN_TOKEN", ""))
    need(token.startswith("${SWITCHBOARD_ADMIN_TOKEN:?"), f"{name}: SWITCHBOARD_ADMIN_TOKEN must be required (${{VAR:?…}}), never defaulted")
# The build context carries sources only.
ignored = (root / ".dockerignore").read_text().split() if (root / ".dockerignore").exists() else []
for entry in [".build", ".data", ".venv", ".git"]:
    need(entry in ignored, f".dockerignore must exclude {entry}")
# nginx answers its own errors as problem+json.
for status in ["400", "413", "502", "503", "504"]:
    page = re.search(rf"error_page\s+{status}\s*=\s*(@\w+);", conf)
    need(page is not None, f"nginx needs an error_page for {status}")
    if page:
        block = re.search(rf"location\s+{page.group(1)}\s*\{{(.*?)\}}", conf, flags=re.S)
        need(block is not None and "application/problem+json" in block.group(1) and f"return {status}" in block.group(1),
             f"nginx's {status} must be problem+json")

if problems:
    sys.exit("check-compose:\n  " + "\n  ".join(problems))
print("check-compose: docker/compose.yaml and docker/Dockerfile look right")

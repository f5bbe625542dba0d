#!/usr/bin/env python3
"""Checks of docker/compose.yaml and docker/Dockerfile (no container engine needed): the services, ports,
healthchecks and start-up order a deployment relies on, checked statically; the file as podman-compose renders it
(`podman-compose --dry-run config`, from the project's pinned tools); and README.md's "Deployment" section against
both (the packages it names, the port nginx is published on, `podman-compose` rather than `podman compose`)."""
import os, pathlib, re, subprocess, sys

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

# Interpolation that docker compose and podman-compose read alike: podman-compose 1.0.3 (Debian bookworm's) leaves an
# empty default, `${VAR:-}` or `${VAR-}`, in place as literal text (a METRICS_TOKEN of "${METRICS_TOKEN:-}" would
# turn /metrics on with a token anyone can read in this file). A variable to pass through when set has no value.
compose_text = "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in (root / "docker/compose.yaml").read_text().splitlines())
for match in re.finditer(r"(?<!\$)\$\{[A-Za-z_][A-Za-z0-9_]*:?-\}", compose_text):
    problems.append(f"compose.yaml: {match.group(0)} reaches the container as that literal text under podman-compose "
                    "1.0.3; leave the value empty to pass the variable through from the environment")
for name in ["switchboard-1", "switchboard-2"]:
    env = services.get(name, {}).get("environment", {})
    need("METRICS_TOKEN" in env and env["METRICS_TOKEN"] is None,
         f"{name}: METRICS_TOKEN must be passed through from the environment (`METRICS_TOKEN:` with no value)")

# nginx is published on a port of its own, not `make run`'s (PORT 8080, STREAM_PORT 8081).
published = [str(p).split(":")[-2] for p in nginx.get("ports", []) if str(p).count(":") >= 1]
need(len(published) == 1 and published[0] not in ("8080", "8081"),
     f"nginx must publish one host port other than make run's 8080 and 8081 (it publishes {published})")

# README.md's "Deployment" section says what these files do.
readme = (root / "README.md").read_text()
deployment = readme.split("\n## Deployment", 1)[1].split("\n## ", 1)[0] if "\n## Deployment" in readme else ""
need(deployment != "", "README.md has no Deployment section")
need(re.search(r"podman compose (up|down|exec|build|run|logs|ps|config|pull|stop|start)\b", readme) is None,
     "README.md: Debian bookworm's podman has no `podman compose`; say `podman-compose`")
if published:
    need(f"localhost:{published[0]}" in deployment, f"README.md's Deployment section must use localhost:{published[0]}")
    for other in sorted({"8080", "8081"} - {published[0]}):
        need(f"localhost:{other}" not in deployment,
             f"README.md's Deployment section sends requests to localhost:{other}, but nginx is on {published[0]}")
stages = re.split(r"^FROM\s", dockerfile, flags=re.M)[1:]
for stage_name, stage in zip(["build", "runtime"], [stages[0], stages[-1]] if len(stages) >= 2 else []):
    install = re.search(r"apt-get install -y --no-install-recommends ([^&\\]+)", stage)
    need(install is not None, f"Dockerfile: the {stage_name} stage's apt-get install was not found")
    for package in install.group(1).split() if install else []:
        need(f"`{package}`" in deployment, f"README.md's Deployment section does not name the {stage_name} stage's "
             f"package `{package}`")


def render(environment):
    """`podman-compose --dry-run config` of compose.yaml: (exit status, output); None without podman-compose."""
    try:
        import podman_compose  # noqa: F401 (only whether it is installed)
    except ImportError:
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("SWITCHBOARD_ADMIN_TOKEN", "METRICS_TOKEN")}
    env.update(environment)
    result = subprocess.run([sys.executable, "-I", "-m", "podman_compose", "--dry-run", "-f", "compose.yaml", "config"],
                            cwd=root / "docker", env=env, capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout + result.stderr


token = "check-compose-admin-token-0123456789"
rendered = render({"SWITCHBOARD_ADMIN_TOKEN": token})
if rendered is None:
    print("check-compose: podman-compose is not installed here (it is in the project's .venv): compose.yaml was "
          "checked statically only", file=sys.stderr)
else:
    status, output = rendered
    if status != 0:
        problems.append(f"podman-compose --dry-run config failed ({status}):\n{output}")
    else:
        config = yaml.safe_load(output)
        for name in ["switchboard-1", "switchboard-2"]:
            env = config.get("services", {}).get(name, {}).get("environment", {})
            need(env.get("SWITCHBOARD_ADMIN_TOKEN") == token, f"podman-compose: {name} does not get SWITCHBOARD_ADMIN_TOKEN")
            need("METRICS_TOKEN" in env and env["METRICS_TOKEN"] is None,
                 f"podman-compose: {name}'s METRICS_TOKEN is {env.get('METRICS_TOKEN')!r}, not passed through")
            for key, value in env.items():
                need(value is None or "$" not in str(value), f"podman-compose: {name}'s {key} is left as {value!r}")
        ports = [str(p) for p in config.get("services", {}).get("nginx", {}).get("ports", [])]
        need(published and ports == [f"{published[0]}:80"], f"podman-compose: nginx publishes {ports}")
    status, output = render({})
    need(status != 0 and "SWITCHBOARD_ADMIN_TOKEN" in output,
         "podman-compose: compose.yaml must refuse to render without SWITCHBOARD_ADMIN_TOKEN")

if problems:
    sys.exit("check-compose:\n  " + "\n  ".join(problems))
print("check-compose: docker/compose.yaml and docker/Dockerfile look right" +
      ("" if rendered is None else ", and podman-compose renders compose.yaml as meant"))

#!/usr/bin/env python3
"""Proves the test tools come from the project's own environment: run with .venv's interpreter (`-I`), it fails
when any import path lies outside the environment and the standard library, or when an installed version differs
from its pin in requirements.txt — as it would if, say, the machine's global openapi-spec-validator 0.9.0 leaked in."""
import importlib.metadata, pathlib, re, sys, sysconfig

venv = pathlib.Path(sys.prefix).resolve()
if venv == pathlib.Path(sys.base_prefix).resolve():
    sys.exit("check_isolation: not running inside a virtual environment")
stdlib = {pathlib.Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib")}
for entry in sys.path:
    if not entry:
        continue
    path = pathlib.Path(entry).resolve()
    inside = path == venv or venv in path.parents
    in_stdlib = any(path == s or s in path.parents for s in stdlib) and "site-packages" not in path.parts
    if not (inside or in_stdlib or path.suffix == ".zip"):
        sys.exit(f"check_isolation: {entry} is on the import path but outside {venv}")

pins = {}
for line in (pathlib.Path(__file__).parent / "requirements.txt").read_text().splitlines():
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version
for name, version in pins.items():
    distribution = importlib.metadata.distribution(name)
    if distribution.version != version:
        sys.exit(f"check_isolation: {name} is {distribution.version}, pinned {version}")
    location = pathlib.Path(distribution.locate_file("")).resolve()
    if venv not in location.parents and location != venv:
        sys.exit(f"check_isolation: {name} comes from {location}, outside {venv}")

import openapi_core, openapi_spec_validator, standardwebhooks, yaml  # noqa: E401 — the tools the tests import, from here
for module in (openapi_core, openapi_spec_validator, standardwebhooks, yaml):
    if venv not in pathlib.Path(module.__file__).resolve().parents:
        sys.exit(f"check_isolation: {module.__name__} imported from {module.__file__}")
print(f"check_isolation: {len(pins)} pinned packages, all from {venv.name}; no global site-packages on the path")

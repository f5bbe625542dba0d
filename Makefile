# Switchboard — the two commands are `make run` and `make test` (see README.md).
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
## Flags for `swift build -c release` (`make run`, `make build`, the benchmarks, the image). The Swift runtime and
## Foundation are linked in statically: an idle process then maps 23 MB instead of 29 MB, because only the parts of
## the shared libraries it uses are in its image (bench/RESULTS.md). `SWIFT_BUILD_FLAGS=` links them dynamically.
SWIFT_BUILD_FLAGS ?= --static-swift-stdlib
PG_DIR ?= $(CURDIR)/.data/pg
PG_PORT ?= 5432

.PHONY: run stop test test-tsan soak build deps bench bench-sse clean-data

## Installs missing system packages, starts a private PostgreSQL under .data/ when DATABASE_URL is unset or names
## it (with an admin token kept in .data/admin-token), builds the release binary, serves on :8080 and :8081 (PORT and
## STREAM_PORT to change; it refuses ports already in use) and prints what to paste next. Ctrl-C stops the service;
## `make stop` stops the private PostgreSQL.
run:
	SWIFT="$(SWIFT)" SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" PG_DIR="$(PG_DIR)" PG_PORT=$(PG_PORT) scripts/run.sh

## Stops the private PostgreSQL that `make run` started (its data stays in .data/; `make clean-data` removes it).
stop:
	scripts/pg.sh stop "$(PG_DIR)"

## Installs what is missing, starts a throw-away PostgreSQL, builds (failing on any warning), runs the
## whole suite, and stops the cluster even when tests fail.
test:
	SWIFT="$(SWIFT)" scripts/test.sh

## The same suite under ThreadSanitizer.
test-tsan:
	SWIFT="$(SWIFT)" SANITIZE=thread scripts/test.sh

## The randomized stream checker with random seeds (STREAM_CHECK_RUNS of them, default 20); every seed is printed,
## and a failure names its seed (replay with STREAM_CHECK_SEEDS=seed,...).
soak: deps
	$(SWIFT) build --build-tests
	STREAM_CHECK_RUNS=$${STREAM_CHECK_RUNS:-20} scripts/with-temp-postgres.sh $(SWIFT) test --skip-build \
		--filter RandomizedStreamHistories

## The release binary; installs only what compiling needs (the image's build stage runs this).
build:
	@scripts/ensure-deps.sh --build-only
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)

deps:
	@scripts/ensure-deps.sh

## Side-by-side benchmarks against the raw-C libmicrohttpd baseline (results in bench/out/latest.md).
bench: deps
	@scripts/ensure-deps.sh wrk curl valgrind
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)
	SWIFT="$(SWIFT)" scripts/with-temp-postgres.sh bench/run.sh

## SSE fan-out: 10,000 subscribers on one process (results in bench/out/sse.md).
bench-sse: deps
	@scripts/ensure-deps.sh wrk curl
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)
	SWIFT="$(SWIFT)" scripts/with-temp-postgres.sh bench/run.sh sse

clean-data:
	scripts/pg.sh stop "$(PG_DIR)"
	rm -rf "$$(realpath -m "$(PG_DIR)")" .data

# Switchboard — the two commands are `make run` and `make test` (see README.md).
SHELL := /bin/bash
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
## Extra flags for `swift build -c release` (the image passes --static-swift-stdlib).
SWIFT_BUILD_FLAGS ?=
PG_DIR ?= $(CURDIR)/.data/pg
PG_PORT ?= 5432

.PHONY: run test test-tsan build deps bench bench-sse clean-data

## Installs missing system packages, starts a private PostgreSQL under .data/ when DATABASE_URL is unset,
## builds the release binary and serves on :8080 (PORT to change).
run: deps
	$(SWIFT) build -c release
	@if [ -z "$$DATABASE_URL" ]; then \
		scripts/pg.sh start "$(PG_DIR)" $(PG_PORT) && \
		echo "using private PostgreSQL in $(PG_DIR)" && \
		export DATABASE_URL="$$(scripts/pg.sh url "$(PG_DIR)" $(PG_PORT))"; \
	fi; \
	exec .build/release/switchboard serve

## Installs what is missing, starts a throw-away PostgreSQL, builds (failing on any warning), runs the
## whole suite, and stops the cluster even when tests fail.
test:
	SWIFT="$(SWIFT)" scripts/test.sh

## The same suite under ThreadSanitizer.
test-tsan:
	SWIFT="$(SWIFT)" SANITIZE=thread scripts/test.sh

build: deps
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)

deps:
	@scripts/ensure-deps.sh

## Side-by-side benchmarks against the raw-C libmicrohttpd baseline (results in bench/out/latest.md).
bench: deps
	@scripts/ensure-deps.sh wrk curl
	$(SWIFT) build -c release
	SWIFT="$(SWIFT)" scripts/with-temp-postgres.sh bench/run.sh

## SSE fan-out: 10,000 subscribers on one process (results in bench/out/sse.md).
bench-sse: deps
	@scripts/ensure-deps.sh wrk curl
	$(SWIFT) build -c release
	SWIFT="$(SWIFT)" scripts/with-temp-postgres.sh bench/run.sh sse

clean-data:
	scripts/pg.sh stop "$(PG_DIR)"
	rm -rf .data

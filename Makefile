# sgem-server: `make run` to start it, `make test` to run every test.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
HOST ?= 127.0.0.1
PORT ?= 8080
DATA_DIR ?= ./sgem-data
BIN_DEBUG := .build/debug/sgem-server
BIN_RELEASE := .build/release/sgem-server
# Debian's python carries Debian's selenium; pyenv shims may shadow `python3`.
PYTHON ?= /usr/bin/python3

.PHONY: all build release run test test-swift test-browser test-any-day test-openapi test-api-fuzz test-ical test-feeds test-push bench console clean help

all: build

help:
	@echo "make run      build (release) and start the server on http://$(HOST):$(PORT)/"
	@echo "make test     install test tools, run the Swift tests, the API fuzz and the browser tests"
	@echo "make build    debug build"
	@echo "make release  one binary with the Swift runtime linked statically"
	@echo "make bench    run the benchmarks in scripts/bench (writes bench-results/)"
	@echo "make console  regenerate the embedded console from Resources/console"

build:
	@scripts/bootstrap.sh build
	$(SWIFT) build

# Swift's runtime and Foundation pieces are linked in; glibc, libsqlite3, libpq and libssl/libcrypto
# stay dynamic (they come from Debian and get its security updates). Only the product is built:
# the test-support target imports SGEMHTTP @testable, which a release build does not allow.
release:
	@scripts/bootstrap.sh build
	$(SWIFT) build -c release --static-swift-stdlib --product sgem-server
	@echo "built $(BIN_RELEASE)"

run: release
	@echo "Starting sgem-server; stop it with Ctrl-C. On a first run it prints a one-time setup link"
	@echo "(open it in a browser to create the first admin) and the 'admin create-user' command that does the same."
	$(BIN_RELEASE) serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR)

console:
	python3 scripts/embed-console.py

test: test-swift test-openapi test-ical test-feeds test-push test-api-fuzz test-browser test-any-day

test-swift:
	@scripts/bootstrap.sh test
	python3 scripts/embed-console.py --check
	$(SWIFT) build --build-tests
	# Two runs: the end-to-end tests drive the real binary with blocking waits, which would hold
	# the cooperative threads (one per core) that the in-process servers of every other suite need.
	# At most 8 tests at a time: started all at once (~350) on 2 cores, each one's waits ran 10 s and
	# more behind the others' CPU work (a periodic-job test once timed out that way in CI).
	# A throwaway PostgreSQL (scripts/pg-throwaway.sh) serves the suites that run on PostgreSQL through
	# SGEM_TEST_DATABASE_URL; it is stopped and removed when the tests end, failed or not.
	# Then the suites built on the harness (in-process servers and commands) once more with every
	# server and command on PostgreSQL (SGEM_TEST_BACKEND=postgresql): the same tests, the other
	# backend. Suites of pure logic (parsers, crypto, calendar maths) are not run twice.
	url="$$(scripts/pg-throwaway.sh start)" && trap 'scripts/pg-throwaway.sh stop' EXIT && \
	export SGEM_TEST_DATABASE_URL="$$url" && \
	$(SWIFT) test --skip-build --skip SGEMAppTests --experimental-maximum-parallelization-width 8 && \
	$(SWIFT) test --skip-build --filter SGEMAppTests && \
	SGEM_TEST_BACKEND=postgresql $(SWIFT) test --skip-build --experimental-maximum-parallelization-width 8 \
	  --filter '$(POSTGRES_SUITES)' --skip '$(LOGIC_ONLY_SUITES)'

# The suites that run a second time on PostgreSQL, and those among them that touch no database.
POSTGRES_SUITES := SGEMAccountsTests|SGEMCompanyTests|SGEMHolidaysTests|SGEMMessagingTests|SGEMNoticesTests|SGEMPushTests|SGEMRealtimeTests|SGEMTranslationTests|SGEMSystemTests|LifecycleTests
LOGIC_ONLY_SUITES := FeedParserTests|FeedReadingTests|FeedCorpusTests|WebPushCryptoTests|TextShieldTests|CalendarMathTests|TransitionTests|CalendarJSONTests|ProviderTests

test-browser: release
	@BROWSER_PYTHON=$(PYTHON) scripts/bootstrap.sh test
	$(PYTHON) scripts/browser/run.py --binary $(BIN_RELEASE)

# The tests that deal in dates once more on an awkward day: a Saturday New Year's Eve, late at night.
# libfaketime (Debian's faketime) moves the clock of everything started under it: the server, the
# test runner and Chromium. A test that reads today's date and assumes a weekday or a year fails here.
ODD_DAY ?= 2033-12-31 22:30:00
test-any-day: release
	@scripts/bootstrap.sh test
	$(SWIFT) build --build-tests
	faketime -f '@$(ODD_DAY)' $(SWIFT) test --skip-build --filter 'SGEMHolidaysTests|SGEMNoticesTests'
	faketime -f '@$(ODD_DAY)' $(PYTHON) scripts/browser/run.py --binary $(BIN_RELEASE) --only 'holiday|days|absence|leave|reject|accessibility'

# The served OpenAPI document validates against the OpenAPI 3.0 schema (openapi-spec-validator, PyPI).
test-openapi: release
	@scripts/bootstrap.sh test
	python3 scripts/check-openapi.py $(BIN_RELEASE)

# The holidays iCal feed, filled over the API, parsed by a real RFC 5545 parser (icalendar, PyPI).
test-ical: release
	@scripts/bootstrap.sh test
	python3 scripts/check-ical.py $(BIN_RELEASE)

# Web Push against a stub push service on loopback that decrypts each payload with http_ece and
# verifies the VAPID token with cryptography (both PyPI): a message, a mention, a holiday, a notice.
test-push: release
	@scripts/bootstrap.sh test
	python3 scripts/check-push.py $(BIN_RELEASE)

# The company feed's corpus read by the reference feed parser (feedparser, PyPI) against the same
# expectations the Swift tests hold the server's parser to.
test-feeds:
	@scripts/bootstrap.sh test
	python3 scripts/check-feeds.py

# Requests generated from the served OpenAPI document (schemathesis, PyPI), unauthenticated, as an
# employee and as an admin: no 5xx, every answer as the document describes it. Seeded and bounded
# (a few minutes); known server bugs are listed with their reasons in scripts/fuzz/known-failures.json.
test-api-fuzz: release
	@scripts/bootstrap.sh test
	python3 scripts/fuzz/api-fuzz.py --binary $(BIN_RELEASE)

bench: release
	@scripts/bootstrap.sh bench
	scripts/bench/run-all.sh $(BIN_RELEASE)

clean:
	rm -rf .build bench-results

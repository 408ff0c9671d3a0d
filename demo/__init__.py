"""``manage.py demo``: the whole loop end to end on the embedded defaults.

Each capability contributes one step module with ``run(ctx)``; the command runs them in this
order and prints what each did. A step module that does not exist yet is skipped.
"""

STEPS = [
    "demo.foundation",  # engine, embedder, seats from the example config, embed + search
    "demo.reflection",  # fixture turns through the API, what each seat learned
    "demo.prefetch",  # rich and thin prefetch, a query_episodes call
    "demo.passes",  # age the data, run every background pass
    "demo.transcripts",  # ingest fixture transcripts through the ladder
    "demo.knowledge",  # promotion drafts a page for review; the admin URL and login
]

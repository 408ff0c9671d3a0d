from tests.knowledge.fixtures import _fresh_backends, fake_confluence, serve_confluence, serve_native  # noqa: F401

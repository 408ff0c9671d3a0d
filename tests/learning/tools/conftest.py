import pytest

from learning import tools


@pytest.fixture
def call(seat):
    """Run a builtin as ``seat``: ``call("query_episodes", query="...", run_id="r1")``."""

    def _call(tool_name, /, *, run_id="run-1", target=None, **arguments):
        return tools.run(seat=target or seat, name=tool_name, run_id=run_id, arguments=arguments)

    return _call

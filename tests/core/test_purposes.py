"""The purposes registry: one list, loaded by the first lookup, whatever was imported before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pydantic import BaseModel

from core import purposes


def test_every_purpose_resolves_in_a_fresh_process_that_imported_none_of_their_modules():
    # no django.setup(): the admin's autodiscovery would import the purpose modules first
    script = (
        "import sys;"
        "before = sorted(m for m in sys.modules if m.startswith('learning.purposes'));"
        "from core import purposes;"
        "names = [purposes.get(n).name for n in ('artifact_draft', 'condense', 'persist_decision', 'compaction_summary')];"
        "print(before); print(names); print(len(purposes.all_purposes()))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "crewlet.settings"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    before, names, count = out.strip().splitlines()[-3:]
    assert before == "[]"
    assert names == "['artifact_draft', 'condense', 'persist_decision', 'compaction_summary']"
    assert int(count) == 14


def test_an_unknown_purpose_is_an_error_naming_it_and_the_known_ones():
    with pytest.raises(purposes.UnknownPurpose) as caught:
        purposes.get("persist_decison")

    assert "'persist_decison'" in str(caught.value)
    assert "persist_decision" in str(caught.value)


def test_every_purpose_reads_its_inputs_into_its_model_and_refuses_an_unknown_key():
    from learning.purposes.probe import PROBE_INPUTS

    for name, purpose in purposes.all_purposes().items():
        assert purpose.inputs.model_config.get("extra") == "forbid", name
        typed = purpose.read_inputs(PROBE_INPUTS[name])
        assert isinstance(typed, purpose.inputs) and purpose.read_inputs(typed) is typed
        with pytest.raises(purposes.InvalidInputs, match=rf"^{name}: invalid inputs \(misspelt: Extra inputs"):
            purpose.read_inputs({**PROBE_INPUTS[name], "misspelt": "x"})


def test_an_echo_of_naming_no_field_of_the_inputs_is_refused_when_the_purpose_is_made():
    class Asked(BaseModel):
        ask: str = ""

    with pytest.raises(ValueError, match=r"echo_of names \['label'\]"):
        purposes.Purpose(name="test_echo_of", inputs=Asked, render=lambda i: [], parse=str, offline=lambda i: "",
                         echo_of=("ask", "label"))


def test_the_list_holds_each_name_once_and_every_json_purpose_has_an_answer_model():
    listed = purposes.all_purposes()

    assert len(listed) == 14
    for purpose in listed.values():
        assert purpose.answer is not None or not purpose.json, purpose.name

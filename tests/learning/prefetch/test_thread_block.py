"""## The thread so far: 8,000-byte bound, root and newest kept, the middle condensed, three sentences."""

from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning.memory.condensation import nbytes
from learning.prefetch import Thread, ThreadMessage, thread

from .conftest import block


def _long_thread(n=40):
    messages = [ThreadMessage(sender_name="Carol", text="ROOT the export broke. " + "context " * 40)]
    messages += [ThreadMessage(sender_name="Dan", text=f"reply {i} " + "detail " * 55) for i in range(1, n - 1)]
    messages.append(ThreadMessage(sender_name="Carol", text="NEWEST so can you fix it today?"))
    return Thread(messages=tuple(messages))


def test_a_long_thread_keeps_root_and_newest_and_condenses_the_middle(seat, run):
    t = _long_thread()
    result = run(ask="+1", requires_recon=True, thread=t)
    text = block(result, "thread_so_far")["text"]
    assert thread.message_line(t.messages[0], root=True) in text
    assert thread.message_line(t.messages[-1]) in text
    assert "messages in between, condensed]" in text
    assert nbytes(text) <= 8000 + 200
    summary = result["summary"]
    assert summary["thread_context_read"] == 40 and 2 <= summary["thread_context_posts"] < 40
    assert summary["thread_context_stopped_short"] is False


def test_the_middle_is_left_out_with_its_count_when_no_rewrite_can_be_had(seat, role, run):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", TransientError("503"))
    text = block(run(ask="+1", requires_recon=True, thread=_long_thread()), "thread_so_far")["text"]
    assert "messages in between left out: no condensation could be had in time]" in text
    assert "NEWEST so can you fix it today?" in text and "ROOT the export broke." in text


def test_a_short_thread_is_shown_whole_with_own_replies_marked(seat, run):
    t = Thread(messages=(ThreadMessage(sender_name="Carol", text="is it fixed?"),
                         ThreadMessage(sender_name="Ana", is_self=True, text="restarted it"),
                         ThreadMessage(sender_name="Carol", text="+1")))
    text = block(run(ask="+1", thread=t), "thread_so_far")["text"]
    assert text == "## The thread so far\n- Carol: is it fixed?\n- Ana (you): restarted it\n- Carol: +1"


def test_unreadable_empty_and_stopped_short_render_three_different_sentences(seat, run):
    unreadable = block(run(ask="+1", thread=Thread(status="unreadable")), "thread_so_far")["text"]
    empty = block(run(ask="+1", thread=Thread(status="read")), "thread_so_far")["text"]
    short = run(ask="+1", thread=Thread(status="truncated", messages=(ThreadMessage(sender_name="C", text="hi"),)))
    assert thread.UNREADABLE in unreadable and thread.EMPTY in empty
    assert thread.STOPPED_SHORT in block(short, "thread_so_far")["text"]
    assert len({thread.UNREADABLE, thread.EMPTY, thread.STOPPED_SHORT}) == 3
    assert short["summary"]["thread_context_stopped_short"] is True


def test_a_root_with_nothing_readable_keeps_its_place(seat, run):
    t = Thread(messages=(ThreadMessage(sender_name="AlertBot", text=""), ThreadMessage(sender_name="Carol", text="+1")))
    text = block(run(ask="+1", thread=t), "thread_so_far")["text"]
    assert f"- AlertBot: {thread.EMPTY_ROOT}" in text and text.endswith("- Carol: +1")


def test_no_thread_no_block_and_unknown_counts(seat, run):
    result = run(ask="hello")
    assert block(result, "thread_so_far")["text"] == ""
    assert result["summary"]["thread_context_posts"] is None

"""The task class an offline skill is named for: the acting tool, the one whose object the ask names."""

from learning.purposes import skill_draft
from learning.purposes.offline import task_class

READS = ["get_customer_details", "get_invoice_details", "search_invoices", "calculate", "think"]


def test_a_tool_name_reads_as_namespace_verb_and_object():
    assert task_class.Action.of("git_create_branch") == task_class.Action("git_create_branch", "create", ("branch",))
    assert task_class.Action.of("update_invoice_lines").object == ("invoice", "lines")
    assert task_class.Action.of("jiraTransition").verb == "transition"
    assert not task_class.Action.of("get_customer_details").acts and task_class.Action.of("cancel_invoice").acts


def test_the_acting_tool_names_the_work_not_the_reads_around_it():
    assert task_class.name([*READS, "update_invoice_lines", "think"], ["Hi! I need to change a line of my invoice."]) \
        == "update-invoice-lines"


def test_when_several_tools_act_the_one_whose_object_the_ask_names_wins():
    tools = [*READS, "update_invoice_discounts", "update_invoice_lines"]
    assert task_class.name(tools, ["Hello, I want a discount on my invoice."]) == "update-invoice-discounts"
    assert task_class.name(tools, ["Hello, I want to move two lines to March."]) == "update-invoice-lines"
    # neither object named: the verb the ask names, then the last to act
    tools = [*READS, "cancel_invoice", "create_invoice"]
    assert task_class.name(tools, ["Please cancel it."]) == "cancel-invoice"
    assert task_class.name(tools, ["Sort out my account."]) == "create-invoice"


def test_telling_someone_the_outcome_never_names_the_work():
    """A chat agent's run ends by posting its answer: that is how it reported, not what it did (make example's
    "CI on main is red, can you fix it?" runs drafted the skill post-message)."""
    tools = ["query_episodes", "read_ci_log", "git_checkout", "apply_patch", "rerun_ci", "mattermost_post_message"]
    assert task_class.name(tools, ["Now the release branch is red too."]) == "rerun-ci"
    assert task_class.name(["jira_get_issue", "git_revert", "jira_add_comment"], ["Undo it."]) == "revert"
    assert task_class.name(["get_customer_details", "a2a_reply"], ["What's my balance?"]) == "reply"  # nothing else acted
    assert task_class.name(["get_customer_details", "send_credit_note"], ["I want compensation."]) == "send-credit-note"


def test_the_agents_own_memory_tools_never_name_the_work():
    assert task_class.name(["use_skill", "query_episodes", "run_tests", "open_pr"], ["Ship the fix."]) == "open-pr"
    assert task_class.name(["use_skill", "run_tests", "open_pr"], ["Fix the flaky test."]) == "fix-flaky-tests"
    assert task_class.name(["use_skill", "query_episodes"], ["anything"]) == ""


def test_the_ask_adds_one_qualifier_never_a_name_an_identifier_or_a_filler():
    tools = ["jira_get_issue", "git_create_branch"]
    assert task_class.name(tools, ["Cut the release branch for 4.2."]) == "create-release-branch"
    for ask in ("Cut the Ana branch.", "Cut the v42 branch.", "Cut the new branch.", "Cut my branch."):
        assert task_class.name(tools, [ask]) == "create-branch", ask


def test_when_to_use_skips_greetings_and_courtesies():
    asks = ["Hi there!", "Thanks so much.", "Hey, I need to change a line of my invoice, please."]
    action = task_class.acting(["update_invoice_lines"], "\n".join(asks))
    assert task_class.work_sentence(asks, action) == "I need to change a line of my invoice, please."
    assert task_class.is_courtesy("Hello, I'm Ana Kim.") and not task_class.is_courtesy("Hi, my invoice was cancelled.")


def test_the_draft_lists_the_same_steps_in_its_summary_and_its_body():
    tools = ["get_customer_details", "get_invoice_details", "get_invoice_details", "think",
             "get_invoice_details", "update_invoice_lines"]
    inputs = skill_draft.Inputs(mode="turn", asked="Hi! I want to change my invoice.", outcome="done", tool_sequence=tools,
                                prior_runs=1)
    draft = skill_draft.draft(inputs)
    steps = [line.split("`")[1] for line in draft["body"].splitlines() if line[:1].isdigit()]
    assert steps == ["get_customer_details", "get_invoice_details", "think", "get_invoice_details",
                     "update_invoice_lines"]
    assert draft["summary"] == f"Update invoice lines: the 5-step run of {', '.join(steps)}."
    assert 'When asked to update invoice lines, as in: "I want to change my invoice."' in draft["body"]


def test_an_ask_to_fix_a_thing_names_the_work_for_fixing_it_not_for_the_tool_that_ended_it():
    """make example's "CI on main is red again, can you fix it?": read the log, check out, patch, rerun CI -- a skill
    for fixing CI, which it drafted as rerun-ci."""
    tools = ["query_episodes", "read_ci_log", "git_checkout", "apply_patch", "rerun_ci", "mattermost_post_message"]
    assert task_class.name(tools, ["CI on main is red again, can you fix it?", "Now the release branch is red too."]) \
        == "fix-ci"
    assert task_class.name(["use_skill", "run_tests", "open_pr"], ["Ship the fix."]) == "open-pr"  # nothing named is fixed
    assert task_class.name([*READS, "update_invoice_lines"], ["Can you fix the lines of my invoice?"]) \
        == "fix-invoice-lines"


def test_an_acronym_the_ask_wrote_in_capitals_stays_in_capitals():
    action = task_class.acting(["read_ci_log", "rerun_ci"], "CI on main is red, can you fix it?")
    assert task_class.phrase(action, "fix-ci", ["CI on main is red, can you fix it?"]) == "fix CI"
    assert task_class.phrase(action, "fix-ci", ["ci on main is red, fix it"]) == "fix ci"
    assert task_class.phrase(action, "fix-ci", ["CI IS RED AGAIN, FIX IT"]) == "fix ci"  # a shouted ask says nothing

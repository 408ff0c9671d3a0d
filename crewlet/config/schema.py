"""Typed config: every knob the spec names, with the spec's default, its range and its description.

The tables are pydantic dataclasses: ``crewlet.config.parse`` validates a TOML document against
them (TOML's own types, no coercion: ``true`` not ``"yes"``, ``3`` not ``3.0``), and
``crewlet.config.json_schema`` publishes the same ranges, allowed values and descriptions for
editors. Building a table in code validates it too.

Where the spec names no default (``max_skills_per_agent``, ``duplicate_jaccard_threshold``,
``min_sibling_count``, ``scheduler_interval_seconds``, ``summarize_max_tokens``) the value here is
ours and is said so in the README's config table, as are the ranges the spec does not state.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    StringConstraints,
    model_validator,
)
from pydantic.dataclasses import dataclass

from core.providers.kinds import LOCAL_MAX_INPUT_CHARS, EmbeddingKind, LlmKind

# The kinds each backend seam resolves, declared once: the parser refuses any other value by key path,
# and each seam's alias map is keyed by these types (LlmKind and EmbeddingKind are core's,
# core.providers.kinds; KnowledgeBackend keys knowledge.searcher.BACKENDS and
# knowledge.promotion_writer.WRITERS).
KnowledgeBackend = Literal["native", "confluence", "none"]

# the ranges the spec does not state, ours (listed in the README)
THRESHOLD = {"ge": 0.0, "le": 1.0}
# Every number has an upper bound the code stores and computes with: a count fits a bigint and a SQL
# LIMIT, a day count keeps ``now - timedelta(days=n)`` a date, a loop's cadence fits django-q2's
# schedule (whose minutes are a smallint).
MAX_COUNT = 10_000_000
MAX_DAYS = 36_500  # a century
MAX_TOKENS = 10**15  # a token budget, far inside a bigint
MAX_SCHEDULE_MINUTES = 32_767  # django_q.Schedule.minutes is a PositiveSmallIntegerField
AT_LEAST_ONE = {"ge": 1, "le": MAX_COUNT}
NOT_NEGATIVE = {"ge": 0, "le": MAX_COUNT}
DAYS = {"ge": 1, "le": MAX_DAYS}
DAYS_OR_NONE = {"ge": 0, "le": MAX_DAYS}
TOKENS = {"ge": 0, "le": MAX_TOKENS}
TIMEOUT = {"gt": 0.0, "le": 3600.0}
MIN_INTERVAL_SECONDS = 60
INTERVAL_SECONDS = {"ge": MIN_INTERVAL_SECONDS, "le": MAX_SCHEDULE_MINUTES * 60}
INTERVAL_HOURS = {"ge": 1, "le": MAX_SCHEDULE_MINUTES // 60}
MIN_CLUSTER_SIZE = 2
MAX_INPUT_CHARS = {"ge": 100, "le": 32000}

TABLE = ConfigDict(extra="forbid")


def knob(default: Any, doc: str, **limits: Any) -> Any:
    """A field with its default, its description (an editor's hover text) and its range."""
    if callable(default) and not isinstance(default, (bool, int, float, str)):
        return Field(default_factory=default, description=doc, **limits)
    return Field(default, description=doc, **limits)


def _older_boolean(value: object) -> object:
    """Older files quoted the role's switch ("true" / "false"); they are still read as the boolean."""
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    if isinstance(value, bool) or value == "inherit":
        return value
    raise ValueError(f'expected true, false or "inherit", got {value!r}')


# a role's learning switch: a TOML boolean, or "inherit" (the company's)
TriState = Annotated[StrictBool | Literal["inherit"], BeforeValidator(_older_boolean)]


def _bool_or_auto(value: object) -> object:
    if isinstance(value, bool) or value == "auto":
        return value
    raise ValueError(f'expected true, false or "auto", got {value!r}')


# a switch that may be left to what the rest of the table says
AutoBool = Annotated[StrictBool | Literal["auto"], BeforeValidator(_bool_or_auto)]


@dataclass(frozen=True, config=TABLE)
class ProviderSpec:
    kind: LlmKind = knob(..., "Which client serves this alias: openai_compat (OpenAI, vLLM, Ollama, "
                              "llama.cpp), anthropic, offline (deterministic heuristics) or scripted (tests).")
    model: StrictStr = knob("", "The model name sent to the endpoint.")
    base_url: StrictStr = knob("", "The endpoint's base URL (openai_compat).")
    api_key_env: StrictStr = knob("", "The environment variable holding the API key; the key never lives here.")
    timeout_seconds: StrictFloat = knob(30.0, "Seconds one request may take.", **TIMEOUT)
    max_retries: StrictInt = knob(2, "The SDK's own retries of 429/5xx/timeouts, with its bounded backoff.",
                                  **NOT_NEGATIVE)
    context_tokens: StrictInt = knob(4096, "The model's context window (llama.cpp's -c): a longer prompt is cut to fit.",
                                     **AT_LEAST_ONE)
    reasoning_tokens: StrictInt = knob(0, "Added to every budget for a reasoning model's thinking.", **TOKENS)
    reasoning_effort: Literal["", "minimal", "low", "medium", "high"] = knob(
        "", "Sent as reasoning_effort where the endpoint takes it; empty sends none.")
    temperature: StrictFloat = knob(0.0, "Sent as temperature (anthropic: at most 1), so one turn is decided alike "
                                         "twice.", ge=0.0, le=2.0)
    seed: StrictInt = knob(0, "Sent as seed where the endpoint takes it (openai_compat); -1 sends none.", ge=-1,
                           le=2**31 - 1)


@dataclass(frozen=True, config=TABLE)
class EmbeddingSpec:
    kind: EmbeddingKind = knob("local", "local (the packaged all-MiniLM-L6-v2), openai_compat, hashing or none.")
    model: StrictStr = knob("all-MiniLM-L6-v2", "The embedding model.")
    base_url: StrictStr = knob("", "The endpoint's base URL (openai_compat).")
    api_key_env: StrictStr = knob("", "The environment variable holding the API key.")
    dimensions: StrictInt = knob(0, "The vector width; 0 = the model's own.", ge=0, le=16_000)  # pgvector's widest vector
    max_input_chars: StrictInt = knob(
        1000, f"A longer text is split between words and pooled; at most {LOCAL_MAX_INPUT_CHARS} for kind 'local'.",
        **MAX_INPUT_CHARS)
    timeout_seconds: StrictFloat = knob(10.0, "Seconds one request may take.", **TIMEOUT)
    requests_per_minute: StrictInt = knob(16, "The embedding fill's request budget per wall-clock minute, every sender together.", **AT_LEAST_ONE)
    bytes_per_minute: StrictInt = knob(1_000_000, "The company's text budget per wall-clock minute, every sender together.",
                                       **AT_LEAST_ONE)
    similar_from: StrictFloat = knob(
        0.0, "The cosine similarity from which a stored text is like a query: a recall whose nearest text is below it "
        "says nothing stored is like the query. 0 = the model's own (known for all-MiniLM-L6-v2; for another "
        "model, none: nothing is judged); a negative value turns the judgement off.", ge=-1.0, le=1.0)


def _offline() -> dict[str, ProviderSpec]:
    return {"offline": ProviderSpec(kind="offline")}


@dataclass(frozen=True, config=TABLE)
class Providers:
    llm: dict[str, ProviderSpec] = knob(_offline, "Model providers by alias; roles name them in their chains.")
    embeddings: EmbeddingSpec = knob(EmbeddingSpec, "The one embedder every vector is made with.")


@dataclass(frozen=True, config=TABLE)
class PersonalMemory:
    max_refreshes_per_turn: StrictInt = knob(3, "How often refresh_memory may run within one turn.", **AT_LEAST_ONE)
    duplicate_similarity: StrictFloat = knob(
        0.95, "The cosine similarity to a live note of the seat at which a new note is a duplicate and is not "
        "stored (the same words, normalised, always are).", **THRESHOLD)


@dataclass(frozen=True, config=TABLE)
class SkillSynthesis:
    enabled: StrictBool = knob(True, "Draft skills from turns that used enough tools.")
    min_tool_calls: StrictInt = knob(5, "Tool calls a turn needs before a skill is drafted from it.", **AT_LEAST_ONE)
    max_skills_per_agent: StrictInt = knob(50, "The per-seat cap on live skills.", **AT_LEAST_ONE)
    duplicate_jaccard_threshold: StrictFloat = knob(
        0.8, "Tool-set Jaccard at which a draft is the same skill as an existing one; not below "
             "cluster_jaccard_threshold.", **THRESHOLD)
    scheduler_enabled: StrictBool = knob(False, "Run the daily clustered synthesis pass.")
    scheduler_interval_seconds: StrictInt = knob(86400, "Seconds between clustered synthesis runs.",
                                                 **INTERVAL_SECONDS)
    episode_fetch_limit: StrictInt = knob(200, "The latest turns per seat the clustered pass reads.", **AT_LEAST_ONE)
    cluster_jaccard_threshold: StrictFloat = knob(0.6, "Tool-sequence Jaccard at which turns pool into one cluster.",
                                                  **THRESHOLD)
    cluster_min_size: StrictInt = knob(3, "Turns a cluster needs before a skill is drafted from it.",
                                       ge=MIN_CLUSTER_SIZE, le=MAX_COUNT)

    @model_validator(mode="after")
    def _duplicate_stricter_than_pooling(self) -> SkillSynthesis:
        # the spec: rejecting a draft ("the same skill") is stricter than pooling ("the same kind of work")
        if self.duplicate_jaccard_threshold < self.cluster_jaccard_threshold:
            raise ValueError(  # "field: reason", so the refusal names the field's own key path
                f"duplicate_jaccard_threshold: must not be below cluster_jaccard_threshold "
                f"({self.duplicate_jaccard_threshold} < {self.cluster_jaccard_threshold}); the duplicate check is "
                f"stricter than pooling")
        return self


@dataclass(frozen=True, config=TABLE)
class SkillRefinement:
    enabled: StrictBool = knob(True, "Refine skills after the turns that used them.")
    auto_refine_on_success: StrictBool = knob(True, "Refine after a successful use.")
    auto_refine_on_failure: StrictBool = knob(True, "Refine after a failed use.")
    max_versions_kept: StrictInt = knob(10, "Versions of a skill kept; older ones are pruned.", **AT_LEAST_ONE)
    max_body_chars: StrictInt = knob(20000, "The longest skill body a refinement may write.", **AT_LEAST_ONE)


@dataclass(frozen=True, config=TABLE)
class SkillCurator:
    enabled: StrictBool = knob(True, "Mark unused skills stale, then archive them.")
    interval_hours: StrictInt = knob(24, "Hours between curator runs.", **INTERVAL_HOURS)
    stale_after_days: StrictInt = knob(30, "Days unused before a skill is stale.", **DAYS)
    archive_after_days: StrictInt = knob(90, "Days unused before a skill is archived.", **DAYS)


@dataclass(frozen=True, config=TABLE)
class EpisodeLifecycle:
    enabled: StrictBool = knob(True, "Prune and compact episodes.")
    interval_seconds: StrictInt = knob(3600, "Seconds between lifecycle runs.", **INTERVAL_SECONDS)
    max_raw_episodes_per_agent: StrictInt = knob(500, "Raw episodes kept per seat.", **AT_LEAST_ONE)
    non_terminal_max_age_days: StrictInt = knob(14, "Days an unfinished episode is kept.", **DAYS)
    tool_free_max_age_days: StrictInt = knob(90, "Days an episode without tool calls is kept.", **DAYS)
    consolidated_grace_days: StrictInt = knob(30, "Days a consolidated episode is kept after its skill.",
                                              **DAYS_OR_NONE)
    compaction_batch_size: StrictInt = knob(200, "Episodes one compaction run reads.", **AT_LEAST_ONE)
    compaction_min_age_days: StrictInt = knob(30, "Days before an episode may be compacted.", **DAYS_OR_NONE)
    compaction_min_cluster_size: StrictInt = knob(3, "Similar episodes a compaction needs.", ge=MIN_CLUSTER_SIZE, le=MAX_COUNT)
    compacted_max_age_days: StrictInt = knob(0, "Days a compacted episode is kept; 0 = for ever.", **DAYS_OR_NONE)


@dataclass(frozen=True, config=TABLE)
class Promotion:
    enabled: StrictBool = knob(True, "Promote skills shared across a unit's seats to knowledge drafts.")
    interval_hours: StrictInt = knob(24, "Hours between promotion runs.", **INTERVAL_HOURS)
    min_sibling_count: StrictInt = knob(3, "Seats holding the same skill before it is promoted.", ge=MIN_CLUSTER_SIZE, le=MAX_COUNT)
    cluster_jaccard_threshold: StrictFloat = knob(0.6, "Tool-set Jaccard at which seats' skills pool.", **THRESHOLD)


@dataclass(frozen=True, config=TABLE)
class Learning:
    enabled: StrictBool = knob(True, "The learning loop as a whole.")
    summarize_episodes: StrictBool = knob(False, "Summarise each episode with an auxiliary call.")
    summarize_max_tokens: StrictInt = knob(400, "The summary call's output budget.", **AT_LEAST_ONE)
    turn_start_model_seconds: StrictFloat = knob(
        1.5, "How long the turn start waits for its model calls; past it each block answers offline.", **TIMEOUT)
    personal_memory: PersonalMemory = knob(PersonalMemory, "The seat's own notes.")
    skill_synthesis: SkillSynthesis = knob(SkillSynthesis, "Drafting skills from turns and clusters.")
    skill_refinement: SkillRefinement = knob(SkillRefinement, "Refining skills from their uses.")
    skill_curator: SkillCurator = knob(SkillCurator, "Staling and archiving unused skills.")
    episode_lifecycle: EpisodeLifecycle = knob(EpisodeLifecycle, "Pruning and compacting episodes.")
    promotion: Promotion = knob(Promotion, "Promoting shared skills to knowledge.")


@dataclass(frozen=True, config=TABLE)
class SkillsReflection:
    enabled: StrictBool = knob(True, "Reflect on long tool runs.")
    min_tool_iterations: StrictInt = knob(10, "Tool iterations a turn needs before it is reflected on.",
                                          **AT_LEAST_ONE)
    cooldown_secs: StrictInt = knob(3600, "Seconds between two reflections of one seat; 0 = none.", ge=0, le=MAX_DAYS * 86_400)


@dataclass(frozen=True, config=TABLE)
class Skills:
    reflection: SkillsReflection = knob(SkillsReflection, "Skill reflection after long tool runs.")


@dataclass(frozen=True, config=TABLE)
class ToolSkillsRegistry:
    """Where operators keep the Tool Skills pages (edited at runtime, no deploy): the children of the
    ``parent`` page in ``container`` (a Confluence space or a native container). Empty ``container``:
    only the bundled ``examples/tool-skills/`` defaults."""

    container: StrictStr = knob("", "The container holding the Tool Skills pages; empty = the bundled defaults only.")
    parent: StrictStr = knob("Tool Skills", "The page whose children are the Tool Skills pages.")


@dataclass(frozen=True, config=TABLE)
class Confluence:
    url: StrictStr = knob("", "The Confluence base URL.")
    username: StrictStr = knob("", "The account the org-level token belongs to.")
    token_env: StrictStr = knob("", "The environment variable holding the org-level token; a seat's own comes "
                                    "from its mcp_env.")
    cloud: AutoBool = knob(
        "auto", 'Confluence Cloud (true: its REST API is under /wiki, added to url when url lacks it) or Server/Data '
                'Center (false: url as given); "auto": Cloud when url\'s host is under atlassian.net or jira.com.')
    timeout_seconds: StrictFloat = knob(10.0, "Seconds one request may take.", **TIMEOUT)


@dataclass(frozen=True, config=TABLE)
class Knowledge:
    backend: KnowledgeBackend = knob("native", "Where knowledge pages live: native, confluence or none.")
    tool_skills: ToolSkillsRegistry = knob(ToolSkillsRegistry, "The Tool Skills registry.")
    scope: list[StrictStr] = knob(list, "Org-wide readable containers.")
    confluence: Confluence = knob(Confluence, "The Confluence backend.")


@dataclass(frozen=True, config=TABLE)
class Ladder:
    rejected_similarity: StrictFloat = knob(0.85, "Similarity to a rejected artifact at which a new one is dropped.",
                                            **THRESHOLD)
    published_duplicate_similarity: StrictFloat = knob(
        0.95, "Similarity to a published page at which an artifact is a duplicate.", **THRESHOLD)
    corroboration_similarity: StrictFloat = knob(0.88, "Similarity at which two artifacts corroborate each other.",
                                                 **THRESHOLD)
    min_distinct_sources: StrictInt = knob(2, "Distinct sources an artifact needs before it is drafted.",
                                           **AT_LEAST_ONE)


@dataclass(frozen=True, config=TABLE)
class Transcripts:
    ladder: Ladder = knob(Ladder, "The transcript ladder's thresholds.")
    classify_batch_size: StrictInt = knob(10, "Shards one classification call reads.", **AT_LEAST_ONE)


# a seat's handle and a unit's key: slugs (they are in URLs) as long as their columns; a role's name, its column
Slug = Annotated[StrictStr, StringConstraints(pattern=r"^[-a-zA-Z0-9_]+$", max_length=100)]
RoleName = Annotated[StrictStr, StringConstraints(min_length=1, max_length=100)]


@dataclass(frozen=True, config=TABLE)
class CompanySpec:
    name: StrictStr = knob("Default", "The company's name; the org tables are keyed by it.", min_length=1,
                           max_length=200)
    learning_enabled: StrictBool = knob(True, "Learning for every seat; a role may opt out.")
    token_budget: StrictInt = knob(0, "Tokens per window across the company; 0 = no ceiling.", **TOKENS)
    budget_window: Literal["day", "month"] = knob("day", "The window token budgets count over.")


@dataclass(frozen=True, config=TABLE)
class UnitSpec:
    name: StrictStr = knob("", "The unit's display name; empty = its key.", max_length=200)
    parent: StrictStr = knob("", "The key of the unit this one sits in.")
    knowledge_container: StrictStr = knob("", "The knowledge container the unit's seats read and promote to.",
                                          max_length=100)
    tracker_key: StrictStr = knob("", "The unit's issue-tracker project key.", max_length=100)


@dataclass(frozen=True, config=TABLE)
class RoleSpec:
    learning_enabled: TriState = knob("inherit", "true, false, or \"inherit\" (the company's setting).")
    llm: list[StrictStr] = knob(list, "The role's provider chain (aliases of providers.llm), tried in order.")
    llm_auxiliary: list[StrictStr] = knob(list, "The provider chain for auxiliary calls (reflection, summaries).")
    token_budget: StrictInt = knob(0, "Tokens per window per seat of the role; 0 = no ceiling.", **TOKENS)
    tools: list[StrictStr] = knob(list, "The tools the role's seats are offered.")
    # per-role overrides of [learning] and [skills], merged over them and validated as those tables
    learning: dict[StrictStr, Any] = knob(dict, "Overrides of [learning] for this role.")
    skills: dict[StrictStr, Any] = knob(dict, "Overrides of [skills] for this role.")


@dataclass(frozen=True, config=TABLE)
class SeatSpec:
    role: StrictStr = knob("", "The seat's role (a key of [roles]).")
    unit: StrictStr = knob("", "The seat's unit (a key of [units]).")
    display_name: StrictStr = knob("", "The seat's display name; empty = its handle.", max_length=200)
    token_budget: StrictInt = knob(0, "Tokens per window for this seat; 0 = no ceiling.", **TOKENS)
    active: StrictBool = knob(True, "An inactive seat is refused by the API.")
    mcp_env: dict[StrictStr, Any] = knob(dict, "Environment names for the seat's own tool credentials.")


@dataclass(frozen=True, config=TABLE)
class Config:
    company: CompanySpec = knob(CompanySpec, "The company every seat belongs to.")
    providers: Providers = knob(Providers, "Model and embedding providers.")
    learning: Learning = knob(Learning, "The learning loop's knobs.")
    skills: Skills = knob(Skills, "Skill reflection's knobs.")
    knowledge: Knowledge = knob(Knowledge, "The knowledge backend.")
    transcripts: Transcripts = knob(Transcripts, "The transcript ladder.")
    units: dict[Slug, UnitSpec] = knob(dict, "The organisation's units by key.")
    roles: dict[RoleName, RoleSpec] = knob(dict, "Roles by name.")
    seats: dict[Slug, SeatSpec] = knob(dict, "Seats by handle.")

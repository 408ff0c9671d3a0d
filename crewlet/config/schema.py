"""Typed config: every knob the spec names, with the spec's default.

Where the spec names no default (``max_skills_per_agent``, ``duplicate_jaccard_threshold``,
``min_sibling_count``, ``scheduler_interval_seconds``, ``summarize_max_tokens``) the value here is
ours and is said so in the README's config table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# The kinds each backend seam resolves, declared once: the parser refuses any other value by key path,
# and each seam's alias map (core.providers.llm.base.KINDS, core.providers.embeddings.base.KINDS,
# knowledge.searcher.BACKENDS, knowledge.promotion_writer.WRITERS) is keyed by these types.
LlmKind = Literal["openai_compat", "anthropic", "offline", "scripted"]
EmbeddingKind = Literal["local", "openai_compat", "hashing", "none"]
KnowledgeBackend = Literal["native", "confluence", "none"]


@dataclass(frozen=True)
class ProviderSpec:
    kind: LlmKind
    model: str = ""
    base_url: str = ""
    api_key_env: str = ""
    timeout_seconds: float = 30.0
    max_retries: int = 2  # the SDK's own retries of 429/5xx/timeouts, with its bounded backoff
    context_tokens: int = 8192  # the model's context window: a longer prompt is cut to fit
    reasoning_tokens: int = 0  # added to every budget for a reasoning model's thinking
    reasoning_effort: str = ""  # sent as reasoning_effort where the endpoint takes it (low | medium | high)


@dataclass(frozen=True)
class EmbeddingSpec:
    kind: EmbeddingKind = "local"
    model: str = "all-MiniLM-L6-v2"
    base_url: str = ""
    api_key_env: str = ""
    dimensions: int = 0  # 0 = the model's own width
    max_input_chars: int = 1000  # a longer text is split between words and pooled
    timeout_seconds: float = 10.0
    requests_per_minute: int = 16  # the fill's request budget per wall-clock minute, every sender together
    bytes_per_minute: int = 1_000_000  # the company's text budget per wall-clock minute, every sender together


@dataclass(frozen=True)
class Providers:
    llm: dict[str, ProviderSpec] = field(default_factory=lambda: {"offline": ProviderSpec(kind="offline")})
    embeddings: EmbeddingSpec = field(default_factory=EmbeddingSpec)


@dataclass(frozen=True)
class PersonalMemory:
    max_refreshes_per_turn: int = 3


@dataclass(frozen=True)
class SkillSynthesis:
    enabled: bool = True
    min_tool_calls: int = 5
    max_skills_per_agent: int = 50
    duplicate_jaccard_threshold: float = 0.8
    scheduler_enabled: bool = False
    scheduler_interval_seconds: int = 86400
    episode_fetch_limit: int = 200
    cluster_jaccard_threshold: float = 0.6
    cluster_min_size: int = 3


@dataclass(frozen=True)
class SkillRefinement:
    enabled: bool = True
    auto_refine_on_success: bool = True
    auto_refine_on_failure: bool = True
    max_versions_kept: int = 10
    max_body_chars: int = 20000


@dataclass(frozen=True)
class SkillCurator:
    enabled: bool = True
    interval_hours: int = 24
    stale_after_days: int = 30
    archive_after_days: int = 90


@dataclass(frozen=True)
class EpisodeLifecycle:
    enabled: bool = True
    interval_seconds: int = 3600
    max_raw_episodes_per_agent: int = 500
    non_terminal_max_age_days: int = 14
    tool_free_max_age_days: int = 90
    consolidated_grace_days: int = 30
    compaction_batch_size: int = 200
    compaction_min_age_days: int = 30
    compaction_min_cluster_size: int = 3
    compacted_max_age_days: int = 0


@dataclass(frozen=True)
class Promotion:
    enabled: bool = True
    interval_hours: int = 24
    min_sibling_count: int = 3
    cluster_jaccard_threshold: float = 0.6


@dataclass(frozen=True)
class Learning:
    enabled: bool = True
    summarize_episodes: bool = False
    summarize_max_tokens: int = 400
    personal_memory: PersonalMemory = field(default_factory=PersonalMemory)
    skill_synthesis: SkillSynthesis = field(default_factory=SkillSynthesis)
    skill_refinement: SkillRefinement = field(default_factory=SkillRefinement)
    skill_curator: SkillCurator = field(default_factory=SkillCurator)
    episode_lifecycle: EpisodeLifecycle = field(default_factory=EpisodeLifecycle)
    promotion: Promotion = field(default_factory=Promotion)


@dataclass(frozen=True)
class SkillsReflection:
    enabled: bool = True
    min_tool_iterations: int = 10
    cooldown_secs: int = 3600


@dataclass(frozen=True)
class Skills:
    reflection: SkillsReflection = field(default_factory=SkillsReflection)


@dataclass(frozen=True)
class ToolSkillsRegistry:
    """Where operators keep the Tool Skills pages (edited at runtime, no deploy): the children of the
    ``parent`` page in ``container`` (a Confluence space or a native container). Empty ``container``:
    only the bundled ``examples/tool-skills/`` defaults."""

    container: str = ""
    parent: str = "Tool Skills"


@dataclass(frozen=True)
class Confluence:
    url: str = ""
    username: str = ""
    token_env: str = ""  # the org-level token; a seat's own comes from its mcp_env
    cloud: bool = True
    timeout_seconds: float = 10.0


@dataclass(frozen=True)
class Knowledge:
    backend: KnowledgeBackend = "native"
    tool_skills: ToolSkillsRegistry = field(default_factory=ToolSkillsRegistry)
    scope: list[str] = field(default_factory=list)  # org-wide readable containers
    confluence: Confluence = field(default_factory=Confluence)


@dataclass(frozen=True)
class Ladder:
    rejected_similarity: float = 0.85
    published_duplicate_similarity: float = 0.95
    corroboration_similarity: float = 0.88
    min_distinct_sources: int = 2


@dataclass(frozen=True)
class Transcripts:
    ladder: Ladder = field(default_factory=Ladder)
    classify_batch_size: int = 10


@dataclass(frozen=True)
class CompanySpec:
    name: str = "Default"
    learning_enabled: bool = True
    token_budget: int = 0  # 0 = no ceiling
    budget_window: Literal["day", "month"] = "day"


@dataclass(frozen=True)
class UnitSpec:
    name: str = ""
    parent: str = ""
    knowledge_container: str = ""
    tracker_key: str = ""


@dataclass(frozen=True)
class RoleSpec:
    learning_enabled: Literal["true", "false", "inherit"] = "inherit"
    llm: list[str] = field(default_factory=list)
    llm_auxiliary: list[str] = field(default_factory=list)
    token_budget: int = 0
    tools: list[str] = field(default_factory=list)
    # per-role overrides of [learning] and [skills.reflection], merged over the defaults
    learning: dict = field(default_factory=dict)
    skills: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SeatSpec:
    role: str = ""
    unit: str = ""
    display_name: str = ""
    token_budget: int = 0
    active: bool = True
    mcp_env: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    company: CompanySpec = field(default_factory=CompanySpec)
    providers: Providers = field(default_factory=Providers)
    learning: Learning = field(default_factory=Learning)
    skills: Skills = field(default_factory=Skills)
    knowledge: Knowledge = field(default_factory=Knowledge)
    transcripts: Transcripts = field(default_factory=Transcripts)
    units: dict[str, UnitSpec] = field(default_factory=dict)
    roles: dict[str, RoleSpec] = field(default_factory=dict)
    seats: dict[str, SeatSpec] = field(default_factory=dict)

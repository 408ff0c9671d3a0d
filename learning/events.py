"""The events the learning app publishes: reflection, skills, the turn start, background passes,
a lead's memory actions (registered in ``core.event_types``' catalogue when imported)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from core.event_types import JSON, EventPayload

# --- reflection (spec: internal/events) -------------------------------------------------------


class WorkerRan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    status: Literal["ran"] = "ran"
    result: dict[str, JSON] = Field(default_factory=dict)


class WorkerSkipped(BaseModel):
    """The worker's gate closed (a pass-wide gate or its own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    status: Literal["skipped"] = "skipped"
    gate: str


class WorkerFailed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    status: Literal["failed"] = "failed"
    error: str


WorkerOutcome = Annotated[WorkerRan | WorkerSkipped | WorkerFailed, Field(discriminator="status")]


class ReflectionCompleted(EventPayload):
    NAME = "reflection_completed"
    RETENTION = "turn_record"

    turn: int | None = None
    run_id: str = ""
    gate: str | None = None  # the pass-wide gate that closed, or None
    workers: dict[str, WorkerOutcome] = Field(default_factory=dict)
    order: list[str] = Field(default_factory=list)  # the walk's order (JSON object keys keep none on PostgreSQL)
    failed: list[str] = Field(default_factory=list)
    duration_ms: int = 0

    def walked(self) -> list[tuple[str, WorkerRan | WorkerSkipped | WorkerFailed]]:
        """(worker, outcome) in the order the pass walked them."""
        names = [n for n in self.order if n in self.workers] + [n for n in self.workers if n not in self.order]
        return [(n, self.workers[n]) for n in names]


class PersistDeciderCompleted(EventPayload):
    NAME = "persist_decider_completed"
    RETENTION = "turn_telemetry"

    classification: str = ""
    entry_id: int | None = None
    ttl_until: datetime | None = None
    reason: str = ""
    skipped: str = ""  # the limit that refused the note, if one did
    size: int | None = None
    recommendation: str = ""  # a DOC decision's text


class EpisodeWritten(EventPayload):
    NAME = "episode_written"
    RETENTION = "turn_record"

    episode_id: int
    replaced: bool = False
    embedded: bool = False
    label: str = ""


class CounterpartyProfileUpdated(EventPayload):
    NAME = "counterparty_profile_updated"
    RETENTION = "turn_record"

    profile_id: int
    subject_handle: str = ""
    subject_external_id: str = ""
    subject_platform: str = ""
    observations: int = 0


class SkillReflectionApplied(EventPayload):
    NAME = "skill_reflection_applied"
    RETENTION = "turn_record"

    action: str
    skill_id: int
    name: str
    version: int


class ReflectAndPersistCalled(EventPayload):
    """The agent saved a note itself this turn: the PersistDecider stands down."""

    NAME = "reflect_and_persist_called"
    RETENTION = "turn_record"
    BEST_EFFORT = False

    entry_id: int
    kind: str


# --- skills ------------------------------------------------------------------------------------


class SkillSynthesized(EventPayload):
    NAME = "skill_synthesized"
    RETENTION = "skills"

    trigger: Literal["inline", "clustered"]
    skill_id: int
    name: str
    tool_sequence: list[str] = Field(default_factory=list)
    cluster_size: int | None = None


class SkillRefined(EventPayload):
    """A new version of a skill: by the Refiner worker (``bullet``) or the agent's ``refine_skill`` (``reason``)."""

    NAME = "skill_refined"
    RETENTION = "skills"

    skill_id: int
    name: str
    version: int
    source: Literal["refiner", "refine_skill"] = "refiner"
    bullet: str = ""
    outcome: str = ""
    reason: str = ""


class SkillUsed(EventPayload):
    """A skill loaded: a synthesized one (``skill_id``, ``name``, ``version``) or registry guidance (``key``, its page)."""

    NAME = "skill_used"
    RETENTION = "turn_telemetry"

    source_kind: Literal["synthesized", "registry"] = "synthesized"
    skill_id: int | None = None
    name: str = ""
    version: int | None = None
    key: str = ""
    source_page_id: str = ""
    source_container: str = ""


class _SkillClock(EventPayload):
    RETENTION = "skills"
    skill_id: int
    name: str
    unused_days: int
    after_days: int


class SkillStaled(_SkillClock):
    NAME = "skill_staled"


class SkillArchived(_SkillClock):
    NAME = "skill_archived"


class SkillRevived(EventPayload):
    NAME = "skill_revived"
    RETENTION = "skills"

    skill_id: int
    name: str


class SkillTelemetryWriteFailed(EventPayload):
    NAME = "skill_telemetry_write_failed"
    RETENTION = "turn_telemetry"

    skill_ids: list[int]
    error: str


class SkillPromoted(EventPayload):
    NAME = "skill_promoted"
    RETENTION = "skills"

    unit: str
    container_key: str
    page_id: str
    page_title: str
    sibling_count: int
    distinct_agents: int
    skills: list[int]
    seats: list[str]


# --- turn start --------------------------------------------------------------------------------


class BlockOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    hit: bool | None = None  # None: the summary listed the block but recorded no hit
    bytes: int | None = None


class PrefetchSummary(EventPayload):
    """One per turn start. Stored with the spec's flat ``<block>_hit`` / ``<block>_bytes`` keys too."""

    NAME = "prefetch_summary"
    RETENTION = "turn_telemetry"

    blocks: dict[str, BlockOutcome] = Field(default_factory=dict)
    trigger_requires_recon: bool | None = None
    thin_trigger: bool = False
    turn_embedding: str | None = None
    hits: int = 0
    block_count: int = 0
    summary: str = ""
    relevant_knowledge_selection_count: int | None = None
    # the purposes the turn start answered offline, and why: deadline | budget | rejected | unparseable | transient ...
    model_fallbacks: dict[str, str] = Field(default_factory=dict)
    # what the similar-work recall found (``learning.prefetch.similar_work.RECALL_OUTCOMES``); None before it was recorded
    similar_prior_work_recall: str | None = None
    thread_context_posts: int | None = None
    thread_context_read: int | None = None
    thread_context_stopped_short: bool | int | None = None

    @model_serializer(mode="wrap")
    def _with_flat_keys(self, handler):
        data = handler(self)
        for name, block in self.blocks.items():
            data[f"{name}_hit"] = block.hit
            data[f"{name}_bytes"] = block.bytes
        return data


# --- background passes -------------------------------------------------------------------------


class CompactionRequested(EventPayload):
    NAME = "compaction_requested"
    RETENTION = "pass_reports"

    cluster_size: int
    exemplars: list[str] = Field(default_factory=list)


class CompactionCompleted(EventPayload):
    NAME = "compaction_completed"
    RETENTION = "pass_reports"

    clusters_folded: int = 0
    episodes_compacted: int = 0
    non_terminal_dropped: int = 0
    consolidated_dropped: int = 0
    compacted_evicted: int = 0


class EpisodeLifecyclePass(EventPayload):
    NAME = "episode_lifecycle_pass"
    RETENTION = "pass_reports"

    seats: int
    seats_due: int
    non_terminal_dropped: int = 0
    tool_free_dropped: int = 0
    consolidated_dropped: int = 0
    clusters_folded: int = 0
    compaction_failed: int = 0
    episodes_compacted: int = 0
    condensed: int = 0
    compacted_evicted: int = 0
    exemplars_evicted: int = 0
    per_seat: list[dict[str, JSON]] = Field(default_factory=list)


class MemoryFillVectorUnusable(EventPayload):
    NAME = "memory_fill_vector_unusable"
    RETENTION = "pass_reports"

    row: str
    bytes: int
    piece: int | None = None
    pieces_total: int | None = None


class MemoryFillInputContinued(EventPayload):
    NAME = "memory_fill_input_continued"
    RETENTION = "pass_reports"

    row: str
    pieces_in: int
    pieces_total: int
    bytes: int


class MemoryFillConfigurationRefused(EventPayload):
    NAME = "memory_fill_configuration_refused"
    RETENTION = "pass_reports"

    model: str
    dim: int | None = None
    paused_until: datetime | None = None
    why: str = ""


# --- a lead's memory actions ------------------------------------------------------------------


class NoteForgotten(EventPayload):
    """A lead removed a diary note: gone from recall at once."""

    NAME = "note_forgotten"
    RETENTION = "audit"
    BEST_EFFORT = False

    user: str
    note_id: int
    kind: str
    content: str
    turn_id: str = ""  # the turn that wrote it
    reason: str = ""


class NoteCorrected(EventPayload):
    """A lead replaced a diary note's text (re-embedded, so recall ranks the corrected text)."""

    NAME = "note_corrected"
    RETENTION = "audit"
    BEST_EFFORT = False

    user: str
    note_id: int
    before: str
    after: str
    reason: str = ""

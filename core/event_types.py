"""The event catalogue: one pydantic class per event this project publishes.

In the manner of Zulip's ``zerver/lib/event_types.py``: every ``Event`` row's payload is one of
these classes, written by ``core.events.publish(instance, seat=..., turn_id=...)`` and read back as
an instance by ``core.events.latest`` / ``core.events.recorded``. A class forbids fields it does not
declare, so a writer cannot drift from its readers. ``NAME`` is the stored event name (the spec's,
where the spec names it); ``BEST_EFFORT`` marks telemetry, whose failed write is logged and
swallowed rather than failing the path it measures.

Rows written before the catalogue load through ``load``: each class's ``upgrade`` maps the shapes
its writers used to produce onto the current one, and keys nobody reads any more are dropped.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer

log = logging.getLogger("core.events")

JSON = Any  # a JSON value (the payload column is JSON)


class EventPayload(BaseModel):
    """Base of every catalogued event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    NAME: ClassVar[str]
    BEST_EFFORT: ClassVar[bool] = True  # telemetry unless a class says otherwise

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        """A stored payload in an older shape, mapped onto this one (the default: unchanged)."""
        return payload


E = TypeVar("E", bound=EventPayload)


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


def _legacy_worker(value) -> dict:
    """One worker's outcome in any shape an older writer or fixture used."""
    if isinstance(value, dict):
        if value.get("status") in ("ran", "skipped", "failed"):
            return value
        if value.get("error"):
            return {"status": "failed", "error": str(value["error"])}
        gate = value.get("closed_gate") or value.get("gate")
        return {"status": "skipped", "gate": str(gate)} if gate else {"status": "ran"}
    if value in (None, "", "ran", True):
        return {"status": "ran"}
    return {"status": "skipped", "gate": str(value)}


class ReflectionCompleted(EventPayload):
    NAME = "reflection_completed"

    turn: int | None = None
    run_id: str = ""
    gate: str | None = None  # the pass-wide gate that closed, or None
    workers: dict[str, WorkerOutcome] = Field(default_factory=dict)
    order: list[str] = Field(default_factory=list)  # the walk's order (JSON object keys keep none on PostgreSQL)
    failed: list[str] = Field(default_factory=list)
    duration_ms: int = 0

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        out = dict(payload)
        workers: dict[str, dict] = {}
        gates = out.pop("closed_gates", None)
        if isinstance(gates, dict):
            workers.update({str(k): _legacy_worker(v or "ran") for k, v in gates.items()})
        elif isinstance(gates, list):
            for item in gates:
                if isinstance(item, dict) and item.get("worker"):
                    workers[str(item["worker"])] = _legacy_worker(item.get("gate") or item.get("closed_gate") or "ran")
        out.pop("gates_closed", None)
        raw = out.get("workers")
        if isinstance(raw, dict):
            for name, value in raw.items():
                workers.setdefault(str(name), _legacy_worker(value))
        out["workers"] = workers
        out.setdefault("order", list(workers))
        out.setdefault("failed", [n for n, w in workers.items() if w.get("status") == "failed"])
        return out

    def walked(self) -> list[tuple[str, WorkerRan | WorkerSkipped | WorkerFailed]]:
        """(worker, outcome) in the order the pass walked them."""
        names = [n for n in self.order if n in self.workers] + [n for n in self.workers if n not in self.order]
        return [(n, self.workers[n]) for n in names]


class PersistDeciderCompleted(EventPayload):
    NAME = "persist_decider_completed"

    classification: str = ""
    entry_id: int | None = None
    ttl_until: datetime | None = None
    reason: str = ""
    skipped: str = ""  # the limit that refused the note, if one did
    size: int | None = None
    recommendation: str = ""  # a DOC decision's text


class EpisodeWritten(EventPayload):
    NAME = "episode_written"

    episode_id: int
    replaced: bool = False
    embedded: bool = False
    label: str = ""


class CounterpartyProfileUpdated(EventPayload):
    NAME = "counterparty_profile_updated"

    profile_id: int
    subject_handle: str = ""
    subject_external_id: str = ""
    subject_platform: str = ""
    observations: int = 0


class SkillReflectionApplied(EventPayload):
    NAME = "skill_reflection_applied"

    action: str
    skill_id: int
    name: str
    version: int


class ReflectAndPersistCalled(EventPayload):
    """The agent saved a note itself this turn: the PersistDecider stands down."""

    NAME = "reflect_and_persist_called"
    BEST_EFFORT = False

    entry_id: int
    kind: str


# --- skills ------------------------------------------------------------------------------------


class SkillSynthesized(EventPayload):
    NAME = "skill_synthesized"

    trigger: Literal["inline", "clustered"]
    skill_id: int
    name: str
    tool_sequence: list[str] = Field(default_factory=list)
    cluster_size: int | None = None


class SkillRefined(EventPayload):
    """A new version of a skill: by the Refiner worker (``bullet``) or the agent's ``refine_skill`` (``reason``)."""

    NAME = "skill_refined"

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

    source_kind: Literal["synthesized", "registry"] = "synthesized"
    skill_id: int | None = None
    name: str = ""
    version: int | None = None
    key: str = ""
    source_page_id: str = ""
    source_container: str = ""

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        page = payload.get("source_page_id")
        return {**payload, "source_page_id": "" if page is None else str(page)}


class _SkillClock(EventPayload):
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

    skill_id: int
    name: str


class SkillTelemetryWriteFailed(EventPayload):
    NAME = "skill_telemetry_write_failed"

    skill_ids: list[int]
    error: str


class SkillPromoted(EventPayload):
    NAME = "skill_promoted"

    unit: str
    container_key: str
    page_id: str
    page_title: str
    sibling_count: int
    distinct_agents: int
    skills: list[int]
    seats: list[str]

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        return {**payload, "page_id": str(payload.get("page_id", ""))}


# --- turn start --------------------------------------------------------------------------------


class BlockOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    hit: bool | None = None  # None: the summary listed the block but recorded no hit
    bytes: int | None = None


class PrefetchSummary(EventPayload):
    """One per turn start. Stored with the spec's flat ``<block>_hit`` / ``<block>_bytes`` keys too."""

    NAME = "prefetch_summary"

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

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        out = {k: v for k, v in payload.items() if not (k.endswith("_hit") or k.endswith("_bytes"))}
        listed = payload.get("blocks")
        names = list(listed) if isinstance(listed, (dict, list)) else []
        names += [k[: -len("_hit")] for k in payload if k.endswith("_hit") and len(k) > 4]
        blocks = {}
        for name in dict.fromkeys(str(n) for n in names):
            entry = listed.get(name) if isinstance(listed, dict) else None
            given: dict = entry if isinstance(entry, dict) else {}
            hit = given.get("hit", payload.get(f"{name}_hit"))
            size = given.get("bytes", payload.get(f"{name}_bytes"))
            blocks[name] = {
                "hit": bool(hit) if isinstance(hit, bool) or hit in (0, 1) else None,
                "bytes": int(size) if isinstance(size, (int, float)) and not isinstance(size, bool) else None,
            }
        out["blocks"] = blocks
        return out


class KnowledgePageRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    page_id: str
    title: str = ""
    container_key: str = ""


class KnowledgeRead(EventPayload):
    """A knowledge search and the pages it reached. ``via``: search_knowledge, relevant_knowledge (the prefetch), ..."""

    NAME = "knowledge_read"

    via: str
    query: str = ""
    served_mode: str = ""
    unavailable: str = ""
    pages: list[KnowledgePageRef] = Field(default_factory=list)

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        out = dict(payload)
        surface = out.pop("surface", None)
        out.setdefault("via", surface or "search")
        out["pages"] = [{**p, "page_id": str(p.get("page_id", ""))} for p in out.get("pages") or [] if isinstance(p, dict)]
        return out


class AuxiliarySpend(EventPayload):
    NAME = "auxiliary_spend"

    stage: str
    purpose: str
    provider: str
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    outcome: str = ""  # answered | unparseable | rejected | truncated | refused | transient | configuration | ...
    finish: str = ""
    reason: str = ""  # a failed attempt's reason: the error, or what the purpose's check found in the answer


# --- background passes -------------------------------------------------------------------------


class CompactionRequested(EventPayload):
    NAME = "compaction_requested"

    cluster_size: int
    exemplars: list[str] = Field(default_factory=list)


class CompactionCompleted(EventPayload):
    NAME = "compaction_completed"

    clusters_folded: int = 0
    episodes_compacted: int = 0
    non_terminal_dropped: int = 0
    consolidated_dropped: int = 0
    compacted_evicted: int = 0


class EpisodeLifecyclePass(EventPayload):
    NAME = "episode_lifecycle_pass"

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

    row: str
    bytes: int
    piece: int | None = None
    pieces_total: int | None = None


class MemoryFillInputContinued(EventPayload):
    NAME = "memory_fill_input_continued"

    row: str
    pieces_in: int
    pieces_total: int
    bytes: int


class MemoryFillConfigurationRefused(EventPayload):
    NAME = "memory_fill_configuration_refused"

    model: str
    dim: int | None = None
    paused_until: datetime | None = None
    why: str = ""


# --- knowledge review --------------------------------------------------------------------------


class _DraftDecision(EventPayload):
    BEST_EFFORT = False

    user: str
    page_id: int
    page_title: str
    container_key: str = ""
    skills: list[JSON] = Field(default_factory=list)
    seats: list[JSON] = Field(default_factory=list)


class KnowledgeDraftPublished(_DraftDecision):
    NAME = "knowledge_draft_published"

    parent_id: int | None = None
    embedding: str = ""


class KnowledgeDraftRejected(_DraftDecision):
    NAME = "knowledge_draft_rejected"


class AdminAction(EventPayload):
    """A person's change through the admin or a lead's page, naming them. ``detail``: what the action needs."""

    NAME = "admin_action"
    BEST_EFFORT = False

    user: str
    action: str
    object: str  # "<app>.<model>:<pk>"
    detail: dict[str, JSON] = Field(default_factory=dict)

    @classmethod
    def upgrade(cls, payload: dict) -> dict:
        core = {k: payload[k] for k in ("user", "action", "object") if k in payload}
        extra = {k: v for k, v in payload.items() if k not in core and k != "detail"}
        return {**core, "detail": {**extra, **(payload.get("detail") or {})}}


# --- a lead's memory actions ------------------------------------------------------------------


class NoteForgotten(EventPayload):
    """A lead removed a diary note: gone from recall at once."""

    NAME = "note_forgotten"
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
    BEST_EFFORT = False

    user: str
    note_id: int
    before: str
    after: str
    reason: str = ""


# --- transcripts -------------------------------------------------------------------------------


class ShardDecided(EventPayload):
    NAME = "shard_decided"

    shard_id: int
    status: str
    reason: str = ""


class ShardJudged(EventPayload):
    NAME = "shard_judged"

    shard_id: int
    kept: bool
    reason: str = ""
    submitted_by: str = ""


class ShardRejected(EventPayload):
    NAME = "shard_rejected"

    shard_id: int
    by: str
    actor: str = ""


class LessonMissed(EventPayload):
    NAME = "lesson_missed"

    shard_id: int
    later_sessions: int


class ArtifactRetirementProposed(EventPayload):
    NAME = "artifact_retirement_proposed"

    recommendation_id: int
    later_sessions: int


class RecommendationReviewed(EventPayload):
    NAME = "recommendation_reviewed"

    recommendation_id: int
    approve: bool
    actor: str = ""
    wrote_bytes: int = 0


class RecommendationInstalled(EventPayload):
    NAME = "recommendation_installed"

    recommendation_id: int
    path: str
    wrote_bytes: int
    actor: str = ""


class TranscriptsAdminAction(EventPayload):
    NAME = "transcripts_admin_action"

    action: str
    object_id: int
    user: str
    result: dict[str, JSON] = Field(default_factory=dict)


CATALOGUE: tuple[type[EventPayload], ...] = (
    ReflectionCompleted,
    PersistDeciderCompleted,
    EpisodeWritten,
    CounterpartyProfileUpdated,
    SkillReflectionApplied,
    ReflectAndPersistCalled,
    SkillSynthesized,
    SkillRefined,
    SkillUsed,
    SkillStaled,
    SkillArchived,
    SkillRevived,
    SkillTelemetryWriteFailed,
    SkillPromoted,
    PrefetchSummary,
    KnowledgeRead,
    AuxiliarySpend,
    CompactionRequested,
    CompactionCompleted,
    EpisodeLifecyclePass,
    MemoryFillVectorUnusable,
    MemoryFillInputContinued,
    MemoryFillConfigurationRefused,
    KnowledgeDraftPublished,
    KnowledgeDraftRejected,
    AdminAction,
    NoteForgotten,
    NoteCorrected,
    ShardDecided,
    ShardJudged,
    ShardRejected,
    LessonMissed,
    ArtifactRetirementProposed,
    RecommendationReviewed,
    RecommendationInstalled,
    TranscriptsAdminAction,
)
BY_NAME: dict[str, type[EventPayload]] = {cls.NAME: cls for cls in CATALOGUE}
assert len(BY_NAME) == len(CATALOGUE), "two catalogued events share a name"


def event_class(name: str) -> type[EventPayload]:
    try:
        return BY_NAME[name]
    except KeyError:
        raise LookupError(f"{name!r} is not in the event catalogue (core.event_types.CATALOGUE)") from None


def load(cls: type[E], payload) -> E | None:
    """A stored payload as ``cls``, whatever older shape it was written in; None if it cannot be read."""
    data = cls.upgrade(dict(payload) if isinstance(payload, dict) else {})
    known = {k: v for k, v in data.items() if k in cls.model_fields}
    try:
        return cls.model_validate(known)
    except ValidationError as exc:
        log.warning("a stored %s event could not be read: %s", cls.NAME, exc)
        return None

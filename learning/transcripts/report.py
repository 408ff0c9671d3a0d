"""The ingest summary as lines of text (the command and the demo print the same thing)."""

from __future__ import annotations

from learning.transcripts.telemetry import render_uses


def summary_lines(summary, *, mb_per_s: float | None = None) -> list[str]:
    pseudo = sum(summary.pseudo_user.values())
    lines = [
        f"files: {summary.files}   bytes read: {summary.bytes_read:,}" + (f"   ({mb_per_s:.1f} MB/s)" if mb_per_s else ""),
        f"sessions: {len(summary.sessions)}   messages a person wrote: {summary.human_messages}   "
        f"harness-injected pseudo-user records: {pseudo}" + (f" ({_counts(summary.pseudo_user)})" if pseudo else ""),
        f"redacted at extraction: {_counts(summary.scrubbed) or 'nothing'}",
        f"episodes: {summary.episodes}   candidate shards: {len(summary.shards)}",
        f"ladder outcomes: {_counts(summary.outcomes) or 'none'}",
    ]
    for shard, status, reason in summary.decisions:
        lines.append(f"  #{shard.pk} [{shard.session_id}] {status}: {reason} — {shard.text}")
    for verdict in summary.judged:
        lines.append(f"  judge on #{verdict['shard_id']}: {verdict['reason']}")
    lines.append(f"inventory: {len(summary.inventory)} existing artifact(s)")
    for scope, path in summary.covered:
        lines.append(f"  covered already: {scope!r} by {path}")
    lines.append(f"recommendations: {len(summary.recommendations)}")
    for rec in summary.recommendations:
        lines.append(f"  #{rec.pk} {rec.tier} ({rec.get_mode_display()}) {rec.target_path} — {rec.scope!r}, {rec.lessons.count()} lesson(s), {rec.status}")
    if summary.telemetry:
        for row in summary.telemetry.artifacts:
            lines.append(f"  artifact #{row['id']} {row['tier']} {row['path']}: uses {render_uses(row['uses'])} over {row['later_sessions']} later session(s)")
        for row in summary.telemetry.retirements:
            lines.append(f"  retirement proposed: #{row['id']} {row['path']} (unused over {row['later_sessions']} later sessions)")
        for row in summary.telemetry.lessons:
            if row["reach"] == "missed":
                lines.append(f"  miss: lesson #{row['shard_id']} was not reached by {row['later_sessions']} later session(s) — {row['text']}")
    lines.append(f"warnings: {len(summary.warnings)}")
    lines.extend(f"  warning: {w}" for w in summary.warnings)
    return lines


def _counts(counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


def per_file_lines(summary) -> list[str]:
    """Per file: what was read, what was excluded by kind, its episodes, their lessons, the ladder and recommendations."""
    from learning.transcripts.models import Shard, TranscriptEpisode

    lines = []
    for read in summary.files_read:
        excluded = sum(read.pseudo_user.values())
        lines.append(f"{read.path}: {read.bytes_read:,} bytes, {sum(read.records.values())} records ({_counts(read.records)}); "
                     f"a person wrote {read.human_messages}; pseudo-user records excluded {excluded}"
                     + (f" ({_counts(read.pseudo_user)})" if excluded else "") + (f"; {read.warnings} warning(s)" if read.warnings else ""))
        episodes = TranscriptEpisode.objects.filter(pk__in=read.episode_ids).order_by("pk")
        shards_of: dict[int | None, list[Shard]] = {}
        for shard in Shard.objects.filter(episode_id__in=read.episode_ids).prefetch_related("recommendations").order_by("pk"):
            shards_of.setdefault(shard.episode_id, []).append(shard)
        for episode in episodes:
            lines.append(f"  episode #{episode.pk} {episode.kind}: asked {_short(episode.ask)!r}")
            lines.append(f"    tried {_short(episode.attempt.splitlines()[-1] if episode.attempt else '')!r} -> "
                         f"{_short(episode.failure.splitlines()[0] if episode.failure else '')!r}; then {_short(episode.correction)!r}")
            for shard in shards_of.get(episode.pk, []) or []:
                where = f" into #{shard.absorbed_into_id}" if shard.status == Shard.ABSORBED else ""
                lines.append(f"    lesson #{shard.pk} [{shard.status}{where}] {shard.text}")
                if shard.reason:
                    lines.append(f"      ladder: {shard.reason}")
                for rec in shard.recommendations.all():
                    lines.append(f"      recommendation #{rec.pk} {rec.tier} ({rec.get_mode_display()}) {rec.target_path}, {rec.status}")
            if not shards_of.get(episode.pk):
                lines.append("    no lesson")
    return lines


def _short(text: str, n: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"

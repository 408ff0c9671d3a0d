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

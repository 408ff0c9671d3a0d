"""`make bench`'s page: one table of headline figures above the outputs they are read from."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _report():
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(tmp_path, outputs: dict[str, str]) -> str:
    """The page ``bench/report.py`` writes from these bench outputs (name -> text)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, text in outputs.items():
        (runs / f"{name}.txt").write_text(text)
    page = tmp_path / "benchmarks.md"
    assert _report().main([str(runs), str(page)]) == 0
    return page.read_text()


def test_the_table_puts_each_figure_beside_its_floor_and_leaves_out_benches_not_run(tmp_path):
    text = _page(tmp_path, {
        "intake": "$ python bench/intake.py\n"
        "   POST /turns accepted (202)                242.5 /s    5.42 ms   0.45 ms   1.58 ms\n"
        "   floor: POST answered 401, no token       1758.7 /s    0.81 ms   0.21 ms   0.00 ms\n",
        "vector_index": "$ python bench/vector_index.py\n"
        "query_episodes ranking (limit 10)          17.9     22.4      359.8    444.0   p50 <= 50 ms: met\n"
        "turn start recall (limit 3)                15.8     24.1      344.1    435.9   p50 <= 50 ms: met\n",
    })
    table = text.split("\n## ")[0]
    assert "| `POST /turns` accepted under gunicorn | 242.5 /s | 401 before any query: 1758.7 /s | ≥ 300 /s |" in table
    assert "| 17.9 / 15.8 ms | exact scan 359.8 / 344.1 ms | ≤ 50 ms |" in table
    assert "rich turn start" not in table  # prefetch_latency was not run
    assert "## `python bench/intake.py`" in text and "359.8" in text.split("## `python bench/vector_index.py`")[1]


def test_the_turn_start_row_reads_the_real_embedders_run_not_the_hashing_one(tmp_path):
    text = _page(tmp_path, {"prefetch_latency": "$ python bench/prefetch_latency.py\n"
        "== prefetch latency, hashing embedder\n"
        "   rich trigger                   p50    79.1 ms   p95   115.7 ms   (n=59)   5.4x the floor\n"
        "   floor (embed + 4 raw SELECTs)  p50    14.8 ms   p95    22.9 ms   (n=60)\n"
        "   the ask's embed alone        p50     0.3 ms   (the floor's first part)\n"
        "== prefetch latency, local embedder\n"
        "   rich trigger                   p50   109.2 ms   p95   132.7 ms   (n=59)   1.8x the floor\n"
        "   floor (embed + 4 raw SELECTs)  p50    61.0 ms   p95    71.0 ms   (n=60)\n"
        "   the ask's embed alone        p50    21.5 ms   (the floor's first part)\n"})
    assert ("| 109.2 / 132.7 ms | embed + 4 raw SELECTs: 61.0 ms (the embed alone: 21.5 ms) | ≤ 25 / 60 ms |"
            in text.split("\n## ")[0])

"""The classroom benchmark drives the page's own player and payload code: it must keep running as they change."""
import json

from benchmarks import classroom


def test_classroom_benchmark_runs_sessions_through_the_page_code(capsys):
    classroom.main(["--sessions", "2", "--seconds", "1"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    total = lines[-1]
    assert total["sessions"] == 2 and total["epochs_per_s_min"] > 0 and total["frames_per_s_min"] > 0

"""The classroom benchmark drives the page's own run and drawing code: it must keep running as they change."""
import json

from benchmarks import classroom


def test_classroom_benchmark_runs_sessions_through_the_page_code(capsys):
    classroom.main(["--lab", "classification", "--sessions", "2", "--distinct", "--seconds", "1"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    total = lines[-1]
    assert total["lab"] == "classification" and total["sessions"] == 2 and total["runs_computed"] == 2
    assert total["steps_per_s_min"] > 0 and total["frames_per_s_min"] > 0

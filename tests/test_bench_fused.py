"""bench.fused: both models timed on every shape, their outputs checked equal, one JSON object last."""
import json

from bench.fused import SHAPES, main


def test_fused_bench_reports_every_shape(tiny_model_dir, capsys):
    main(["--model", str(tiny_model_dir), "--rounds", "1", "--threads", "1", "--json"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [(row["canvas"], row["rows"]) for row in report["shapes"]] == list(SHAPES)
    for row in report["shapes"]:
        assert row["window_fused_ms"] > 0 and row["full_unfused_ms"] > 0
        assert row["window_speedup"] == round(row["window_unfused_ms"] / row["window_fused_ms"], 3)

"""bench.fused: every shape reported with both models' figures, one JSON object last (its figures are
times: nothing here asserts what they are)."""
import json

from bench.fused import SHAPES, main


def test_fused_bench_reports_every_shape(tiny_model_dir, capsys):
    main(["--model", str(tiny_model_dir), "--rounds", "1", "--threads", "1", "--json"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [(row["canvas"], row["rows"]) for row in report["shapes"]] == list(SHAPES)
    figures = {f"{kind}_{model}_ms" for kind in ("window", "full") for model in ("unfused", "fused")}
    for row in report["shapes"]:
        assert figures | {"window_speedup", "full_speedup"} <= row.keys()

"""``bench train`` bookkeeping: ratios to the first row, the table, the JSON and chart (workers stubbed)."""

from __future__ import annotations

import json

import pytest

from linkage_lab.cli.main import main
from linkage_lab_experiments.bench import train_bench

pytestmark = pytest.mark.unit


def _worker(task, num_envs, iterations, warmup, overrides, workers=1):
    # Collection grows with the envs, the update less: 64 envs 1.0 + 0.5 s, 256 envs 2.0 + 1.0 s.
    collection, update = {64: (1.0, 0.5), 256: (2.0, 1.0)}[num_envs]
    collection /= workers  # two simulation processes collect in half the time
    return {
        "task": task,
        "num_envs": num_envs,
        "num_steps_per_env": 24,
        "device": "cpu",
        "collection_s_per_it": collection,
        "update_s_per_it": update,
        "iteration_s": collection + update,
        "iterations_per_s": 1.0 / (collection + update),
        "env_steps_per_s": num_envs * 24 / (collection + update),
    }


def test_ratios_table_and_files(monkeypatch, tmp_path):
    monkeypatch.setattr(train_bench, "run_train_worker", _worker)
    result = train_bench.run_train_bench("T", [64, 256], progress=False)
    second = result["rows"][1]
    # 256·24/3 = 2048 env-steps/s against 64·24/1.5 = 1024: twice the throughput, at twice the time per iteration.
    assert second["ratio_to_first"] == {"env_steps_per_s": 2.0, "collection_s_per_it": 2.0, "update_s_per_it": 2.0}
    table = train_bench.format_table(result).splitlines()
    assert table[2].split()[:7] == ["default", "64", "1", "1.000", "0.500", "1,024", "0.667"]
    assert table[3].split()[:7] == ["default", "256", "1", "2.000", "1.000", "2,048", "0.333"]
    json_path, png_path = train_bench.write_results(result, tmp_path)
    assert json.loads(json_path.read_text())["rows"][1]["env_steps_per_s"] == pytest.approx(2048.0)
    assert json_path.name == "train_T.json" and png_path.read_bytes()[:4] == b"\x89PNG"


def test_worker_counts_are_rows_of_their_own(monkeypatch):
    monkeypatch.setattr(train_bench, "run_train_worker", _worker)
    result = train_bench.run_train_bench("T", [256], progress=False, workers_list=[1, 2])
    assert [row["workers"] for row in result["rows"]] == [1, 2]
    # 256·24/(1 + 1) = 3072 env-steps/s against 2048: 1.5x.
    assert result["rows"][1]["ratio_to_first"]["env_steps_per_s"] == pytest.approx(1.5)
    assert train_bench.format_table(result).splitlines()[3].split()[:3] == ["default", "256", "2"]


def test_variants_add_their_overrides(monkeypatch):
    seen = []

    def worker(task, num_envs, iterations, warmup, overrides, workers=1):
        seen.append(list(overrides))
        return _worker(task, num_envs, iterations, warmup, overrides, workers)

    monkeypatch.setattr(train_bench, "run_train_worker", worker)
    variants = {"eager": ["env.sim.physics.use_cuda_graph=false"], "graph": []}
    result = train_bench.run_train_bench("T", [64], overrides=["a=1"], progress=False, variants=variants)
    assert seen == [["a=1", "env.sim.physics.use_cuda_graph=false"], ["a=1"]]
    assert [row["variant"] for row in result["rows"]] == ["eager", "graph"]


def test_a_failed_worker_names_the_env_count(monkeypatch):
    class Failed:
        returncode = 1
        stdout = "building\n"
        stderr = "Traceback ...\nMemoryError\n"

    monkeypatch.setattr(train_bench.subprocess, "run", lambda *a, **k: Failed())
    with pytest.raises(RuntimeError, match="(?s)at 1024 envs \\(exit 1\\):\n.*MemoryError"):
        train_bench.run_train_worker("T", 1024, 1, 1, [])


@pytest.mark.parametrize("flags", [["--num-envs", "0"], ["--iterations", "0"], ["--warmup", "-1"]])
def test_bad_counts_are_usage_errors(flags, capsys):
    assert main(["bench", "train", "--task", "LinkageLab-Velocity-Flat-Limit", *flags]) == 2
    assert "must be" in capsys.readouterr().err


def test_variant_overrides_keep_list_values_whole():
    from linkage_lab_experiments.cli.bench import _parse_variants

    variants = _parse_variants(["late:a=1,env.delay=[0,8],b={x:1,y:2}", "plain:"])
    assert variants == {"late": ["a=1", "env.delay=[0,8]", "b={x:1,y:2}"], "plain": []}

"""The cross-device table: a published GPU seed against its CPU twin, every statistic the ledger reads."""

import json
from pathlib import Path

import pandas as pd
import pytest

from attnlab import captions
from attnlab.config import ROOT
from attnlab.claims.rules import TWIN_AGREES, TWIN_BEYOND_SPREAD, TWIN_NOT_RUN, TWIN_WITHIN_SPREAD
from attnlab.families.cross_device import COLUMNS, FLOAT_TOLERANCE, PAIRS, cross_device, folder_of, statistics


def record(device, ppl, seed=1, key="k1", **more):
    return {"experiment": "ladder/block", "seed": seed, "config_hash": key, "device": device,
            "device_name": {"cuda": "NVIDIA H200", "cpu": "AMD EPYC"}[device], "held_out_ppl": {"128": ppl},
            "train_ppl": 20.0, "final_loss": 3.0, **more}


def write(folder, metrics):
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return str(folder / "metrics.json")


def test_a_twin_is_compared_statistic_by_statistic_and_a_missing_one_is_not_run_yet(tmp_path):
    results = tmp_path / "results" / "full"
    published = [write(results / "runs/ladder/block" / f"seed{s}", record("cuda" if s == 1 else "cpu", p, s))
                 for s, p in ((0, 38.0), (1, 38.4), (2, 38.8))]
    published.append(write(results / "measure/winograd/role/block/seed0",
                           {"run": "role_block", "seed": 0, "config_hash": "w", "device": "cuda", "final_loss": 0.1,
                            "held_out": {"accuracy": 100.0, "other": 0.0, "sentences": 240}}))
    same = write(results / "twins/runs/ladder/block/seed1", record("cpu", 38.4 * (1 + FLOAT_TOLERANCE / 2)))
    table = cross_device({"runs": published, "twins": [same]})
    assert list(table["run"]) == ["ladder/block", "winograd/role/block"]  # the pairs this profile publishes, in order
    block, probe = table.to_dict("records")
    assert block["published_device"] == "NVIDIA H200" and block["twin_device"] == "AMD EPYC" and block["row_seeds"] == 3
    assert block["verdict"] == TWIN_AGREES and block["largest_in"] == "held_out_ppl.128"
    assert block["statistics"] == 3 and block["in_row_sds"] == pytest.approx(block["difference"] / 0.4)
    assert probe["verdict"] == TWIN_NOT_RUN and probe["published"] == 100.0

    far = write(results / "twins2/twins/runs/ladder/block/seed1", record("cpu", 38.4, train_ppl=20.5))
    block = cross_device({"runs": published, "twins": [far]}).iloc[0]
    assert block["verdict"] == TWIN_WITHIN_SPREAD and block["largest_in"] == "train_ppl"
    assert block["difference"] == 0.0 and block["largest_rel_diff"] == pytest.approx(0.5 / 20.5)

    on_cpu = [p for p in published if "winograd" not in p]
    on_cpu.append(write(results / "cpu/measure/winograd/role/block/seed0", {**json.loads(Path(published[-1]).read_text()),
                                                                           "device": "cpu"}))
    assert list(cross_device({"runs": on_cpu, "twins": []})["run"]) == ["ladder/block"]  # a CPU seed has no twin
    assert list(cross_device({"runs": [], "twins": []}).columns) == COLUMNS  # a profile with no GPU seed

    apart = write(results / "twins4/twins/runs/ladder/block/seed1", record("cpu", 38.4 + 0.5))
    block = cross_device({"runs": published, "twins": [apart]}).iloc[0]
    assert block["verdict"] == TWIN_BEYOND_SPREAD and block["in_row_sds"] == pytest.approx(0.5 / 0.4)

    other_key = write(results / "twins3/twins/runs/ladder/block/seed1", record("cpu", 38.4, key="k2"))
    with pytest.raises(ValueError, match="not the same run"):
        cross_device({"runs": published, "twins": [other_key]})


def test_the_statistics_are_every_number_the_ledger_reads():
    found = statistics({"held_out_ppl": {"64": 40.0, "128": None}, "held_out": {"accuracy": 90.0, "sentences": 240},
                        "attention": {"block0_std": 1.5}, "train_s": 12.0, "seed": 3})
    assert found == {"held_out_ppl.64": 40.0, "held_out.accuracy": 90.0, "attention.block0_std": 1.5}


def test_every_family_whose_rows_mix_devices_has_a_pair_and_each_pair_is_a_published_gpu_seed():
    results = ROOT / "results" / "full"
    rows = {}
    for path in [*results.glob("runs/**/metrics.json"), *results.glob("measure/winograd/**/metrics.json")]:
        rows.setdefault(path.parent.parent, set()).add(json.loads(path.read_text())["device"])
    mixed = {folder_of(row / "seed0" / "metrics.json").split("/")[1] for row, devices in rows.items() if len(devices) > 1}
    assert mixed and mixed == {pair.split("/")[1] for pair in PAIRS}
    assert "runs/ladder/block/seed1" in PAIRS
    for pair in PAIRS:
        assert json.loads((results / pair / "metrics.json").read_text())["device"] == "cuda", pair


def test_the_caption_says_what_the_twins_show(tmp_path):
    template = (ROOT / "workflow/report/cross_device.rst").read_text()

    def said(rows):
        path = tmp_path / "cross_device.csv"
        pd.DataFrame(rows, columns=COLUMNS).to_csv(path, index=False)
        return " ".join(captions.render(template, captions.Sources("full", {"cross_device": path}), "cross_device").split())

    row = {"run": "ladder/block", "seed": 1, "published_device": "NVIDIA H200", "published": 38.4, "row_seeds": 10,
           "row_sd": 0.4, "twin_device": "AMD EPYC", "twin": 38.4, "difference": 0.0, "in_row_sds": 0.0,
           "largest_rel_diff": 0.0, "largest_in": "final_loss", "statistics": 3, "float_tolerance": FLOAT_TOLERANCE}
    assert "none of the pairs on a GPU" in said([])
    assert "No twin is trained yet" in said([{**row, "verdict": TWIN_NOT_RUN}])
    assert "Every twin trained so far (1 of 2 pairs) agrees" in said([{**row, "verdict": TWIN_AGREES}, {**row, "verdict": TWIN_NOT_RUN}])
    apart = {**row, "run": "position/alibi", "largest_rel_diff": 0.02, "in_row_sds": 1.5, "verdict": TWIN_BEYOND_SPREAD}
    text = said([{**row, "verdict": TWIN_AGREES}, apart])
    assert "1 of the 2 twins" in text and "up to 2.00 %" in text and "1.50 standard deviations" in text
    assert "(position/alibi), the device matters beside the seed" in text
    text = said([{**apart, "in_row_sds": 0.5, "verdict": TWIN_WITHIN_SPREAD}])
    assert "No held-out result moves by more than one seed's standard deviation" in text

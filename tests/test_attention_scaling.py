"""attention_scaling: the memory budget guards every size, sizes run isolated, exponents fit."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import yaml

from attnlab import plots
from attnlab.claims import CLAIMS_FILE
from attnlab.families import attention_scaling as family
from attnlab.measure import attention_scaling as scaling


@pytest.fixture
def smoke():
    return scaling.load_settings("smoke")


def test_tiny_budget_records_out_of_memory_without_allocating(smoke, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("a size over budget reached the allocating code")

    monkeypatch.setattr(scaling, "run_forward", must_not_run)
    row = scaling.measure_size("explicit", 16384, {**smoke, "memory_budget_gb": 0.001})
    assert row["status"] == f"out of memory (needs {row['need_gb']:.1f} GB, budget 0.0 GB)"
    assert row["need_gb"] > 2 * 8 * 16384**2 * 4 / scaling.GB  # scores + weights, at the least
    assert "ms_total" not in row and "peak_mb" not in row
    assert row["budget_rule"] == "fixed"


def test_default_budget_is_a_share_of_available_memory(smoke):
    budget, rule = scaling.memory_budget(smoke, "cpu")
    assert 0 < budget <= smoke["memory_share"]["cpu"] * scaling.available_bytes("cpu") * 1.05  # memory moves
    assert rule.startswith("50% of")


def test_estimated_need_is_quadratic_explicit_and_linear_fused():
    def need(path, n):
        return scaling.estimated_need(path, n, 512, 8)

    def quadratic(n):  # what the explicit path needs beyond the fused one: the score-sized matrices
        return need("explicit", n) - need("fused", n)

    assert need("fused", 8192) - scaling.OVERHEAD == pytest.approx(2 * (need("fused", 4096) - scaling.OVERHEAD), abs=1)
    assert quadratic(8192) == pytest.approx(4 * quadratic(4096), abs=4)
    assert quadratic(16384) >= 2 * scaling.matrix_bytes(16384, 8)  # scores and weights at the least


@pytest.mark.slow
def test_sizes_run_isolated_and_over_budget_sizes_are_skipped(tmp_path):
    """Through the CLI: 256 tokens is measured in its own process (positive peak); 65,536
    explicit tokens (a 128 GB score matrix) is recorded as out of memory, not attempted."""
    config = yaml.safe_load(scaling.CONFIG.read_text())
    config |= {"tokens": {"explicit": [256, 65536], "fused": [256]}, "repeats": 1, "warmup": 0}
    config_path = tmp_path / "scaling.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = tmp_path / "explicit.json"
    subprocess.run([sys.executable, "-m", "attnlab.measure.attention_scaling", "run", "--profile", "smoke",
                    "--path", "explicit", "--threads", "1", "--budget-gb", "1", "--config", str(config_path),
                    "--out", str(out)], check=True, timeout=120)
    small, huge = json.loads(out.read_text())["rows"]
    assert small["status"] == "ok" and small["tokens"] == 256
    assert small["peak_mb"] > 0 and small["ms_total"] > 0 and small["ms_projections"] > 0
    assert small["threads"] == 1 and small["runs"] == 1 and small["torch"]
    assert huge["status"].startswith("out of memory (needs") and "budget 1.0 GB" in huge["status"]
    assert huge["matrix_mb"] == 8 * 65536**2 * 4 / 2**20


def test_fit_exponent_recovers_powers_from_the_last_four_rows():
    n = 128 * 2 ** np.arange(8)
    assert family.fit_exponent(n, 3e-6 * n**2.0) == pytest.approx(2.0)
    # fixed costs bend the small sizes; the last four rows see the power
    assert family.fit_exponent(n, 50 + 1e-3 * n**2.0) == pytest.approx(2.0, abs=0.02)
    # missing (out of memory) and non-positive values are skipped, not fitted
    values = 0.5 * n.astype(float)
    values[-1], values[0] = np.nan, 0.0
    assert family.fit_exponent(n, values) == pytest.approx(1.0)
    assert math.isnan(family.fit_exponent(n[:1], n[:1]))


def measurement(path, rows):
    return {"path": path, "settings": {"d_model": 512, "n_heads": 8}, "rows": [
        {"path": path, "tokens": n, "matrix_mb": 8 * n * n * 4 / 2**20, "budget_gb": 8.0,
         "device": "cpu", "torch": "x", "runs": 3, **values} for n, values in rows]}


def test_table_ratios_exponents_and_figure(tmp_path):
    explicit = measurement("explicit", [(n, {"status": "ok", "ms_total": 1e-4 * n**2, "ms_projections": 1e-3 * n,
                                             "peak_mb": 2e-5 * n**2, "need_gb": 1.0}) for n in (512, 1024, 2048, 4096)]
                           + [(8192, {"status": "out of memory (needs 4.8 GB, budget 1.0 GB)", "need_gb": 4.8})])
    fused = measurement("fused", [(n, {"status": "ok", "ms_total": 1e-4 * n**2, "ms_projections": 1e-3 * n,
                                       "peak_mb": 1e-2 * n, "need_gb": 0.3}) for n in (512, 1024, 2048, 4096, 8192)])
    paths = {}
    for name, data in (("explicit", explicit), ("fused", fused)):
        paths[name] = [str(tmp_path / f"{name}.json")]
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    df = family.attention_scaling(paths)
    ex, fu = df[df["path"] == "explicit"], df[df["path"] == "fused"]
    assert list(ex["time_ratio"].round(6))[1:4] == [4.0, 4.0, 4.0] and math.isnan(ex["time_ratio"].iloc[-1])
    assert list(fu["memory_ratio"].round(6))[1:] == [2.0] * 4
    # exponents sit on each path's last measured row only
    assert ex["time_exponent"].dropna().tolist() == pytest.approx([2.0])
    assert ex["memory_exponent"].notna().tolist() == [False, False, False, True, False]
    assert fu["memory_exponent"].iloc[-1] == pytest.approx(1.0)
    table_csv = tmp_path / "table.csv"
    df.to_csv(table_csv, index=False)
    inputs = {"table": [str(table_csv)], "claims": [str(CLAIMS_FILE)], **paths}
    fig = family.attention_scaling_figure(inputs, plots.context("attention_scaling", inputs, "test"))
    time_ax, mem_ax = fig.axes
    assert time_ax.get_xscale() == mem_ax.get_xscale() == "log" == mem_ax.get_yscale()
    (legend,) = fig.legends
    assert any("out of memory" in t.get_text() for t in legend.get_texts())
    # the chapter's fitted slope is drawn through the explicit path's last measured point
    assert any(line.get_label().startswith("chapter's fit") for line in time_ax.lines)


@pytest.mark.parametrize("change, message", [
    ({"tokens": {"explicit": [256, 128], "fused": [128]}}, "tokens.explicit=[256, 128]"),
    ({"memory_budget_gb": -1}, "memory_budget_gb=-1"),
    ({"device": "tpu"}, "device='tpu'"),
    ({"repeats": 0}, "repeats=0"),
])
def test_bad_settings_name_the_value(smoke, change, message):
    with pytest.raises(scaling.SettingsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        scaling.check_settings({**smoke, **change}, "test")


def test_unknown_profile_lists_the_allowed_ones():
    with pytest.raises(scaling.SettingsError, match=r"allowed: \['full', 'quick', 'smoke'\]"):
        scaling.load_settings("huge")


def test_every_profile_has_its_sizes():
    """The sizes live beside the measurement's other settings, one block per profile: a profile without
    one would stop its DAG at planning."""
    for profile in sorted(p.stem for p in (scaling.CONFIG_DIR / "profile").glob("*.yaml")):
        assert scaling.load_settings(profile)["tokens"]["explicit"][0] > 0


def test_every_timed_call_is_kept_and_the_ratios_follow_call_by_call():
    """A size's timed calls all reach the table (`<col>_seeds`), so the ledger judges a ratio or an
    exponent on its spread; ratio k divides call k of a size by call k of the size before."""
    calls = {128: [1.0, 2.0, 4.0], 256: [4.0, 6.0, 8.0], 512: [16.0, 18.0, 40.0]}
    rows = [{"tokens": n, "status": "ok", "ms_total": float(np.median(t)), "ms_total_runs": t,
             "ms_projections": 1.0, "ms_projections_runs": [1.0, 1.0, 1.0], "peak_mb": 1.0, "matrix_mb": 1.0}
            for n, t in calls.items()]
    df = family.path_frame({"path": "explicit", "rows": rows})
    assert df["ms_total_seeds"].tolist() == ["1.0;2.0;4.0", "4.0;6.0;8.0", "16.0;18.0;40.0"]
    assert df["time_ratio_seeds"].tolist() == ["", "4.0;3.0;2.0", "4.0;3.0;5.0"]
    slopes = [float(v) for v in df["time_exponent_seeds"].iloc[-1].split(";")]
    assert slopes == pytest.approx([2.0, math.log2(18 / 2) / 2, math.log2(40 / 4) / 2])


def test_a_size_is_timed_exactly_repeats_times(smoke):
    calls = []
    times = scaling.timed_ms(lambda: calls.append(1), lambda: None, warmup=2, repeats=5)
    assert len(times) == 5 and len(calls) == 7 and all(t >= 0 for t in times)

"""Provenance recovered for records written before runs recorded it (attnlab.recover): when a run landed,
which device the commit that landed it names, and whether a dirty run its commit cannot compose has a config
the repository committed."""

from attnlab import recover
from attnlab.recover import LANDED_EQUAL, NOT_RECORDED, device_names, landing


def test_a_record_landed_with_the_first_commit_that_changed_it_after_its_run_was_trained():
    changes = [("c3", "2026-12-04T10:00:00+00:00", "rewrote the record"),
               ("c2", "2026-12-02T09:00:00+01:00", "landed it"),
               ("c1", "2026-11-29T22:00:00+00:00", "landed the run this folder held before")]
    assert landing(changes, "2026-12-02T07:30:00+00:00")[0] == "c2"  # 08:00 UTC: after the run's commit
    assert landing(changes, "2026-12-02T08:30:00+00:00")[0] == "c3"  # the offset is read, not the text


def test_a_gpu_is_named_by_the_message_that_landed_it_or_by_one_that_landed_gpu_runs_of_its_commit():
    records = {"a": {"device": "cuda", "commit": "k1", "torch": "2.11.0+cu130"},
               "b": {"device": "cuda", "commit": "k1", "torch": "2.11.0+cu130"},
               "c": {"device": "cpu", "commit": "k1", "torch": "2.13.0+cpu"},
               "d": {"device": "cpu", "commit": "k2", "torch": "2.13.0+cpu"},
               "e": {"device": "cuda", "commit": "k2", "torch": "2.11.0+cu130"}}
    landed = {"a": ("L1", "", "Seeds from a GPU (one H200, torch 2.11+cu130)"), "b": ("L2", "", "more seeds on the GPU"),
              "c": ("L3", "", "seeds 3-5 on this 2-core machine, one thread"), "d": ("L4", "", "seeds 6-9"),
              "e": ("L5", "", "seeds on a GPU")}
    named = device_names(records, landed)
    assert named["a"][0] == named["b"][0] == "NVIDIA H200" and "L1" in named["a"][1] and "L1" in named["b"][1]
    assert named["c"][0] == "AMD EPYC"
    assert named["d"][0] == named["e"][0].replace("cuda", "cpu") == f"cpu ({NOT_RECORDED})"  # nothing names them


def test_a_dirty_run_its_commit_cannot_compose_is_composed_where_it_landed(monkeypatch):
    """Only an undecidable run is asked about, at the commit that landed it, and only its own key there counts."""
    records = {"a": {"commit": "k1", "config_hash": "h1", "key_at_commit": "undecidable", "experiment": "x"},
               "b": {"commit": "k1", "config_hash": "h2", "key_at_commit": "undecidable", "experiment": "x"},
               "c": {"commit": "k1", "config_hash": "h3", "key_at_commit": "equal", "experiment": "x"}}
    changes = {p: [("L2", "2026-12-03T00:00:00+00:00", ""), ("L1", "2026-12-02T00:00:00+00:00", "")] for p in records}
    asked = {}
    monkeypatch.setattr(recover, "commit_date", lambda commit: "2026-12-01T00:00:00+00:00")
    monkeypatch.setattr(recover, "run_asked", lambda path, r: path)
    monkeypatch.setattr(recover, "keys_at", lambda commit, runs: asked.setdefault(commit, runs) and ["h1", "h9"])
    assert recover.keys_where_landed(records, changes) == {"a": LANDED_EQUAL}
    assert asked == {"L1": ["a", "b"]}

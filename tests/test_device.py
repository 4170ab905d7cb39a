"""The one device choice (attnlab.device.pick_device): runs and measurements ask the same function."""

import pytest
import torch

from attnlab import device
from attnlab.config import ConfigError


def machine(monkeypatch, *present):
    monkeypatch.setattr(device, "AVAILABLE", {kind: (lambda p=kind in present: p) for kind in ("cuda", "mps", "cpu")})


def test_auto_takes_the_first_kind_torch_can_use(monkeypatch):
    machine(monkeypatch, "cpu")
    assert device.pick_device("auto") == torch.device("cpu")
    machine(monkeypatch, "mps", "cpu")
    assert device.pick_device("auto") == torch.device("mps")
    machine(monkeypatch, "cuda", "mps", "cpu")
    assert device.pick_device("auto") == torch.device("cuda")


def test_the_measurements_never_pick_a_device_whose_memory_they_cannot_read(monkeypatch):
    machine(monkeypatch, "mps", "cpu")
    assert device.pick_device("auto", device.MEASURED_KINDS) == torch.device("cpu")
    with pytest.raises(ConfigError, match="device 'mps' but this job uses only cuda, cpu; allowed here: auto, cpu$"):
        device.pick_device("mps", device.MEASURED_KINDS)


def test_a_named_device_torch_cannot_see_is_refused_by_runs_and_measurements_alike(monkeypatch):
    machine(monkeypatch, "cpu")
    for kinds in (("cuda", "mps", "cpu"), device.MEASURED_KINDS):
        with pytest.raises(ConfigError, match="device 'cuda' but torch sees no such device; allowed here: auto, cpu$"):
            device.pick_device("cuda", kinds)
    assert device.pick_device("cpu") == torch.device("cpu")

"""Hand-written prose says only what a row shows. Whether folding seeds into one model (train.seed_batch) pays, and
on which device, is said by the captions, chosen by the runs_per_hour rows (workflow/report/easy_hard.rst,
runs_per_hour.rst); the READMEs, configs, rules and code point at that table and never type the verdict
("it pays on a GPU, not on a CPU" stood on no GPU row, and on the CPU only in float32)."""

import re
from pathlib import Path

import pytest

from attnlab.claims.render import README_END, README_START

REPO = Path(__file__).resolve().parents[1]
HAND_WRITTEN = sorted({*REPO.glob("*.md"), *(REPO / "workflow").glob("*.md"), *(REPO / "configs").rglob("*.yaml"),
                       *(REPO / "workflow/rules").glob("*.smk"), *(REPO / "workflow/schemas").glob("*.yaml"),
                       REPO / "Snakefile", REPO / "Makefile", *(REPO / "src").rglob("*.py")})
VERDICT = re.compile(r"\b(?:pays|does not pay|do not pay|not pay|pays off|beats?)\b", re.I)
FOLDING = re.compile(r"\bfold|seed_batch|seeds? together|seeds? per process|batched model|\ba batch\b", re.I)
DEVICE = re.compile(r"\b(?:GPU|CPU)s?\b")


def hand_written(path: Path) -> str:
    """The file's text as a reader meets it, without what a command generates (the README's Results section)."""
    text = path.read_text(encoding="utf-8")
    if README_START in text:
        text = text.split(README_START)[0] + text.split(README_END, 1)[1]
    return " ".join(re.sub(r"^\s*#+", " ", line) for line in text.splitlines())


def typed_verdicts(text: str, reach: int = 160) -> list[str]:
    """Each place that says whether folding seeds pays on a device: a verdict with a device and folding near it."""
    found = []
    for m in VERDICT.finditer(text):
        near = text[max(0, m.start() - reach):m.end() + reach]
        if FOLDING.search(near) and DEVICE.search(near):
            found.append(" ".join(near.split()))
    return found


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: str(p.relative_to(REPO)))
def test_no_hand_written_sentence_says_whether_folding_seeds_pays(path):
    assert typed_verdicts(hand_written(path)) == []


def test_the_rule_catches_the_sentences_it_is_for():
    assert typed_verdicts("# seeds 3..7 folded into one model (train.seed_batch); it pays on a GPU, not on a CPU")
    assert typed_verdicts("on a CPU folding does not pay (table runs_per_hour), so the default is 1")
    assert not typed_verdicts("seeds folded into one model: what it buys, on each device, is the table runs_per_hour")


# a sentence that says a GPU run and a CPU run agree (to rounding, in the last digits): the cross_device table
# says how many twins do, and the README's generated Results counts them
DEVICES_AGREE = re.compile(r"\b(?:GPU|CPU)\b[^.:;]{0,120}?\b(?:to (?:float )?rounding|up to rounding|in the last digits|"
                           r"bit for bit)", re.I)


def typed_device_agreement(text: str) -> list[str]:
    return [" ".join(m[0].split()) for m in DEVICES_AGREE.finditer(text)]


@pytest.mark.parametrize("path", [REPO / "README.md", REPO / "workflow/README.md"], ids=lambda p: p.name)
def test_no_hand_written_sentence_says_a_gpu_run_and_a_cpu_run_agree(path):
    assert typed_device_agreement(hand_written(path)) == []


def test_the_device_rule_catches_the_sentence_it_is_for():
    assert typed_device_agreement("(runs published from a GPU agree with a CPU rerun to float rounding, not bit for bit)")
    assert typed_device_agreement("so a GPU run computes what a CPU run computes up to rounding; bf16 is")
    assert not typed_device_agreement("how runs published from a GPU compare with a CPU rerun: the cross_device table")

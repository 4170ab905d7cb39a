"""The Winograd interventions (attnlab.measure.winograd_interventions) do what they say, on a hand-built model
whose one head carries the whole answer, and each seed's circuit follows from its patches
(attnlab.families.winograd.circuit_of)."""

import copy

import pytest
import torch

from attnlab.config import ConfigError
from attnlab.families.winograd import MOVES, NAMED, circuit_of
from attnlab import data, runs
from attnlab.measure.winograd_interventions import (ablated, adjective_swaps, against_published, answers_of,
                                                    head_reads, measure, noun_swaps, patching)
from attnlab.model import LanguageModel, ModelConfig
from attnlab.winograd import ADJ_POS, SCORED, Language, compose_run, encode, probe, score

PAIR = ("animal", "street")
WRITTEN = 2.0  # what the answering head writes into its noun's direction


@pytest.fixture(scope="module")
def lang() -> Language:
    return Language.from_cfg(compose_run("role_two_blocks").winograd.language)


def hand_built(lang: Language) -> LanguageModel:
    """One block, two heads, no norm, no MLP: the residual stream is a token one-hot and a position one-hot.
    Head 0 looks from the scored position at the adjective and writes the probe pair's referent for it (animal
    for a crosser adjective, street for a crossed one); head 1 writes nothing. The output reads the token part."""
    vocab = lang.vocab()
    V, T = len(vocab), 17
    width = V + T
    cfg = ModelConfig(vocab_size=V, d_model=2 * width, context=T, n_heads=2, mixer="attention", norm="none",
                      mlp=False, positions="learned", output_bias=False)
    model = LanguageModel(cfg)
    stoi = {w: i for i, w in enumerate(vocab)}
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.tok.weight[:, :V] = torch.eye(V)
        model.pos.weight[:, V:width] = torch.eye(T)
        mixer = model.blocks[0].mixer
        mixer.q.weight[0, V + SCORED] = 100.0  # head 0's query at the scored position ...
        mixer.k.weight[0, V + ADJ_POS] = 1.0   # ... meets the adjective's key
        mixer.v.weight[:V, :V] = torch.eye(V)  # head 0's value: the token
        for adjective, role in lang.adjectives.items():
            mixer.o.weight[stoi[PAIR[0] if role == "x" else PAIR[1]], stoi[adjective]] = WRITTEN
        model.head.weight[:, :V] = torch.eye(V)
    return model.eval()


def sentences(lang: Language):
    return [(*PAIR, adjective) for adjective in lang.adjectives]


def answers(model, lang, triples) -> list[str]:
    vocab = lang.vocab()
    return [vocab[i] for i in answers_of(model, encode(lang, triples, vocab)[0]).tolist()]


def test_the_hand_built_model_answers_the_probe_pair(lang):
    triples = sentences(lang)
    assert answers(hand_built(lang), lang, triples) == [lang.referent(*t) for t in triples]


def test_zeroing_the_head_that_carries_the_answer_changes_it_and_an_idle_head_does_not(lang):
    model, triples = hand_built(lang), sentences(lang)
    right = answers(model, lang, triples)
    with ablated(model, [(0, 0)]):
        assert answers(model, lang, triples) == ["the"] * len(triples)  # only the query's own token is left
    with ablated(model, [(0, 1)]):
        assert answers(model, lang, triples) == right
    assert answers(model, lang, triples) == right  # the hook is gone


def test_zeroing_a_head_is_zeroing_its_values():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=20, d_model=32, context=17, n_blocks=2, n_heads=4)).eval()
    inputs = torch.randint(20, (3, 17))
    silenced = copy.deepcopy(model)
    with torch.no_grad():
        silenced.blocks[1].mixer.v.weight[2 * 8:3 * 8] = 0  # head 2 of block 2 (d_head 8)
    with ablated(model, [(1, 2)]):
        assert torch.allclose(model(inputs)[0], silenced(inputs)[0], atol=1e-6)
    assert not torch.allclose(model(inputs)[0], silenced(inputs)[0], atol=1e-6)


def test_the_answering_head_reads_the_adjective_and_writes_from_it(lang):
    model = hand_built(lang)
    reads = head_reads(model, encode(lang, sentences(lang), lang.vocab())[0])
    answering, idle = reads
    assert torch.allclose(answering["weight"]["adjective"], torch.ones(len(lang.adjectives)), atol=1e-4)
    assert torch.allclose(answering["contribution"]["adjective"], torch.full((len(lang.adjectives),), WRITTEN), atol=1e-3)
    for slot, weight in answering["weight"].items():  # the four slots share the row's whole weight
        assert weight.shape == (len(lang.adjectives),)
    assert torch.allclose(sum(answering["weight"].values()), torch.ones(len(lang.adjectives)), atol=1e-5)
    assert all(torch.all(c == 0) for c in idle["contribution"].values())


def test_patching_the_query_from_the_other_sentence_flips_the_answer(lang):
    model = hand_built(lang)
    swaps = adjective_swaps(lang, sentences(lang))
    assert all(lang.referent(*r) != lang.referent(*d) for r, d in swaps)  # a crosser against a crossed: it flips
    rows = {(r["site"], r["recipient"]): r for r in patching(model, lang, lang.vocab(), "adjective", swaps)}
    crossers = sum(role == "x" for role in lang.adjectives.values())
    for role in ("crosser", "crossed"):
        assert rows["query", role]["follows_donor"] == 1.0 and rows["query", role]["pairs"] == crossers * (len(lang.adjectives) - crossers)
        # no later block reads the adjective's own position: patching it there changes nothing
        assert rows["adjective", role]["follows_donor"] == 0.0


def test_held_out_pairs_are_never_trained_and_a_split_that_trains_one_is_refused(lang):
    split = lang.split()
    trained = {(x, y) for x, y, _ in split["train"]}
    held = {(x, y) for x, y, _ in split["held_out"]}
    assert held and not held & trained
    assert all((y, x) in trained for x, y in held)  # the role split: the reverse order was trained
    bad = {"train": split["train"] + split["held_out"][:1], "held_out": split["held_out"], "vocab": lang.vocab()}
    with pytest.raises(ConfigError, match="held-out pair is a training pair"):
        measure(hand_built(lang), lang, bad)


def test_a_model_is_compared_with_the_published_run_by_its_answers_and_probe(lang, tmp_path):
    split = {**lang.split(), "vocab": lang.vocab()}
    model, cpu = hand_built(lang), torch.device("cpu")
    runs.write_csv(tmp_path / "answers.csv", score(model, lang, split["held_out"], split["vocab"], cpu))
    data.write_json(tmp_path / "probe.json", probe(model, lang, split["vocab"], cpu))
    assert against_published(model, lang, split, tmp_path) == {"held_out_answers_differ": 0, "probe_max_abs_diff": 0.0}
    with torch.no_grad():  # the crossed adjectives now write nothing: their held-out answers change
        model.blocks[0].mixer.o.weight[:, [lang.vocab().index(a) for a, r in lang.adjectives.items() if r == "y"]] = 0
    changed = against_published(model, lang, split, tmp_path)
    assert changed["held_out_answers_differ"] > 0 and changed["probe_max_abs_diff"] == 0.0  # its attention is the same


def test_a_noun_swap_keeps_the_adjective_and_changes_both_nouns(lang):
    held = [tuple(t) for t in lang.split()["held_out"]]
    swaps = noun_swaps(held)
    assert len(swaps) == len(held)
    for (x, y, adjective), (dx, dy, donor_adjective) in swaps:
        assert donor_adjective == adjective and not {x, y} & {dx, dy} and (dx, dy, adjective) in held


def record(adjective: dict, first: dict, second: dict, pairs: int = 10) -> dict:
    """An interventions record with these follows_donor shares per site (the same for both roles on the
    adjective swap; the first noun is the crosser's, the second the crossed's)."""
    rows = [{"swap": "adjective", "site": site, "recipient": role, "pairs": pairs, "follows_donor": share}
            for site, share in adjective.items() for role in ("crosser", "crossed")]
    rows += [{"swap": "noun", "site": site, "recipient": role, "pairs": pairs, "follows_donor": share}
             for role, shares in (("crosser", first), ("crossed", second)) for site, share in shares.items()]
    return {"patching": rows}


CARRIED, FETCHED = {"query": 1.0, "nouns": 0.0}, {"query": 0.0, "nouns": 0.9}
READ_IN_BLOCK_2 = {"query": 0.1, "adjective": 0.9, "after_adjective": 0.0}
BROUGHT_BY_BLOCK_1 = {"query": 0.8, "adjective": 0.2, "after_adjective": 0.0}


@pytest.mark.parametrize("adjective, first, second, kind", [
    (READ_IN_BLOCK_2, CARRIED, FETCHED, "two-hop"),
    (READ_IN_BLOCK_2, FETCHED, CARRIED, "mirror"),
    (BROUGHT_BY_BLOCK_1, FETCHED, FETCHED, "adjective first"),
    (READ_IN_BLOCK_2, FETCHED, FETCHED, "direct"),
    (BROUGHT_BY_BLOCK_1, FETCHED, CARRIED, "other"),
    (READ_IN_BLOCK_2, {"query": MOVES, "nouns": MOVES}, FETCHED, "other"),  # half is not more than half
])
def test_a_seed_is_classified_by_what_its_patches_move(adjective, first, second, kind):
    found, shown = circuit_of(record(adjective, first, second))
    assert found == kind
    assert ("block 1 carries the first noun" in shown) == (first is CARRIED)
    assert ("block 1 brings the adjective" in shown) == (adjective is BROUGHT_BY_BLOCK_1)
    if first["query"] == MOVES:
        assert "no single patch moves the first noun" in shown
    assert set(NAMED) == {"two-hop", "mirror", "adjective first", "direct"}


def test_a_site_with_no_counted_pair_moves_nothing():
    rec = record(READ_IN_BLOCK_2, CARRIED, FETCHED, pairs=0)
    assert circuit_of(rec)[1].count("no single patch") == 3


def test_the_composed_row_counts_the_seeds_of_the_circuits_that_compose_the_blocks():
    """winograd_circuits' row for the chapter's general point: its seeds are those of the two-hop circuit, its mirror
    and the adjective brought first, each seed counted once (its shows_it, seed by seed, the sum of theirs)."""
    import pandas as pd
    from pathlib import Path
    from attnlab.families.winograd import COMPOSED, COMPOSED_KIND
    from attnlab.tables import per_seed
    for profile in ("full", "quick"):
        df = pd.read_csv(Path(__file__).resolve().parents[1] / f"results/{profile}/tables/winograd_circuits.csv")
        composed = df[df["kind"] == COMPOSED_KIND].iloc[0]
        parts = df[df["kind"].isin(COMPOSED)]
        assert composed["seeds_with_it"] == parts["seeds_with_it"].sum()
        by_seed = [sum(s) for s in zip(*(per_seed(c) for c in parts["shows_it_seeds"]))]
        assert per_seed(composed["shows_it_seeds"]) == by_seed and max(by_seed) <= 1


def test_the_heads_are_read_per_circuit_class_and_the_classes_hold_every_seed():
    import pandas as pd
    from pathlib import Path
    from attnlab.families.winograd import EVERY_SEED, READ_ZEROED
    for profile in ("full", "quick"):
        df = pd.read_csv(Path(__file__).resolve().parents[1] / f"results/{profile}/tables/winograd_heads.csv")
        intact = df[df["zeroed"] == READ_ZEROED[0]].set_index("circuit")["seeds"]
        assert intact[EVERY_SEED] == intact.drop(EVERY_SEED).sum() and len(intact) > 2

"""Figures a textbook would print: every figure states its point and its setting, shows the chapter's
value where the ledger has one, keeps its legend off the data, draws error bars only where seeds
spread, and is the same small PNG from the same inputs."""

import functools
import math
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib import font_manager
from matplotlib.container import ErrorbarContainer
from PIL import Image

from attnlab import plots, readable, style
from attnlab.claims import CLAIMS_FILE, load_claims
from attnlab.claims.render import is_judged_loosely
from attnlab.claims.rules import NO_POINT
from attnlab.families.ladder import AVERAGE_LADDER, LADDER
from attnlab.families.norm import NORM_WARMUP
from attnlab.families.positions import SCHEMES
from attnlab.families.scale import SCORE_RUNAWAY
from attnlab.families import load_families


REPO = Path(__file__).resolve().parents[1]
QUICK = REPO / "results" / "quick"

load_families()


def runs(experiment: str, profile: str) -> list[str]:
    return [str(p) for p in sorted((REPO / "results" / profile / "runs" / experiment).glob("seed*/metrics.json"))]


def rows(declared, profile: str) -> dict:
    return {row.name: runs(row.experiment, profile) for row in declared}


def published_inputs(figure_id: str, tokens: Path, profile: str = "quick") -> dict:
    """A figure's named inputs from a profile's published results, named as src/attnlab/jobs.py names
    them (scale_training draws from its table alone)."""
    results = REPO / "results" / profile
    measure = results / "measure"
    random_rows = {"rows": measure / "random_rows/rows.csv", "meta": measure / "random_rows/meta.json"}
    probes = {"probe": sorted(measure.glob("winograd/role/two_blocks/seed*/probe.json"))}
    named = {
        "attention_scaling": {"explicit": measure / "attention_scaling/explicit.json",
                              "fused": measure / "attention_scaling/fused.json"},
        "average_ladder": rows(AVERAGE_LADDER, profile),
        "averaging_matrix": {"result": measure / "averaging_matrix/result.json"},
        "effective_tokens": random_rows,
        "ladder": rows(LADDER, profile),
        "norm_grad_init": {"grad_norms": measure / "norm_grad_init/grad_norms.csv"},
        "norm_warmup": {**rows(NORM_WARMUP, profile), "tokens": tokens},
        "param_breakdown": {"result": measure / "param_breakdown/result.json"},
        "position_extrapolation": rows(SCHEMES, profile),
        "scale_training": {},
        "score_runaway": {variant: runs(e, profile) for variant, e in SCORE_RUNAWAY.runs().items()},
        "score_variance": {"pairs": measure / "score_variance/pairs.csv", "meta": measure / "score_variance/meta.json"},
        "softmax_saturation": random_rows,
        "throughput": {"throughput": measure / "throughput/throughput.json"},
        "winograd_adjectives": probes,
        "winograd_attention": probes,
    }[figure_id]
    named = {name: [str(p) for p in (paths if isinstance(paths, list) else [paths])] for name, paths in named.items()}
    return {"table": [str(results / "tables" / f"{figure_id}.csv")], "claims": [str(CLAIMS_FILE)], **named}


@pytest.fixture(scope="module")
def tokens(smoke_data):
    """The smoke token cache's record (norm_warmup's unigram line), as the pipeline's tokens stamp holds it."""
    return Path(next(o for o in smoke_data if o.startswith("data.dir=")).split("=", 1)[1]) / "tokens.json"


def build(figure_id: str, tokens: Path, profile: str = "quick"):
    """The figure as the pipeline draws it from the profile's published results, and its context; drawn once for
    all the tests that read it (they only read it)."""
    inputs = published_inputs(figure_id, tokens, profile)
    absent = [p for paths in inputs.values() for p in paths if not Path(p).exists()]
    if absent or not all(inputs.values()):
        pytest.skip(f"{profile} results not published: {absent[:1] or figure_id}")
    return drawn(figure_id, tokens, profile)


@functools.lru_cache(maxsize=None)
def drawn(figure_id: str, tokens: Path, profile: str):
    inputs = published_inputs(figure_id, tokens, profile)
    context = plots.context(figure_id, inputs, profile)
    with plt.rc_context(style.RC):
        fig = plots.BUILDERS[figure_id](inputs, context)
        style.layout(fig)
    plt.close(fig)  # kept for reading, not shown
    return fig, context


def chapter_artists(fig) -> list:
    """What shows the chapter: diamonds and outlines labelled 'chapter…', a heat map's 'chapter x' lines."""
    found = []
    for ax in fig.axes:
        found += [a for a in ax.lines + ax.patches if a.get_label().startswith("chapter")]
        found += [t for t in ax.texts if t.get_text().startswith("chapter")]
    return found


@pytest.mark.parametrize("figure_id", sorted(plots.BUILDERS))
def test_every_figure_states_its_point_and_shows_the_chapter(figure_id, tokens):
    fig, context = build(figure_id, tokens)
    title, subtitle = (t.get_text() for t in fig.texts + fig.artists if t.get_gid() == style.HEADLINE)
    assert len(title) > 20 and subtitle.startswith("quick profile")
    if figure_id in {claim["table"] for claim in load_claims()}:  # the pipeline's own tables have none
        assert context.chapter and chapter_artists(fig), "the ledger has this table's chapter values: draw them"
    # legends never cover data: none inside an axes, the figure's under every axes
    assert all(ax.get_legend() is None for ax in fig.axes)
    lowest = min(ax.get_tightbbox().y0 for ax in fig.axes)
    assert all(legend.get_window_extent().y1 <= lowest + 1 for legend in fig.legends)
    # error bars only where seeds spread: the table has a `_std` column
    table = pd.read_csv(published_inputs(figure_id, tokens)["table"][0])
    has_spread = any(c.endswith("_std") for c in table.columns)
    bars = [c for ax in fig.axes for c in ax.containers
            if isinstance(c, ErrorbarContainer) and (c.has_yerr or c.has_xerr)]
    assert has_spread or not bars


@pytest.mark.parametrize("profile", [pytest.param("full", marks=pytest.mark.slow), "quick"])
@pytest.mark.parametrize("figure_id", sorted(plots.BUILDERS))
def test_every_figure_is_readable_in_the_report_at_800_px(figure_id, profile, tokens, tmp_path):
    """Saved as the pipeline saves it (style.save refuses a figure that is not), its smallest text as the report
    shows its PNG at an 800 px window is at least 8 px (attnlab.readable: the SVG's glyphs, the PNG's width)."""
    fig, _ = build(figure_id, tokens if profile == "quick" else REPO / "results" / profile / "tokens.json", profile)
    style.save(fig, tmp_path / f"{figure_id}.png")
    shown = readable.reading(tmp_path / f"{figure_id}.svg")
    assert shown.readable, f"{figure_id}: {shown}"


def test_the_figures_take_the_chapter_from_the_ledger(tokens):
    """A chapter value is drawn where the ledger puts it: ALiBi's perplexity at 64 and 256 tokens."""
    fig, context = build("position_extrapolation", tokens)
    alibi = [c for c in context.chapter if c.column in ("ppl_64", "ppl_256")]
    (diamonds,) = [line for line in fig.axes[0].lines if line.get_label() == "chapter"]
    assert list(diamonds.get_xdata()) == [int(c.column[4:]) for c in alibi]
    assert list(diamonds.get_ydata()) == [c.value for c in alibi]


TABLE = pd.DataFrame({"row": [1, 2, 3], "ppl": [60.0, 240.0, 58.0], "path": ["a", "a", "b"],
                      "x:1": [0.7, 0.2, 0.1], "x:2": [0.3, 0.8, 0.9]})


@pytest.mark.parametrize("value, chapter, expected", [
    ({"column": "ppl", "where": {"row": 1}}, 59.7, [("ppl", 0, 59.7, "")]),
    ({"column": "ppl"}, 60, [("ppl", 0, 60, ""), ("ppl", 1, 60, ""), ("ppl", 2, 60, "")]),  # one number for every row
    ({"column": "ppl"}, [1, 2, 3], [("ppl", 0, 1, ""), ("ppl", 1, 2, ""), ("ppl", 2, 3, "")]),  # a list: per row
    ({"column": "ppl", "where": {"path": "a"}, "reduce": "last"}, 250, [("ppl", 1, 250, "")]),
    ({"difference": [{"column": "ppl", "where": {"row": 2}}, {"column": "ppl", "where": {"row": 3}}]}, 188,
     [("ppl", 1, 58 + 188, "= our row 3 + 188")]),
    ({"ratio": [{"column": "ppl", "where": {"row": 2}}, {"column": "ppl", "where": {"row": 1}}]}, 4,
     [("ppl", 1, 240, "= 4 × our row 1")]),
    ({"values": [{"column": "ppl", "where": {"row": 1}}, {"column": "ppl", "where": {"row": 3}}]}, [1, 2],
     [("ppl", 0, 1, ""), ("ppl", 2, 2, "")]),
    ({"columns": ["x:1", "x:2"], "where": {"path": "b"}}, [[0.1, 0.9]], [("x:1", 2, 0.1, ""), ("x:2", 2, 0.9, "")]),
    ({"lead": "x:2", "among": ["x:1", "x:2"], "where": {"path": "a"}}, "weight on x:2",
     [("x:2", 0, math.nan, ""), ("x:2", 1, math.nan, "")]),
    # where the mapping is not clear, or the cells are not there: nothing
    ({"column": "ppl", "reduce": "max"}, 240, []),
    ({"column": "ppl", "where": {"row": 1}}, "about sixty", []),
    ({"column": "ppl"}, [1, 2], []),
    ({"column": "ppl", "where": {"row": 9}}, 60, []),
    ({"difference": [{"column": "ppl", "where": {"path": "a"}}, {"column": "ppl", "where": {"row": 3}}]}, 5, []),
])
def test_chapter_values_placed_on_cells(value, chapter, expected):
    found = plots.chapter_values({"table": "t", "value": value, "chapter": chapter}, TABLE)
    got = [(c.column, c.row, c.value, c.note) for c in found]
    assert [g[:2] + g[3:] for g in got] == [e[:2] + e[3:] for e in expected]
    assert all(g[2] == pytest.approx(e[2], nan_ok=True) for g, e in zip(got, expected))


@pytest.mark.slow
def test_the_figures_are_drawn_with_matplotlibs_own_fonts():
    """Every figure's text is set in matplotlib's own DejaVu Sans (STIX for mathtext), whatever another environment
    wrote into the font cache they would otherwise share: attnlab keeps matplotlib's cache beside its virtual
    environment (attnlab/__init__.py). A cache that lists only the system's fonts changes every figure's bytes."""
    fix = f"matplotlib's font cache hides its own fonts: delete {matplotlib.get_cachedir()}/fontlist-*.json"
    for family in ("DejaVu Sans", "STIXGeneral"):
        try:
            found = Path(font_manager.findfont(family, fallback_to_default=False))
        except ValueError:
            pytest.fail(f"{family} not found; {fix}")
        assert found.is_relative_to(matplotlib.get_data_path()), (found, fix)


def test_png_and_svg_are_deterministic_small_and_without_metadata(tmp_path):
    """Built twice, in two folders (two processes would salt an SVG's ids differently unless fixed)."""
    inputs = published_inputs("averaging_matrix", tmp_path)
    argv = ["averaging_matrix", "--profile", "quick", *(f"{n}={p}" for n, paths in inputs.items() for p in paths)]
    for folder in ("a", "b"):
        plots.main([*argv, "--out", str(tmp_path / folder / "averaging_matrix.png")])
    for name in ("averaging_matrix.png", "averaging_matrix.svg"):
        first, second = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert first == second and len(first) < 150_000, name
    assert not Image.open(tmp_path / "a" / "averaging_matrix.png").info.get("Software")
    svg = (tmp_path / "a" / "averaging_matrix.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_a_figure_needs_the_ledger(tmp_path):
    inputs = published_inputs("averaging_matrix", tmp_path)
    with pytest.raises(SystemExit):
        plots.main(["averaging_matrix", "--profile", "quick", "--out", str(tmp_path / "x.png"),
                    f"table={inputs['table'][0]}", f"result={inputs['result'][0]}"])


@pytest.mark.parametrize("figure_id, ours", [
    # the token with the largest mean weight of each probed row, as the table gives it
    ("winograd_attention", lambda df: [f"too {r['adjective']} → {largest_token(r)}" for _, r in df.iterrows()]),
    ("winograd_adjectives", lambda df: sorted({largest_token(r) for _, r in df.iterrows()})),
    ("position_extrapolation", lambda df: [f"{v:.4g}" for v in df[df["scheme"].str.startswith("ALiBi")]
                                           .filter(regex=r"^ppl_\d+$").iloc[0]]),
    # the chapter's four runs' held-out perplexity
    ("norm_warmup", lambda df: [f"{v:.2f}" for v in df.set_index("run").loc[
        ["post_no_warmup", "post_warmup", "pre_no_warmup", "pre_warmup"], "held_out_ppl"]]),
    # last block over first, attention q, k, v, per norm placement
    ("norm_grad_init", lambda df: [f"{r['norm']}-norm {r['ratio_last_first']:.2f}"
                                   for _, r in df[df["parameters"] == "attention_qkv"].iterrows()]),
    # the undivided head's score std from first evaluation to last, and its share of one-hot rows
    ("score_runaway", lambda df: [*(f"{v:.4g}" for v in df.set_index("variant").loc[
        "undivided", ["score_std_init", "score_std_final"]]),
        f"{100 * df.set_index('variant').at['undivided', 'onehot_share_final']:.1f} %"]),
])
def test_a_title_states_our_finding_not_the_chapters_mechanism(figure_id, ours, tokens):
    """The titles whose chapter mechanism our runs contradict or leave undecided say what our runs show, in
    their numbers; the chapter's values stay the markers."""
    fig, _ = build(figure_id, tokens)
    title = next(t.get_text() for t in fig.texts + fig.artists if t.get_gid() == style.HEADLINE)
    df = pd.read_csv(QUICK / "tables" / f"{figure_id}.csv")
    assert all(part in title for part in ours(df)), (title, ours(df))


# The claims each figure's title speaks about, each with the words that would assert it: a title may
# use them only where its profile's ledger shows the chapter's claim (its point HOLDS, or it states none and its
# number AGREES with the chapter's).
TITLE_CLAIMS = {
    "attention_scaling": {"attention_scaling.time_exponent": ("time and memory grow as n²", "time grows as n²"),
                          "attention_scaling.memory_exponent": ("memory grows as n²",),
                          "attention_scaling.ratio_to_4": ("converge to 4", "quadruple")},
    "average_ladder": {"average_ladder.dilution": ("far worse than no context",),
                       "average_ladder.residual": ("repairs", "adds nothing")},
    "averaging_matrix": {"averaging_matrix.six_by_six": ("1/t on and below the diagonal",),
                         "averaging_matrix.masked_exactly_zero": ("0 above",)},
    "effective_tokens": {"effective_tokens.undivided_one_token": ("about one token",)},
    "ladder": {},  # what each piece buys is left to the bars
    "norm_grad_init": {"norm_grad_init.post_ratio": ("grow with depth more", "grows with depth more")},
    "norm_warmup": {"norm_warmup.pre_no_warmup": ("needs none", "needs no warmup"),
                    "norm_warmup.post_no_warmup": ("fails", "collapses", "eight times"),
                    "norm_warmup.post_warmup": ("rescues", "matching pre-norm", "matches pre-norm")},
    "param_breakdown": {"param_breakdown.mlp_two_thirds": ("two thirds",)},
    "position_extrapolation": {"position_extrapolation.learned_cliff": ("cliff",),
                               "position_extrapolation.alibi_improves": ("improves", "keeps improving"),
                               "position_extrapolation.alibi_256": ("improves", "keeps improving")},
    "scale_training": {"scale_training.dk32_free": ("costs little", "costs nothing"),
                       "scale_training.dk256_cost": ("many points",),
                       "scale_training.dk1024_cost": ("many points",)},
    "score_runaway": {"score_runaway.final_std": ("run away", "runs away", "runaway"),
                      "score_runaway.entropy": ("collapses to zero", "entropy collapses"),
                      "score_runaway.onehot": ("collapses onto one token", "one-hot", "every row")},
    "score_variance": {"score_variance.std": ("standard deviation √d",)},
    "softmax_saturation": {"softmax_saturation.undivided_frozen": ("saturates", "rows freeze")},
    "throughput": {},  # the pipeline's own measurement: no chapter claim
    "winograd_adjectives": {"winograd_adjectives.crosser": ("follows the adjective", "on the adjective"),
                            "winograd_adjectives.crossed": ("fetches the other noun",)},
    "winograd_attention": {"winograd_attention.block1_same": ("identical", "the same row"),
                           "winograd_attention.block1_first_noun": ("reads the first noun", "on the first noun"),
                           "winograd_attention.block2_tired": ("follows the adjective", "on the adjective"),
                           "winograd_attention.block2_wet": ("fetches the other noun",)},
}


def test_every_title_names_the_claims_it_speaks_about():
    tables = {claim["id"]: claim["table"] for claim in load_claims()}
    assert sorted(TITLE_CLAIMS) == sorted(plots.BUILDERS)
    assert all(tables.get(claim) == figure_id for figure_id, claims in TITLE_CLAIMS.items() for claim in claims)


@pytest.mark.parametrize("profile", [pytest.param("full", marks=pytest.mark.slow), "quick"])  # the fast tier: quick's
@pytest.mark.parametrize("figure_id", [
    f for f in sorted(TITLE_CLAIMS)])
def test_a_title_asserts_no_claim_its_ledger_does_not_reproduce(figure_id, profile):
    """Built from a profile's published results, a title says nothing in the chapter's words about a claim
    whose point that profile's ledger finds FAILS or OPEN, or, where the chapter states no point, whose number
    does not AGREE. A shortened profile's trained number is judged against the profile's own published seeds
    and says nothing of the chapter's: there only its point decides."""
    results = REPO / "results" / profile
    ledger = pd.read_csv(results / "claims.csv", keep_default_na=False).set_index("id")
    own_seeds = is_judged_loosely(profile) & (ledger["kind"] == "trained")
    shown = (ledger["point"] == "HOLDS") | ((ledger["point"] == NO_POINT) & (ledger["number"] == "AGREES") & ~own_seeds)
    unsettled = {claim: words for claim, words in TITLE_CLAIMS[figure_id].items() if not shown.get(claim, True)}
    if not unsettled:
        return  # every claim it speaks about is reproduced: its words are the ledger's
    fig, _ = build(figure_id, results / "tokens.json", profile)
    title = next(t.get_text() for t in fig.texts + fig.artists if t.get_gid() == style.HEADLINE).lower()
    asserted = {claim: [w for w in words if w.lower() in title] for claim, words in unsettled.items()}
    assert not any(asserted.values()), (title, {c: (ledger.at[c, "number"], ledger.at[c, "point"], w)
                                                for c, w in asserted.items() if w})


@pytest.mark.parametrize("figure_id", ["norm_warmup", "ladder"])
def test_perplexity_bars_keep_rows_a_few_percent_apart(figure_id, tokens):
    """Beside a row several times worse, bars on a log axis (ticks written plainly), each with room at
    its base for its value; the chapter's number written by its diamond."""
    fig, context = build(figure_id, tokens)
    (bars,) = [ax for ax in fig.axes if ax.patches]
    assert bars.get_xscale() == "log" and "log scale" in bars.get_xlabel()
    assert all("^" not in label.get_text() for label in bars.get_xticklabels())
    table = pd.read_csv(published_inputs(figure_id, tokens)["table"][0])
    assert bars.get_xlim()[0] < table["held_out_ppl"].min()
    notes = {t.get_text() for t in bars.texts}
    assert all(c.note in notes or f"{c.value:.2f}" in notes for c in context.of("held_out_ppl"))


def test_the_chapters_two_fits_say_which_they_fit(tokens):
    """The figure's one legend lists both fitted slopes: each names its panel's quantity."""
    fig, _ = build("attention_scaling", tokens)
    for ax, quantity in zip(fig.axes, ("time", "memory")):
        fits = [line.get_label() for line in ax.lines if line.get_label().startswith("chapter's fit")]
        assert fits and all(f"chapter's fit, {quantity}:" in fit for fit in fits)


def test_the_memory_budget_drawn_is_the_one_its_table_prints(tokens):
    """One quantity, one value: the budget line is the budget the skipped size was refused under, as its status
    prints it ("budget 11.1 GB"), not the smallest budget of any other size."""
    fig, _ = build("attention_scaling", tokens)
    table = pd.read_csv(published_inputs("attention_scaling", tokens)["table"][0])
    refused = table[table["status"].str.startswith("out of memory")]
    said = {re.search(r"budget ([\d.]+) GB", s)[1] for s in refused["status"]}
    drawn = [line.get_label() for ax in fig.axes for line in ax.lines if line.get_label().startswith("memory budget")]
    assert said and {re.search(r": ([\d.]+) GB", label)[1] for label in drawn} == said


def largest_token(row: pd.Series) -> str:
    cells = [c for c in row.index if c[0].isdigit() and not c.endswith(("_std", "_seeds"))]
    return max(cells, key=lambda c: row[c]).split(":", 1)[1]


# What a caption says each panel shows, in words the panel's own axis labels carry (left to right).
CAPTION_PANELS = {"attention_scaling": {"left": ("time",), "right": ("memory",)},
                  "norm_warmup": {"left": ("training loss",), "right": ("perplexity after training",)}}


@pytest.mark.parametrize("figure_id", sorted(CAPTION_PANELS))
def test_a_caption_describes_the_panels_its_figure_draws(figure_id, tokens):
    """The caption names each panel by side with the words just before it, and that side's axis labels
    carry the same words."""
    caption = " ".join((REPO / "workflow/report" / f"{figure_id}.rst").read_text().split())
    fig, _ = build(figure_id, tokens)
    panels = sorted((ax for ax in fig.axes if ax.get_xlabel() or ax.get_ylabel()), key=lambda ax: ax.get_position().x0)
    for side, words in CAPTION_PANELS[figure_id].items():
        said = caption[:caption.index(f"({side}")][-80:].lower()
        assert all(w in said for w in words), (figure_id, side, said)
        ax = panels[0] if side == "left" else panels[-1]
        labels = f"{ax.get_xlabel()} {ax.get_ylabel()} {ax.get_title()}".lower()
        assert all(w in labels for w in words), (figure_id, side, labels)


def test_every_caption_that_names_a_panel_is_checked():
    named = {p.stem for p in (REPO / "workflow/report").glob("*.rst")
             if re.search(r"\((left|right)[;:)]", " ".join(p.read_text().split()))}
    assert named == set(CAPTION_PANELS)


def test_a_diamond_is_called_the_chapters_only_where_it_is_its_printed_number(tokens):
    """The ladder's values made from the chapter's gap to one of our rows (its table is lost) are labelled as such;
    attention_scaling's diamonds on the peak-memory axis are the chapter's matrix sizes, and say so."""
    fig, context = build("ladder", tokens)
    derived = [c for c in context.of("held_out_ppl") if c.note]
    labels = {line.get_label() for ax in fig.axes for line in ax.lines}
    assert derived and style.DERIVED in labels
    (made,) = [line for line in fig.axes[0].lines if line.get_label() == style.DERIVED]
    assert list(made.get_xdata()) == [c.value for c in derived]
    fig, _ = build("attention_scaling", tokens)
    memory = [line.get_label() for line in fig.axes[1].lines if line.get_marker() == "D"]
    assert memory == ["chapter: one score matrix's MB (not its peak)"]

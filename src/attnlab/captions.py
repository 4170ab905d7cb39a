"""Captions with no number typed by hand: workflow/report/<id>.rst are Jinja templates whose words are
written by hand and whose every number is a field read from the profile's own tables, ledger and runs.

    python -m attnlab.captions --profile P --ledger results/P/claims.csv \\
        --out results/P/captions table=results/P/tables/<id>.csv ... caption=workflow/report/<id>.rst ...

writes results/P/captions/<id>.rst, the captions as a reader sees them: the reader's report shows
them, and Snakemake's --report points at them (it renders a caption with Jinja too, but knows none of
these names). The names a template can use:

  t                          its own table (the one its id names); table('ladder') another one
  t.row(model='one block')   the one row whose cells equal these (else an error naming the rows there are)
  t | length, t.rows         how many rows; each row; t.columns its columns
  row.held_out_ppl           a cell, printed as the table prints it: mean ± sd where the table keeps a spread
    .mean .sd .n .values     its mean (a number: arithmetic works), sd, how many seeds, each seed's value
                             (a column's value prints as its cell, never another summary of it: where the ledger
                             reads another, a timing's repeats, print the claim, which names both)
  row.seeds                  the row's seed count (its own, never the table's largest)
  ledger                     every ledger row (a Claim each): ledger | selectattr('number', 'equalto', 'AGREES')
  claim('ladder.block')      a ledger row: .chapter .reproduced .interval .number .point .why .seeds .margin, as
                             the ledger prints them; .words its number's word and its point's ("AGREES; point
                             HOLDS"); .value is the chapter's number, .ours our mean (numbers)
  run('ladder/block')        the composed config of a run of this profile (its seed 0): run('ladder/block').train.lr
  evals('norm/post_warmup')  a run's evaluations over training (evals.csv of seed 0): .row(step=500).held_out_ppl_128
  measurement('gpt2_params') the settings an analytic measurement recorded: measurement('gpt2_params').d_model
  config('measure/scale')    a YAML file under configs/, as written; settings: the profile's (configs/profile/P.yaml)
  profile                    the profile's name
  words                      the ledger's words, each with its meaning: words.number, words.point
  onehot_weight              the largest weight that makes an attention row one-hot (attnlab.runs)

A number prints in the tables' format (one format in the project: attnlab.tables.fmt); filters say
otherwise: `| dp(2)` fixed decimals, `| sig(2)` significant digits, `| pct` a share as a percent,
`| e` powers of ten as 1e-3, `| int` a whole number with thousands separators, `| seeds` a count of
seeds with its noun (1 seed, 74 seeds), `| num` the number a text cell starts with (to compare).

literal_numbers() is the rule the captions are held to (tests/test_captions.py): outside a field no
number is written (an identifier such as ``seed0``, ``ppl_64`` or GPT-2 is not a number, nor a formula
in :math:`…`), no seed count is spelled out in words, and no field prints a constant.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from dataclasses import dataclass, field as dataclass_field
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import yaml
from jinja2 import nodes

from attnlab.config import CONFIG_DIR, ROOT
from attnlab.data import atomic_path
from attnlab.runs import ONEHOT_WEIGHT
from attnlab.tables import SEEDS_SUFFIX, fmt, own_rows, parse_named, per_seed


class CaptionError(ValueError):
    """A template asks for what its profile's data does not have."""


# ---------------------------------------------------------------- what a template reads

@dataclass(frozen=True)
class Cell:
    """One cell of a table: its mean (or text), its spread over seeds and each seed's value; `origin` (table id,
    column, row label) where it was read from a table, which is the only way a caption prints a column's value:
    as the table prints that cell (tests/test_captions.py holds every caption to it)."""
    mean: object
    sd: float | None = None
    values: tuple = ()
    origin: tuple | None = dataclass_field(default=None, compare=False, hash=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.values) or 1

    def __str__(self) -> str:
        if self.sd is None or isinstance(self.mean, bool) or not isinstance(self.mean, (int, float, np.number)):
            return fmt(self.mean)
        return fmt(float(self.mean), self.sd)  # as the table: a whole mean keeps its spread (50 ± 11.73)

    def __float__(self) -> float:
        return float(self.mean)

    def __eq__(self, other) -> bool:  # a cell equals its value: rows | selectattr('finding', 'equalto', 'undecided')
        return (self.mean, self.sd, self.values) == (other.mean, other.sd, other.values) if isinstance(other, Cell) \
            else self.mean == other

    def __hash__(self) -> int:
        return hash((self.mean, self.sd, self.values))

    # arithmetic on a cell is arithmetic on its mean: {{ (a.held_out_ppl / b.held_out_ppl) | dp(2) }}
    def _number(self):
        if not isinstance(self.mean, (int, float, np.number)):
            raise CaptionError(f"{self.mean!r} is not a number")
        return self.mean

    def __add__(self, other): return self._number() + number(other)
    def __radd__(self, other): return number(other) + self._number()
    def __sub__(self, other): return self._number() - number(other)
    def __rsub__(self, other): return number(other) - self._number()
    def __mul__(self, other): return self._number() * number(other)
    def __rmul__(self, other): return number(other) * self._number()
    def __truediv__(self, other): return self._number() / number(other)
    def __rtruediv__(self, other): return number(other) / self._number()
    def __neg__(self): return -self._number()
    def __lt__(self, other): return self._number() < number(other)
    def __gt__(self, other): return self._number() > number(other)


def number(value) -> float:
    return value._number() if isinstance(value, Cell) else value


class Row:
    """One row of a table; its columns are attributes (row.held_out_ppl) or items (row['ppl_64'])."""

    def __init__(self, table: str, series: pd.Series):
        self._table, self._series = table, series

    def __getattr__(self, column: str) -> Cell:
        if column.startswith("_"):
            raise AttributeError(column)
        return self[column]

    def __getitem__(self, column: str) -> Cell:
        s = self._series
        if column not in s.index:
            raise CaptionError(f"table {self._table} has no column {column!r}; it has "
                               + ", ".join(c for c in s.index if not c.endswith(("_std", SEEDS_SUFFIX))))
        sd = s.get(f"{column}_std")
        values = tuple(per_seed(s.get(f"{column}{SEEDS_SUFFIX}")))
        return Cell(plain(s[column]), None if sd is None or pd.isna(sd) else float(sd), values,
                    origin=(self._table, column, s.name))

    def __str__(self) -> str:
        return f"a row of {self._table}"


def plain(value):
    """A cell as Python: numbers as int or float (a count read back as a float is an int), text as text."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return int(value) if float(value).is_integer() else float(value)
    return "" if value is None else value


class Table:
    def __init__(self, table_id: str, df: pd.DataFrame):
        self.id, self._df = table_id, own_rows(df)

    @property
    def rows(self) -> list[Row]:
        return [Row(self.id, r) for _, r in self._df.iterrows()]

    def __len__(self) -> int:
        return len(self._df)

    @property
    def columns(self) -> list[str]:
        """Its columns, without the spreads and per-seed values that go with them."""
        return [c for c in self._df.columns if not c.endswith(("_std", SEEDS_SUFFIX))]

    def __iter__(self):
        return iter(self.rows)

    def row(self, **where) -> Row:
        """The one row whose cells equal `where` (compared as text: row=11 finds the row '11')."""
        found = self._df
        for column, value in where.items():
            if column not in found.columns:
                raise CaptionError(f"table {self.id} has no column {column!r}")
            found = found[found[column].map(lambda cell: as_key(cell) == as_key(value))]
        if len(found) != 1:
            said = ", ".join(f"{k}={v!r}" for k, v in where.items())
            there = "; ".join(" ".join(f"{c}={as_key(r[c])!r}" for c in where if c in r.index)
                              for _, r in self._df.iterrows())
            raise CaptionError(f"table {self.id}: {len(found)} rows with {said} (one is needed); rows: {there}")
        return Row(self.id, found.iloc[0])

    def column(self, name: str) -> list[Cell]:
        return [r[name] for r in self.rows]


def as_key(value) -> str:
    value = plain(value)
    return repr(value) if isinstance(value, float) else str(value)


class Blank(str):
    """An empty ledger cell: prints as nothing, and a field that prints it fails (attnlab.captions.field)."""


class Claim:
    """A ledger row, its cells as the ledger prints them."""

    def __init__(self, row: pd.Series):
        self._row = row

    def __getattr__(self, column: str):
        if column.startswith("_"):
            raise AttributeError(column)
        if column not in self._row.index:
            raise CaptionError(f"the ledger has no column {column!r}")
        value = self._row[column]
        return Blank() if pd.isna(value) else plain(value) if column == "seeds" else str(value)

    @property
    def words(self) -> str:
        """Its number's word and, where the chapter states a point, the point's: "AGREES; point HOLDS"."""
        from attnlab.claims.rules import NO_POINT
        return self.number + ("" if self.point == NO_POINT else f"; point {self.point}")

    @property
    def value(self) -> float:
        """The chapter's number (for arithmetic: how far ours is from it)."""
        return leading_number(self.chapter, f"claim {self._row['id']}'s chapter value")

    @property
    def ours(self) -> float:
        return leading_number(self.reproduced, f"claim {self._row['id']}'s reproduced value")


def leading_number(text: str, what: str) -> float:
    found = re.match(r"-?[\d,]*\.?\d+(?:e[-+]?\d+)?", text.strip())
    if not found:
        raise CaptionError(f"{what} is not a number: {text!r}")
    return float(found[0].replace(",", ""))


class Settings(dict):
    """A config as attributes: run('ladder/block').train.lr."""

    def __getattr__(self, key: str):
        if key not in self:
            raise CaptionError(f"no setting {key!r}; there are {', '.join(map(str, self))}")
        value = self[key]
        return Settings(value) if isinstance(value, dict) else value


@dataclass
class Sources:
    """Where a profile's captions read: its tables and ledger, and its runs' folders."""
    profile: str
    tables: dict[str, Path]
    ledger: Path | None = None
    results: Path | None = None  # results/<profile>: runs/ and measure/winograd/

    def table(self, table_id: str) -> Table:
        if table_id not in self.tables:
            raise CaptionError(f"no table {table_id!r} among the inputs")
        return table_of(self.tables[table_id])

    def claim(self, claim_id: str) -> Claim:
        found = ledger_of(self.ledger) if self.ledger else pd.DataFrame(columns=["id"])
        found = found[found["id"] == claim_id]
        if len(found) != 1:
            raise CaptionError(f"no claim {claim_id!r} in the ledger")
        return Claim(found.iloc[0])

    def claims(self) -> list[Claim]:
        """Every ledger row, in the ledger's order."""
        return [Claim(r) for _, r in ledger_of(self.ledger).iterrows()] if self.ledger else []

    def run(self, name: str) -> Settings:
        """The composed config of a run of this profile, from its seed 0's config.yaml."""
        if self.results is None:
            raise CaptionError("no results folder given: run() has nothing to read")
        family, _, rest = name.partition("/")
        folder = (self.results / "measure/winograd" / Path(*rest.split("_", 1)) if family == "winograd"
                  else self.results / "runs" / name)
        path = folder / "seed0" / "config.yaml"
        if not path.is_file():
            raise CaptionError(f"run {name!r} has no {path}")
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Settings(doc.get("config", doc))

    def evals(self, name: str, seed: int = 0) -> Table:
        """A run's evaluations over training (its evals.csv: one row a step), seed 0 unless said."""
        path = self.results / "runs" / name / f"seed{seed}" / "evals.csv" if self.results else None
        if path is None or not path.is_file():
            raise CaptionError(f"run {name!r} has no {path}")
        return Table(f"{name}/seed{seed}/evals", pd.read_csv(path))

    def measurement(self, name: str) -> Settings:
        """The settings an analytic measurement of this profile recorded (measure/<name>/result.json)."""
        path = (self.results or Path("results") / self.profile) / "measure" / name / "result.json"
        if not path.is_file():
            raise CaptionError(f"no measurement {path}")
        return Settings(json.loads(path.read_text(encoding="utf-8")).get("settings", {}))


def table_of(path: Path) -> Table:
    return Table(Path(path).stem, pd.read_csv(path, keep_default_na=False, na_values=[""],
                                              dtype={"commit": str, "seed_ids": str, "device": str}))


def ledger_of(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def config(name: str) -> Settings:
    path = CONFIG_DIR / f"{name}.yaml"
    if not path.is_file():
        raise CaptionError(f"no config {path}")
    return Settings(yaml.safe_load(path.read_text(encoding="utf-8")))


def ledger_words() -> dict[str, dict[str, str]]:
    """The ledger's words, each with its meaning: the number's and the point's."""
    from attnlab.claims.rules import NUMBER_WORDS, POINT_WORDS
    return {"number": dict(NUMBER_WORDS), "point": dict(POINT_WORDS)}


# ---------------------------------------------------------------- numbers as they print

def shown(value) -> str:
    """What a field prints: numbers in the tables' format, anything else as text."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return str(value)
    if isinstance(value, (int, float, np.number)):
        return fmt(plain(value))
    return str(value)


def decimals(x, places: int) -> str:
    return f"{number(x):,.{places}f}"


def significant(x, digits: int) -> str:
    x = float(number(x))
    if x == 0 or not math.isfinite(x):
        return str(x)
    places = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{round(x, places):,.{places}f}"


def percent(share, places: int = 1) -> str:
    """A share (0.92) as a percent (92.1)."""
    return f"{100 * float(number(share)):.{places}f}"


def powers(x) -> str:
    """1e-3, 3e-3, 2.5e-4: how a learning rate is written."""
    mantissa, exponent = f"{float(number(x)):e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def whole(x) -> str:
    return f"{round(float(number(x))):,}"


def seeds(n) -> str:
    """'1 seed', '74 seeds'."""
    n = int(number(n))
    return f"{n:,} seed{'' if n == 1 else 's'}"


# what a field must never print: nothing, the tables' mark for an empty cell, a missing number
EMPTY_FIELD = ("", "–", "-", "nan", "NaN", "None", "none", "inf", "-inf")
# a word written twice in a row ("is is"): a field that printed the word its template already wrote
DOUBLED_WORD = re.compile(r"(?<![\w-])([^\W\d_]+)\s+\1(?![\w-])", re.I)
CODE = re.compile(r"``.+?``|:math:`[^`]*`", re.S)


def field(value) -> str:
    """What a field prints (shown), refusing one that prints nothing, '–' or NaN: the data it reads has no value
    there, and the sentence around it would say nothing ("– on this pipeline's machine"). `{{ a if b }}` with b false
    prints nothing on purpose (jinja gives it a plain Undefined), and so does a template's own '' (a separator's
    else): those stay allowed; an empty cell (a Cell) or ledger cell (Blank) does not."""
    if isinstance(value, jinja2.Undefined) and not isinstance(value, jinja2.StrictUndefined):
        return ""
    if type(value) is str and not value.strip():  # the template's own choice ({{ ', ' if not loop.last else ' ' }})
        return value
    text = shown(value)
    if text.strip() in EMPTY_FIELD:
        raise CaptionError(f"a field prints {text!r}: the data it reads has no value there (say so in words, or "
                           "leave the sentence out where the value is missing)")
    return text


def template_line(template: str, error: BaseException) -> str:
    """' (line n: <its text>)': where in the template an error was raised (jinja puts the template's lines in the
    traceback), empty where it does not say."""
    lines, tb = [], error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    if not lines or not 0 < lines[-1] <= len(template.splitlines()):
        return ""
    return f" (line {lines[-1]}: {template.splitlines()[lines[-1] - 1].strip()[:120]})"


def doubled_words(text: str) -> list[str]:
    """Each word a rendered caption writes twice in a row ("is is"), outside ``code`` and :math:`…`."""
    return [m[0] for m in DOUBLED_WORD.finditer(CODE.sub(" ", text))]


def environment() -> jinja2.Environment:
    # a {% set %} or {% if %} on a line of its own leaves no line behind
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, finalize=field, autoescape=False,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(dp=decimals, sig=significant, pct=percent, e=powers, int=whole, seeds=seeds,
                       num=lambda text: leading_number(str(text), "a cell read as a number"))
    env.tests["containing"] = lambda value, part: part in str(value)  # t.columns | select('containing', ':')
    return env


def render(template: str, sources: Sources, table_id: str | None = None, env: jinja2.Environment | None = None,
           names: dict | None = None) -> str:
    """The caption as a reader sees it; a field the data cannot fill stops it, naming the field. `names`: more
    names for the template (a test's)."""
    names = {"table": sources.table, "claim": sources.claim, "run": sources.run, "evals": sources.evals,
             "measurement": sources.measurement, "config": config, "words": ledger_words(),
             "onehot_weight": ONEHOT_WEIGHT, "ledger": sources.claims(),
             "profile": sources.profile, **(names or {})}
    if (CONFIG_DIR / "profile" / f"{sources.profile}.yaml").is_file():
        names["settings"] = config(f"profile/{sources.profile}")
    if table_id in sources.tables:
        names["t"] = sources.table(table_id)
    try:
        text = (env or environment()).from_string(template).render(**names)
    except (CaptionError, jinja2.TemplateError, TypeError, ValueError, ZeroDivisionError) as e:
        raise CaptionError(f"caption {table_id or '?'}: {e}{template_line(template, e)}") from None
    if doubled := doubled_words(text):
        raise CaptionError(f"caption {table_id or '?'}: a word written twice in a row: {', '.join(map(repr, doubled))}")
    return text


# ---------------------------------------------------------------- the rule captions are held to

# a word (an identifier may hold digits: seed0, ppl_64, GPT-2, W_o), a coefficient of algebra (12d², 4d),
# or a number (3000, 1e-3, 38.07, 1,115,394): only the last is a literal number
TOKEN = re.compile(r"(?P<word>[^\W\d][\w]*(?:-\w+)*)|(?P<algebra>\d+[^\W\d_e]\w*)|(?P<number>\d+(?:[.,]\d+)*(?:e[-+]?\d+)?)")
MATH = re.compile(r":math:`[^`]*`")  # a formula is a definition, not a measurement: w_i(1 − w_i), 12d² + 13d
# "one seed" is a way to train (one seed per process); a count of two or more in words is a count
COUNT_WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|dozen)"
SPELLED_SEEDS = re.compile(rf"\b{COUNT_WORDS}\s+seeds?\b", re.I)


def literal_numbers(template: str) -> list[str]:
    """What a template writes as a number by hand: numbers in its text outside fields, seed counts in
    words, and fields that print a constant ({{ 38.07 }}, {{ '5,147' }}); empty for a sound caption."""
    env = environment()
    found = []
    for node in env.parse(template).find_all(nodes.Output):
        for part in node.nodes:
            if isinstance(part, nodes.TemplateData):
                text = MATH.sub("", part.data)
                found += [m["number"] for m in TOKEN.finditer(text) if m["number"]]
                found += [m[0] for m in SPELLED_SEEDS.finditer(text)]
            elif (value := constant(part)) is not None:
                found.append(f"{{{{ {value} }}}}")
    for node in env.parse(template).find_all(nodes.Assign):
        if constant(node.node) is not None:
            found.append("{% set … = (a constant) %}")
    return found


# words that say how an experiment came out; a template writes them only where the data chose them (inside an
# {% if %} on a table's cell or the ledger's words), else a sentence states an outcome its data may not show
OUTCOME = re.compile(r"\b(?:comes back|came back|does run away|runs away|collapses|(?:do|does) not point|stays flat|"
                     r"close to linear|and it does|reproduces)\b")


def typed_outcomes(template: str) -> list[str]:
    """Each outcome (OUTCOME) a template writes outside every {% if %}, with the words around it: empty for a
    caption whose outcomes its data chooses. Code, formulas and the title are not read."""
    found = []

    def walk(node, chosen: bool):
        if isinstance(node, (nodes.If, nodes.CondExpr)):
            chosen = True
        if isinstance(node, nodes.TemplateData) and not chosen:
            text = " ".join(CODE.sub(" ", node.data).split())
            found.extend(text[max(0, m.start() - 60):m.end() + 30] for m in OUTCOME.finditer(text))
        for child in node.iter_child_nodes():
            walk(child, chosen)

    walk(environment().parse(TITLE_LINES.sub("", template, count=1)), False)
    return found


TITLE_LINES = re.compile(r"\A[^\n]+\n[=]{3,}\n")


def constant(node):
    """What a field prints when it prints what it was given (a literal, or a literal through filters), else None."""
    while isinstance(node, nodes.Filter):
        node = node.node
    return node.value if isinstance(node, nodes.Const) else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--ledger", type=Path, help="claims.csv of the same profile")
    parser.add_argument("--results", type=Path, help="where the profile's runs are (run(), evals(), measurement()); "
                                                      "default results/<profile>")
    parser.add_argument("--out", required=True, type=Path, help="folder for the rendered <id>.rst")
    parser.add_argument("inputs", nargs="*", help="table=<csv> caption=<rst>, named by their stem")
    args = parser.parse_intermixed_args(argv)
    named = parse_named(args.inputs)
    sources = Sources(args.profile, {Path(p).stem: Path(p) for p in named.get("table", [])}, args.ledger,
                      args.results or ROOT / "results" / args.profile)
    rendered = {}
    for path in map(Path, named.get("caption", [])):
        try:
            rendered[path.stem] = render(path.read_text(encoding="utf-8"), sources, path.stem)
        except CaptionError as e:
            raise SystemExit(f"error: {path}: {e}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    for stem, text in rendered.items():  # every caption rendered before any is written
        with atomic_path(args.out / f"{stem}.rst") as tmp:
            tmp.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

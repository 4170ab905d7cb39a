"""Every job of one call of the workflow, with its key (attnlab.steps), and the table registry: what each table
reads, as its family module declares it (attnlab.tables.Declared). The rules (workflow/rules/*.smk) read these
through input functions; the workflow hands in the one piece that needs Snakemake, how a costly job reads its
inputs (read_by_key).

Jobs are registered in the order the chapter's results are made: the data stages, the measurements, then every
declared table with the runs it reads (those that read other tables' inputs last: the contradictions, then the
pipeline's cost and the cross-device pairs); then each table's and figure's job and the ledger, its plot, the
captions and the report (the sinks), whose keys cover the keys of what they read.
"""

from __future__ import annotations

import functools
import importlib
import re
import shlex
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from attnlab import options
from attnlab.claims.reference import reference_file
from attnlab.claims.rules import ClaimsError
from attnlab.config import (CONFIG_DIR, ROOT, ConfigError, check_train, compose, config_hash, data_hash, experiments,
                            model_config)
from attnlab.layout import digest, run_folder, run_job, seed_groups, seed_key, variant_label, variant_name
from attnlab.readable import STYLE_SHEET
from attnlab.steps import Composed, Registry, Step, code_hash, refuse
from attnlab.tables import chapter_order

CLAIMS_FILE = "configs/claims.yaml"  # the chapter's numbers: the ledger judges them, the figures draw them
RUN_FILES = ("metrics.json", "curve.csv", "evals.csv", "config.yaml")
WINOGRAD_FILES = ("metrics.json", "probe.json", "answers.csv", "config.yaml")
SPLIT_FILES = {"split": "split.json", "train": "train.txt", "held_out": "held_out.txt"}
RANDOM_ROWS = {"score_variance": "pairs", "random_rows": "rows"}  # measurement -> its CSV's name
SCALE_SETTINGS = "configs/measure/scale.yaml"
WINOGRAD_MODULE = "attnlab.winograd"  # imports its trainer (torch): read only when a config is composed afresh
INTERVENTIONS = "interventions.json"
HEAD_READINGS = "head_readings.json"


def sized_measurements(root: Path) -> list[str]:
    """The measurements whose settings file gives each profile its sizes (configs/measure/<name>.yaml, `sizes`)."""
    return sorted(p.stem for p in (Path(root) / "configs/measure").glob("*.yaml")
                  if "sizes" in (yaml.safe_load(p.read_text()) or {}))


def named_args(named: dict) -> str:
    """name=path arguments for the attnlab.tables / attnlab.plots command lines."""
    return " ".join(shlex.quote(f"{name}={path}") for name, paths in named.items() for path in paths)


def as_lists(named: dict) -> dict[str, list[str]]:
    return {name: [paths] if isinstance(paths, str) else list(paths) for name, paths in named.items()}


class Jobs:
    def __init__(self, config: dict, read_by_key, root: Path = ROOT):
        from attnlab.plots import BUILDERS as FIGURE_BUILDERS
        from attnlab.families import load_families
        from attnlab.tables import BUILDERS as TABLE_BUILDERS, DECLARED

        self.root = Path(root)
        self.composed = Composed(self.root)
        self.table_builders, self.figure_builders, self.declared = TABLE_BUILDERS, FIGURE_BUILDERS, DECLARED
        # --- the pipeline's options (--config name=value, validated against workflow/schemas/config.schema.yaml) ---
        self.profiles = sorted(p.stem for p in (CONFIG_DIR / "profile").glob("*.yaml"))
        self.profile = profile = options.profile_of(config, self.profiles)
        self.profile_config = OmegaConf.create(self.composed(
            f"profile {profile}", lambda: OmegaConf.to_container(compose([f"profile={profile}"]).profile)))
        self.seeds = options.seeds_of(config, self.profile_config.seeds)
        self.results, self.figures = f"results/{profile}", f"figures/{profile}"
        self.experiments = experiments()
        self.winograd_names = sorted(p.stem for p in (CONFIG_DIR / "winograd").glob("[!_]*.yaml"))
        # every trained run by its scope name: experiments as family/run, Winograd runs as winograd/<run>
        self.run_names = self.experiments + [f"winograd/{r}" for r in self.winograd_names]
        self.overrides = options.parse_overrides(config["override"], self.run_names) if "override" in config else []
        self.more_seeds = options.more_seeds(config, profile, self.run_names)
        self.seed_batch = config.get("seed_batch", 1)
        # a variant (override= or seeds=, attnlab.options) is written under results/<p>/variants/<name>/
        self.variant_label = variant_label(self.overrides, len(self.seeds), self.profile_config.seeds)
        self.variant = variant_name(self.variant_label) if self.variant_label else None
        self.variant_dir = f"{self.results}/variants/{self.variant}" if self.variant else None
        homes = [self.results] + ([self.variant_dir] if self.variant else [])
        self.home_pattern = "|".join(re.escape(h) for h in homes)  # a rule's {home}: published or the variant's
        self.registry = Registry(self.results, read_by_key)
        self.tables = {}  # id -> {"inputs", "variant_inputs" (None where the same), "figure_inputs", "figure", ...}
        try:  # every @table and @figure builder, so the registry knows which tables have a figure
            load_families()
        except ClaimsError as e:  # the contradictions' hypotheses, read as their family loads
            refuse(str(e))
        self.declare_data()
        self.declare_measurements()
        # every table its family declares (attnlab.tables.Declared), those that read other tables' inputs last
        for table_id in sorted(self.declared, key=lambda t: (self.declared[t].reads_tables, t)):
            self.add_table(table_id)
        # then each table's and figure's job and the sinks (the variant's too): a rule's input function finds its
        # job by the output its wildcards name (Registry.writer)
        for table_id, variant in self.builds():
            self.table_step(table_id, variant)
            if self.tables[table_id]["figure"]:
                self.figure_step(table_id, variant)
        for variant in (False, True) if self.variant else (False,):
            self.sink_steps(variant)

    # --- shared ---
    def step(self, job: str, own_key: str, outputs: list, inputs: dict | None = None, derived: bool = False,
             home: str | None = None) -> Step:
        return self.registry.register(Step(job, own_key, outputs, inputs or {}, derived, home or self.results,
                                           self.registry))

    def overrides_of(self, run: str) -> list[str]:
        return options.overrides_of(self.overrides, run)

    def measurement_code(self, module: str, files: tuple = ()) -> str:
        return self.composed.measurement_code(module, files)

    def under_results(self, named: dict | None) -> dict[str, list[str]]:
        return {name: [f"{self.results}/{p}" for p in paths] for name, paths in as_lists(named or {}).items()}

    def add_table(self, table_id: str):
        """Register a table as its family declares it: its runs, its other inputs, what else its builder reads
        (part of its key). A variant's table gets its own job where its inputs differ from the published one's."""
        if not (self.root / "workflow/report" / f"{table_id}.rst").is_file():
            refuse(f"table {table_id!r} has no caption: write workflow/report/{table_id}.rst")
        declared = self.declared[table_id]

        def named(variant: bool) -> dict:
            found = {name: self.run_metrics(run, variant) for name, run in (declared.runs or {}).items()}
            reads = declared.reads
            found.update(as_lists(reads(self, variant)) if callable(reads) else self.under_results(reads))
            return found

        published = named(False)
        in_variant = named(True) if self.variant else published
        code_files = declared.code_files(self) if callable(declared.code_files) else declared.code_files
        self.tables[table_id] = {"inputs": published, "variant_inputs": in_variant if in_variant != published else None,
                                 "figure": table_id in self.figure_builders,
                                 "code_files": tuple(code_files), "figure_inputs": self.under_results(declared.figure_reads)}

    # --- data: corpus -> tokenizer -> token cache ---
    def declare_data(self):
        """Each stage composes the same Hydra config; their key is what the cache computes from (the verified
        corpus, its slice, the vocabulary). The cache is not committed; its record is (results/<profile>/
        tokens.json), and the runs, measurements and tables read the record: a job that reads the cache and
        finds none rebuilds it (attnlab.data.prepare)."""
        self.data = data = f"{self.results}/data"
        self.tokens_record = f"{self.results}/tokens.json"
        self.data_stages = {"corpus": {"text": f"{data}/corpus.txt"}, "tokenizer": {"tokenizer": f"{data}/tokenizer.json"},
                            "tokens": {"ids": f"{data}/tokens.npy", "meta": f"{data}/tokens.json",
                                       "record": self.tokens_record}}
        key = self.composed(f"data {self.profile}", lambda: data_hash(compose([f"profile={self.profile}"])))
        stages = list(self.data_stages)
        self.data_steps = {stage: self.step(stage, key, list(self.data_stages[stage].values()),
                                            {s: list(self.data_stages[s].values())[:1] for s in stages[:i]})
                           for i, stage in enumerate(stages)}

    # --- training runs: a seed's folder and key (attnlab.layout), in the published results or, where an
    # override changes the run or the seed is one the published results do not train, the variant's folder ---
    @functools.lru_cache(maxsize=None)
    def run_config(self, run: str, overrides: tuple):
        """The config `python -m attnlab.train experiment=run profile=... <overrides>` composes, once it passed
        the checks every run makes (composed once per run: a seed's is it with its seed set)."""
        cfg = compose([f"experiment={run}", f"profile={self.profile}", *overrides])
        check_train(cfg)
        model_config(cfg)  # a bad override stops here, before any job runs
        return cfg

    @functools.lru_cache(maxsize=None)
    def train_step(self, run: str, seed: int, variant: bool = False) -> Step:
        """One training job, as the published results train it or (variant) with override= applied."""
        if run not in self.experiments:
            refuse(f"unknown experiment {run!r}; known: {self.experiments}")
        overrides = self.overrides_of(run) if variant else []
        home = self.results if not overrides and seed < len(self.seeds_of(run)) else self.variant_dir
        try:
            key = self.composed(digest("train", run, self.profile, seed, overrides),
                                lambda: seed_key(self.run_config(run, tuple(overrides)), seed))
        except ConfigError as e:
            refuse(f"override for {run}: {e}")
        folder = run_folder(home, run, seed)
        # the token cache is rebuilt by a run that misses it; the run's key holds the data config, so the
        # record's time is no reason to retrain
        return self.step(run_job(run, seed), key, [f"{folder}/{name}" for name in RUN_FILES],
                         {"tokens": [self.tokens_record]}, home=home)

    def train_step_at(self, w) -> Step:
        """The run a train job's output path names; a published folder never gets the variant's overrides."""
        step = self.train_step(w.run, int(w.seed), variant=w.home != self.results)
        if step.home != w.home:
            refuse(f"{w.home}/runs/{w.run}/seed{w.seed}: this run's folder is {step.home}/runs/...")
        return step

    def seeds_of(self, run: str, variant: bool = False, base: int | None = None) -> list[int]:
        """The seeds a run trains: `base` (by default the profile's count; a variant's: seeds=), or more where
        seeds_per_run says so (rows whose claims need more seeds to be decided, a contradiction's hypothesis
        runs whose finding does)."""
        if base is None:
            base = len(self.seeds) if variant else self.profile_config.seeds
        return list(range(max(base, self.more_seeds.get(run, 0))))

    def run_metrics(self, run: str, variant: bool = False) -> list[str]:
        """metrics.json of every seed of one experiment run (its curve.csv and evals.csv sit beside it)."""
        return [self.train_step(run, seed, variant).outputs[0] for seed in self.seeds_of(run, variant)]

    def missing_groups(self, seeds: list[int], step) -> list[list[int]]:
        """--config seed_batch=K: the seeds whose metrics.json (step(seed).outputs[0]) is missing, in groups of
        2..K consecutive seeds, each group one job that trains them folded into one model."""
        missing = [seed for seed in seeds if self.seed_batch > 1 and not Path(step(seed).outputs[0]).exists()]
        return [group for group in seed_groups(missing, self.seed_batch) if len(group) > 1]

    def train_seed_groups(self) -> list[tuple[str, list[int]]]:
        """(run, seeds) of each group of a read run's published seeds: a run no table reads, as a
        contradiction's hypothesis not run, gets no group."""
        seeds = {}
        for home, job in self.registry.jobs:
            if home == self.results and job.startswith("train/"):
                run, seed = job.removeprefix("train/").rsplit("/seed", 1)
                seeds.setdefault(run, []).append(int(seed))
        return [(run, group) for run, s in sorted(seeds.items())
                for group in self.missing_groups(sorted(s), lambda seed, run=run: self.train_step(run, seed))]

    # --- the measurements: no training of their own, each under its key (its code in src/attnlab/measure/ and
    # its settings); their tables read their outputs by path ---
    def declare_measurements(self):
        from attnlab.families.winograd import PROBED

        measure = self.profile_config.measure
        # the measurements sized per profile in their own settings file (configs/measure/<name>.yaml, sizes.<profile>),
        # one job per path they time. Their modules import torch: read only when the settings are composed afresh or
        # one of their jobs runs, so planning imports no torch.
        self.sized = {name: self.composed(f"{name} {self.profile}", lambda name=name: importlib.import_module(
            f"attnlab.measure.{name}").load_settings(self.profile)) for name in sized_measurements(self.root)}
        for name, settings in self.sized.items():
            for path in settings["tokens"]:
                self.sized_step(name, path)
        # the analytic demonstrations: no training, the same numbers in every profile
        self.analytic = self.composed("analytic measurements",
                                      lambda: list(importlib.import_module("attnlab.measure.analytic").MEASUREMENTS))
        self.analytic_code = self.measurement_code("attnlab.measure.analytic")
        for name in self.analytic:
            self.analytic_step(name)
        # the gradient norms at initialization of the norm family's models: their model configs are part of the key
        models = [self.composed(f"norm model {n} {self.profile}", lambda: config_hash(compose(
            [f"experiment=norm/{n}_no_warmup", f"profile={self.profile}"]).model)) for n in ("pre", "post")]
        self.grad_norms_step = self.step(
            "measure_norm_grad_init", digest(self.measurement_code("attnlab.measure.grad_norms"),
                                             dict(measure.norm_grad_init), models),
            [f"{self.results}/measure/norm_grad_init/grad_norms.csv"], {"tokens": [self.tokens_record]})
        # random rows of scores (seconds: every profile measures the chapter's sample sizes, configs/measure/
        # scale.yaml); an edit of the settings or of the measuring code reruns both
        self.random_rows_code = self.measurement_code("attnlab.measure.random_rows", files=(SCALE_SETTINGS,))
        for name in RANDOM_ROWS:
            self.random_rows_step(name)
        # training speed against a reference, and whole runs per hour
        self.throughput_step = self.speed_step("throughput", measure.throughput)
        self.runs_per_hour_step = self.speed_step("runs_per_hour", measure.runs_per_hour)
        # the Winograd probe: its own sentences, split once per version (by this file's sentence code alone: the
        # runs' training code does not re-split), and the probed model's circuit by intervention
        self.winograd = f"{self.results}/measure/winograd"
        self.split_code = code_hash("src/attnlab/winograd.py", root=self.root)
        self.probed = PROBED.name

    def sized_memory_mb(self, wildcards) -> int:
        """The budget the measurement keeps to (half the machine's memory by default), as Snakemake's mem_mb
        (asked of a job that runs)."""
        module = importlib.import_module(f"attnlab.measure.{wildcards.name}")
        return int(module.memory_budget(self.sized[wildcards.name], "cpu")[0] / module.MB)

    @functools.lru_cache(maxsize=None)
    def sized_step(self, name: str, path: str, threads: int | None = None) -> Step:
        """One path of a sized measurement at all cores, or (a hypothesis) at `threads`; a settings edit reruns
        it, the budget read from the machine does not."""
        folder, code = f"{self.results}/measure/{name}", self.measurement_code(f"attnlab.measure.{name}")
        if threads is None:
            return self.step(f"measure_{name}/{path}", digest(code, self.sized[name], path), [f"{folder}/{path}.json"])
        return self.step(f"measure_{name}/hypotheses/{path}_threads{threads}",
                         digest(code, self.sized[name], path, threads),
                         [f"{folder}/hypotheses/{path}_threads{threads}.json"])

    def analytic_step(self, name: str) -> Step:
        return self.step(f"measure_analytic/{name}", digest(self.analytic_code, name),
                         [f"{self.results}/measure/{name}/result.json"])

    def random_rows_step(self, measure: str) -> Step:
        folder = f"{self.results}/measure/{measure}"
        return self.step(f"measure_{measure}", digest(self.random_rows_code, measure),
                         [f"{folder}/{RANDOM_ROWS[measure]}.csv", f"{folder}/meta.json"])

    def speed_step(self, name: str, settings) -> Step:
        """A speed measurement: its key covers its code, its settings and the config hashes of the experiments
        it times (an edit of one, its shapes, its batch, reruns it)."""
        timed = [self.composed(f"throughput {e} {self.profile}",
                               lambda: config_hash(compose([f"experiment={e}", f"profile={self.profile}"])))
                 for e in settings.experiments]
        key = digest(self.measurement_code(f"attnlab.measure.{name}"), OmegaConf.to_container(settings), timed)
        return self.step(f"measure_{name}", key, [f"{self.results}/measure/{name}/{name}.json"])

    # --- the Winograd probe: short dedicated training runs scored at one position ---
    @functools.lru_cache(maxsize=None)
    def split_step(self, version: str) -> Step:
        language = self.composed(f"language {version}",
                                 lambda: importlib.import_module(WINOGRAD_MODULE).language_hash(version))
        return self.step(f"winograd_split/{version}", digest(language, self.split_code),
                         [f"{self.winograd}/{version}/{name}" for name in SPLIT_FILES.values()])

    def winograd_seeds(self, version: str, model: str, variant: bool = False) -> list[int]:
        """The held-out sets are small, so one seed is noisy: the profile's Winograd count, the pipeline's (a
        variant's seeds=) if larger, or more where seeds_per_run names the run (winograd/<version>_<model>)."""
        return list(range(max(self.profile_config.winograd_seeds,
                              len(self.seeds_of(f"winograd/{version}_{model}", variant)))))

    @functools.lru_cache(maxsize=None)
    def winograd_config(self, run: str, overrides: tuple):
        """A Winograd run's config, composed once for all its seeds (attnlab.layout.seed_key)."""
        return importlib.import_module(WINOGRAD_MODULE).compose_run(run, [f"profile={self.profile}", *overrides])

    @functools.lru_cache(maxsize=None)
    def winograd_step(self, version: str, model: str, seed: int, variant: bool = False) -> Step:
        """One Winograd run: its key is the hash of its composed config (a variant's overrides included)."""
        run = f"{version}_{model}"
        overrides = self.overrides_of(f"winograd/{run}") if variant else []
        try:
            key = self.composed(digest("winograd", run, self.profile, seed, overrides),
                                lambda: seed_key(self.winograd_config(run, tuple(overrides)), seed))
        except ConfigError as e:
            refuse(f"winograd run {run}: {e}")
        home = self.results if not overrides and seed in self.winograd_seeds(version, model) else self.variant_dir
        folder = run_folder(home, f"winograd/{run}", seed)
        return self.step(run_job(f"winograd/{run}", seed), key, [f"{folder}/{n}" for n in WINOGRAD_FILES],
                         {"split": self.split_step(version).outputs[:1]}, home=home)

    def winograd_step_at(self, w) -> Step:
        """The run a winograd_train job's output path names; a published folder never gets the variant's overrides."""
        step = self.winograd_step(w.version, w.model, int(w.seed), variant=w.home != self.results)
        if step.home != w.home:
            refuse(f"{run_folder(w.home, f'winograd/{w.version}_{w.model}', w.seed)}: this run's folder is under {step.home}")
        return step

    def winograd_runs(self, version: str, model: str, name: str = "metrics.json", variant: bool = False) -> list[str]:
        return [self.winograd_step(version, model, seed, variant).outputs[WINOGRAD_FILES.index(name)]
                for seed in self.winograd_seeds(version, model, variant)]

    def winograd_published_runs(self, version: str, model: str) -> list[str]:
        """metrics.json of each published seed of a Winograd run (winograd_published_seeds)."""
        return [self.winograd_step(version, model, seed).outputs[0]
                for seed in self.winograd_published_seeds(version, model)]

    def winograd_published_seeds(self, version: str, model: str) -> list[int]:
        """The seeds the pipeline trains of a Winograd run: its family table's, or (a run only a contradiction's
        hypothesis trains) the hypothesis's, as the contradictions ask for them. No other seed gets a job."""
        from attnlab.families.contradictions import hypothesis_of
        from attnlab.families.winograd import VERSIONS

        if any(m.name == model for m in VERSIONS.get(version, ())):
            return self.winograd_seeds(version, model)
        run = f"winograd/{version}_{model}"
        h = hypothesis_of(run)
        return self.seeds_of(run, base=h.seeds_under(self.profile_config.winograd_seeds)) if h else []

    def winograd_seed_groups(self) -> list[tuple[str, str, list[int]]]:
        """(version, model, seeds) of each group of a Winograd run's published seeds without results."""
        return [(v, m, group) for v, _, m in (run.partition("_") for run in self.winograd_names)
                for group in self.missing_groups(self.winograd_published_seeds(v, m),
                                                 lambda seed, v=v, m=m: self.winograd_step(v, m, seed))]

    def interventions(self) -> list[str]:
        """interventions.json of each published seed the profile measures (measure.winograd_interventions.seeds)."""
        return [self.interventions_step(seed).outputs[0]
                for seed in range(self.profile_config.measure.winograd_interventions.seeds)]

    def interventions_folder(self, seed) -> str:
        return run_folder(self.results, f"winograd/role_{self.probed}", seed)

    @functools.lru_cache(maxsize=None)
    def interventions_step(self, seed: int) -> Step:
        """The two-block model's circuit, by intervention on held-out pairs: beside the run's outputs, under a
        key of its own (the run's key and the measurement's code); nothing published retrains."""
        run = self.winograd_step("role", self.probed, seed)
        return self.step(f"measure_winograd_interventions/role/{self.probed}/seed{seed}",
                         digest(self.measurement_code("attnlab.measure.winograd_interventions"), run.key),
                         [f"{self.interventions_folder(seed)}/{INTERVENTIONS}"],
                         {"run": run.outputs, "split": self.split_step("role").outputs[:1]})

    def head_readings(self) -> list[str]:
        """head_readings.json of each run and seed the profile reads its head of (measure.head_readings)."""
        return [self.head_readings_step(run, seed).outputs[0]
                for run, seeds in self.profile_config.measure.head_readings.items() for seed in seeds]

    @functools.lru_cache(maxsize=None)
    def head_readings_step(self, run: str, seed: int) -> Step:
        """A published run's head read on its weights: beside the run's outputs, under the run's key and the
        measurement's code; nothing published retrains."""
        trained = self.train_step(run, seed)
        return self.step(f"measure_head_readings/{run}/seed{seed}",
                         digest(self.measurement_code("attnlab.measure.head_readings"), trained.key),
                         [f"{run_folder(self.results, run, seed)}/{HEAD_READINGS}"], {"run": trained.outputs})

    # --- the contradictions: for every CONTRADICTED claim, the settings tried that the chapter did not state.
    # Their runs are ordinary runs of their families (configs/experiment/..., configs/winograd/...) or a sized
    # measurement's path on fewer threads (measure/<name>_threads<n>). A hypothesis takes its family table's inputs
    # and replaces the ones it changes. ---
    def hypothesis_files(self) -> tuple[str, ...]:
        """The claims file, read for its rules, the hypotheses file and the hypotheses' configs, read for whether
        they only change training (paired with the published seeds): their text is part of the contradictions' key."""
        from attnlab.families.contradictions import trained

        return (CLAIMS_FILE, "configs/hypotheses.yaml",
                *sorted(str(p.relative_to(self.root)) for h in trained() for run in h.runs.values()
                        for p in [self.root / "configs" / (f"{run}.yaml" if run.startswith("winograd/")
                                                           else f"experiment/{run}.yaml")] if p.is_file()))

    def hypothesis_runs(self, h, run: str, published: list[str]) -> list[str]:
        """The files a hypothesis's run gives its table, one per seed it trains."""
        timed = re.fullmatch(r"measure/(\w+)_threads(\d+)", run)  # a sized measurement's path on fewer threads
        if timed:
            return self.sized_step(timed[1], Path(published[0]).stem, int(timed[2])).outputs
        if run.startswith("winograd/"):
            version, _, model = run.removeprefix("winograd/").partition("_")
            index = WINOGRAD_FILES.index(Path(published[0]).name)  # what the table reads: metrics or the probe
            return [self.winograd_step(version, model, seed).outputs[index]
                    for seed in self.seeds_of(run, base=h.seeds_under(self.profile_config.winograd_seeds))]
        return [self.train_step(run, seed).outputs[0]
                for seed in self.seeds_of(run, base=h.seeds_under(self.profile_config.seeds))]

    def contradiction_inputs(self, variant: bool, also: tuple[str, ...]) -> dict:
        """The claims, the profile and its seed plans, the published tables the claims are read on and the tables
        `also` names, and each trained hypothesis's family inputs with its own runs in place (a variant reads the
        same: the hypotheses are judged against the published runs). A hypothesis not run reads nothing."""
        from attnlab.families.contradictions import trained

        found = {"claims": [CLAIMS_FILE], "profile": [f"configs/profile/{self.profile}.yaml"],
                 "pipeline": ["configs/pipeline.yaml"],
                 "tables": sorted({f"{self.results}/tables/{t}.csv" for t in (*(h.table for h in trained()), *also)})}
        for h in trained():
            if h.read:
                continue
            for name, paths in self.tables[h.table]["inputs"].items():
                found[f"{h.id}:{name}"] = self.hypothesis_runs(h, h.runs[name], paths) if name in h.runs else paths
        return found

    # --- the tables that read every run: the pipeline's cost, the cross-device pairs ---
    def runs_by_family(self, variant: bool) -> dict[str, list[str]]:
        """metrics.json of every run the tables read, by family (Winograd's as `winograd`)."""
        found = {}
        for spec in self.tables.values():
            for paths in (spec["variant_inputs"] if variant and spec["variant_inputs"] else spec["inputs"]).values():
                for p in paths:
                    step = self.registry.by_output.get(p)
                    kind, _, name = step.job.partition("/") if step else ("", "", "")
                    if kind in ("train", "winograd_train") and p == step.outputs[0]:
                        found.setdefault("winograd" if kind == "winograd_train" else name.split("/")[0], set()).add(p)
        return {family: sorted(paths) for family, paths in sorted(found.items())}

    # --- each table's and figure's job: its key is the builder's code (its family module and what it
    # imports) and the keys of what it reads; a variant's, where the variant changes its inputs ---
    def builder_code(self, builder, files=()) -> str:
        return self.composed.module_code("attnlab.families.__main__", builder.__module__, files=files)

    def has_variant(self, table_id: str) -> bool:
        return bool(self.tables[table_id]["variant_inputs"])

    def table_csv(self, table_id: str, variant: bool = False) -> str:
        """The table a reader of this run reads: the variant's where the variant changes it."""
        return self.table_step(table_id, variant and self.has_variant(table_id)).outputs[0]

    def figure_png(self, table_id: str, variant: bool = False) -> str:
        return self.figure_step(table_id, variant and self.has_variant(table_id)).outputs[0]

    @functools.lru_cache(maxsize=None)
    def table_step(self, table_id: str, variant: bool = False) -> Step:
        spec = self.tables[table_id]
        # the reader's view puts the chapter's numbers beside ours: the claims file is part of every table's key
        code = self.builder_code(self.table_builders[table_id], files=tuple(dict.fromkeys((*spec["code_files"], CLAIMS_FILE))))
        if not variant:
            return self.step(f"table/{table_id}", digest(code, table_id, spec["inputs"]),
                             self.table_files(self.results, table_id), spec["inputs"], derived=True)
        inputs = {**spec["variant_inputs"], "published": [self.table_csv(table_id)]}
        return self.step(f"table/{table_id}", digest(code, table_id, inputs, self.variant_label),
                         self.table_files(self.variant_dir, table_id), inputs, derived=True, home=self.variant_dir)

    @staticmethod
    def table_files(home: str, table_id: str) -> list[str]:
        """A table's CSV, its reader's Markdown and its provenance view (attnlab.views)."""
        return [f"{home}/tables/{table_id}.csv", f"{home}/tables/{table_id}.md", f"{home}/tables/{table_id}.provenance.md"]

    @functools.lru_cache(maxsize=None)
    def figure_step(self, table_id: str, variant: bool = False) -> Step:
        spec = self.tables[table_id]
        # the chapter's values are drawn too: the ledger is an input, its text part of the key
        inputs = {"table": [self.table_csv(table_id, variant)], "claims": [CLAIMS_FILE],
                  **(spec["variant_inputs"] if variant else spec["inputs"]), **spec["figure_inputs"]}
        code = self.builder_code(self.figure_builders[table_id], files=(CLAIMS_FILE,))
        if not variant:
            return self.step(f"figure/{table_id}", digest(code, table_id, inputs),
                             [f"{self.figures}/{table_id}.png", f"{self.figures}/{table_id}.svg"], inputs,  # SVG for print
                             derived=True)
        inputs["published"] = self.figure_step(table_id).outputs[:1]  # drawn beside the variant's
        return self.step(f"figure/{table_id}", digest(code, table_id, inputs, self.variant_label),
                         [f"{self.variant_dir}/figures/{table_id}.png", f"{self.variant_dir}/figures/{table_id}.svg"],
                         inputs, derived=True, home=self.variant_dir)

    def builds(self) -> list[tuple[str, bool]]:
        """(table id, variant) of every table job: a variant's beside the published one where its inputs differ."""
        return [(t, v) for t, spec in self.tables.items() for v in ((False, True) if spec["variant_inputs"] else (False,))]

    def variant_args(self, step: Step) -> str:
        """A variant's table, figure or ledger also reads the published one, and names the variant."""
        return f"--published {step.inputs['published'][0]} --label {shlex.quote(self.variant_label)}" \
            if "published" in step.inputs else ""

    def builder_args(self, output: str) -> str:
        """The arguments of the table or figure job that writes `output`: the variant's, and what it reads."""
        step = self.registry.writer(output)
        return f"{self.variant_args(step)} {named_args({k: v for k, v in step.inputs.items() if k != 'published'})}"

    # --- the sinks: the ledger, its plot, the captions, the reader's report, the README's Results ---
    @functools.lru_cache(maxsize=None)
    def sink_steps(self, variant: bool) -> list[Step]:
        """The ledger, its plot, the captions and the report, of the published results or of the variant (which
        reads its own tables and figures where it has them, the published ones elsewhere, and names itself)."""
        home = self.variant_dir if variant else self.results
        figures = f"{self.variant_dir}/figures" if variant else self.figures
        tables = [self.table_csv(t, variant) for t in sorted(self.tables)]
        claims = [f"{home}/claims.csv", f"{home}/claims.md"]
        own_key = digest(self.claims_code, tables)
        inputs = {"tables": tables}
        if variant:  # the published ledger: which verdicts the variant changes
            own_key, inputs = digest(own_key, self.variant_label), {**inputs, "published": [f"{self.results}/claims.csv"]}
        ledger = self.step("claims", own_key, claims, inputs, derived=True, home=home)
        # the plot: the ratios (claims) and the panels of the claims that do not come back (claims_missed)
        plot = self.step("claims_plot", self.composed.module_code("attnlab.claims.plot"),
                         [f"{figures}/claims.png", f"{figures}/claims.svg", f"{figures}/claims_missed.png",
                          f"{figures}/claims_missed.svg"], {"ledger": claims[:1]}, derived=True, home=home)
        # the captions' templates are files of the repository, not outputs: their text is part of the key,
        # and the report's own text: the choices the chapter does not state, what was easy and what was hard
        templates = [f"workflow/report/{t}.rst" for t in [*sorted(self.tables), "claims", "choices", "easy_hard"]]
        # (and configs/claims.yaml, whose chapter_tables choices.rst lists)
        captions = self.step("captions", digest(self.composed.module_code("attnlab.captions", files=(CLAIMS_FILE,)),
                                                [(self.root / p).read_text(encoding="utf-8") for p in templates]),
                             [f"{home}/captions/{Path(p).name}" for p in templates],
                             {"ledger": claims[:1], "table": tables}, derived=True, home=home)
        report_inputs = {"ledger": claims[:1], "claims_figure": plot.outputs[::2], "table": tables,
                         "figure": [self.figure_png(t, variant) for t in sorted(self.tables) if self.tables[t]["figure"]],
                         "caption": captions.outputs, **self.measurement_records(variant)}
        # the report's sections follow the tables' declared places (attnlab.tables.chapter_order): part of its key
        # the repository's style sheet beside the module (as attnlab.config.source_files reads the repository's
        # files, not the installed package's)
        style = f"src/attnlab/{STYLE_SHEET.name}"
        page = self.step("report", digest(self.composed.module_code("attnlab.report", files=(style,)),
                                          self.trained_tables(), chapter_order()),
                         [f"{home}/report.html"], report_inputs, derived=True, home=home)
        return [ledger, plot, captions, page]

    @functools.cached_property
    def claims_code(self) -> str:
        # the ledger reads the seed plans beside the counts (configs/pipeline.yaml: each row's looks) as well, and a
        # shortened profile's ledger its frozen reference (attnlab.claims.reference), where it has one
        reference = reference_file(self.profile)
        return self.composed.module_code("attnlab.claims.__main__", files=(
            CLAIMS_FILE, "configs/pipeline.yaml", *([reference] if (self.root / reference).is_file() else [])))

    def measurement_records(self, variant: bool) -> dict[str, list[str]]:
        """record_<table>: the records a measured table is built from (the files its measurements wrote, where
        measurements write all it reads), which the report's provenance dates and names the commit of
        (attnlab.report.made). The Winograd interventions are left out: their tables name their runs' commits."""
        by_output, found = self.registry.by_output, {}
        for table_id, spec in sorted(self.tables.items()):
            inputs = (spec["variant_inputs"] if variant else None) or spec["inputs"]
            made = {p: by_output[p].job.split("/")[0] for paths in inputs.values() for p in paths if p in by_output}
            if made and all(job.startswith("measure_") and job != "measure_winograd_interventions" for job in made.values()):
                found[f"record_{table_id}"] = sorted(made)
        return found

    def trained_tables(self) -> list[str]:
        """The tables that read training runs (their claims are the trained ones, where the ledger does not say)."""
        by_output = self.registry.by_output
        return sorted(t for t, spec in self.tables.items()
                      if any(by_output[p].job.split("/")[0] in ("train", "winograd_train")
                             for paths in spec["inputs"].values() for p in paths if p in by_output))

    def readme_links(self) -> dict[str, list[str]]:
        """What the README's Results section links to: every table's Markdown and figure, the report, the cost table and
        the cross-device twins (it says what each gives)."""
        return {"table": [f"{self.results}/tables/{t}.md" for t in sorted(self.tables)],
                "figure": [self.figure_png(t) for t in sorted(self.tables) if self.tables[t]["figure"]],
                "report": [f"{self.results}/report.html"], "time": [f"{self.results}/tables/pipeline_time.csv"],
                "devices": [f"{self.results}/tables/cross_device.csv"]}

    @functools.cached_property
    def readme_step(self) -> Step:
        """The README's Results section: the full profile's only."""
        links = self.readme_links()
        return self.step("readme_results", digest(self.claims_code, links), [f"{self.results}/readme_results.md"],
                         {"ledger": self.sink_steps(False)[0].outputs[:1], **links}, derived=True)

    def targets(self, home: str) -> list[str]:
        """Every output and key file of the jobs kept in `home`; the token cache is the exception: not committed,
        it is rebuilt by the jobs that read it, when they run."""
        return sorted({path for step in self.registry.jobs.values() if step.home == home
                       for path in [*step.outputs, step.key_file] if not path.startswith(f"{self.data}/")})

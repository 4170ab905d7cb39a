# Shared by every rule: every job of this call with its key, and the table registry (attnlab.jobs; what reruns
# a job: attnlab.steps). What needs Snakemake's `workflow` object stays here: the interpreter the rules run and
# how a costly job reads its inputs.
# --lint 'mixed rules and functions': the shared functions live here, with rule key, which every job reads.
import shlex
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from attnlab.jobs import CLAIMS_FILE, Jobs, chapter_order, named_args
from attnlab.options import explain
from attnlab.steps import refuse, why_jobs_run

# Every rule names the project's environment (conda: ENVIRONMENT); under --use-conda Snakemake builds it
# and each job runs its `python`, otherwise the interpreter running Snakemake (the project's .venv).
ENVIRONMENT = "../../environment.yml"  # relative to workflow/rules/, where every rule lives
PYTHON = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable


# A clone gives every file the time of its checkout, in path order, so file times say nothing about what
# was built from what. A costly job's inputs are therefore ancient() to Snakemake: their times never rerun
# it; a missing output or input, a new key (a missing key file) and a forced upstream job still do. Forced
# (-R, -F, --forcerun) is read here because Snakemake does not pass a forced job on through an ancient input.
# Called from input functions: Snakemake knows what is forced once the workflow is read.
def read_by_key(path: str):
    forced = workflow.dag_settings.forcerun
    return path if workflow.dag_settings.forceall or J.registry.producer(path) in forced or path in forced else ancient(path)


try:
    validate(config, schema="../schemas/config.schema.yaml")  # relative to this file
except WorkflowError as e:
    refuse(explain(str(e)))
J = Jobs(config, read_by_key)
PROFILE, RESULTS, FIGURES, TABLES = J.profile, J.results, J.figures, J.tables
TRAIN_THREADS = config.get("train_threads", 1)


def logged(cmd: str) -> str:
    """A rule's shell: the command, its output in {log}, and its last line on the console if it fails.
    {PYTHON} (the interpreter running Snakemake: the project's environment) and {PROFILE} are filled
    in here, when the workflow is read; Snakemake fills in the rest."""
    cmd = cmd.replace("{PYTHON}", shlex.quote(PYTHON)).replace("{PROFILE}", PROFILE)
    return f"({cmd}) > {{log}} 2>&1 || {{{{ echo \"failed: $(tail -n 1 {{log}})\" >&2; exit 1; }}}}"


def writer_inputs(output: str):
    """A rule's input: what the job that writes `output` (its wildcards filled in) reads, and its key file."""
    return lambda w: J.registry.writer(output.format(**dict(w.items()))).rule_inputs()


# What Snakemake's --report shows under an output: the caption rule captions rendered (its table's, or the
# ledger's), which output.rst includes from params.caption (relative to workflow/rules/, as report() reads it)
OUTPUT_CAPTION = "../report/output.rst"


def caption_of(w, output) -> str:
    name = Path(output[0]).stem
    return f"{J.registry.writer(output[0]).home}/captions/{name if name in TABLES else 'claims'}.rst"


rule key:
    output: "{home}/stamps/{job}/{key}.key"
    wildcard_constraints:
        home=J.home_pattern,
        job=r"[a-z_]+(/[a-z0-9_/]+)?",
        key=r"[0-9a-f]+",
    params:
        current=lambda w: J.registry.current_key(w.home, w.job, w.key),
    resources: mem_mb=100, runtime=1
    log: "{home}/logs/key/{job}/{key}.log"
    conda: ENVIRONMENT
    shell:
        # the job's earlier keys go: one key file per job, the one its outputs were made under
        "(rm -f $(dirname {output})/*.key && echo {params.current} > {output}) > {log} 2>&1"

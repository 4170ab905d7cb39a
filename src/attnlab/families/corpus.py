"""Table `corpus`: the data every model reads."""

import json

import pandas as pd

from attnlab.tables import table


@table("corpus", place=10, reads={"meta": "tokens.json"})
def corpus(inputs) -> pd.DataFrame:
    meta = json.loads(open(inputs["meta"][0]).read())
    rows = [
        ("characters", meta["characters"]),
        ("tokens", meta["tokens"]),
        ("characters per token", round(meta["characters"] / meta["tokens"], 4)),
        ("vocabulary", meta["vocab_size"]),
        ("train tokens", meta["train_tokens"]),
        ("held-out tokens", meta["held_out_tokens"]),
        ("train fraction", meta["train_fraction"]),
    ]
    return pd.DataFrame({"quantity": [q for q, _ in rows], "value": pd.Series([v for _, v in rows], dtype=object)})

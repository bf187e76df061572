#!/usr/bin/env python3
"""Appends a later training stage's train_log.jsonl to a bundled model's log, so one file tells the whole history.

A stage started with `train --init-from` counts its steps and wall time from 0; this shifts them by the last step and
elapsed_s already in the model's log, drops the stage's step-0 evaluation (it repeats the last one) and tags its rows
with "stage" (the previous rows' stage + 1) and "stage_name", which `transformer-studio eval --loss-curve` draws as a
labelled line where the stage began.

  /usr/bin/python3 assets/models/append_train_log.py assets/models/austen-gpt/train_log.jsonl runs/X/train_log.jsonl \
      "stage 2"
"""
import json
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: append_train_log.py MODEL_LOG.jsonl STAGE_LOG.jsonl STAGE_NAME")
    model_log, stage_log, stage_name = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [json.loads(l) for l in open(model_log) if l.strip()]
    new_rows = [json.loads(l) for l in open(stage_log) if l.strip()]
    if not rows or not new_rows:
        sys.exit("append_train_log: empty log (%s)" % (model_log if not rows else stage_log))
    step0, t0 = rows[-1]["step"], rows[-1]["elapsed_s"]
    stage = rows[-1].get("stage", 1) + 1
    for r in new_rows:
        if r["step"] == 0:
            continue
        r["step"] += step0
        r["elapsed_s"] += t0
        r["stage"], r["stage_name"] = stage, stage_name
        rows.append(r)
    with open(model_log, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print("%s: %d rows, last step %d" % (model_log, len(rows), rows[-1]["step"]))


if __name__ == "__main__":
    main()

"""What the model-card writers share: reading a model folder's train_log.jsonl and its held-out-loss table."""
import json
import os


def read_train_log(model_dir):
    """-> (every record, the records with a held-out loss); the log is train_log.jsonl in `model_dir`."""
    with open(os.path.join(model_dir, "train_log.jsonl")) as f:
        log = [json.loads(line) for line in f if line.strip()]
    if not log:
        raise SystemExit(f"{model_dir}/train_log.jsonl is empty")
    return log, [r for r in log if r.get("val_loss") is not None]


def loss_table(val, with_stage):
    """Markdown rows: step, (stage,) train loss, held-out loss, in nats, one per evaluated step."""
    head = "| step | stage | train loss (nats) | held-out loss (nats) |" if with_stage else \
        "| step | train loss (nats) | held-out loss (nats) |"
    lines = [head, "|---:|" + "---:|" * (3 if with_stage else 2)]
    for r in val:
        tl = r.get("train_loss")
        cells = [str(r["step"])] + ([str(r.get("stage", 1))] if with_stage else []) + \
            ["%.3f" % tl if tl is not None else "-", "%.3f" % r["val_loss"]]
        lines.append("| " + " | ".join(cells) + " |")
    return lines

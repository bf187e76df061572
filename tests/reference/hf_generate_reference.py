# Greedy and beam search of Hugging Face's own generate() on tiny encoder–decoder checkpoints, written to
# tests/golden/hf_generate.json for tests/core/hf_generate_test.cpp, which runs ts::translate_ids on the same folders
# and sources and expects the same ids. The checkpoints (tests/golden/hf_gen_bart, hf_gen_t5, hf_gen_t5_v11,
# hf_gen_marian) take the configs of the logits fixtures (hf_bart, ...) with fresh weights from a fixed seed (matrices
# normal(0, 0.25), norm gains 1 + normal(0, 0.1), biases normal(0, 0.02); BART's
# final_logits_bias +1.3 at the end token, so that beam search also meets finished hypotheses): the logits fixtures' weights make every step pick the same token, which tests nothing about search;
# these give varied, peaked distributions whose winners are not decided by rounding.
#
# generate() runs with the settings translate_ids implements, overriding what the fixtures' configs ask for beyond
# them: num_beams 1 (greedy) and 4, length_penalty 1.0, early_stopping False, no no_repeat_ngram_size, no forced
# BOS/EOS, min_length 0, max_new_tokens 10, and suppress_tokens = [pad] (translate_ids never produces padding; both
# take the log-softmax over the whole vocabulary and skip the banned id, without renormalising). float64, eager.
#
#     /usr/bin/python3 tests/reference/hf_generate_reference.py --transformers /tmp/hf/src --hub /tmp/hfhub/src
# (transformers v4.40–v4.42 and huggingface_hub source trees, as for check_hf_transformers.py)
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_hf_transformers as chk  # noqa: E402

FIXTURES = ["hf_bart", "hf_t5", "hf_t5_v11", "hf_marian"]
INIT_STD = 0.25
MAX_NEW = 10


def sources(cfg):
    """Five encoder inputs of different lengths: ids drawn by a fixed LCG from the non-special range, ending with
    EOS (and starting with BOS for BART), as the app's make_source_ids builds them."""
    V, eos = cfg["vocab_size"], cfg["eos_token_id"]
    special = {cfg.get("pad_token_id"), eos, cfg.get("bos_token_id"), cfg.get("decoder_start_token_id")}
    out, x = [], 12345
    for n in (3, 5, 8, 11, 16):
        ids = []
        while len(ids) < n:
            x = (x * 1103515245 + 12345) % (1 << 31)
            v = 4 + x % (V - 8)
            if v not in special:
                ids.append(v)
        if cfg["model_type"] == "bart":
            ids = [cfg["bos_token_id"]] + ids
        out.append(ids + [eos])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transformers", required=True)
    ap.add_argument("--hub")
    ap.add_argument("--out", default=os.path.join(chk.GOLDEN, "hf_generate.json"))
    a = ap.parse_args()
    transformers = chk.import_transformers(a.transformers, a.hub)
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "max_new_tokens": MAX_NEW,
              "length_penalty": 1.0, "cases": []}
    for name in FIXTURES:
        folder = os.path.join(chk.GOLDEN, name)
        with open(os.path.join(folder, "config.json")) as f:
            cfg = json.load(f)
        config = transformers.CONFIG_MAPPING[cfg["model_type"]].from_json_file(os.path.join(folder, "config.json"))
        model = transformers.AutoModelForSeq2SeqLM.from_config(config, attn_implementation="eager",
                                                               torch_dtype=torch.float64)
        original = chk.read_weights(folder)
        torch.manual_seed(FIXTURES.index(name) + 1)
        with torch.no_grad():
            for pname, p in model.named_parameters():
                if cfg["model_type"] == "marian" and "embed_positions" in pname:
                    continue                          # Marian's fixed sinusoidal table, not a learned weight
                if p.dim() >= 2:
                    p.normal_(0.0, INIT_STD)          # projections, embeddings, relative-position tables
                elif "norm" in pname.lower() and pname.endswith("weight"):
                    p.copy_(1.0 + 0.1 * torch.randn_like(p))
                else:
                    p.normal_(0.0, 0.02)             # biases, final_logits_bias
            if hasattr(model, "final_logits_bias"):  # BART: make the end token likely, so hypotheses also finish
                model.final_logits_bias[0, cfg["eos_token_id"]] = 1.3
        model.tie_weights()
        model.eval()
        # The new folder: the fixture's files, its tensor names (tied copies once, as it stores them) with the new
        # values; a tensor the model class does not have (T5's cross-attention relative bias) keeps its values.
        state = model.state_dict()
        out_dir = os.path.join(chk.GOLDEN, name.replace("hf_", "hf_gen_"))
        os.makedirs(out_dir, exist_ok=True)
        for extra in ("config.json", "generation_config.json"):
            if os.path.exists(os.path.join(folder, extra)):
                with open(os.path.join(folder, extra)) as src_f, open(os.path.join(out_dir, extra), "w") as dst_f:
                    dst_f.write(src_f.read())
        chk.st_io.save(os.path.join(out_dir, "model.safetensors"),
                       {k: (state[k] if k in state else v).to(torch.float32).contiguous() for k, v in original.items()})
        # HF runs on exactly the float32 values the folder holds, widened to float64.
        with torch.no_grad():
            for k, v in state.items():
                if k in original:
                    v.copy_(state[k].to(torch.float32).to(torch.float64))
        pad = cfg["pad_token_id"]
        for src in sources(cfg):
            ids = torch.tensor([src])
            for beams in (1, 4):
                with torch.no_grad():
                    g = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=MAX_NEW,
                                       min_length=0, num_beams=beams, do_sample=False, length_penalty=1.0,
                                       early_stopping=False, no_repeat_ngram_size=0, forced_bos_token_id=None,
                                       forced_eos_token_id=None, suppress_tokens=[pad], bad_words_ids=None,
                                       begin_suppress_tokens=None, num_return_sequences=1,
                                       output_scores=True, return_dict_in_generate=True)
                seq = g.sequences[0].tolist()
                assert seq[0] == cfg["decoder_start_token_id"], seq
                out = seq[1:]
                finished = cfg["eos_token_id"] in out
                if finished:
                    out = out[:out.index(cfg["eos_token_id"])]
                case = {"fixture": name, "src": src, "beam": beams, "ids": out, "finished": finished}
                if beams > 1:
                    case["score"] = float(g.sequences_scores[0])
                result["cases"].append(case)
                print(name, beams, src, "->", out, "finished" if finished else "cut", case.get("score", ""))
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print("wrote", a.out)


if __name__ == "__main__":
    main()

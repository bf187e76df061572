# Cross-check of the tiny Hugging Face checkpoint fixtures (tests/golden/hf_*, written by make_hf_fixtures.py with a
# hand-written float64 forward) against Hugging Face transformers' own modelling code: for each fixture folder the
# config is built by transformers' config class from config.json, the model by AutoModelForCausalLM.from_config
# (eager attention, float64 by default), the weights are read with st_io (model.safetensors or the sharded
# model.safetensors.index.json) and given to load_state_dict, then
#   - logits on expected["ids"] vs expected["logits"] (max abs diff),
#   - output_attentions=True per layer vs expected["dec.{i}.attn.probs"] (max abs diff, and the number of keys the
#     last query sees on each side, which shows a sliding window that one side applies and the other does not),
#   - greedy generate(max_new_tokens=5, do_sample=False) ids, printed only.
# Not part of CI, and nothing is written: transformers is not a dependency of this project.
#
# Run (Debian's torch 1.13 with python3-numpy, -packaging, -filelock, -regex, -requests, -yaml, -tqdm; transformers
# v4.40-v4.42 and huggingface_hub v0.23.x source trees, e.g. from `git archive <tag> src/transformers`):
#     /usr/bin/python3 tests/reference/check_hf_transformers.py --transformers /tmp/hf/src --hub /tmp/hfhub/src \
#         [--dtype float64|float32] [FIXTURE...]      (default: hf_mistral_window hf_qwen2_window hf_mistral hf_qwen2
#                                                      hf_llama; exit status 1 if any logits/probs diff is over --tol)
# --transformers / --hub: a directory holding the `transformers` / `huggingface_hub` package (or its repo root with
# src/). Neither has installed metadata there, and Debian has neither `safetensors` nor `tokenizers` (Rust extensions:
# transformers imports safetensors at load time for file I/O, which this script does itself, and v4.42.0-v4.42.3
# import tokenizers at load time through the GGUF integration), so the script puts in a temporary directory a
# distribution record for huggingface-hub (with the version its __init__.py states) and, for each of the two that is
# not importable, a stub package whose functions raise if called. The tokenizers stub gets no distribution record,
# so transformers still reports tokenizers as unavailable.
#
# Precision: with --dtype float64 transformers still computes RMSNorm, RoPE's cos/sin and the attention softmax in
# float32 (as it does for every dtype), so diffs around 1e-6 are rounding, not a disagreement.
import argparse
import atexit
import json
import os
import re
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
DEFAULT_FIXTURES = ["hf_mistral_window", "hf_qwen2_window", "hf_mistral", "hf_qwen2", "hf_llama"]
# Fixtures whose semantics postdate the transformers releases that run on torch 1.13: v4.42's eager Qwen2 attention
# applies no sliding window at all (only its FlashAttention-2 path does, and to the layers below max_window_layers);
# current transformers slides the layers from max_window_layers on (Qwen2Config.layer_types), which the fixture and
# the C++ loader follow. A difference there is reported, not failed.
NEWER_SEMANTICS = {"hf_qwen2_window"}


# --- making a source tree of transformers importable ------------------------------------------------------------
def package_root(path, package):
    """The directory to put on sys.path so that `import package` finds path's tree (accepts the repo root too)."""
    path = os.path.abspath(path)
    for cand in (path, os.path.join(path, "src")):
        if os.path.isfile(os.path.join(cand, package, "__init__.py")):
            return cand
    if os.path.basename(path) == package and os.path.isfile(os.path.join(path, "__init__.py")):
        return os.path.dirname(path)
    sys.exit(f"check_hf_transformers: no {package}/__init__.py under {path}")


def declared_version(root, package):
    with open(os.path.join(root, package, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
    if not m:
        sys.exit(f"check_hf_transformers: no __version__ in {root}/{package}/__init__.py")
    return m.group(1)


def write_dist_record(shim, dist_name, version):
    """A minimal .dist-info so importlib.metadata.version(dist_name) answers (transformers checks it on import)."""
    d = os.path.join(shim, f"{dist_name.replace('-', '_')}-{version}.dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n")


STUB_SAFETENSORS = '''"""Stand-in for the safetensors package: check_hf_transformers.py reads the files itself."""
__version__ = "0.4.3"


def _unavailable(*args, **kwargs):
    raise NotImplementedError("safetensors stub (check_hf_transformers.py): file I/O is not available here")


safe_open = _unavailable
'''
STUB_SAFETENSORS_TORCH = '''from . import _unavailable

load_file = save_file = load = save = save_model = load_model = _unavailable


def storage_ptr(tensor):
    return tensor.storage().data_ptr()


def storage_size(tensor):
    return tensor.storage().nbytes()
'''


STUB_TOKENIZERS = '''"""Stand-in for tokenizers (imported, never used, by transformers' GGUF integration)."""


class _Unavailable:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("tokenizers stub (check_hf_transformers.py): tokenizers is not available here")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Unavailable
'''
STUB_TOKENIZERS_MODELS = '''from . import _Unavailable


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Unavailable
'''


def write_stub(shim, package, files):
    os.makedirs(os.path.join(shim, package))
    for name, text in files.items():
        with open(os.path.join(shim, package, name), "w") as f:
            f.write(text)


def importable(package):
    try:
        __import__(package)
        return True
    except ImportError:
        return False


def import_transformers(transformers_path, hub_path):
    tf_root = package_root(transformers_path, "transformers")
    hub_root = package_root(hub_path, "huggingface_hub") if hub_path else None
    shim = tempfile.mkdtemp(prefix="check_hf_transformers.")
    atexit.register(shutil.rmtree, shim, True)
    if hub_root:
        write_dist_record(shim, "huggingface-hub", declared_version(hub_root, "huggingface_hub"))
    stubs = []
    if not importable("safetensors"):
        write_stub(shim, "safetensors", {"__init__.py": STUB_SAFETENSORS, "torch.py": STUB_SAFETENSORS_TORCH})
        write_dist_record(shim, "safetensors", "0.4.3")
        stubs.append("safetensors")
    if not importable("tokenizers"):
        write_stub(shim, "tokenizers", {"__init__.py": STUB_TOKENIZERS, "models.py": STUB_TOKENIZERS_MODELS})
        stubs.append("tokenizers")
    sys.path[:0] = [tf_root] + ([hub_root] if hub_root else []) + [shim]
    import huggingface_hub
    import transformers
    transformers.logging.set_verbosity_error()  # e.g. Qwen2's "Sliding Window Attention ... not implemented"
    print(f"transformers {transformers.__version__} from {os.path.dirname(transformers.__file__)}")
    print(f"huggingface_hub {huggingface_hub.__version__} from {os.path.dirname(huggingface_hub.__file__)}")
    print(f"torch {torch.__version__}; stub packages (import-time only): {' '.join(stubs) or 'none'}")
    return transformers


# --- one fixture --------------------------------------------------------------------------------------------------
def read_weights(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for name in files:
        weights.update(st_io.load(os.path.join(folder, name)))  # F16 kept, BF16 widened to F32: both exact
    return weights


def keys_seen(probs):
    """Per layer: how many keys the last query gives nonzero weight (max over heads). probs: (H, T, T)."""
    return int((probs[:, -1, :] > 0).sum(-1).max())


def window_note(cfg):
    if cfg["model_type"] == "mistral" and cfg.get("sliding_window"):
        return f"mistral sliding_window={cfg['sliding_window']} (every layer)"
    if cfg["model_type"] == "qwen2" and cfg.get("use_sliding_window"):
        return (f"qwen2 use_sliding_window, sliding_window={cfg['sliding_window']}, "
                f"max_window_layers={cfg.get('max_window_layers')} (fixture: layers i >= max_window_layers slide)")
    return "no sliding window in the fixture"


def check_fixture(transformers, name, dtype, tol_logits, tol_probs):
    folder = os.path.join(GOLDEN, name)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    config_class = transformers.CONFIG_MAPPING[cfg["model_type"]]
    config = config_class.from_json_file(os.path.join(folder, "config.json"))
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager", torch_dtype=dtype)
    assert model.config._attn_implementation == "eager", model.config._attn_implementation
    assert type(model).__name__ in cfg["architectures"], (type(model).__name__, cfg["architectures"])

    weights = {k: v.to(dtype) for k, v in read_weights(folder).items()}
    missing, unexpected = model.load_state_dict(weights, strict=False)
    tied = config.tie_word_embeddings
    if unexpected or [k for k in missing if not (tied and k == "lm_head.weight")]:
        raise RuntimeError(f"{name}: missing {missing}, unexpected {unexpected}")
    if tied:
        model.tie_weights()
        assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    model.eval()

    expected = st_io.load(os.path.join(folder, "expected.safetensors"))
    ids = expected["ids"].to(torch.long)[None]
    mask = torch.ones_like(ids)
    print(f"\n== {name}: {type(model).__name__} ({config_class.__name__}), {dtype}, "
          f"{window_note(cfg)}")
    ok = True
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True, use_cache=False)
        logits = out.logits[0].to(torch.float64)
        ref = expected["logits"].to(torch.float64)
        d = (logits - ref).abs().max().item()
        ok &= d <= tol_logits
        print(f"  logits {tuple(logits.shape)}: max |transformers - expected| = {d:.3e} "
              f"(max |expected| {ref.abs().max().item():.2f}) {'OK' if d <= tol_logits else 'OVER TOL'}")
        for i, att in enumerate(out.attentions):
            got, want = att[0].to(torch.float64), expected[f"dec.{i}.attn.probs"].to(torch.float64)
            d = (got - want).abs().max().item()
            ok &= d <= tol_probs
            print(f"  layer {i} attn probs {tuple(got.shape)}: max diff {d:.3e}, keys seen by the last query: "
                  f"transformers {keys_seen(got)}, expected {keys_seen(want)} {'OK' if d <= tol_probs else 'OVER TOL'}")
        gen = model.generate(ids, attention_mask=mask, max_new_tokens=5, do_sample=False,
                             pad_token_id=config.eos_token_id)
        new = gen[0, ids.shape[1]:].tolist()
        print(f"  generate(max_new_tokens=5, do_sample=False): {new} "
              f"(argmax of expected logits at the last position: {int(ref[-1].argmax())})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("fixtures", nargs="*", default=DEFAULT_FIXTURES)
    ap.add_argument("--transformers", required=True, help="directory holding the transformers package (or repo)")
    ap.add_argument("--hub", help="directory holding the huggingface_hub package (or repo), if not installed")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--tol-logits", type=float, default=1e-4)
    ap.add_argument("--tol-probs", type=float, default=1e-5)
    args = ap.parse_args()
    torch.manual_seed(0)
    transformers = import_transformers(args.transformers, args.hub)
    dtype = getattr(torch, args.dtype)
    failed = [n for n in args.fixtures if not check_fixture(transformers, n, dtype, args.tol_logits, args.tol_probs)]
    print(f"\n{len(args.fixtures) - len(failed)}/{len(args.fixtures)} fixtures agree with transformers "
          f"{transformers.__version__}" + (f"; over tolerance: {' '.join(failed)}" if failed else ""))
    newer = [n for n in failed if n in NEWER_SEMANTICS]
    if newer:
        print(f"expected to differ from this release (semantics of current transformers): {' '.join(newer)}")
    return 1 if set(failed) - NEWER_SEMANTICS else 0


if __name__ == "__main__":
    sys.exit(main())

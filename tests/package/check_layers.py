#!/usr/bin/env python3
"""The include layering of core/ and app/ (README "Layout"): every #include "core/..." or "app/..." of a source file
must name a folder its own folder may use. A folder uses those below it, never one above; the folders of ts_compute
(model, kernels, trace, forward) use each other by design. Prints each violation as "file:line: folder -> folder"
and exits 1 when there is one.
usage: check_layers.py SOURCE_DIR"""
import pathlib
import re
import sys

COMPUTE = {"core/model", "core/kernels", "core/trace", "core/forward"}
CORE_BELOW_TOKENIZER = {"core/util", "core/formats"} | COMPUTE
CORE = CORE_BELOW_TOKENIZER | {"core/tokenizer", "core/interp", "core/eval", "core/train"}
# folder -> the folders it may include (besides itself)
ALLOWED = {
    "core/util": set(),
    **{f: {"core/util"} | COMPUTE for f in COMPUTE},
    "core/formats": {"core/util"} | COMPUTE,
    "core/tokenizer": CORE_BELOW_TOKENIZER,
    "core/interp": CORE_BELOW_TOKENIZER | {"core/tokenizer", "core/train"},  # the backward pass of attribution
    "core/eval": CORE_BELOW_TOKENIZER | {"core/tokenizer"},
    "core/train": CORE_BELOW_TOKENIZER | {"core/tokenizer"},
    "app/i18n": set(),
    "app/plot": {"core/util", "app/i18n"},
    "app/gfx": {"core/util", "app/i18n", "app/plot"},
    "app/session": CORE | {"app/i18n", "app/plot"},
    "app/figures": CORE | {"app/i18n", "app/plot", "app/session"},
    "app/lessons": CORE | {"app/i18n", "app/plot", "app/session", "app/figures"},
    "app/cli": CORE | {"app/i18n", "app/plot", "app/gfx", "app/session", "app/figures", "app/lessons"},
    "app/ui": CORE | {"app/i18n", "app/plot", "app/gfx", "app/session", "app/figures", "app/lessons", "app/cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:core|app)/[a-z0-9_]+)/')


def folder_of(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = path.relative_to(root).parts
    return "/".join(parts[:2])


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    violations, checked = [], 0
    for top in ("core", "app"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".h", ".cpp") or len(path.relative_to(root).parts) < 3:
                continue  # app/main.cpp sits above every folder
            own = folder_of(path, root)
            if own not in ALLOWED:
                violations.append(f"{path.relative_to(root)}: folder {own} has no place in the layers (check_layers.py)")
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                checked += 1
                target = m.group(1)
                if target != own and target not in ALLOWED[own]:
                    violations.append(f"{path.relative_to(root)}:{n}: {own} -> {target}")
    for v in violations:
        print(v)
    print(f"check_layers: {checked} includes checked, {len(violations)} against the layers")
    return 1 if violations or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The layers of core/ as a build fact (issue #33, docs/architecture.md "Layers").

Each core folder is its own static library that sees its own folder and its declared dependencies'
folders only. This check preprocesses, with exactly the include directories the build gives each
library, one header of every core folder, and expects it found when the documented layering allows
the include and "No such file" when it does not (an upward include must not compile):

  base <- text
  base <- model <- parallel <- fabric <- collective <- network <- scenario   (scenario also uses text)

Usage: layering-check.py --cxx COMPILER --core CORE_DIR --layer NAME=DIR1|DIR2 ... (one per library)
"""
import argparse
import os
import subprocess
import sys
import tempfile

# The rule, written down independently of core/CMakeLists.txt: the folders each folder may include.
DIRECT = {
    "base": [],
    "text": ["base"],
    "model": ["base"],
    "parallel": ["model"],
    "fabric": ["parallel"],
    "collective": ["fabric"],
    "network": ["collective"],
    "scenario": ["text", "network"],
}


def allowed(folder):
    seen, todo = {folder}, [folder]
    while todo:
        for dep in DIRECT[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def probe_header(core, folder):
    headers = sorted(h for h in os.listdir(os.path.join(core, folder)) if h.endswith(".h"))
    public = [h for h in headers if not h.endswith("_p.h")]
    return f"{folder}/{(public or headers)[0]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--core", required=True)
    ap.add_argument("--layer", action="append", default=[])
    args = ap.parse_args()

    layers = {}
    for spec in args.layer:
        name, _, dirs = spec.partition("=")
        layers[name] = [d for d in dirs.split("|") if d]
    folders = sorted(d for d in os.listdir(args.core) if os.path.isdir(os.path.join(args.core, d)))
    problems = []
    if sorted(layers) != sorted(DIRECT) or sorted(folders) != sorted(DIRECT):
        problems.append(f"the layers the build passed ({sorted(layers)}), the folders of core/ "
                        f"({folders}) and this check's rule ({sorted(DIRECT)}) must be the same")
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for layer, dirs in sorted(layers.items()):
            if layer not in DIRECT:
                continue
            for folder in folders:
                if folder not in DIRECT:
                    continue
                header = probe_header(args.core, folder)
                probe = os.path.join(tmp, f"{layer}_{folder}.cpp")
                with open(probe, "w") as f:
                    f.write(f'#include "{header}"\n')
                cmd = [args.cxx, "-std=c++20", "-E", "-o", os.devnull, probe]
                cmd += [f"-I{d}" for d in dirs]
                run = subprocess.run(cmd, capture_output=True, text=True)
                found = run.returncode == 0
                missing = f"{header}: No such file" in run.stderr
                want = folder in allowed(layer)
                checked += 1
                if want and not found:
                    problems.append(f"{layer} may include {header}, but it does not preprocess:\n"
                                    + run.stderr.strip()[:600])
                elif not want and not missing:
                    problems.append(f"{layer} must not see {folder}/, but #include \"{header}\" "
                                    + ("was found" if found else "failed otherwise:\n" + run.stderr.strip()[:600]))
    for p in problems:
        print("FAIL:", p)
    print(f"{checked} includes checked across {len(layers)} layers; {len(problems)} problems")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

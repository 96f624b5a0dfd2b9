"""Prepare the folder that bench/sizes/cuda.py reads on the GPU machine (run it HERE, where
the embedded default model, ../shared/data and PyPI are).

    python3 -m bench.sizes.cuda_prep .gpu            # in the checkout whose tree travels

writes, in all about 50 MB:

- ``.gpu/minilm/``: the embedded default model (all-MiniLM-L6-v2): config, tokenizer files
  and its weights as fp16 safetensors (the package's 83 MB wheel is too big to carry; the
  bench casts them back to fp32 under /tmp and uses that folder as the model spec);
- ``.gpu/data/``: the first ``--semeval`` sentences of SemEval-2014 restaurants (XML) and
  the first ``--ud`` sentences of UD EWT dev (CoNLL-U) from ../shared/data (the bundled
  ABSA sample is in the repository);
- ``.gpu/whl/``: wheels of what the studies import and the GPU machine lacks (datasets and
  its dill / multiprocess, conllu, defusedxml, captum), pinned to the versions installed
  here, downloaded for CPython 3.12 with the device README's ``pip download`` command.

``/.gpu/`` is in .gitignore: name it in the device call's ``carry``.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SHARED = ROOT.parent / "shared" / "data"
SEMEVAL = SHARED / "semeval2014" / "Restaurants_Train.xml"
UD_DEV = SHARED / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json",
               "special_tokens_map.json", "vocab.txt")
# What the studies import that the GPU machine's image lacks (device KINDS.md); xxhash, pandas,
# pyarrow, fsspec, huggingface-hub, matplotlib are there.
WHEELS = ("datasets", "dill", "multiprocess", "conllu", "defusedxml", "captum")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")


def write_model(out: Path) -> None:
    """Config and tokenizer files of the default model, weights cast to fp16 (same keys)."""
    import torch
    from safetensors.torch import load_file, save_file

    from analysis.core.models import default_model_path

    src = Path(default_model_path())
    out.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, out / name)
    weights = load_file(str(src / "model.safetensors"))
    half = {k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous()
            for k, v in weights.items()}
    save_file(half, str(out / "model.safetensors"), metadata={"format": "pt"})


def write_semeval(out: Path, n: int) -> None:
    """The first ``n`` <sentence> elements of SemEval-2014 restaurants, as a SemEval XML."""
    import xml.etree.ElementTree as ET

    from defusedxml.ElementTree import parse

    root = parse(str(SEMEVAL)).getroot()
    keep = ET.Element(root.tag, root.attrib)
    for sent in list(root.iter("sentence"))[:n]:
        keep.append(sent)
    ET.ElementTree(keep).write(out, encoding="utf-8", xml_declaration=True)


def write_conllu(out: Path, n: int) -> None:
    """The first ``n`` sentences (blank-line separated blocks) of UD EWT dev."""
    blocks = UD_DEV.read_text(encoding="utf-8").split("\n\n")
    out.write_text("\n\n".join(b for b in blocks[:n] if b.strip()) + "\n\n", encoding="utf-8")


def download_wheels(out: Path) -> list[str]:
    """pip download --no-deps of WHEELS at the versions installed here, for CPython 3.12."""
    out.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={md.version(name)}" for name in WHEELS]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.12", "--implementation", "cp", "-d", str(out), "-q"]
    for plat in PLATFORMS:
        cmd += ["--platform", plat]
    subprocess.run(cmd + pins, check=True)
    return pins


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="output folder (e.g. .gpu in the checkout that travels)")
    p.add_argument("--semeval", type=int, default=800, help="SemEval-2014 sentences (800)")
    p.add_argument("--ud", type=int, default=600, help="UD EWT dev sentences (600)")
    p.add_argument("--no-wheels", action="store_true", help="skip the pip download")
    args = p.parse_args(argv)
    out = Path(args.out)
    write_model(out / "minilm")
    (out / "data").mkdir(parents=True, exist_ok=True)
    write_semeval(out / "data" / "semeval14_restaurants.xml", args.semeval)
    write_conllu(out / "data" / "ud_ewt_dev.conllu", args.ud)
    pins = [] if args.no_wheels else download_wheels(out / "whl")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out}: model, data, {len(pins)} wheels ({', '.join(pins)}); "
          f"{size / 2**20:.1f} MiB in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Build ``restaurants.json`` from the hand-written markup in ``restaurants.txt``.

    python data/absa_sample/build_sample.py

The markup is described at the top of ``restaurants.txt`` and in ``README.md``. The JSON is
the file the dashboard reads (``analysis.aspects.readers.load_sample``); a test checks that it is
up to date with the markup.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODES = {"P": "price", "A": "anecdotes/miscellaneous", "F": "food", "M": "ambience",
         "S": "service"}
POLS = {"+": "positive", "-": "negative", "0": "neutral", "~": "conflict"}
TOKEN = re.compile(r"\[([^\]|]+)\|([PAFMS])([+\-0~])\]|\{([^}>]+)(?:>(\d+))?\}")


def combine(pols: list[str]) -> str:
    s = set(pols)
    if "conflict" in s or {"positive", "negative"} <= s:
        return "conflict"
    s.discard("neutral")
    return s.pop() if s else "neutral"


def parse_line(line: str, n: int) -> dict:
    body, _, cats = line.partition("##")
    body = body.strip()
    text, terms, opinions = "", [], []
    pos = 0
    for m in TOKEN.finditer(body):
        text += body[pos:m.start()]
        start = len(text)
        if m.group(1) is not None:
            word = m.group(1)
            text += word
            terms.append({"term": word, "start": start, "end": start + len(word),
                          "category": CODES[m.group(2)], "polarity": POLS[m.group(3)],
                          "opinions": []})
        else:
            word = m.group(4)
            text += word
            opinions.append((word, start, start + len(word), m.group(5)))
        pos = m.end()
    text += body[pos:]
    if "[" in text or "{" in text:
        raise ValueError(f"line {n}: unbalanced markup")
    for word, s, e, target in opinions:
        if not terms:
            raise ValueError(f"line {n}: opinion {word!r} without a term")
        if target is not None:
            term = terms[int(target)]
        else:
            term = min(terms, key=lambda t: min(abs(s - t["end"]), abs(t["start"] - e)))
        term["opinions"].append({"word": word, "start": s, "end": e})
    if cats.strip():
        categories = []
        for item in cats.split(","):
            code, pol = item.split()
            categories.append({"category": CODES[code], "polarity": POLS[pol]})
    else:
        by_cat: dict[str, list[str]] = {}
        for t in terms:
            by_cat.setdefault(t["category"], []).append(t["polarity"])
        categories = [{"category": c, "polarity": combine(p)} for c, p in by_cat.items()]
    if not categories:
        raise ValueError(f"line {n}: no categories")
    return {"text": text, "terms": terms, "categories": categories}


def build(src: Path = HERE / "restaurants.txt") -> dict:
    sentences = []
    for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        row = parse_line(line, n)
        sentences.append({"id": f"s{len(sentences) + 1:03d}", **row, "source": "sample"})
    return {"format": "absa-sample-v1",
            "description": "Restaurant-review sentences written for this project; see README.md.",
            "categories": list(CODES.values()), "polarities": list(POLS.values()),
            "sentences": sentences}


def main() -> int:
    data = build()
    out = HERE / "restaurants.json"
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(data['sentences'])} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print the counts per dependency relation (and per UPOS tag) of sample.conllu as Markdown
tables, for data/treebank/README.md: ``python data/treebank/relation_counts.py``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import conllu

HERE = Path(__file__).resolve().parent


def counts(path: Path = HERE / "sample.conllu") -> tuple[int, int, Counter, Counter]:
    sentences = conllu.parse(path.read_text(encoding="utf-8"))
    words = [t for s in sentences for t in s if isinstance(t["id"], int)]
    return (len(sentences), len(words), Counter(t["deprel"] for t in words),
            Counter(t["upos"] for t in words))


def main() -> None:
    n_sent, n_words, rels, upos = counts()
    print(f"{n_sent} sentences, {n_words} words.\n")
    print("| relation | count |\n|---|---:|")
    for rel, n in sorted(rels.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| `{rel}` | {n} |")
    print("\n| UPOS | count |\n|---|---:|")
    for tag, n in sorted(upos.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| {tag} | {n} |")


if __name__ == "__main__":
    main()

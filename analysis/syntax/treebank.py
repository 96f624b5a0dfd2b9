"""Dependency treebanks -> ``datasets.Dataset`` (docs/METHODS.md section 10, "Data").

One row per sentence: ``id`` (the ``sent_id`` comment, else the sentence's 1-based number in
the file), ``words`` (FORM), ``heads`` (1-based, 0 = root), ``deprels`` (the full DEPREL, e.g.
``nmod:poss``) and ``upos``. Multiword-token ranges (``1-2``) and empty nodes (``3.1``) are
skipped. Bytes come through :func:`analysis.core.corpus.files.read_bytes` (size cap) and
:func:`analysis.core.corpus.files.decode` (UTF-8); lines are parsed by the ``conllu`` library.
Anything malformed raises :class:`analysis.core.errors.DataError` with one line naming the file,
the sentence and, where there is one, the line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from conllu.exceptions import ParseException
from conllu.parser import DEFAULT_FIELDS, parse_comment_line, parse_line

from analysis.core.corpus.files import decode, read_bytes
from analysis.core.corpus.table import check_cap, corpus_notes
from analysis.core.errors import DataError
from analysis.core.corpus.hf import _offline_datasets

SAMPLE_TREEBANK = Path(__file__).resolve().parents[2] / "data" / "treebank" / "sample.conllu"
COLUMNS = ("id", "words", "heads", "deprels", "upos")
N_FIELDS = 10
NO_ROWS = ("{label} has no dependency rows: expected CoNLL-U word lines with 10 tab-separated "
           "columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC).")

__all__ = ["COLUMNS", "SAMPLE_TREEBANK", "make_treebank", "read_conllu", "read_hf_treebank",
           "sample_treebank", "treebank_fingerprint", "treebank_notes", "validate_tree"]


def validate_tree(heads) -> str | None:
    """Why ``heads`` (1-based, 0 = root) is not a single-rooted tree, in a few words, or None.

    Checked in this order: a head outside 0..n, no root, more than one root, a cycle."""
    n = len(heads)
    if n == 0:
        return "the sentence has no words"
    for i, h in enumerate(heads, 1):
        if not isinstance(h, int) or isinstance(h, bool) or h < 0 or h > n:
            return f"word {i} has head {h}, outside the sentence of {n} words"
    roots = [i for i, h in enumerate(heads, 1) if h == 0]
    if not roots:
        return "no word has head 0 (no root)"
    if len(roots) > 1:
        return f"two roots (words {roots[0]} and {roots[1]} both have head 0)"
    state = [0] * (n + 1)  # 0 unseen, 1 on the current path, 2 reaches the root
    state[0] = 2
    for start in range(1, n + 1):
        path, i = [], start
        while state[i] == 0:
            state[i] = 1
            path.append(i)
            i = heads[i - 1]
        if state[i] == 1:  # back on the current path: a cycle through i
            cyc = path[path.index(i):] + [i]
            return "a cycle (" + " -> ".join(map(str, cyc)) + ")"
        for j in path:
            state[j] = 2
    return None


def _features():
    # lazy: imported when used: datasets (heavy)
    from datasets import Features, Sequence, Value

    return Features({"id": Value("string"), "words": Sequence(Value("string")),
                     "heads": Sequence(Value("int32")), "deprels": Sequence(Value("string")),
                     "upos": Sequence(Value("string"))})


def make_treebank(rows: dict, notes=None):
    """A Dataset with :data:`COLUMNS` from column lists; ``notes`` are kept in
    ``info.description`` (one per line, read back by :func:`treebank_notes`)."""
    # lazy: imported when used: datasets (heavy)
    from datasets import Dataset, DatasetInfo

    features = _features()
    info = DatasetInfo(description="\n".join(notes or []), features=features)
    return Dataset.from_dict({c: list(rows[c]) for c in COLUMNS}, features=features, info=info)


def treebank_notes(dataset) -> list[str]:
    """What the reader skipped or capped, one line each."""
    return corpus_notes(dataset)


def treebank_fingerprint(dataset) -> str:
    """A short content hash of the sentences (for cache keys)."""
    h = hashlib.sha1()
    for row in dataset:
        for col in COLUMNS[1:]:
            h.update("\x1f".join(map(str, row[col])).encode("utf-8"))
            h.update(b"\x1e")
        h.update(b"\x1d")
    return h.hexdigest()[:16]


def _blocks(text: str):
    """(first line number, [(line number, line)]) per blank-line separated block."""
    block, start = [], None
    for ln, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if not block:
                start = ln
            block.append((ln, line.rstrip("\r\n")))
        elif block:
            yield start, block
            block = []
    if block:
        yield start, block


def _parse_block(block, where: str, label: str, first: bool):
    """The block's sent_id and its word rows as (line, conllu token); ranges and empty nodes
    are counted, not kept. A line without any tab before the first sentence: not CoNLL-U."""
    sent_id, rows, skipped = None, [], 0
    for ln, line in block:
        if line.startswith("#"):
            for key, value in parse_comment_line(line) or []:
                if key == "sent_id" and value:
                    sent_id = str(value).strip()
            continue
        n_cols = len(line.split("\t"))
        if n_cols == 1 and first and not rows:
            raise DataError(NO_ROWS.format(label=label))
        if n_cols < N_FIELDS:
            raise DataError(f"{where}, line {ln}: a missing column ({n_cols} of the 10 "
                            "tab-separated CoNLL-U columns).")
        try:
            token = parse_line(line, DEFAULT_FIELDS)
        except ParseException as exc:
            raise DataError(f"{where}, line {ln}: {str(exc).splitlines()[0]}") from None
        if not isinstance(token["id"], int):  # (1, '-', 2) ranges, (3, '.', 1) empty nodes
            skipped += 1
            continue
        rows.append((ln, token))
    return sent_id, rows, skipped


def _sentence(rows, where: str):
    """words, heads, deprels, upos of one sentence's word rows; raises DataError."""
    words, heads, deprels, upos = [], [], [], []
    for k, (ln, tok) in enumerate(rows, 1):
        if tok["id"] != k:
            raise DataError(f"{where}, line {ln}: word ids must run 1, 2, 3...; found "
                            f"{tok['id']} where {k} was expected.")
        if tok["head"] is None:
            raise DataError(f"{where}, line {ln}: word {k} has no HEAD.")
        if not tok["deprel"] or tok["deprel"] == "_":
            raise DataError(f"{where}, line {ln}: word {k} has no DEPREL.")
        words.append(str(tok["form"]) if tok["form"] is not None else "_")
        heads.append(int(tok["head"]))
        deprels.append(str(tok["deprel"]))
        upos.append(str(tok["upos"]) if tok["upos"] else "_")
    why = validate_tree(heads)
    if why:
        raise DataError(f"{where}: not a dependency tree: {why}.")
    return words, heads, deprels, upos


def read_conllu(source, name: str | None = None, max_sentences: int | None = None):
    """A CoNLL-U file (a path, an uploaded file or bytes) -> Dataset with :data:`COLUMNS`,
    the first ``max_sentences`` sentences when given."""
    max_sentences = check_cap(max_sentences)
    data, label = read_bytes(source, name)
    text = decode(data, label)
    cols = {c: [] for c in COLUMNS}
    n_skipped, n_sent, capped, headless = 0, 0, False, None
    for start, block in _blocks(text):
        if all(line.startswith("#") for _, line in block):
            continue
        if max_sentences is not None and len(cols["id"]) >= max_sentences:
            capped = True
            break
        n_sent += 1
        where = f"{label}, sentence {n_sent} (line {start})"
        sent_id, rows, skipped = _parse_block(block, where, label, not cols["id"])
        if sent_id:
            where = f"{label}, sentence {n_sent} ({sent_id})"
        n_skipped += skipped
        if not rows:
            continue
        if all(tok["head"] is None for _, tok in rows) and not cols["id"]:
            headless = headless or (rows, where)  # no HEAD at all (yet): maybe no dependencies
            continue
        if headless:
            _sentence(*headless)  # a file with trees and a sentence without: name that one
        words, heads, deprels, upos = _sentence(rows, where)
        cols["id"].append(sent_id or str(n_sent))
        cols["words"].append(words)
        cols["heads"].append(heads)
        cols["deprels"].append(deprels)
        cols["upos"].append(upos)
    if not cols["id"]:
        raise DataError(NO_ROWS.format(label=label))
    notes = []
    if n_skipped:
        notes.append(f"Skipped {n_skipped} multiword-token range(s) and empty node(s); the "
                     "words themselves are kept.")
    if capped:
        notes.append(f"Capped to the first {max_sentences} sentences.")
    return make_treebank(cols, notes)


def sample_treebank(max_sentences: int | None = None):
    """The bundled sample treebank (data/treebank/sample.conllu, written by this project)."""
    return read_conllu(SAMPLE_TREEBANK, max_sentences=max_sentences)


def _label_names(ds, col):
    feat = ds.features.get(col)
    inner = getattr(feat, "feature", None)
    return getattr(inner, "names", None)


def read_hf_treebank(name: str, split: str = "validation", max_sentences: int | None = None):
    """A Hugging Face dataset with UD-style columns (``tokens`` or ``words`` or ``form``;
    ``head``/``heads`` as ints or strings; ``deprel``/``deprels``; optional ``upos``, class
    labels resolved to their names) -> Dataset with :data:`COLUMNS`."""
    max_sentences = check_cap(max_sentences)
    name, split = (name or "").strip(), (split or "").strip() or "validation"
    if not name:
        raise DataError("Give a Hugging Face dataset id with UD-style columns.")
    # lazy: imported when used: datasets (heavy)
    import datasets

    try:
        with _offline_datasets():
            ds = datasets.load_dataset(name, split=split)
    except Exception as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise DataError(f"Could not load the dataset {name!r} (split {split!r}): it is not in "
                        f"the local cache and the hub cannot be reached, or the id/split is "
                        f"wrong ({first}).") from None
    pick = {}
    for key, options in (("words", ("tokens", "words", "form")), ("heads", ("head", "heads")),
                         ("deprels", ("deprel", "deprels")), ("upos", ("upos", "pos"))):
        found = [c for c in options if c in ds.column_names]
        if not found and key != "upos":
            raise DataError(f"The dataset {name!r} has no {key} column (one of "
                            f"{', '.join(options)}); columns: {', '.join(ds.column_names)}.")
        pick[key] = found[0] if found else None
    upos_names = _label_names(ds, pick["upos"]) if pick["upos"] else None
    rel_names = _label_names(ds, pick["deprels"])
    cols = {c: [] for c in COLUMNS}
    for k, row in enumerate(ds, 1):
        if max_sentences is not None and len(cols["id"]) >= max_sentences:
            break
        words = [str(w) for w in row[pick["words"]]]
        try:
            heads = [int(h) for h in row[pick["heads"]]]
        except (TypeError, ValueError):
            raise DataError(f"{name}, sentence {k}: a HEAD that is not a number.") from None
        rels = [rel_names[r] if rel_names else str(r) for r in row[pick["deprels"]]]
        upos = ([upos_names[u] if upos_names else str(u) for u in row[pick["upos"]]]
                if pick["upos"] else ["_"] * len(words))
        if not (len(words) == len(heads) == len(rels) == len(upos)):
            raise DataError(f"{name}, sentence {k}: columns of different lengths.")
        if not words:
            continue
        why = validate_tree(heads)
        if why:
            raise DataError(f"{name}, sentence {k}: not a dependency tree: {why}.")
        sid = row.get("idx") or row.get("id") or row.get("sent_id") or str(k)
        for c, v in zip(COLUMNS, (str(sid), words, heads, rels, upos)):
            cols[c].append(v)
    if not cols["id"]:
        raise DataError(NO_ROWS.format(label=name))
    return make_treebank(cols)

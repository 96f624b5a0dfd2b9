"""One input, layer by layer: every token's 2-D point at every layer, for one model or two on
the same tokens with the same projection (docs/METHODS.md section 13)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.core.study import Field, Schema, StudyResult
from analysis.representations.projection import check_method, project_layers
from analysis.representations.threads import one_thread
from analysis.representations.states import (InputStates, check_same_shape, check_same_tokens,
                                             encode_input, input_states)


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA (Kornblith et al. 2019) of two representations of the same n rows, in its
    Gram form: <K, L>_F / (||K||_F ||L||_F) with K = Xc Xc^T, L = Yc Yc^T (column-centred);
    the drift study's ``CKAAccumulator`` streams the same number for a corpus."""
    with one_thread():
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        x, y = x - x.mean(0), y - y.mean(0)
        k, m = x @ x.T, y @ y.T
        denom = np.linalg.norm(k) * np.linalg.norm(m)
        return float((k * m).sum() / denom) if denom > 0 else float("nan")


@dataclass
class InputResult(StudyResult):
    """2-D points of one input's tokens: ``points[l]`` [n, 2] for model A, ``compare_points``
    the same for model B (None without B); CKA between consecutive layers of each model and,
    with B, between the models at each layer. Its JSON (the command's with ``--text``):
    :data:`SCHEMA`."""

    SCHEMA = Schema((
        Field("tokens", "the word pieces, [CLS]/[SEP] included"),
        Field("projection", "{method, layers: per layer (0 = the embeddings) tokens x 2 "
                            "points}"),
        Field("compare", "the second model's projection, same fit (null without one)"),
        Field("colours", "an input from labelled data: colouring -> each token's label",
              optional=True),
    ))

    tokens: list[str]
    segments: list[int]
    special: list[bool]
    contexts: list[str]
    method: str
    points: list[np.ndarray]
    model: str
    compare_points: list[np.ndarray] | None = None
    compare_model: str | None = None
    steps: list[float] = field(default_factory=list)
    compare_steps: list[float] = field(default_factory=list)
    agreement: list[float] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    colourings: dict[str, list[str]] = field(default_factory=dict)  # "role" / "upos": per token
    source: str = ""  # where a labelled input comes from ("" = the text given)

    @property
    def n_layers(self) -> int:
        """Layers including the embeddings (L + 1)."""
        return len(self.points)

    def _projection(self, points) -> dict:
        return {"method": self.method,
                "layers": [[[float(v) for v in row] for row in p] for p in points]}

    def json_fields(self) -> dict:
        out = {"tokens": list(self.tokens), "projection": self._projection(self.points),
               "compare": (self._projection(self.compare_points)
                           if self.compare_points is not None else None)}
        if self.colourings:  # an input from labelled data: its tokens' labels
            out["colours"] = {k: list(v) for k, v in self.colourings.items()}
        return out

    @classmethod
    def from_json(cls, data: dict) -> "InputResult":
        """The points back from their JSON (no segments, contexts, CKA or model names: the
        JSON does not keep them)."""
        cls.SCHEMA.check(data)
        n = len(data["tokens"])

        def points(projection):
            return [np.asarray(p, dtype=np.float64) for p in projection["layers"]]

        compare = data.get("compare")
        return cls(list(data["tokens"]), [0] * n, [False] * n, [""] * n,
                   data["projection"]["method"], points(data["projection"]), "",
                   compare_points=points(compare) if compare is not None else None,
                   colourings={k: list(v) for k, v in (data.get("colours") or {}).items()})


def _steps(layers: np.ndarray) -> list[float]:
    """CKA between each layer and the one before (len L)."""
    return [linear_cka(layers[l - 1], layers[l]) for l in range(1, len(layers))]


def input_representations(loaded, text: str, pair: str | None = None, compare=None,
                          method: str = "pca", seed: int = 0, labelled=None) -> InputResult:
    """Every layer's projection of one input (``compare``: a second loaded model of the same
    shape and tokenizer, projected with the same fit). ``labelled``: an input from labelled
    data (:mod:`analysis.representations.inputs`) instead of ``text`` / ``pair``, its tokens'
    labels kept for the colours."""
    check_method(method)
    if compare is not None:
        check_same_shape(loaded, compare)

    def encoding(model):
        return labelled.encoder(model) if labelled is not None else \
            encode_input(model, text, pair)

    enc = encoding(loaded)
    a = input_states(loaded, text, pair, encoding=enc)
    b: InputStates | None = None
    if compare is not None:
        b = input_states(compare, text, pair, encoding=encoding(compare))
        check_same_tokens(a, b)
    pa, pb = project_layers(list(a.layers), list(b.layers) if b is not None else None,
                            method, seed)
    return InputResult(
        tokens=a.tokens, segments=[int(s) for s in enc.segments],
        special=[bool(s) for s in enc.special], contexts=a.contexts(), method=method,
        points=pa, model=loaded.name, compare_points=pb,
        compare_model=compare.name if compare is not None else None,
        steps=_steps(a.layers), compare_steps=_steps(b.layers) if b is not None else [],
        agreement=([linear_cka(a.layers[l], b.layers[l]) for l in range(len(a.layers))]
                   if b is not None else []),
        notices=list(enc.notices),
        colourings={labelled.colour: list(labelled.labels)} if labelled is not None else {},
        source=labelled.describe if labelled is not None else "")


def states_projection(a: InputStates, b: InputStates | None, method: str = "pca",
                      seed: int = 0):
    """The projection of ready states (the benchmark times this step alone)."""
    return project_layers(list(a.layers), list(b.layers) if b is not None else None,
                          method, seed)

"""The Head atlas page's grid without a server: legible at BERT-large's 24 x 16 heads on a
phone, the filters fading the heads they leave out."""

from __future__ import annotations

from analysis.atlas import facts as F
from ui.atlas import blocks as B
from ui.atlas import state as S


def _heads(L: int, H: int) -> list[dict]:
    out = []
    for layer in range(L):
        for head in range(H):
            facts = {"layer": layer, "head": head,
                     "noop": {"cls": 0.1, "sep": 0.6 if head % 3 == 0 else 0.1, "punct": 0.1,
                              "self": 0.1, "prev": 0.7 if head == 1 else 0.1, "next": 0.1,
                              "entropy": 1.0, "uniform_entropy": 2.0}}
            d = {"layer": layer, "head": head, "name": F.head_name(layer, head),
                 **{k: facts["noop"][k] for k in F.NOOP_KEYS}, "importance": None,
                 "importance_mask": None, "patching": None, "cosine": None, "facts": facts}
            found = F.roles(facts)
            d.update(roles=found, role=F.role_label(found), family=F.family(F.role_label(found)),
                     used=F.used(facts), changed=None, size=None, disagreement=None)
            out.append(d)
    return out


def test_the_grid_of_bert_large_fits_a_phone_and_the_filters_fade_heads():
    heads = _heads(24, 16)
    df = B.grid_frame(heads, families=["no-op"], use=S.ALL)
    assert len(df) == 384 and df["shown"].sum() == 24 * 6  # heads 1, 4, 7, 10, 13, 16
    spec = B.grid_chart(df, 24, 16, "BERT-large", None).to_dict()
    # the whole chart fits a phone's 358 px column with the squares at their size
    assert spec["width"] == max(16 * B.CELL + B.AXIS_PX, B.MIN_PX) <= 370
    assert spec["autosize"]["type"] == "fit-x" and spec["height"] == 24 * B.CELL
    assert B.grid_frame(heads, use=S.USED)["shown"].sum() == 0  # not measured: none used

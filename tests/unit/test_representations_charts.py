"""The Representations corpus charts' tables: both models named "A: ..." / "B: ...", one row per
layer, layers with no self-similarity left out."""

from types import SimpleNamespace as N

from ui.representations.charts import geometry_frame, probe_frame


def _result(compare: bool):
    curve = N(layers=[0.5, 0.75], majority=0.25)
    a = N(name="base", probes={"upos": curve}, anisotropy=[0.1, 0.2], self_similarity=[0.9, None])
    b = N(name="tuned", probes={"upos": curve}, anisotropy=[0.3, 0.4], self_similarity=[0.8, 0.6])
    return N(model=a, compare=b if compare else None)


def test_probe_frame_has_a_row_per_model_and_layer():
    one, two = probe_frame(_result(False)), probe_frame(_result(True))
    assert list(one["model"]) == ["A: base"] * 2 and list(one["accuracy"]) == [50.0, 75.0]
    assert list(two["model"]) == ["A: base"] * 2 + ["B: tuned"] * 2
    assert set(two["majority"]) == {25.0} and list(two["layer"]) == [0, 1, 0, 1]


def test_geometry_frame_leaves_out_missing_values():
    df = geometry_frame(_result(True))
    rows = list(zip(df["model"], df["measure"], df["layer"], df["value"]))
    assert ("A: base", "self-similarity", 1, None) not in rows
    assert [r for r in rows if r[1] == "self-similarity"] == [
        ("A: base", "self-similarity", 0, 0.9), ("B: tuned", "self-similarity", 0, 0.8),
        ("B: tuned", "self-similarity", 1, 0.6)]
    assert [r[3] for r in rows if r[1] == "anisotropy"] == [0.1, 0.2, 0.3, 0.4]

"""What Python and the component's JavaScript share (no Streamlit): the constants, the payload
check before a payload is sent, and the two generated modules of ``frontend/``.

The payload check reads :mod:`analysis.attention.payload_spec`, as the producer does and as
the JavaScript does through ``frontend/payload_spec.js`` (``checkPayload`` in
``frontend/payload.js`` walks the same fields in the same order, so both refuse a payload with
the same message). ``frontend/constants.js`` and ``frontend/payload_spec.js`` are generated
from here (:func:`generated`) by ``python -m ui.common.attention.build``.
"""

from __future__ import annotations

import json
from typing import Any

from analysis.attention.payload_spec import (MAKERS_MODULE, PAYLOAD_VERSION, PAYLOADS, SCALE,
                                             VIEWS_VERSION, Field, as_json)

SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"]
VIEW_KINDS = ["head", "model", "heatmap"]
VIEW_NAMES = {"head": "Head view", "model": "Model view", "heatmap": "Heatmap"}
PAGE_VIEWS = ["Head view", "Model view", "Neuron view", "Heatmap"]  # the page's View widget
PIN_SIDES = ["from", "to"]
STATE_KEYS = ["view", "layer", "heads", "pin", "segment"]  # what attention_views reports


# ---- the check (frontend/payload.js checkPayload is its twin: same order, same messages)

def _type_ok(value: Any, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "base64":
        return isinstance(value, str) and len(value) % 4 == 0
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, dict)  # object


def _needed(f: Field, root: dict) -> bool:
    if f.required:
        return f.unless is None or root.get(f.unless) is None
    return f.when is not None and root.get(f.when[0]) == f.when[1]


def _absent(obj: dict, f: Field) -> bool:
    return obj.get(f.name) is None and not (f.nullable and f.name in obj)


def _problem(obj: dict, fields: tuple[Field, ...], root: dict, where: str,
             path: str) -> str | None:
    missing = [path + f.name for f in fields if _needed(f, root) and _absent(obj, f)]
    if missing:
        return f"The payload of {where} lacks {', '.join(missing)}."
    for f in fields:
        value = obj.get(f.name)
        if value is None:
            continue
        name = path + f.name
        if not _type_ok(value, f.type):
            return f"The payload of {where} has {name} of another type than {f.type}."
        values = value if f.type == "list" else [value]
        if f.choices and any(v not in f.choices or isinstance(v, bool) for v in values):
            bad = next(v for v in values if v not in f.choices or isinstance(v, bool))
            allowed = ", ".join(json.dumps(c) for c in f.choices)
            return f"The payload of {where} has {name} {json.dumps(bad)}, not {allowed}."
        if f.length and len(value) != root.get(f.length[0]):
            return (f"The payload of {where} has {len(value)} {f.name} for "
                    f"{json.dumps(root.get(f.length[0]))} {f.length[1]}.")
        if isinstance(f.items, str) and not all(_type_ok(v, f.items) for v in values):
            return f"The payload of {where} has an item of {name} of another type than {f.items}."
        if isinstance(f.items, tuple):
            for i, item in enumerate(values):
                at = f"{name}[{i}]." if f.type == "list" else f"{name}."
                if not isinstance(item, dict):
                    return f"The payload of {where} has {at[:-1]} of another type than object."
                got = _problem(item, f.items, root, where, at)
                if got:
                    return got
    return None


def payload_problem(payload: Any, kind: str) -> str | None:
    """None when ``payload`` is a ``kind`` payload ("views" | "head" | "model") of the contract's
    version with every key it needs, each of its type and shape; else the reason, one sentence."""
    spec = PAYLOADS[kind]
    where = f"{MAKERS_MODULE}.{spec.maker}"
    if not isinstance(payload, dict) or payload.get("view") != kind:
        got = payload.get("view") if isinstance(payload, dict) else type(payload).__name__
        return f"This view needs a payload from {where} (got view {got!r})."
    if payload.get("version") != spec.version:
        return (f"This view draws version {spec.version} of {where}'s payload, got "
                f"{payload.get('version')!r}.")
    return _problem(payload, spec.fields, payload, where, "")


def check_payload(payload: Any, kind: str) -> None:
    """Raise ValueError unless ``payload`` is a ``kind`` payload this code (and the JavaScript,
    which checks it again) draws: :func:`payload_problem` says why."""
    problem = payload_problem(payload, kind)
    if problem:
        raise ValueError(problem)


# ---- the generated modules of frontend/

_NOTE = ("// Generated from {source} by `python -m ui.common.attention.build`: edit it there;\n"
         "// a test checks this file equals a fresh generation.\n\n")


def constants_js() -> str:
    """``frontend/constants.js``: the constants JavaScript shares with Python."""
    values = {"PAYLOAD_VERSION": PAYLOAD_VERSION, "VIEWS_VERSION": VIEWS_VERSION,
              "SCALE": SCALE, "SEGMENTS": SEGMENTS, "VIEW_KINDS": VIEW_KINDS,
              "PIN_SIDES": PIN_SIDES, "STATE_KEYS": STATE_KEYS}
    lines = [f"export const {k} = {json.dumps(v)};" for k, v in values.items()]
    return _NOTE.format(source="ui/common/attention/contract.py") + "\n".join(lines) + "\n"


def payload_spec_js() -> str:
    """``frontend/payload_spec.js``: :func:`analysis.attention.payload_spec.as_json` as an ES
    module (``PAYLOADS``, ``MAKERS_MODULE``), one field a line."""
    out = [_NOTE.format(source="analysis/attention/payload_spec.py"),
           f"export const MAKERS_MODULE = {json.dumps(MAKERS_MODULE)};\n\n",
           "export const PAYLOADS = {\n"]
    for kind, spec in as_json().items():
        out.append(f"  {json.dumps(kind)}: {{\n    \"version\": {spec['version']}, "
                   f"\"maker\": {json.dumps(spec['maker'])}, \"fields\": [\n")
        out += [f"      {json.dumps(f)},\n" for f in spec["fields"]]
        out.append("    ],\n  },\n")
    out.append("};\n")
    return "".join(out)


def generated() -> dict[str, str]:
    """File name in ``frontend/`` -> the text it must hold."""
    return {"constants.js": constants_js(), "payload_spec.js": payload_spec_js()}

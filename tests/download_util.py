"""The download buttons an AppTest run drew (``ui.common.exports.download``: a custom
component, which AppTest lists as a "bidi_component" element): label, key, file name, MIME type
and the data the browser gets (``answer``: the file a click asked for, None on an ordinary run)."""

from __future__ import annotations

import json
from types import SimpleNamespace


def downloads(at) -> list[SimpleNamespace]:
    out = []
    for el in at.get("bidi_component"):
        if not el.proto.component_name.endswith("download_button"):
            continue
        data = json.loads(el.proto.json)
        out.append(SimpleNamespace(label=data["label"], key=el.key, file_name=data["file_name"],
                                   mime=data["mime"], data=data))
    return out

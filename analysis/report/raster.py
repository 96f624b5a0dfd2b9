"""Every server-side PNG of an SVG is drawn here: bounded in pixels, in memory, in time, and
away from the server's interpreter.

Bounding the pixels alone is not enough: 200 half-transparent rectangles on a 2,828 px canvas
took 213 s to draw, and vl-convert holds Python's GIL while it draws, so every other visitor
(and ``/_stcore/health``) waited that long. So the PNGs are drawn in a child process
(``python -c`` with vl-convert only), one child at a time server-wide (:data:`RENDER_LOCK`),
with an address-space limit (:data:`RENDER_MEMORY_BYTES`) and a wall-time limit
(:data:`RENDER_TIMEOUT_S`); an image that is not done in time or runs out of memory is
``None`` and the caller says so. Each image's scale is first lowered so that it has at most
:data:`MAX_PIXELS` pixels, measured from the SVG's own size before anything is drawn."""

from __future__ import annotations

import json
import logging
import math
import struct
import subprocess
import sys
import threading
import resource

from analysis.core.errors import DataError
from analysis.report.svg import raster_size

MAX_PIXELS = 8_000_000  # one PNG: 4000 x 2000 px (a 2000 x 1000 chart at scale 2), 32 MB RGBA
RENDER_TIMEOUT_S = 30.0            # all the images of one call (a chart draws in < 2 s)
RENDER_MEMORY_BYTES = 2 << 30     # the child's address space (vl-convert needs about 0.3 GB)
RENDER_LOCK = threading.Lock()     # one drawing child at a time in the whole server
_LOG = logging.getLogger(__name__)
_WORKER = r"""
import json, struct, sys
import vl_convert as vlc
out = sys.stdout.buffer
for svg, scale in json.loads(sys.stdin.buffer.read()):
    png = vlc.svg_to_png(svg, scale=scale)
    out.write(struct.pack("<Q", len(png)) + png)
    out.flush()
"""


def png_scale(svg: str, scale: float = 2.0, max_pixels: int | None = None) -> float:
    """``scale`` lowered so that the PNG of ``svg`` has at most ``max_pixels`` pixels
    (:data:`MAX_PIXELS`), measured from the SVG's own size before anything is drawn."""
    cap = MAX_PIXELS if max_pixels is None else max_pixels
    try:
        w, h = raster_size(svg)
    except (SyntaxError, ValueError) as exc:
        raise DataError("A chart in the report is not a readable SVG image.") from exc
    area = abs(w * h)
    if not math.isfinite(area):
        raise DataError("A chart in the report has no usable size.")
    return scale if area * scale * scale <= cap else math.sqrt(cap / area)


def _limits() -> None:  # in the child, before it runs
    resource.setrlimit(resource.RLIMIT_AS, (RENDER_MEMORY_BYTES, RENDER_MEMORY_BYTES))


def _parse(out: bytes, n: int) -> list[bytes | None]:
    pngs, at = [], 0
    while len(pngs) < n and at + 8 <= len(out):
        size = struct.unpack("<Q", out[at:at + 8])[0]
        if at + 8 + size > len(out):
            break
        pngs.append(out[at + 8:at + 8 + size])
        at += 8 + size
    return pngs + [None] * (n - len(pngs))


def render_pngs(svgs: list[str], scale: float = 2.0, max_pixels: int | None = None,
                timeout_s: float | None = None) -> list[bytes | None]:
    """The PNG of each SVG (see the module's text), or None for each one that was not drawn
    within the time or memory limits (those after it too)."""
    if not svgs:
        return []
    jobs = [[svg, png_scale(svg, scale, max_pixels)] for svg in svgs]
    timeout = RENDER_TIMEOUT_S if timeout_s is None else timeout_s
    with RENDER_LOCK:
        try:
            done = subprocess.run([sys.executable, "-c", _WORKER],
                                  input=json.dumps(jobs).encode("utf-8"), capture_output=True,
                                  timeout=timeout, preexec_fn=_limits)
            out = done.stdout
            if done.returncode:
                _LOG.warning("drawing child exited with %s: %s", done.returncode,
                             done.stderr.decode("utf-8", "replace")[-500:])
        except subprocess.TimeoutExpired as exc:  # the child is killed; keep what it drew
            out = exc.stdout or b""
            _LOG.warning("drawing child stopped after %.0f s", timeout)
    return _parse(out, len(svgs))


def svg_png(svg: str, scale: float = 2.0, max_pixels: int | None = None,
            timeout_s: float | None = None) -> bytes:
    """The PNG of one SVG (:func:`render_pngs`); DataError with one line when it could not be
    drawn within the limits."""
    png = render_pngs([svg], scale, max_pixels, timeout_s)[0]
    if png is None:
        raise DataError("The chart could not be drawn within this server's time and memory "
                        "limits.")
    return png

"""Protocol visitors of the load benchmark: websocket clients of the Streamlit server speaking
its own protocol (/_stcore/stream, BackMsg / ForwardMsg; the
websockets package, a dependency of Streamlit), doing what bench/load_chromium.py's
Chromium visitors do at a fraction of their CPU (bench/README.md "Protocol visitors").

Each action is timed from sending its ``rerun_script`` BackMsg to the ``script_finished``
ForwardMsg of that run (the moment a browser shows the page idle), the media the run points at
fetched over HTTP before the clock stops; messages the server sends as a cache reference are
read from this visitor's own cache, as the browser does. Checks, as the Chromium visitor's: the
head view's data holds the visitor's own word and none of the others', the layer it asked for,
the title of the page it opened; a run that shows an exception fails the visitor.
"""

from __future__ import annotations

import asyncio
import random
import time

import urllib.request
from concurrent.futures import ThreadPoolExecutor

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from load_report import check_words
from load_stream import (DONE, Run, add_delta, charts, component_data, find_widget, headings,
                         page_assets, rerun_msg, widget_states, with_param)
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

TIMEOUT_S = 240.0  # a page that waits behind the fine-tune in the queue shows it here
MAX_MESSAGE = 256 * 2**20  # above Streamlit's 200 MB message limit
CACHE_RUNS = 2  # the browser keeps a cacheable message while it was used in the last 2 runs
VIEWS = "attention_views"  # the Attention page's component (ui/common/attention/views.py)


class PageError(Exception):
    pass


HEADERS = {"Accept-Encoding": "gzip, deflate, br, zstd"}  # as Chromium asks
PARALLEL = 6  # a browser's connections to one host
POOL = ThreadPoolExecutor(max_workers=64)  # the visitors' HTTP requests (not the loop's 6)


def _fetch(url: str) -> bytes:
    req = urllib.request.Request(url, headers=HEADERS)
    with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
        return resp.read()


async def fetch(url: str) -> bytes:
    return await asyncio.get_running_loop().run_in_executor(POOL, _fetch, url)


async def load_page(url: str) -> int:
    """What a new visitor's browser fetches over HTTP before the websocket: the page, the files
    it names (``PARALLEL`` at a time), /_stcore/health and /_stcore/host-config. The JavaScript
    chunks the browser loads later, the first time it draws an element of their kind, are left
    out. Returns how many files."""
    html = (await fetch(url + "/")).decode("utf-8", "replace")
    assets = page_assets(html)
    gate = asyncio.Semaphore(PARALLEL)

    async def one(path: str) -> None:
        async with gate:
            await fetch(f"{url}/{path}")

    await asyncio.gather(*(one(p) for p in assets[:-2]))
    for path in assets[-2:]:
        await fetch(f"{url}/{path}")
    return len(assets) + 1


class Stream:
    """One browser tab's websocket session: sends reruns, reads their ForwardMsgs."""

    def __init__(self, url: str):
        self.url = url
        self.ws = None
        self.pages: dict[str, str] = {}   # page title -> page script hash
        self.paths: dict[str, str] = {}   # page script hash -> its URL path
        self.page_hash, self.path, self.query = "", "/", ""
        self.elements: dict[tuple, object] = {}  # the last finished run's
        self.held: dict[str, tuple] = {}  # the widgets' values, as the frontend holds them
        self.auto: dict[str, float] = {}  # fragments the last full run asked to rerun
        self.cache: dict[str, ForwardMsg] = {}
        self.used: list[set[str]] = []     # cacheable hashes used, per finished run
        self.run = Run()
        self.hashes: set[str] = set()
        self.waiter: asyncio.Future | None = None
        self.on_progress = None
        self.reader: asyncio.Task | None = None

    async def open(self) -> None:
        ws_url = "ws" + self.url[len("http"):] + "/_stcore/stream"
        self.ws = await connect(ws_url, subprotocols=["streamlit"], max_size=MAX_MESSAGE,
                                open_timeout=TIMEOUT_S)
        self.reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()

    async def _read(self) -> None:
        while True:
            try:
                data = await self.ws.recv()
            except ConnectionClosed:
                self._fail("the server closed the websocket")
                return
            msg = ForwardMsg()
            msg.ParseFromString(data)
            self._handle(msg)

    def _handle(self, msg: ForwardMsg) -> None:
        if msg.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                self._fail(f"a cache reference to a message this visitor never got "
                           f"({msg.ref_hash})")
                return
            full = ForwardMsg()
            full.CopyFrom(cached)
            full.metadata.CopyFrom(msg.metadata)
            self.hashes.add(msg.ref_hash)
            msg = full
        elif msg.metadata.cacheable:
            self.cache[msg.hash] = msg
            self.hashes.add(msg.hash)
        kind = msg.WhichOneof("type")
        if kind == "new_session":  # a script run starts: the page is drawn again
            self.run = Run()
            self.run.page_hash = msg.new_session.page_script_hash
        elif kind == "navigation":
            self.pages = {p.page_name: p.page_script_hash for p in msg.navigation.app_pages}
            self.paths = {p.page_script_hash: "/" + p.url_pathname
                          for p in msg.navigation.app_pages}
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "delta":
            n = self.run.progress
            add_delta(self.run, msg)
            if self.run.progress > n and self.on_progress is not None:
                self.on_progress()
        elif kind == "auto_rerun":
            self.run.auto[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "script_finished" and msg.script_finished in DONE:
            self.run.status = msg.script_finished
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(self.run)

    def _fail(self, why: str) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(PageError(why))

    def cached(self) -> list[str]:
        keep = set().union(*self.used[-CACHE_RUNS:]) if self.used else set()
        self.cache = {h: m for h, m in self.cache.items() if h in keep}
        return sorted(self.cache)

    async def rerun(self, states: dict, page_hash: str | None = None,
                    trigger: str | None = None, timeout: float | None = TIMEOUT_S,
                    fragment: str | None = None) -> Run:
        """Send one rerun and wait for its run to finish (its media fetched)."""
        page_hash = self.page_hash if page_hash is None else page_hash
        msg = rerun_msg(states, page_hash, self.query, self.url + self.path, self.cached(),
                        trigger, fragment)
        self.hashes = set()
        self.waiter = asyncio.get_running_loop().create_future()
        await self.ws.send(msg.SerializeToString())
        run = await asyncio.wait_for(self.waiter, timeout)
        for media in sorted(run.media):
            await fetch(self.url + media)
        self.used.append(self.hashes)
        # the page the run drew (a first view asks for none: the default page)
        page_hash = run.page_hash or page_hash
        self.path = self.paths.get(page_hash, self.path) if self.page_hash else self.path
        if run.status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:  # a part redrawn
            self.elements = {**self.elements, **run.elements}
        else:
            self.elements, self.auto = run.elements, run.auto
        self.page_hash = page_hash
        self.held = widget_states(self.elements, self.held)
        if run.exceptions:
            raise PageError(f"the page showed an exception: {run.exceptions[0]}")
        return run

    async def settle(self, timeout: float = 600.0) -> None:
        """Follow the page's auto-reruns (a fragment watching a background job, every few
        seconds, as the browser does) until a full run asks for none: its results shown."""
        t0 = time.monotonic()
        while self.auto:
            if time.monotonic() - t0 > timeout:
                raise PageError(f"the page was still computing after {timeout:.0f} s")
            fragment, every = next(iter(self.auto.items()))
            await asyncio.sleep(every)
            await self.rerun(dict(self.held), fragment=fragment, timeout=timeout)

    def widget(self, kind: str, label: str):
        """The ``kind`` widget labelled ``label`` on the page (its proto)."""
        w = find_widget(self.elements, kind, label)
        if w is None:
            raise PageError(f"no {kind} labelled {label!r} on the page")
        return w

    async def change(self, w, value) -> Run:
        """The user sets widget ``w`` (its proto, from the last run) to ``value``."""
        states = dict(self.held)
        states[w.id] = (states[w.id][0], value)
        self.held = states
        if w.query_param_key:
            self.query = with_param(self.query, w.query_param_key, value)
        return await self.rerun(states)

    async def open_page(self, title: str, timeout: float | None = TIMEOUT_S) -> Run:
        """A click on ``title`` in the sidebar's page list."""
        if title not in self.pages:
            raise PageError(f"no page {title!r} in the navigation ({', '.join(self.pages)})")
        run = await self.rerun(widget_states(self.elements, self.held, sidebar_only=True),
                               self.pages[title],
                               timeout=timeout)
        if title not in headings(run.elements):
            raise PageError(f"opened {title!r} but its title is not on the page")
        return run


class ProtocolVisitor:
    """The Chromium Visitor's actions (bench/load_chromium.py) over the protocol."""

    def __init__(self, name: str, url: str, word: str | None, others: list[str],
                 times: dict[str, list[float]], think: float = 0.0):
        self.name, self.url, self.word, self.others = name, url, word, others
        self.times, self.think = times, think
        self.rng = random.Random(name)
        self.layer = 1
        self.stream = Stream(url)

    async def timed(self, kind: str, action) -> Run:
        if self.think and kind != "first view":
            await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5))
        t = time.monotonic()
        run = await action()
        self.times.setdefault(kind, []).append(time.monotonic() - t)
        return run

    def view_data(self) -> dict:
        data = component_data(self.stream.elements, VIEWS)
        if data is None:
            raise PageError(f"visitor {self.name}: no attention view on the Attention page")
        return data

    def check_own_text(self) -> None:
        if self.word is None:
            return
        check_words(self.name, self.word, self.others,
                    [str(t) for t in self.view_data().get("labels", [])])

    async def first_view(self) -> None:
        """A new visitor: the page and its files over HTTP (no browser cache), the websocket,
        the first run."""
        async def act():
            await load_page(self.url)
            await self.stream.open()
            return await self.stream.rerun({}, "")

        await self.timed("first view", act)
        self.view_data()

    async def type_text(self) -> None:
        text = f"Visitor {self.name} says the {self.word} was lovely."
        await self.timed("type text", lambda: self.stream.change(
            self.stream.widget("text_area", "Text"), text))
        self.check_own_text()

    async def pick_layer(self) -> None:
        self.layer = self.rng.choice([n for n in range(1, 7) if n != self.layer])
        box = self.stream.widget("selectbox", "Layer")
        await self.timed("layer", lambda: self.stream.change(box, str(self.layer)))
        got = self.view_data().get("ui", {}).get("layer")
        if got != self.layer - 1:
            raise PageError(f"visitor {self.name}: asked for layer {self.layer}, the view "
                            f"draws layer {None if got is None else got + 1}")

    async def view(self, name: str) -> None:
        group = next((w for w in (getattr(e, "button_group", None)
                                  for e in self.stream.elements.values()
                                  if e.WhichOneof("type") == "button_group")
                      if name in [o.content for o in w.options]), None)
        if group is None:
            raise PageError(f"visitor {self.name}: no {name!r} control")
        await self.timed(name.lower(), lambda: self.stream.change(group, [name]))
        want = {"Head view": "head", "Model view": "model"}[name]
        if self.view_data().get("ui", {}).get("view") != want:
            raise PageError(f"visitor {self.name}: asked for the {name}, the view draws "
                            f"{self.view_data().get('ui', {}).get('view')!r}")

    async def open_page(self, title: str, kind: str, chart: bool = False) -> None:
        """Open ``title`` from the sidebar; ``chart``: the page must show a chart (its results),
        as the Chromium visitor waits for one."""
        await self.timed(kind, lambda: self.stream.open_page(title))
        if chart and not charts(self.stream.elements):
            raise PageError(f"visitor {self.name}: {title} finished without a chart")

    async def round(self) -> None:
        await self.pick_layer()
        await self.view("Model view")
        await self.view("Head view")
        await self.open_page("No-op statistics", "open No-op", chart=True)
        await self.open_page("Fine-tuning drift", "open Drift", chart=True)
        await self.open_page("Attention", "open Attention")
        self.check_own_text()

    async def close(self) -> None:
        await self.stream.close()

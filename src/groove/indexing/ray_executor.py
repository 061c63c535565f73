"""Embedding batches on a Ray cluster: ``groove index --ray ADDRESS`` (docs/scaling.md).

Only the embedding moves. The walk, parsing, chunking and every store write
stay in the local process; the embedding pass (:mod:`groove.indexing.embedding_pass`)
hands its batches to :class:`RayExecutor` instead of the local worker thread, and
writes each document's vectors as they come back, so a Ray build is as
crash-safe and resumable as a local one.

Why plain actors and not Ray Data's ``map_batches``: the pass pulls pending
chunks lazily from SQLite a window at a time and must write each document as
soon as its last vector is back; a Dataset wants its whole input up front and
owns its own execution. A pool of actors behind ``ray.wait`` gives exactly the
executor contract: lazy pulls, a bounded number of batches in flight, results
in completion order, and abandoning the rest when the caller stops.

The rules:

* each actor loads the configured embedder **once** (``get_embedder`` inside
  the actor) and holds one CPU, so one actor per core is the natural pool;
* actors are spread over the nodes (one per node before two on any);
* a lost actor (a node removed, a process killed) costs nothing but time: the
  parts it held are sent again to live actors at once, and Ray restarts it
  where there is room (``max_restarts``), after which it gets work again; the
  build completes as long as one actor is left;
* an address that does not answer fails before anything is indexed, naming the
  address and what to check;
* ``local`` starts a private single-node cluster for this run (kept on
  127.0.0.1) and shuts it down afterwards; ``auto`` and ``host:port`` join a
  running cluster and leave it running. Every node needs groove installed
  (the same version) with the ``ray`` extra.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from groove._logging import note
from groove.config import Config
from groove.embedders.base import Embedder
from groove.errors import GrooveError
from groove.indexing.embedding_pass import EmbedBatch, EmbeddingExecutor

log = logging.getLogger("groove.indexing.ray")

#: Batches queued per actor, so an actor never idles between two batches.
IN_FLIGHT_PER_ACTOR = 2
#: Restarts of a lost actor, and retries of the batch it was working on.
MAX_RESTARTS = 3
CONNECT_TIMEOUT_S = 5.0
_CHECK = ("check that the cluster is running (`ray status` on the head node), that this "
          "address and port are reachable from here, and that groove is installed on every node")


class RayUnavailable(GrooveError):
    """Ray is not installed, or the cluster cannot be reached."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs the optional ray package: "
                             "pip install 'groove[ray]'") from None
    return ray


def _probe(address: str) -> None:
    """Fail at once when ``host:port`` does not accept a TCP connection."""
    target = address.split("://", 1)[-1]
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise RayUnavailable(f"Ray address {address!r} is not host:port, 'auto' or 'local'")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address} ({exc}); {_CHECK}") from None


def connect(address: str, *, num_cpus: int | None = None) -> bool:
    """Join (or for ``local`` start) the cluster; True when this call started Ray here."""
    if address == "local":
        # A private cluster for one run: every component on 127.0.0.1 (docs/scaling.md;
        # Ray reads this when it is first imported, so before _ray()), and workers at
        # normal priority: Ray starts them at niceness 15, which on a busy machine
        # starves the actors behind every other process (measured: 6x).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        os.environ.setdefault("RAY_worker_niceness", "0")
    ray = _ray()
    if address not in ("auto", "local"):
        _probe(address)
    if ray.is_initialized():
        return False
    if address == "local":
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 1,
                 include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        return True
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"cannot join the Ray cluster at {address!r} ({exc}); "
                             f"{_CHECK}") from None
    return True


def _actor_class() -> Any:
    ray = _ray()

    # SPREAD: one actor per node before two on any, so a cluster's nodes all embed.
    # No task retries: a part whose actor was lost comes back as an error at once and
    # RayExecutor.map sends it to a live actor, instead of waiting for a restart that
    # may never find room (a removed node's actors have nowhere to go when the other
    # nodes are full).
    @ray.remote(num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=0,
                scheduling_strategy="SPREAD")
    class EmbedActor:
        """Holds one embedder, loaded once when the actor starts."""

        def __init__(self, model_id: str, cache_dir: str | None,
                     settings: dict[str, Any], engine: str) -> None:
            from groove.config.model import EmbedderConfig
            from groove.embedders import get_embedder

            self.embedder = get_embedder(model_id, cache_dir=Path(cache_dir) if cache_dir else None,
                                         settings=EmbedderConfig.model_validate(settings),
                                         engine=engine)
            self.node = ray.get_runtime_context().get_node_id()

        def embed(self, texts: list[str]) -> tuple[str, np.ndarray]:
            """The vectors, and the node that made them (counted per node by the executor)."""
            return self.node, self.embedder.embed_passages(texts)

        def pid(self) -> int:
            return os.getpid()

    return EmbedActor


def _lost_errors() -> tuple[type[BaseException], ...]:
    """Ray's errors for "the actor or its result is gone" (not "the embedder failed")."""
    from ray import exceptions

    return (exceptions.RayActorError, exceptions.ObjectLostError)


class RayExecutor(EmbeddingExecutor):
    """A pool of embedding actors; batches go to whichever actor has the fewest in flight.

    ``parts_by_node`` counts the parts each node embedded (node id → parts).
    """

    def __init__(self, config: Config, actors: int) -> None:
        ray = _ray()
        cls = _actor_class()
        cache = str(config.model_cache_dir) if config.model_cache_dir else None
        settings = config.embedder.model_dump()
        # Each actor runs the engine the index is built with (embedding_engine).
        self.actors = [cls.remote(config.model, cache, settings, config.embedding_engine)
                       for _ in range(max(1, actors))]
        self.parts_by_node: Counter[str] = Counter()
        #: Parts sent again because the actor holding them was lost.
        self.parts_resent = 0
        self._ray = ray

    def actor_pids(self) -> list[int]:
        return list(self._ray.get([actor.pid.remote() for actor in self.actors]))

    def map(self, batches: Iterable[EmbedBatch]) -> Iterator[tuple[EmbedBatch, np.ndarray]]:
        """Each batch is cut into one part per actor (by tokens) and put back together.

        Whole batches left the last one running on a single actor while the
        others idled (measured: Ray at 0.57x local on a 2-batch window); parts
        keep every actor busy until the end of a window.

        A part whose actor was lost (its node removed, its process killed) is
        sent again to a live actor; the lost actor gets work again only once a
        probe shows Ray restarted it. When every actor is lost for good the
        run stops with an error (what was embedded so far is kept).
        """
        ray = self._ray
        lost = _lost_errors()
        load = dict.fromkeys(range(len(self.actors)), 0)
        live: set[int] = set()  # actors whose probe answered: only they get parts
        # An actor gets work once it answers: one Ray could not place (its node gone,
        # no room left) would otherwise hold its parts forever.
        probes: dict[Any, int] = {actor.pid.remote(): slot  # ref of a pid() call -> slot
                                  for slot, actor in enumerate(self.actors)}
        running: dict[Any, tuple[int, int, int, list[str]]] = {}  # ref -> batch, part, slot, texts
        again: list[tuple[int, int, list[str]]] = []  # parts to send once an actor is live
        pending: list[tuple[int, int, list[str]]] = []  # parts of pulled batches not sent yet
        parts: dict[int, list[np.ndarray | None]] = {}
        by_number: dict[int, EmbedBatch] = {}
        source = enumerate(batches)
        exhausted = False

        def send(number: int, part: int, texts: list[str]) -> None:
            slot = min(live, key=load.__getitem__)
            running[self.actors[slot].embed.remote(texts)] = (number, part, slot, texts)
            load[slot] += 1

        def answered(ref: Any) -> None:
            slot = probes.pop(ref)
            try:
                ray.get(ref)
            except lost:  # restarts used up: this actor is out for good
                return
            live.add(slot)

        try:
            while True:
                if probes:  # every actor that answered by now joins before parts are handed out
                    for ref in ray.wait(list(probes), num_returns=len(probes), timeout=0)[0]:
                        answered(ref)
                while again and live:
                    send(*again.pop())
                while live and len(running) < IN_FLIGHT_PER_ACTOR * len(live) and (
                        pending or not exhausted):
                    if not pending:
                        item = next(source, None)
                        if item is None:
                            exhausted = True
                            break
                        number, batch = item
                        pieces = split_by_tokens(batch, len(self.actors))
                        by_number[number] = batch
                        parts[number] = [None] * len(pieces)
                        pending = [(number, part, texts) for part, texts in enumerate(pieces)]
                    send(*pending.pop(0))
                if not running and not again and not pending and exhausted:
                    return
                if not running and not probes:
                    raise GrooveError("every Ray actor was lost (nodes removed or processes "
                                      f"killed); {_CHECK}; what was embedded so far is kept")
                ready, _ = ray.wait([*running, *probes], num_returns=1)
                ref = ready[0]
                if ref in probes:
                    answered(ref)
                    continue
                number, part, slot, texts = running.pop(ref)
                load[slot] -= 1
                try:
                    node, vectors = ray.get(ref)
                except lost as exc:
                    log.warning("a Ray embedding actor was lost (%s); sending its part to "
                                "another", type(exc).__name__)
                    self.parts_resent += 1
                    if slot in live:
                        live.discard(slot)
                        probes[self.actors[slot].pid.remote()] = slot
                    again.append((number, part, texts))
                    continue
                self.parts_by_node[node] += 1
                got = parts[number]
                got[part] = np.asarray(vectors, dtype=np.float32)
                if all(p is not None for p in got):
                    del parts[number]
                    yield by_number.pop(number), np.vstack(got)  # type: ignore[arg-type]
        finally:
            for ref in [*running, *probes]:
                ray.cancel(ref, force=False)

    def close(self) -> None:
        if self.parts_by_node:
            log.info("Ray embedded %d part(s) on %d node(s): %s", sum(self.parts_by_node.values()),
                     len(self.parts_by_node),
                     ", ".join(f"{node[:8]} {n}" for node, n in self.parts_by_node.most_common()))
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []


def split_by_tokens(batch: EmbedBatch, parts: int) -> list[list[str]]:
    """``batch.texts`` cut into at most ``parts`` contiguous pieces of similar token counts."""
    items = batch.items
    total = sum(item.tokens for item in items)
    pieces: list[list[str]] = [[]]
    done = 0
    for item in items:
        if pieces[-1] and len(pieces) < parts and done >= total * len(pieces) / parts:
            pieces.append([])
        pieces[-1].append(item.text)
        done += item.tokens
    return pieces


@contextmanager
def ray_executors(config: Config, address: str) -> Iterator[Any]:
    """An executor factory for one index run on the cluster at ``address``.

    Connects first (so a bad address fails before any work), closes the actors
    afterwards, and shuts Ray down if this run started it.
    """
    started = connect(address)
    made: list[RayExecutor] = []
    try:
        ray = _ray()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        actors = config.index.ray_actors or max(1, cpus)
        # The actors start (and load the model) now, while this process walks,
        # parses and writes rows: the embedding pass finds them ready.
        made.append(RayExecutor(config, actors))

        def factory(_local: Embedder) -> RayExecutor:
            if not made[-1].actors:  # closed by an earlier pass of this run
                made.append(RayExecutor(config, actors))
            return made[-1]

        note(log, "embedding on Ray at %s with %d actor(s)", address, actors)
        yield factory
    finally:
        for executor in made:
            executor.close()
        if started:
            _ray().shutdown()

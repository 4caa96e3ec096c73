"""Where a ``backend = "dask"`` run computes: a local Dask cluster the harness starts, or a cluster that
already exists.

:func:`dask_client` is the run's one entry point: for ``backend = "dask"`` it yields a connected
``distributed.Client`` and, when the run ends (normally, on an error or on Ctrl-C), closes what it
opened:

- **no scheduler given**: a ``distributed.LocalCluster`` sized to the machine (one single-threaded worker
  process per usable core, listening on 127.0.0.1 only, no dashboard) is started and shut down with
  the run;
- **a scheduler address** (``--scheduler tcp://HOST:PORT`` or the config's ``scheduler``): the client
  connects within :data:`CONNECT_TIMEOUT_SECONDS` and only the client is closed at the end; an external
  cluster is never shut down by the harness.

What travels: each engine task is pickled with the slice of the panel it forecasts (its chunk of series,
every period) and the model factory, and sent to a worker through the scheduler; workers read no file,
so no shared path is needed. Workers do need the same ``tycheon`` (and model packages) as the run: before
any task is sent, :func:`check_workers` compares each worker's ``tycheon`` version and Python version
with the run's and refuses a mismatch naming the worker.

Results do not depend on where they ran: tasks carry their own seeds and are put back in task order by
the engine (:mod:`tycheon.backtest.execution`); Dask reschedules the tasks of a worker that dies.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import platform
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "ClusterError",
    "check_workers",
    "dask_client",
    "local_cluster_size",
    "parse_scheduler_address",
]

CONNECT_TIMEOUT_SECONDS = 30.0
_ADDRESS = re.compile(r"^tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>[0-9]{1,5})$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_ACCEPTED = "tcp://HOST:PORT (HOST a host name, an IPv4 address or a bracketed IPv6 address; PORT 1-65535)"


class ClusterError(RuntimeError):
    """The Dask cluster could not be started, reached or used (the message says which and why)."""


def parse_scheduler_address(text: str) -> str:
    """A Dask scheduler address, checked strictly; returns it unchanged.

    Accepted: ``tcp://HOST:PORT`` with HOST a host name (RFC 1123 labels), a dotted IPv4 address or an
    IPv6 address in brackets, and PORT in 1..65535.

    Raises
    ------
    ValueError
        Anything else, with the value and what is accepted.
    """
    match = _ADDRESS.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"scheduler address {text!r} is not valid; accepted: {_ACCEPTED}")
    host, port = match.group("host"), int(match.group("port"))
    problem = None
    if not 1 <= port <= 65535:
        problem = f"port {port} is out of range"
    elif host.startswith("["):
        problem = None if _is_ip(host[1:-1], ipaddress.IPv6Address) else f"{host} is not an IPv6 address"
    elif re.fullmatch(r"[0-9.]+", host):
        problem = None if _is_ip(host, ipaddress.IPv4Address) else f"{host} is not an IPv4 address"
    elif len(host) > 253 or not all(_LABEL.match(label) for label in host.split(".")):
        problem = f"{host!r} is not a valid host name"
    if problem:
        raise ValueError(f"scheduler address {text!r}: {problem}; accepted: {_ACCEPTED}")
    return text


def _is_ip(text: str, kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def local_cluster_size() -> int:
    """Worker processes of a local cluster: the cores this process may use (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def check_workers(client: Any) -> int:
    """Refuse a cluster whose workers run another ``tycheon`` or Python version; return the worker count.

    Raises
    ------
    ClusterError
        No worker is connected, or a worker's versions differ (each such worker is named).
    """
    import tycheon

    def worker_facts() -> tuple[str, str]:  # nested: pickled by value, so a worker needs no benchmarks/
        import platform as _platform

        import tycheon as _tycheon

        return _tycheon.__version__, _platform.python_version()

    ours = (tycheon.__version__, platform.python_version())
    facts = client.run(worker_facts)
    if not facts:
        raise ClusterError(f"the Dask cluster at {client.scheduler.address} has no worker")
    wrong = {w: f for w, f in facts.items() if tuple(f) != ours}
    if wrong:
        listed = "; ".join(f"{w}: tycheon {f[0]}, Python {f[1]}" for w, f in sorted(wrong.items()))
        raise ClusterError(
            f"Dask workers differ from this run (tycheon {ours[0]}, Python {ours[1]}): {listed}; install the same "
            "tycheon version (and model packages, constraints.txt) on every worker"
        )
    return len(facts)


@contextlib.contextmanager
def dask_client(
    *,
    backend: str,
    scheduler: str | None = None,
    n_workers: int | None = None,
    timeout: float = CONNECT_TIMEOUT_SECONDS,
) -> Iterator[Any]:
    """The client a run's engine tasks go to: ``None`` unless ``backend == "dask"``.

    Parameters
    ----------
    backend : str
        The run's backend; anything but ``"dask"`` yields ``None`` and starts nothing.
    scheduler : str, optional
        Address of an existing scheduler (:func:`parse_scheduler_address`); default: start a local cluster.
    n_workers : int, optional
        Worker processes of the local cluster (default :func:`local_cluster_size`).
    timeout : float
        Seconds to connect to the scheduler (and for the local cluster to start).

    Raises
    ------
    ValueError
        A scheduler address that is not valid, or one given for another backend.
    ClusterError
        The cluster could not be started or reached in time, or its workers do not match.
    """
    if backend != "dask":
        if scheduler is not None:
            raise ValueError(f"a scheduler ({scheduler!r}) is only used with backend = 'dask', not {backend!r}")
        yield None
        return
    if scheduler is not None:
        parse_scheduler_address(scheduler)
    from distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if scheduler is None:
            size = local_cluster_size() if n_workers is None else int(n_workers)
            try:
                cluster = LocalCluster(
                    n_workers=size,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    timeout=timeout,
                )
            except Exception as err:  # noqa: BLE001 - any start-up failure is reported as one error
                raise ClusterError(f"could not start a local Dask cluster of {size} worker(s): {err}") from err
            stack.callback(cluster.close)
            target: Any = cluster
            where = f"the local Dask cluster ({size} workers)"
        else:
            target, where = scheduler, f"the Dask scheduler at {scheduler}"
        try:
            client = Client(target, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as err:
            raise ClusterError(f"could not connect to {where} within {timeout:g} s: {err}") from err
        stack.callback(client.close)  # an external cluster: only our connection is closed
        if scheduler is not None:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError) as err:
                raise ClusterError(f"{where} has no worker after {timeout:g} s") from err
        check_workers(client)
        yield client

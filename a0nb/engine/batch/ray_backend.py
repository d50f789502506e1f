"""executor="ray": each item a Ray task that carries the notebook folder (zipped once into Ray's object store,
unpacked once per worker node) and the A0NB_* settings; the Turn and its call records come back as plain data.
A model spec `record:C:M` records into a file of the task's own, whose entries the notebook appends to C."""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib
import io
import os
import shutil
import socket
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from a0nb.engine.batch.worker import AgentSpec, run_item, turn_from_dict, turn_to_dict
from a0nb.engine.turn import Turn
from a0nb.errors import ConfigError

__all__ = ["RayBackend", "run_remote"]

INSTALL = "executor='ray' needs Ray: pip install 'a0nb[ray]' (or pip install ray)"
# never shipped with the folder: environments, caches, VCS data (nor what the folder's .gitignore names)
EXCLUDES = [".git/", ".venv/", "venv/", "__pycache__/", ".ipynb_checkpoints/", "*.pyc", ".mypy_cache/",
            ".pytest_cache/", "node_modules/"]
MAX_FOLDER_BYTES = 200 << 20
LOCAL_CPUS = 2
PROBE_TIMEOUT = 5.0
# workers start when the first task needs them, not all at once with the node: Ray's raylet gives its dashboard
# agent a fixed 15 s to start (ray-project/ray#65983), and on two busy cores every process importing Ray at
# that moment counts
QUIET_START = {"enable_worker_prestart": False, "prestart_worker_first_driver": False}


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ConfigError(INSTALL) from None


def connect(ray: Any, address: str | None, num_cpus: int | None) -> None:
    """Join the running Ray, the cluster at `address`, or start a local one (`num_cpus`, default 2)."""
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
                              "configure_logging": True}
    if address not in (None, "auto", "local"):
        _probe(str(address))
    if address is None:  # a local Ray: on the loopback interface only
        kwargs.update(num_cpus=num_cpus or LOCAL_CPUS, _node_ip_address="127.0.0.1", _system_config=QUIET_START)
    try:
        ray.init(address=address, **kwargs)
    except Exception as exc:  # noqa: BLE001 - Ray raises plain Exception for a node that did not start
        if address:
            raise ConfigError(f"map(executor='ray'): could not join the Ray cluster at {address!r}: "
                              f"{type(exc).__name__}: {exc}. Check the address (ray://host:10001 or host:6379) and "
                              "that `ray status` works there, or leave address= out to start a local Ray") from None
        raise ConfigError(f"map(executor='ray'): the local Ray did not start: {type(exc).__name__}: {exc} On a busy "
                          "machine Ray's agents can miss its fixed 15 s start-up limit: try again, or start Ray "
                          "once with `ray start --head --num-cpus 2` and pass address='auto'") from None


def _probe(address: str, timeout: float = PROBE_TIMEOUT) -> None:
    """Ray retries an unreachable address for minutes; a plain connect says within seconds."""
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"map(executor='ray'): address {address!r} is not host:port (for example 10.0.0.5:6379 or "
                          "ray://10.0.0.5:10001)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"map(executor='ray'): could not reach the Ray cluster at {address!r} ({exc}). Check the "
                          "address and that `ray status` works there, or leave address= out to start a local Ray") from None


def _trusted(workdir: str, home: str | None) -> bool:
    """Whether this process trusts the notebook folder: the task's copy of it is then trusted too."""
    try:
        trust = importlib.import_module("a0nb.folder_trust")
    except ImportError:
        return True  # no folder trust in this version: nothing to carry over
    return bool(trust.is_trusted(workdir, Path(home) if home else None))


def _local_cassettes(agent: Any) -> dict[str, str]:
    """Points `record:` models at files of this task; returns {task file: cassette as the notebook names it}."""
    moved: dict[str, str] = {}
    for role, setting in (("chat", "model"), ("utility", "utility_model")):
        spec = agent.model_spec(role) if role == "chat" or agent.settings.utility_model else ""
        if not spec.startswith("record:"):
            continue
        cassette, _, inner = spec[len("record:"):].partition(":")
        own = next((k for k, v in moved.items() if v == cassette), None)
        if own is None:
            fd, own = tempfile.mkstemp(prefix="a0nb-ray-", suffix=Path(cassette).suffix or ".yaml")
            os.close(fd)
            os.unlink(own)
            moved[own] = cassette
        agent.configure(**{setting: f"record:{own}:{inner}"})
    return moved


def pack(folder: Path, limit: int = MAX_FOLDER_BYTES) -> tuple[str, bytes]:
    """The folder as a zip (without EXCLUDES and what its .gitignore names) and the zip's digest."""
    import pathspec
    ignore = folder / ".gitignore"
    spec = pathspec.GitIgnoreSpec.from_lines((ignore.read_text(encoding="utf-8").splitlines() if ignore.is_file()
                                              else []) + EXCLUDES)
    buffer, total = io.BytesIO(), 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if not path.is_file() or spec.match_file(rel):
                continue
            total += path.stat().st_size
            if total > limit:
                raise ConfigError(f"map(executor='ray'): the folder {folder} holds more than {limit >> 20} MB to ship "
                                  "to the workers; list large data in its .gitignore (the agents can still be told "
                                  "where to find it)")
            archive.write(path, rel)
    blob = buffer.getvalue()
    return hashlib.sha256(blob).hexdigest()[:16], blob


def unpack(digest: str, blob: bytes) -> Path:
    """The folder on this node, unpacked once (tasks of the same map share it)."""
    target = Path(tempfile.gettempdir()) / f"a0nb-ray-{digest}"
    if not target.is_dir():
        partial = Path(tempfile.mkdtemp(prefix=f".a0nb-ray-{digest}-"))
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            archive.extractall(partial)
        try:
            os.rename(partial, target)
        except OSError:  # another task unpacked it first
            shutil.rmtree(partial, ignore_errors=True)
    return target


def run_remote(spec: AgentSpec, index: int, prompt: str, digest: str, blob: bytes) -> dict[str, Any]:
    """The Ray task: runs in the node's copy of the notebook folder."""
    from a0nb.providers.cassette import load_cassette
    folder = unpack(digest, blob)
    if spec.env.get("_A0NB_TRUSTED") == "1":
        os.environ["A0NB_TRUST"] = os.pathsep.join(v for v in (str(folder), os.environ.get("A0NB_TRUST")) if v)
    moved: dict[str, str] = {}
    turn = run_item(spec, index, prompt, workdir=str(folder), prepare=lambda agent: moved.update(_local_cassettes(agent)))
    entries = {}
    for own, cassette in moved.items():
        path = Path(own)
        entries[cassette] = load_cassette(path) if path.is_file() else []
        path.unlink(missing_ok=True)
    return {"turn": turn_to_dict(turn), "cassettes": entries}


class RayBackend:
    name = "ray"

    def __init__(self, spec: AgentSpec, *, address: str | None = None, num_cpus: int | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.ray = _ray()
        connect(self.ray, address, num_cpus)
        env = dict(spec.env)
        if _trusted(spec.workdir, spec.home):
            env["_A0NB_TRUSTED"] = "1"
        self.spec = AgentSpec(**{**vars(spec), "env": env})
        runtime_env = {"env_vars": env}
        self.digest, blob = pack(Path(spec.workdir))
        self.blob = self.ray.put(blob)  # once per map: every task gets the same object
        # a worker that dies loses its item (reported), it is not run again: an item may have side effects
        opts = {"num_cpus": 1, "max_retries": 0, "runtime_env": runtime_env, **(options or {})}
        self.task = self.ray.remote(run_remote).options(**opts)
        self.refs: dict[int, Any] = {}

    def submit(self, index: int, prompt: str) -> cf.Future[Any]:
        ref = self.task.remote(self.spec, index, prompt, self.digest, self.blob)
        self.refs[index] = ref
        future: cf.Future[Any] = ref.future()
        return future

    def outcome(self, index: int, prompt: str, future: cf.Future[Any]) -> Turn:
        exceptions = self.ray.exceptions
        try:
            data = future.result()
        except (exceptions.TaskCancelledError, cf.CancelledError):
            return Turn(1, prompt, error="interrupted: the batch was interrupted while this item ran", interrupted=True)
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.ObjectLostError) as exc:
            return Turn(1, prompt, error=f"worker died: the Ray worker running this item exited "
                                         f"({type(exc).__name__}); only this item is lost")
        except exceptions.RayError as exc:
            text = str(exc).strip().splitlines()
            return Turn(1, prompt, error=f"the Ray task failed ({type(exc).__name__}): {text[-1] if text else ''}")
        finally:
            self.refs.pop(index, None)
        self._append(data.get("cassettes") or {})
        return turn_from_dict(data["turn"])

    def _append(self, cassettes: dict[str, list[dict[str, Any]]]) -> None:
        from a0nb.providers.cassette_format import append_entry, check_suffix
        for name, entries in cassettes.items():
            path = Path(name) if Path(name).is_absolute() else Path(self.spec.workdir) / name
            check_suffix(path)
            for entry in entries:
                append_entry(path, entry)

    def interrupt(self, index: int, future: cf.Future[Any]) -> None:
        ref = self.refs.get(index)
        if ref is not None:
            self.ray.cancel(ref)  # a KeyboardInterrupt in the task: the agent stops at its next checkpoint

    def close(self) -> None:
        self.refs.clear()  # the Ray instance stays up for the next map (ray.shutdown() ends it)

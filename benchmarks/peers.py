"""The peers' own environment, `benchmarks/.venv-peers` (never a dependency of a0nb): created on first
use with pinned versions, checked for each peer, and described (versions, or why a peer is unavailable)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-peers"

# the versions measured in shared/reference/peer-baselines.md; litellm equals the main venv's, so the floor
# (a bare litellm call) is the same code on both sides. ipykernel is only there to start a peer kernel (RSS).
PINS = {
    "ipython": "9.18.1",
    "litellm": "1.110.2",
    "jupyter-ai-magic-commands": "0.0.4",
    "smolagents": "1.26.0",
    "ipykernel": "7.4.0",
}
# peer name -> the import that proves it works
PROBES = {
    "ipython": "import IPython",
    "litellm": "import litellm",
    "jupyter-ai-magic-commands": "import jupyter_ai_magic_commands",
    "smolagents": "from smolagents import ToolCallingAgent",
    "ipykernel": "import ipykernel",
}
STAMP = VENV / ".a0bench-pins.json"


@dataclass
class Peers:
    """What the peer venv offers: `python` to run peer code with, and per peer a version or a reason."""

    python: Path | None = None
    versions: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    created_s: float | None = None  # seconds spent creating the venv in this run (None: it existed)
    disabled: bool = False

    def has(self, name: str) -> bool:
        return self.python is not None and name in self.versions

    def reason(self, name: str) -> str:
        if self.disabled:
            return "peers disabled (--no-peers)"
        return self.unavailable.get(name, "peer venv missing")

    def summary(self) -> str:
        if self.disabled:
            return "disabled (--no-peers)"
        ok = ", ".join(f"{k} {v}" for k, v in sorted(self.versions.items()))
        bad = "; ".join(f"{k}: {v}" for k, v in sorted(self.unavailable.items()))
        made = f"; venv created in {self.created_s:.0f} s" if self.created_s is not None else ""
        return (ok or "none") + (f"; unavailable: {bad}" if bad else "") + made

    def to_dict(self) -> dict[str, object]:
        return {"python": str(self.python) if self.python else None, "versions": self.versions,
                "unavailable": self.unavailable, "created_s": self.created_s, "disabled": self.disabled,
                "pins": PINS, "summary": self.summary()}


def _python() -> Path:
    return VENV / "bin" / "python"


def _base_python() -> str:
    """The interpreter the main venv was made from, so both sides run the same CPython build."""
    cfg = Path(sys.prefix) / "pyvenv.cfg"
    if cfg.is_file():
        for line in cfg.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "executable" and Path(value.strip()).exists():
                return value.strip()
    return shutil.which("python3") or sys.executable


def _pip(args: list[str], log: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    with open(log, "a") as out:
        return subprocess.run([str(_python()), "-m", "pip", *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                              text=True, timeout=900, check=False)


def _stamp_ok() -> bool:
    try:
        return bool(json.loads(STAMP.read_text()) == PINS) and _python().exists()
    except (OSError, ValueError):
        return False


def ensure(log: Path, say: Callable[[str], None] = print) -> Peers:
    """Create (or complete) the peer venv, then probe each peer. Installs one peer at a time when the
    all-at-once install fails, so one broken package costs only its own rows."""
    peers = Peers()
    created = None
    if not _stamp_ok():
        start = time.perf_counter()
        say(f"creating the peer venv {VENV.relative_to(HERE.parent)} (pinned: "
            + ", ".join(f"{k}=={v}" for k, v in PINS.items()) + ") …")
        if not _python().exists():
            made = subprocess.run([_base_python(), "-m", "venv", str(VENV)], capture_output=True, text=True, check=False)
            if made.returncode != 0:
                peers.unavailable = {k: f"venv creation failed: {made.stderr.strip()[-200:]}" for k in PINS}
                return peers
        specs = [f"{k}=={v}" for k, v in PINS.items()]
        if _pip(["install", "-q", *specs], log).returncode != 0:
            for spec in specs:  # find which one fails; the others still count
                if _pip(["install", "-q", spec], log).returncode != 0:
                    peers.unavailable[spec.split("==")[0]] = f"pip install {spec} failed (see {log.name})"
        if not peers.unavailable:
            STAMP.write_text(json.dumps(PINS))
        created = time.perf_counter() - start
    peers.created_s = created
    peers.python = _python() if _python().exists() else None
    if peers.python is None:
        return peers
    for name, probe in PROBES.items():
        if name in peers.unavailable:
            continue
        code = f"{probe}\nimport importlib.metadata as m; print(m.version({name!r}))"
        p = subprocess.run([str(peers.python), "-c", code], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True"), check=False)
        if p.returncode == 0:
            peers.versions[name] = p.stdout.strip().splitlines()[-1]
        else:
            peers.unavailable[name] = f"`{probe}` failed: {(p.stderr.strip().splitlines() or ['?'])[-1][:160]}"
    return peers


def disabled() -> Peers:
    return Peers(disabled=True)

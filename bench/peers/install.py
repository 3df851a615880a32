"""Where scripts/peers-setup puts the peers, and the refusal when they are not there."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / ".peers"
SETUP = "scripts/peers-setup"


@dataclass(frozen=True)
class Peer:
    folder: str
    package: str
    version: str
    binary: str

    @property
    def path(self) -> Path:
        return PEERS / self.folder / "node_modules" / ".bin" / self.binary

    def installed_version(self) -> str | None:
        manifest = PEERS / self.folder / "node_modules" / self.package / "package.json"
        try:
            version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        except (OSError, ValueError):
            return None
        return str(version) if version else None


BACKLOG = Peer("backlog", "backlog.md", "1.52.0", "backlog")
TASKMASTER = Peer("taskmaster", "task-master-ai", "0.43.1", "task-master-ai")
TASKMASTER_CLI = Peer("taskmaster", "task-master-ai", "0.43.1", "task-master")


class PeerMissing(RuntimeError):
    """A peer the run asked for is not installed at its pinned version."""


def require(peer: Peer) -> Path:
    """The peer's binary, or PeerMissing saying how to install it (the versions are pinned so
    two runs compare the same programs)."""
    if shutil.which("node") is None:
        raise PeerMissing(
            f"{peer.package} needs Node.js, which is not installed; measure Crewboard alone with "
            "--systems crewboard-stdio,crewboard-http"
        )
    found = peer.installed_version()
    if found != peer.version or not peer.path.exists():
        state = f"version {found} is installed" if found else "it is not installed"
        raise PeerMissing(
            f"{peer.package}@{peer.version} is needed in {PEERS / peer.folder} but {state}: run "
            f"`bash {SETUP}` (or measure Crewboard alone with "
            "--systems crewboard-stdio,crewboard-http)"
        )
    return peer.path

"""Several Crewboard nodes on one PostgreSQL database behind HAProxy, on one machine.

    python -m bench.cluster [--nodes 3] [--port 8800] [--database-url URL]
    (or scripts/scale-out)

starts node 1 first (it sets up an empty database and prints the first token), then the
others, each `crewboard serve` on its own port with its own data folder and a node name
(sent as X-Crewboard-Node), then HAProxy from the distribution in front of them on `--port`:
round robin, no affinity, an HTTP readiness check on /readyz every second (a node that fails
two checks, say it cannot reach the database, is taken out; one good check brings it back), a request that could not be
delivered retried on another node, and long timeouts for event streams. Ctrl-C stops it all.

The tests (`tests/e2e/test_cluster.py`) and the cross-node benchmark use `Cluster` directly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx

HAPROXY = """global
    maxconn 4000

defaults
    mode http
    option redispatch
    retries 3
    retry-on conn-failure empty-response response-timeout
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s

frontend crewboard
    bind 127.0.0.1:{port}
    default_backend nodes

backend nodes
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
{servers}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Node:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Cluster:
    database_url: str
    nodes: int = 3
    port: int = field(default_factory=free_port)
    folder: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="crewboard-cluster-"))
    )
    running: list[Node] = field(default_factory=list)
    balancer: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Cluster:
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not Path(haproxy).exists():
            raise RuntimeError("HAProxy is not installed (Debian: apt-get install haproxy)")
        for number in range(1, self.nodes + 1):
            node = self._start_node(number)
            self.running.append(node)
            self.wait_healthy(node.url)  # node 1 sets the database up before the others start
        servers = "\n".join(
            f"    server {n.name} 127.0.0.1:{n.port} check inter 1s fall 2 rise 1"
            for n in self.running
        )
        config = self.folder / "haproxy.cfg"
        config.write_text(HAPROXY.format(port=self.port, servers=servers))
        with (self.folder / "haproxy.log").open("wb") as out:  # the child keeps its own copy
            self.balancer = subprocess.Popen(
                [haproxy, "-f", str(config), "-db"], stdout=out, stderr=subprocess.STDOUT
            )
        self.wait_healthy(self.url)
        return self

    def _start_node(self, number: int) -> Node:
        port = free_port()
        name = f"node{number}"
        data = self.folder / name
        data.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "CREWBOARD_DATABASE_URL": self.database_url,
            "CREWBOARD_DATA_DIR": str(data),
            "CREWBOARD_HOST": "127.0.0.1",
            "CREWBOARD_PORT": str(port),
            "CREWBOARD_BASE_URL": self.url,
            "CREWBOARD_NODE_NAME": name,
            "CREWBOARD_LOG_LEVEL": "warning",
        }
        log = self.folder / f"{name}.log"
        crewboard = Path(sys.executable).parent / "crewboard"
        with log.open("wb") as out:  # the child keeps its own copy
            process = subprocess.Popen(
                [str(crewboard), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        return Node(name, port, process, log)

    def wait_healthy(self, url: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with suppress(httpx.HTTPError):
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"{url} did not become healthy in {timeout} s; logs in {self.folder}")

    def kill(self, name: str) -> None:
        """Stop one node at once (SIGKILL): what a crash looks like to the others."""
        node = next(n for n in self.running if n.name == name)
        node.process.kill()
        node.process.wait(10)

    def stop(self) -> None:
        for process in [*(n.process for n in self.running), self.balancer]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in [*(n.process for n in self.running), self.balancer]:
            if process is not None:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()

    def first_start_output(self) -> str:
        return self.running[0].log.read_text(errors="replace") if self.running else ""

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--port", type=int, default=8800, help="the load balancer's port")
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "CREWBOARD_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/crewboard"
        ),
    )
    options = parser.parse_args()
    cluster = Cluster(options.database_url, nodes=options.nodes, port=options.port)
    cluster.start()
    print(cluster.first_start_output())
    print(f"{options.nodes} nodes behind HAProxy at {cluster.url}:")
    for node in cluster.running:
        print(f"  {node.name}: {node.url} (log {node.log})")
    print("Ctrl-C stops them all.")
    try:
        while all(n.process.poll() is None for n in cluster.running):
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A local Neo4j Community 5.26 server without Docker: jars from Maven Central, our launcher.

    python3 tools/neo4j_local.py install        # fetch the jars, compile the launcher (once)
    python3 tools/neo4j_local.py start          # start in the background (or reuse a running one)
    python3 tools/neo4j_local.py status
    python3 tools/neo4j_local.py stop           # stop it; the data stays

``make neo4j`` / ``make neo4j-stop`` call this. Everything lives in the ignored folder ``.neo4j/``
(``BASISPATH_NEO4J_HOME`` to move it): ``lib/`` the Neo4j jars (GPLv3: fetched, never committed),
``classes/`` the compiled launcher, ``dbms/`` the database, ``password`` (generated, mode 0600),
``env`` (``export NEO4J_URI=... NEO4J_USER=... NEO4J_PASSWORD=...``, mode 0600), ``neo4j.pid``,
``neo4j.log``. The tests import this module to start a throwaway server of their own in a
temporary home (sharing the jars), so they never touch the data of a server started by hand.

Only the standard library: it runs before the project's virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tools" / "neo4j-local"
NEO4J_VERSION = "5.26.30"  # the pom's neo4j.version; written into the install stamp
USER = "neo4j"
HOST = "127.0.0.1"
DEFAULT_PORT = 7687
HEAP_ENV = "BASISPATH_NEO4J_HEAP"  # JVM heap, e.g. 1g (default) or 4g for big benchmark loads
PAGECACHE_ENV = "BASISPATH_NEO4J_PAGECACHE_MB"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
# What Neo4j's own start script opens up: its page cache and I/O use these internals.
JVM_OPENS = [
    f"--add-opens=java.base/{package}=ALL-UNNAMED"
    for package in ("java.nio", "java.io", "sun.nio.ch", "java.util.concurrent", "java.lang")
]


class Neo4jLocalError(Exception):
    """The local server cannot be installed or started (one line, says what to do)."""


@dataclass(frozen=True)
class Server:
    home: Path
    uri: str
    user: str
    password: str
    pid: int


def default_home() -> Path:
    return Path(os.environ.get("BASISPATH_NEO4J_HOME") or ROOT / ".neo4j")


def lib_dir(home: Path) -> Path:
    return home / "lib"


def _stamp(home: Path) -> Path:
    return home / "lib" / ".installed"


def missing_tools() -> list[str]:
    return [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


def _source_digest() -> str:
    """What the install is made from: redone when the pom or the launcher changes."""
    digest = hashlib.sha256()
    for name in ("pom.xml", "Launcher.java"):
        digest.update((SOURCE / name).read_bytes())
    return f"{NEO4J_VERSION} {digest.hexdigest()[:16]}"


def installed(home: Path | None = None) -> bool:
    home = home or default_home()
    stamp = _stamp(home)
    return stamp.exists() and stamp.read_text().strip() == _source_digest() and (home / "classes" / "Launcher.class").exists()


def install(home: Path | None = None, quiet: bool = False) -> Path:
    """Fetch Neo4j's jars into HOME/lib and compile the launcher into HOME/classes (once)."""
    home = home or default_home()
    if installed(home):
        return home
    missing = missing_tools()
    if missing:
        raise Neo4jLocalError(f"a local Neo4j needs {', '.join(missing)} (OpenJDK 17 and Maven) on PATH")
    home.mkdir(parents=True, exist_ok=True)
    lib, staging = lib_dir(home), home / "lib.partial"
    shutil.rmtree(staging, ignore_errors=True)
    began = time.monotonic()
    if not quiet:
        print(f"fetching Neo4j Community {NEO4J_VERSION} jars with Maven into {lib} ...", file=sys.stderr, flush=True)
    _check_call(
        ["mvn", "-B", "-q", "-f", str(SOURCE / "pom.xml"), "dependency:copy-dependencies", f"-DoutputDirectory={staging}"],
        "Maven could not fetch the Neo4j jars",
    )
    shutil.rmtree(lib, ignore_errors=True)
    staging.rename(lib)  # a half-finished download never looks installed
    classes = home / "classes"
    shutil.rmtree(classes, ignore_errors=True)
    _check_call(
        ["javac", "-nowarn", "-cp", f"{lib}/*", "-d", str(classes), str(SOURCE / "Launcher.java")],
        "javac could not compile tools/neo4j-local/Launcher.java",
    )
    _stamp(home).write_text(_source_digest() + "\n")
    if not quiet:
        size = sum(p.stat().st_size for p in lib.glob("*.jar")) / 2**20
        print(f"installed {len(list(lib.glob('*.jar')))} jars ({size:.0f} MiB) in {time.monotonic() - began:.0f} s", file=sys.stderr)
    return home


def _check_call(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = " | ".join(line for line in proc.stdout.strip().splitlines()[-3:])
        raise Neo4jLocalError(f"{what} (exit {proc.returncode}): {tail}")


def _alive(pid: int) -> bool:
    """Whether PID is a live launcher of ours (not a recycled PID of something else)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"Launcher" in cmdline


def _free_port(preferred: int | None) -> int:
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise Neo4jLocalError("no free TCP port on 127.0.0.1")


def _read_running(home: Path) -> Server | None:
    try:
        pid = int((home / "neo4j.pid").read_text().split()[0])
        port = int((home / "neo4j.port").read_text().strip())
        password = (home / "password").read_text().strip()
    except (OSError, ValueError, IndexError):
        return None
    if not _alive(pid):
        return None
    return Server(home, f"bolt://{HOST}:{port}", USER, password, pid)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def start(home: Path | None = None, port: int | None = DEFAULT_PORT, jars: Path | None = None, quiet: bool = False) -> Server:
    """Start a server with its database in HOME, or return the one already running there.

    ``jars`` is a home whose lib/ and classes/ to use (the tests share the repo's); the server's
    own files go into HOME. Waits until Bolt answers; raises Neo4jLocalError with the log's tail
    if it does not within START_TIMEOUT_S.
    """
    home = (home or default_home()).resolve()
    running = _read_running(home)
    if running is not None:
        return running
    jars = install(jars or home, quiet=quiet)
    home.mkdir(parents=True, exist_ok=True)
    password_file = home / "password"
    if not password_file.exists():
        _write_private(password_file, secrets.token_urlsafe(18) + "\n")
    password = password_file.read_text().strip()
    port = _free_port(port)
    log_path = home / "neo4j.log"
    heap = os.environ.get(HEAP_ENV, "1g")
    pagecache = os.environ.get(PAGECACHE_ENV, "256")
    argv = [
        "java", f"-Xmx{heap}", f"-Xms{heap}", "-XX:+UseG1GC", *JVM_OPENS,
        "-cp", f"{lib_dir(jars)}/*{os.pathsep}{jars / 'classes'}",
        "Launcher", str(home), str(port), pagecache,
    ]
    began = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    (home / "neo4j.pid").write_text(f"{proc.pid}\n")
    (home / "neo4j.port").write_text(f"{port}\n")
    try:
        while True:
            text = log_path.read_text(errors="replace")
            if "READY" in text.splitlines():
                break
            if proc.poll() is not None or time.monotonic() - began > START_TIMEOUT_S:
                tail = " | ".join(text.strip().splitlines()[-3:]) or "no output"
                raise Neo4jLocalError(f"local Neo4j did not start (see {log_path}): {tail}")
            time.sleep(0.2)
    except BaseException:  # not started, timed out, or interrupted (Ctrl-C, SIGTERM): leave no server behind
        _end(proc.pid)
        (home / "neo4j.pid").unlink(missing_ok=True)
        raise
    server = Server(home, f"bolt://{HOST}:{port}", USER, password, proc.pid)
    _write_private(
        home / "env",
        f"export NEO4J_URI={server.uri} NEO4J_USER={server.user} NEO4J_PASSWORD={server.password}\n",
    )
    if not quiet:
        print(f"Neo4j {NEO4J_VERSION} ready at {server.uri} after {time.monotonic() - began:.1f} s (PID {proc.pid}); "
              f"credentials: . {home / 'env'}", file=sys.stderr)
    return server


def _end(pid: int) -> None:
    """Stop our launcher PID: SIGTERM (a clean shutdown), SIGKILL after STOP_TIMEOUT_S."""
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def stop(home: Path | None = None, quiet: bool = False) -> bool:
    """Stop the server running in HOME (SIGTERM: a clean shutdown); False if none ran.

    The server is signalled before its pid file is removed, so a stop that is itself
    interrupted leaves either the file (a later stop finds the server) or a server that is
    already shutting down."""
    home = (home or default_home()).resolve()
    running = _read_running(home)
    if running is not None:
        os.kill(running.pid, signal.SIGTERM)
    for name in ("neo4j.pid", "env"):
        (home / name).unlink(missing_ok=True)
    if running is None:
        if not quiet:
            print(f"no local Neo4j running in {home}", file=sys.stderr)
        return False
    _end(running.pid)
    if not quiet:
        print(f"stopped local Neo4j (PID {running.pid}); data kept in {home / 'dbms'}", file=sys.stderr)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["install", "start", "stop", "status"])
    parser.add_argument("--home", type=Path, default=None, help="state folder (default .neo4j/)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="Bolt port (a free one if taken)")
    parser.add_argument(
        "--if-possible", action="store_true",
        help="install: without java/javac/mvn only warn (the Neo4j tests then skip), unless BASISPATH_REQUIRE_NEO4J=1",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            missing = missing_tools()
            if args.if_possible and missing and os.environ.get("BASISPATH_REQUIRE_NEO4J") != "1":
                print(f"warning: {', '.join(missing)} not found: no local Neo4j; the Neo4j tests will skip", file=sys.stderr)
                return 0
            install(args.home)
        elif args.command == "start":
            server = start(args.home, args.port)
            print(f"Neo4j at {server.uri} (PID {server.pid})")
        elif args.command == "stop":
            stop(args.home)
        else:
            running = _read_running((args.home or default_home()).resolve())
            print(f"running at {running.uri} (PID {running.pid})" if running else "not running")
            return 0 if running else 1
    except Neo4jLocalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

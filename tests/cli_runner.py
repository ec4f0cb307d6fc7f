"""Running the ``basispath`` command line from the tests, the same way everywhere.

Every subprocess is ``python -m basispath_graph.cli.main`` (the console script's entry point)
under this interpreter, with :func:`cli_env`: the caller's environment without the
variables that would change what the CLI does (``BASISPATH_STORE``,
``BASISPATH_MAX_WEIGHTS``, ``BASISPATH_DEBUG``) and with a wide, colourless terminal, so help
text is not wrapped mid-word and has no escapes.

- :func:`cli` runs one command to the end (``subprocess.run``) and can check its exit code.
- :func:`start` / :func:`finish` / :func:`run_many` run commands in parallel: interpreter
  start-up dominates the cost (~0.5 s a run), so runs that do not depend on each other are
  started together and only the collected results are checked.
- :func:`run_in_process` calls the CLI's ``main()`` in the test process (fast; no new
  interpreter), with the same environment cleaning done through ``monkeypatch``.
- :class:`Terminal` / :func:`on_terminal` run one command with stdout and stderr on a
  pseudo-terminal of a given width, as a user at a terminal sees it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Tuple

import pytest

MODULE = "basispath_graph.cli.main"
#: Variables removed from the environment of every run (tests that need one set it again).
DROPPED = ("BASISPATH_STORE", "BASISPATH_MAX_WEIGHTS", "BASISPATH_DEBUG")
#: A wide, colourless terminal.
TERMINAL = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
TIMEOUT = 120
MAX_PARALLEL = max(2, 2 * (os.cpu_count() or 1))

Env = Mapping[str, Optional[str]]
Job = Tuple[Sequence, Optional[Path], Optional[Env]]  # (args, cwd, extra env)


def cli_env(extra: Env | None = None) -> dict[str, str]:
    """This process's environment without :data:`DROPPED`, with :data:`TERMINAL`, then EXTRA.

    A value of ``None`` in EXTRA removes that variable (e.g. ``{"NEO4J_PASSWORD": None}``).
    """
    env = dict(os.environ)
    for key in DROPPED:
        env.pop(key, None)
    env.update(TERMINAL)
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def command(args: Iterable) -> list[str]:
    """The argv that runs the CLI with ARGS (each turned into a string)."""
    return [sys.executable, "-m", MODULE, *map(str, args)]


def show(res: subprocess.CompletedProcess) -> str:
    """A run, for assertion messages."""
    return f"args: {res.args}\nexit: {res.returncode}\nstdout: {res.stdout!r}\nstderr: {res.stderr!r}"


def cli(
    *args,
    env: Env | None = None,
    check: int | None = None,
    cwd: Path | str | None = None,
    stdin=None,
) -> subprocess.CompletedProcess:
    """Run ``basispath ARGS`` to the end and return it with text stdout and stderr.

    ENV adds to (or, with ``None`` values, removes from) :func:`cli_env`; STDIN is passed
    on to :func:`subprocess.run` (``None``: inherited). With CHECK, the exit code must be it.
    """
    res = subprocess.run(command(args), capture_output=True, text=True, env=cli_env(env), cwd=cwd, stdin=stdin)
    if check is not None:
        assert res.returncode == check, f"expected exit {check}\n{show(res)}"
    return res


def start(args: Iterable, cwd: Path | str | None = None, env: Env | None = None, *, text: bool = True) -> subprocess.Popen:
    """Start ``basispath ARGS`` (stdin empty, output captured); collect it with :func:`finish`.

    With ``text=False`` stdout stays bytes (for picture output); stderr is always text.
    """
    return subprocess.Popen(
        command(args),
        cwd=cwd,
        env=cli_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
    )


def _text(data: str | bytes) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def finish(proc: subprocess.Popen, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Wait for a run from :func:`start`; a run that takes longer than TIMEOUT fails the test."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"{proc.args} timed out\nstdout: {out}\nstderr: {_text(err)}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, _text(err))


def run_many(jobs: Iterable[Job], *, text: bool = True) -> list[subprocess.CompletedProcess]:
    """Run ``(args, cwd, extra env)`` jobs, :data:`MAX_PARALLEL` at a time; results in job order."""
    jobs = list(jobs)
    results: list[subprocess.CompletedProcess] = []
    for first in range(0, len(jobs), MAX_PARALLEL):
        procs = [start(args, cwd, env, text=text) for args, cwd, env in jobs[first : first + MAX_PARALLEL]]
        results.extend(finish(p) for p in procs)
    return results


def run_in_process(args, cwd: Path, monkeypatch, capsys) -> subprocess.CompletedProcess:
    """Run the CLI's real entry point (``main()``) in this process: much faster than a
    subprocess for checking messages and exit codes (a heavy import such as PyTorch happens
    once, not per run). The environment is cleaned as for a subprocess, through MONKEYPATCH."""
    from basispath_graph.cli import main as cli_main

    for key in DROPPED:
        monkeypatch.delenv(key, raising=False)
    for key, value in TERMINAL.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["basispath", *map(str, args)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        cli_main.main()
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, info.value.code, captured.out, captured.err)


class Terminal:
    """``basispath ARGS`` with stdin, stdout and stderr on a pseudo-terminal COLUMNS wide (the
    window size and ``$COLUMNS`` both say so; ``TERM=xterm``: rich takes a dumb terminal to be
    80 columns whatever it is told), read as it goes. Ctrl-C works as at a shell: SIGINT is
    not ignored in the command even where the tests run with it ignored (in the background)."""

    def __init__(self, args, columns: int = 200, env: Env | None = None, cwd: Path | str | None = None):
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        try:
            self.proc = subprocess.Popen(
                command(args), stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                env=cli_env({"COLUMNS": str(columns), "TERM": "xterm", **(env or {})}),
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )
        finally:
            os.close(slave)
        self.output = b""
        self.closed = False

    def _read(self, timeout: float) -> bool:
        """Read what is there within TIMEOUT seconds; False once the other end has gone."""
        import select

        if self.closed:
            return False
        if not select.select([self.master], [], [], timeout)[0]:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the last holder of the terminal's other end has gone
            data = b""
        if not data:
            self.closed = True
            return False
        self.output += data
        return True

    @property
    def text(self) -> str:
        """What the terminal received so far, ``\\r\\n`` turned back into ``\\n``."""
        return self.output.decode(errors="replace").replace("\r\n", "\n")

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> None:
        """Read until TEXT has been printed; a failed test when the command ends or TIMEOUT passes first."""
        deadline = time.monotonic() + timeout
        while text not in self.text:
            if time.monotonic() > deadline or not self._read(min(0.2, max(0.0, deadline - time.monotonic()))):
                self.proc.kill()
                pytest.fail(f"{self.proc.args}: {text!r} not printed\n{self.text}")

    def finish(self, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
        """Read to the end; stdout is everything the terminal received, stderr is empty."""
        deadline = time.monotonic() + timeout
        while self._read(0.2):
            if time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"{self.proc.args} timed out\n{self.text}")
        os.close(self.master)
        code = self.proc.wait(timeout=TIMEOUT)
        return subprocess.CompletedProcess(self.proc.args, code, self.text, "")


def on_terminal(*args, columns: int, env: Env | None = None, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
    """Run ``basispath ARGS`` to the end on a :class:`Terminal` COLUMNS wide."""
    return Terminal(args, columns, env, cwd).finish()

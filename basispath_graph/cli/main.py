"""Entry point of ``basispath``: registers the commands and turns usage errors into one line."""

from __future__ import annotations

import functools
import os
import sys
from typing import NoReturn

import typer

from ..errors import BasispathError
from .common import EXIT_BAD_INPUT, EXIT_INTERNAL, failure
from .help import BasispathCommand, BasispathGroup
from .solve_cmd import solve_command
from .store_cmds import delete_command, ingest_command, query_command, run_command, runs_command
from .compare_cmd import compare_command
from .express_cmd import express_command
from .show_cmd import show_command
from .spec_cmds import presets_command, spec_app
from .verify_cmd import verify_command
from .through_cmd import through_command
from .why_cmd import why_command

app = typer.Typer(
    name="basispath",
    help="Basis path sets of ReLU networks with skip connections (Algorithm DEAH), certified exactly.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=BasispathGroup,
)
app.command("solve")(solve_command)
app.command("verify")(verify_command)
app.command("express")(express_command)
app.command("run")(run_command)
app.command("query")(query_command)
app.command("ingest")(ingest_command)
app.command("runs")(runs_command)
app.command("delete")(delete_command)
app.command("why")(why_command)
app.command("through")(through_command)
app.command("compare")(compare_command)
app.command("show")(show_command)
app.command("presets")(presets_command)
app.add_typer(spec_app, name="spec", cls=BasispathGroup)

#: Exit code when stdout is closed before we are done (``basispath runs | head -1``): 141 =
#: 128 + SIGPIPE, what the shell reports for ``seq 1000000 | head -1`` and other Unix tools that
#: SIGPIPE ends. Not 0: the output was cut short, so under ``set -o pipefail`` a script sees
#: that not everything was read; and never 1, which means "not certified". (When the reader
#: leaves in the middle of one large write, the kernel takes part of it and Python reports no
#: error: that run ends as if all was read, exit 0, also without a traceback.)
EXIT_BROKEN_PIPE = 141


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("basispath-graph")
    except PackageNotFoundError:  # run from a source tree that is not installed
        from .. import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:  # eager: runs while the options are read, before a command is asked for
        try:
            print(f"basispath {_version()}", flush=True)
        except BrokenPipeError:
            _stdout_closed()
        raise typer.Exit(0)


@app.callback()
def _main_options(
    show_version: bool = typer.Option(
        False, "--version", help="Print 'basispath VERSION' and exit.", is_eager=True, callback=_print_version,
    ),
) -> None:
    """Basis path sets of ReLU networks with skip connections (Algorithm DEAH), certified exactly."""


def _stdout_closed() -> "NoReturn":
    """The reader of stdout went away: exit quietly (no traceback, no 'error:' line).

    Python would otherwise report the BrokenPipeError again when it flushes stdout at exit, so
    stdout is pointed at /dev/null first (the recipe in the signal module's documentation).
    SystemExit unwinds the stack, so an open store is still closed (its lock released)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (tests' capture)
        pass
    raise SystemExit(EXIT_BROKEN_PIPE)


def _quiet_broken_pipes() -> None:
    """rich's Console exits with code 1 when stdout is closed (Console.on_broken_pipe, an
    override hook); here 1 means "not certified", so every Console exits as print() does."""
    from rich.console import Console

    Console.on_broken_pipe = lambda self: _stdout_closed()


def _pipe_safe(command):
    """COMMAND with a closed stdout ending it as :func:`_stdout_closed` says: typer itself turns
    a BrokenPipeError into exit code 1 (with or without standalone mode), which here would say
    "not certified"."""

    @functools.wraps(command)  # typer reads the options from the signature, which wraps keeps
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            _stdout_closed()

    return wrapper


for _info in (*app.registered_commands, *spec_app.registered_commands):
    _info.callback = _pipe_safe(_info.callback)
    _info.cls = BasispathCommand if _info.cls in (None, typer.core.TyperCommand) else _info.cls  # help that reflows, flags without '<bool>' (cli/help.py)


def main() -> None:
    """Run the app; a usage error becomes ``error: ...`` and exit code 2, never a traceback.

    Typer's own usage errors (unknown option, missing argument, bad integer) come from the
    click layer it bundles; they all carry ``format_message``, which is all we rely on, so this
    works whichever click typer ships with.
    """
    _quiet_broken_pipes()
    try:
        code = app(standalone_mode=False)
    except BrokenPipeError:
        _stdout_closed()
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("error: aborted", file=sys.stderr)
        code = 130
    except BasispathError as exc:  # refused on purpose somewhere below a command: one line, mapped code
        code = failure(exc).exit_code
    except MemoryError:  # numpy or Python could not allocate: one line with the estimate and the flag, exit 2
        from ..guards import out_of_memory_message

        print(f"error: {out_of_memory_message()}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except Exception as exc:
        if not hasattr(exc, "format_message"):
            if os.environ.get("BASISPATH_DEBUG"):
                raise
            # A bug, not bad input: say so in one line; BASISPATH_DEBUG=1 shows the traceback.
            print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with BASISPATH_DEBUG=1 and report it", file=sys.stderr)
            sys.exit(EXIT_INTERNAL)
        message = " ".join(exc.format_message().split())
        if not message:  # bare ``basispath``: help was printed, nothing went wrong
            sys.exit(0)
        print(f"error: {message}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    try:
        sys.stdout.flush()  # a closed pipe shows here, not as "Exception ignored" at exit
    except BrokenPipeError:
        _stdout_closed()
    sys.exit(code or 0)


if __name__ == "__main__":
    main()

"""Entry point of ``basispath``: registers the commands and turns usage errors into one line."""

from __future__ import annotations

import os
import sys

import typer

from .common import EXIT_BAD_INPUT, EXIT_INTERNAL
from .solve_cmd import solve_command
from .store_cmds import ingest_command, query_command, run_command, runs_command
from .compare_cmd import compare_command
from .show_cmd import show_command
from .spec_cmds import presets_command, spec_app
from .verify_cmd import verify_command
from .why_cmd import why_command

app = typer.Typer(
    name="basispath",
    help="Basis path sets of ReLU networks with skip connections (Algorithm DEAH), certified exactly.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)
app.command("solve")(solve_command)
app.command("verify")(verify_command)
app.command("run")(run_command)
app.command("query")(query_command)
app.command("ingest")(ingest_command)
app.command("runs")(runs_command)
app.command("why")(why_command)
app.command("compare")(compare_command)
app.command("show")(show_command)
app.command("presets")(presets_command)
app.add_typer(spec_app, name="spec")


def main() -> None:
    """Run the app; a usage error becomes ``error: ...`` and exit code 2, never a traceback.

    Typer's own usage errors (unknown option, missing argument, bad integer) come from the
    click layer it bundles; they all carry ``format_message``, which is all we rely on, so this
    works whichever click typer ships with.
    """
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("error: aborted", file=sys.stderr)
        code = 130
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
    sys.exit(code or 0)


if __name__ == "__main__":
    main()

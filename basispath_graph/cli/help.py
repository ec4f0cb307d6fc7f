"""How ``--help`` looks, for every command at once.

Typer (0.29, rich help) keeps a docstring's hard line breaks after the first paragraph, so a
sentence broke wherever the source line did; it labels every flag ``<bool>`` and shows an
argument as ``{spec}``. :class:`BasispathCommand` and :class:`BasispathGroup` (set in
``main.py`` for every command and group) fix that once:

- prose paragraphs are joined into one line each, so the terminal wraps them; a paragraph with
  an indented line (the examples) is kept verbatim, one command per line;
- flags have no type label;
- the usage line wraps at the terminal's width, not at 80 columns;
- arguments are named in capitals (``SPEC``, ``RUN_ID``), ``[SPEC]`` when optional, in the usage
  line as click prints them.
"""

from __future__ import annotations

import inspect

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from ..solver import DEFAULT_ENGINE

ENGINE_HELP = (
    f"Engine: {DEFAULT_ENGINE} (default: certified, no repair) | deah (the paper's Algorithm DEAH, "
    "faithfully, repaired visibly when its union is not a basis) | skeleton (linear time)."
)


#: The usage line is wrapped by click's formatter at min(terminal, this) columns (click's own
#: default, 80, broke 'basispath spec from-torch [OPTIONS] MODULE:FACTORY' on a wide terminal).
USAGE_WIDTH = 1000


def reflow(text: str | None) -> str | None:
    """TEXT (a docstring) with every prose paragraph on one line and indented ones verbatim.

    The summary is followed by three newlines, not two: typer dedents the rest of the help as
    one block (``inspect.cleandoc``, which skips the block's first line), and a leading empty
    line keeps the examples indented under their heading."""
    if not text:
        return text
    body, mark, tail = inspect.cleandoc(text).partition("\f")
    paragraphs = []
    for para in body.split("\n\n"):
        lines = para.split("\n")
        if any(line[:1].isspace() or line.startswith("\b") for line in lines):
            paragraphs.append(para)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines if line.strip()))
    paragraphs = [p for p in paragraphs if p.strip()]
    if not paragraphs:
        return text
    out = paragraphs[0] + ("\n\n\n" + "\n\n".join(paragraphs[1:]) if len(paragraphs) > 1 else "")
    return out + mark + tail


def _tidy_params(params) -> None:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""  # no '<bool>' after a flag
        elif isinstance(param, TyperArgument) and param.metavar is None and param.name:
            param.metavar = param.name.upper()


def _usage_pieces(command, ctx) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = param.display_name_raw
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        else:
            pieces.extend(param.get_usage_pieces(ctx))
    return pieces


class _TidyHelp:
    """What commands and groups share: reflowed help, plain flags, SPEC-style argument names."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow(self.help)
        self.context_settings.setdefault("max_content_width", USAGE_WIDTH)

    def get_params(self, ctx):
        params = super().get_params(ctx)  # with --help and typer's completion options, added late
        _tidy_params(params)
        return params


class BasispathCommand(_TidyHelp, TyperCommand):
    """A typer command whose help reflows, with plain flags and SPEC-style argument names."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return _usage_pieces(self, ctx)


class BasispathGroup(_TidyHelp, TyperGroup):
    """:class:`BasispathCommand`'s help for a group (``basispath``, ``basispath spec``)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [*_usage_pieces(self, ctx), self.subcommand_metavar]

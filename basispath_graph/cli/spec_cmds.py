"""``basispath presets`` and ``basispath spec preset|from-torch``: write network specs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..network import kind_counts
from ..fileio import write_atomic
from ..general.presets import GENERAL_FAMILIES, general_preset_spec
from ..presets import FAMILIES, PresetError, preset_spec, weight_count
from ..spec import MAX_WEIGHTS_ENV, SpecError, parse_spec, resolve_max_weights
from .common import fail

TORCH_MISSING = "'spec from-torch' needs PyTorch in this environment: pip install torch (a CPU build is enough)"

spec_app = typer.Typer(
    name="spec",
    help="Write network specs: from a named architecture family or from a PyTorch or ONNX model.",
    no_args_is_help=True,
)


def spec_json(spec: dict) -> str:
    """A spec as JSON text: one key a line, each list on one line, a final newline."""
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(spec[k])}" for k in ("name", "widths", "skips"))
    return "{\n" + body + "\n}\n"


def _check_output(output: Optional[Path]) -> None:
    if output is not None:
        target = output.expanduser()
        if target.is_dir() or not (target.parent if str(target.parent) else Path(".")).is_dir():
            raise fail(f"cannot write spec file {output}: not a file in an existing folder")


def _write(output: Optional[Path], text: str) -> None:
    """Print to stdout, or write next to the target and rename (never a half-written file)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise fail(f"cannot write spec file {output}: {exc.strerror or exc}") from None


def _finish(spec: dict, output: Optional[Path], max_weights: Optional[int], layers_note: str = "") -> None:
    """Check the spec against the weight limit and the spec rules, write it, print the summary."""
    try:
        limit = resolve_max_weights(max_weights)
    except SpecError as exc:
        raise fail(str(exc)) from None
    label = spec["name"] or "(unnamed)"
    m = weight_count(spec)
    if m > limit:
        raise fail(
            f"{label}: network has {m} weights, more than the limit of {limit}"
            f" (raise it with --max-weights or {MAX_WEIGHTS_ENV})"
        )
    try:
        network = parse_spec(spec, label, limit)  # exactly what loading the written file gives
    except SpecError as exc:
        raise fail(str(exc)) from None
    _write(output, spec_json(spec))
    where = f"written to {output}" if output is not None else "written to stdout"
    n_skips = len(network.skips)
    print(
        f"{label}: {network.L + 1} layers{layers_note}, {n_skips} skip{'s' if n_skips != 1 else ''},"
        f" m = {network.m}, H = {network.H} ({where})",
        file=sys.stderr,
    )


def _finish_general(spec: dict, output: Optional[Path], max_weights: Optional[int]) -> None:
    """A general spec: checked as loading the written file would, written, summarised on stderr."""
    from ..spec import parse_general

    try:
        network = parse_general(spec, spec["name"], resolve_max_weights(max_weights))
    except SpecError as exc:
        raise fail(str(exc)) from None
    body = ",\n".join(f"    {json.dumps(x)}" for x in spec["layers"])
    conns = ",\n".join(f"    {json.dumps(x)}" for x in spec["connections"])
    _write(output, f'{{\n  "name": {json.dumps(spec["name"])},\n  "layers": [\n{body}\n  ],\n  "connections": [\n{conns}\n  ]\n}}\n')
    where = f"written to {output}" if output is not None else "written to stdout"
    print(f"{spec['name']}: general network, {len(network.layers)} layers, {len(network.connections)} connections,"
          f" m = {network.m}, H = {network.H} ({where})", file=sys.stderr)


_OUTPUT_HELP = "Write the spec to this file (atomically); default: stdout."
_MAX_WEIGHTS_HELP = "Refuse networks with more weights (default 50,000,000 or $BASISPATH_MAX_WEIGHTS)."


def presets_command() -> None:
    """List the architecture families that 'basispath spec preset' can write.

    The layered families have widths [N] + [W]*(D-1) + [K] for depth D (D+1 layers), width W,
    input width N and output width K (both default W); the family decides the skips. The real
    architectures (resnet18, resnet34, resnet20, vgg11) are general specs at channel level with
    their published channels and kernels (docs/general-networks.md).

    Example:

        basispath presets
    """
    pad = max(len(n) for n in (*FAMILIES, *GENERAL_FAMILIES))
    for family in FAMILIES.values():
        print(f"{family.name:<{pad}}  {family.description}")
    for name, (description, _) in GENERAL_FAMILIES.items():  # general specs: no --depth/--width
        print(f"{name:<{pad}}  {description} (general spec, no --depth/--width)")


@spec_app.command("preset")
def preset_command(
    name: str = typer.Argument(..., metavar="NAME", help=f"Family: {' | '.join(FAMILIES)} (see 'basispath presets')."),
    depth: Optional[int] = typer.Option(None, "--depth", "-d", help="Depth D = number of layer pairs (D+1 layers); layered families only."),
    width: Optional[int] = typer.Option(None, "--width", "-w", help="Hidden width W; layered families only."),
    in_width: Optional[int] = typer.Option(None, "--in", help="Input width N (default: W)."),
    out_width: Optional[int] = typer.Option(None, "--out", help="Output width K (default: W)."),
    stride: Optional[int] = typer.Option(None, "--stride", help="Skip span S >= 2 (family 'stride' only)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=_OUTPUT_HELP),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help=_MAX_WEIGHTS_HELP),
) -> None:
    """Write the spec of a named architecture family (mlp, resnet, densenet, unet, stride).

    The spec JSON goes to --output (or stdout); a one-line summary (layers, skips, m, H) goes
    to stderr. Exit code 0, or 2 for refused arguments.

    Example:

        basispath spec preset densenet --depth 8 --width 128 -o densenet-8x128.json
    """
    if name in GENERAL_FAMILIES:
        if any(v is not None for v in (depth, width, in_width, out_width, stride)):
            raise fail(f"{name} is a real architecture with fixed channels: it takes no --depth, --width, --in, --out or --stride")
        _check_output(output)
        _finish_general(general_preset_spec(name), output, max_weights)
        return
    for option, value in (("--depth", depth), ("--width", width)):
        if value is None:
            raise fail(f"family {name} needs {option} (see 'basispath presets')")
    try:
        spec = preset_spec(name, depth, width, in_width=in_width, out_width=out_width, stride=stride)
    except PresetError as exc:
        raise fail(str(exc)) from None
    _check_output(output)
    _finish(spec, output, max_weights)


def _input_shape(text: Optional[str]) -> Optional[tuple[int, ...]]:
    """``1x3x32x32`` (or ``1,3,32,32``) as a tuple of ints; a bad one is a one-line error."""
    if text is None:
        return None
    parts = text.replace(",", "x").lower().split("x")
    if len(parts) < 2 or not all(p.strip().isdigit() and int(p) >= 1 for p in parts):
        raise fail(f"--input-shape {text!r}: expected N x C x ... as positive integers, e.g. 1x3x32x32")
    return tuple(int(p) for p in parts)


@spec_app.command("from-torch")
def from_torch_command(
    target: str = typer.Argument(..., metavar="MODULE:FACTORY", help="Factory returning an nn.Module: module:func or path/to/file.py:func."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=_OUTPUT_HELP),
    name: Optional[str] = typer.Option(None, "--name", help="Network name in the spec (default: the factory's name)."),
    general: bool = typer.Option(False, "--general", help="Write the channel-level general spec even for a plain nn.Linear/ReLU/torch.cat model (its biases then count)."),
    input_shape: Optional[str] = typer.Option(None, "--input-shape", metavar="NxCx...", help="A sample input shape, e.g. 1x3x32x32: gives the input's channels and checks what nn.Linear and torch.cat read (general specs)."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help=_MAX_WEIGHTS_HELP),
) -> None:
    """Write the spec of a PyTorch model (needs PyTorch); FACTORY() is called without arguments
    and its model traced with torch.fx.

    A model of only nn.Linear, ReLU and torch.cat gives a layered spec (widths, skips): each
    nn.Linear is a layer, a Linear reading torch.cat([...], dim=-1) of earlier layers gets a skip
    from each; biases are ignored. Anything more gives a general spec at channel level, with the
    rules of 'spec from-onnx': Conv1d/2d/3d (groups=1, kernel taps), Linear (after a flatten of
    C channels x S positions: S taps), biases (a size-1 'bias' layer), BatchNorm (eval: folded
    into the conv or linear before it when that is its only reader, else a per-channel scale
    and shift), ReLU, dropout, max/avg/adaptive pooling, flatten, residual add (identity or
    projection shortcut) and torch.cat along channels. Anything else (GELU, LayerNorm,
    attention, grouped conv, ...) is refused by name. Exit code 0, or 2 for a refused model.

    Examples:

        basispath spec from-torch models.py:densenet_mlp -o densenet.json

        basispath spec from-torch models.py:resnet --input-shape 1x3x32x32 -o resnet.json
    """
    from .. import torch_import as ti

    _check_output(output)
    shape = _input_shape(input_shape)
    try:
        ti.import_torch()
    except ti.TorchMissing:
        raise fail(TORCH_MISSING) from None
    try:
        model = ti.read_torch_model(target, name, general=general, input_shape=shape)
    except ti.TorchImportError as exc:
        raise fail(str(exc)) from None
    if model.general:
        _finish_general(model.spec, output, max_weights)
    else:
        _finish(model.spec, output, max_weights, f" ({', '.join(model.layer_modules)})")


@spec_app.command("info")
def info_command(
    spec: Path = typer.Argument(..., help="Network spec: layered (widths, skips) or general (layers, connections)."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help=_MAX_WEIGHTS_HELP),
) -> None:
    """Read a spec and print what a basis of it has: m trainable weights, H hidden rescaling
    classes, |B| = m - H paths; for a general network also its inputs, outputs and connections
    by kind.

    Example:

        basispath spec info examples/general/resnet-block.json
    """
    from ..general.model import GeneralNetwork, from_layered  # a layered spec is sugar for a general one
    from .common import read_any_network

    net = read_any_network(spec, max_weights)
    general = net if not net.is_layered else from_layered(net)
    kinds = kind_counts(general.connections)
    info = {
        "name": general.name,
        "kind": "general" if net is general else "layered",
        "layers": len(general.layers),
        "inputs": [general.layers[k].name for k in general.inputs],
        "outputs": [general.layers[k].name for k in general.outputs],
        "connections": kinds,
        "m": general.m,
        "H": general.H,
        "basis_size": general.basis_size,
    }
    if as_json:
        print(json.dumps(info))
        return
    print(f"{info['name'] or spec}: {info['kind']} network, {info['layers']} layers "
          f"(inputs {', '.join(info['inputs'])}; outputs {', '.join(info['outputs'])}), "
          f"connections: {', '.join(f'{n} {k}' for k, n in kinds.items())}")
    print(f"m = {general.m} trainable weights, H = {general.H} hidden rescaling classes, |B| = m - H = {general.basis_size}")


@spec_app.command("from-onnx")
def from_onnx_command(
    model: Path = typer.Argument(..., help="An ONNX model file (.onnx)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help=_OUTPUT_HELP),
    name: Optional[str] = typer.Option(None, "--name", help="Network name (default: the ONNX graph's name)."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help=_MAX_WEIGHTS_HELP),
) -> None:
    """Write the general spec of an ONNX model at channel level: Conv (groups=1, kernel taps),
    Gemm/MatMul, biases, BatchNorm (folded into the conv or linear before it, else a per-channel
    scale), ReLU, pooling, Flatten, Add (identity or projection shortcut) and Concat. Any other
    operation is refused by name (docs/general-networks.md).

    Example:

        basispath spec from-onnx resnet18.onnx -o resnet18.json
    """
    from ..general.onnx_import import OnnxImportError, spec_from_onnx

    _check_output(output)
    try:
        spec = spec_from_onnx(model, name)
    except OnnxImportError as exc:
        raise fail(str(exc)) from None
    _finish_general(spec, output, max_weights)

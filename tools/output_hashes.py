#!/usr/bin/env python3
"""A reproducible fingerprint of the product's outputs, so a refactor can show behaviour is unchanged.

Usage:
    python tools/output_hashes.py --out FILE.json      # compute and write {case: sha256}
    python tools/output_hashes.py --check FILE.json    # recompute; list differing cases, exit 1 if any
    python tools/output_hashes.py --check FILE.json --only 'bench/*'   # only the matching cases
    make hashes                                        # --check tools/output-hashes.json

For every network below and every engine (deah, deah-complete, skeleton) it solves with the
package's Python API, ``solve(network, engine=E, seed=0)``, and hashes (sha256) three things:

- ``NET/ENGINE/export``: ``export_document(result)`` as ``json.dumps(..., sort_keys=True)``
  (spec, basis, discarded paths, discard reasons and certificates, repairs);
- ``NET/ENGINE/kept``: the kept set, the basis paths ([layer, neuron] pairs) sorted;
- ``NET/ENGINE/certificates``: each discarded path with its certificate as (coef, basis path)
  pairs, sorted; independent of the export's reason format.

A solve that raises is hashed as ``error: TYPE: message`` (so a refusal is part of the fingerprint).
Then ``store/NET/ENGINE``: ``basispath run SPEC --engine ENGINE --seed 0`` into a fresh temporary
LadybugDB store, dumped with tests/reliability/graph_dump.canonical_dump (the run id becomes
``<run>``; started, finished, pid and timings are dropped) and hashed.

Networks (case names in parentheses):
- bench networks at sizes that solve in seconds, named as bench/case.py names them (``bench/dense-8x32``);
- every spec in examples/ (``examples/fig1b``) and every /work/shared/examples/*.json whose content
  differs from the examples/ file of the same name (``shared/NAME``);
- every preset family (``basispath presets``) at depths 3, 4, 6 and widths 2, 3, stride 2 and 3 for
  ``stride`` (``preset/resnet-4x3``);
- the first 200 random networks of bench/fidelity.py (its generator with seed 0, copied here so the
  sample stays fixed when fidelity.py changes; ``fidelity/007-densenet``);
- general networks, through the general export (``Result.export("paths")``) with the repairs and
  each discard's reason added: 150 random layer DAGs (tests/test_dag_deah.py's generator, made
  with ``random`` and seed 0, copied so the sample stays fixed; ``dag/007``: branches,
  concatenations, grouped, diagonal and identity connections, taps, biases), and torchvision's
  networks from bench/specs at widths that solve in seconds (``torchvision/googlenet@0.015625``;
  their summary, not their export: thousands of discards' certificates): faithful deah on a
  layer DAG, its repair's drops and re-admissions included.

The package imported is the one in this checkout (the folder above tools/), never another install.
Only the standard library and the package are used. Work is spread over ``--jobs`` processes
(default 2); the result does not depend on it.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENGINES = ("deah", "deah-complete", "skeleton")
SHARED_EXAMPLES = Path("/work/shared/examples")

# bench/case.py's names: <family>-<depth>x<width>, family dense / deep = densenet.
BENCH_FAMILIES = {"dense": "densenet", "deep": "densenet", "densenet": "densenet", "resnet": "resnet", "mlp": "mlp",
                  "unet": "unet"}
BENCH_NETS = ("dense-4x4", "dense-5x5", "dense-6x6", "dense-8x16", "dense-8x32", "resnet-8x32", "resnet-16x8",
              "deep-16x4", "mlp-8x16", "unet-8x8")
PRESET_DEPTHS, PRESET_WIDTHS, PRESET_STRIDES = (3, 4, 6), (2, 3), (2, 3)
FIDELITY_N, FIDELITY_SEED = 200, 0
FIDELITY_FAMILIES = ["mlp", "resnet", "resnet-every", "densenet", "random", "random-any"]
DAG_N, DAG_SEED = 150, 0
# the narrowest keep thousands of discards (layers of 2 channels): their certificates are not exported
# here (tens of thousands of eliminations); Inception-v3 and DenseNet-121 took 30 s and 72 s
TORCHVISION_NETS = ("squeezenet1_1@0.03125", "googlenet@0.015625", "wrn16_4@0.03125", "resnet50@0.0078125")
STORE_NETS = ("examples/fig1b", "examples/resnet-style", "preset/unet-4x2", "preset/stride2-6x3")  # stride: the local rule


def fidelity_network(rng: random.Random, family: str) -> tuple[list[int], list[list[int]]]:
    """bench/fidelity.py's random_network (as of this tool's baseline), as (widths, skips)."""
    L = rng.randint(2, 7)
    widths = [rng.randint(1, 5) for _ in range(L + 1)]
    pairs = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    if family == "mlp":
        skips = []
    elif family == "resnet":
        stride = rng.choice([2, 3])
        skips = [(a, a + stride) for a in range(0, L - stride + 1, stride)]
    elif family == "resnet-every":
        skips = [(a, a + 2) for a in range(L - 1)]
    elif family == "densenet":
        skips = pairs
    elif family == "random":
        skips = [p for p in pairs if rng.random() < 0.35]
    else:  # random-any
        density = rng.random()
        skips = [p for p in pairs if rng.random() < density]
    return widths, [list(s) for s in skips]


def layer_dag_spec(rng: random.Random) -> dict:
    """tests/test_dag_deah.py's ``layer_dag_specs`` (as of this tool's baseline) drawn with ``rng``:
    x -> h0..hn-1 -> y, each hidden layer fed by one to three earlier layers and feeding a later
    one; dense (1-3 taps), grouped or diagonal connections, sometimes an identity beside one, a
    bias into some layers, an extra output."""
    n = rng.randint(2, 5)
    names = ["x"] + [f"h{k}" for k in range(n)] + ["y"]
    size = dict(zip(names, [2] + [rng.choice([1, 2, 2, 3, 4]) for _ in range(n)] + [2]))
    conns, pairs = [], set()

    def connect(a: str, b: str) -> None:
        if (a, b) in pairs:
            return
        pairs.add((a, b))
        kinds = ["dense"] + (["diagonal"] if size[a] == size[b] else []) + (["grouped"] if size[a] % 2 == size[b] % 2 == 0 else [])
        kind = rng.choice(kinds)
        c = {"from": a, "to": b, "kind": kind, "taps": rng.randint(1, 3 if kind == "dense" else 2)}
        if kind == "grouped":
            c["groups"] = 2
        conns.append(c)
        if size[a] == size[b] and rng.randint(0, 5) == 0:
            conns.append({"from": a, "to": b, "kind": "identity"})

    for k in range(1, n + 1):
        for a in rng.sample(names[:k], rng.randint(1, min(3, k))):
            connect(a, names[k])
    fed = {c["from"] for c in conns}
    for k in range(1, n + 1):
        if names[k] not in fed or rng.randint(0, 3) == 0:
            connect(names[k], rng.choice(names[k + 1:]))
    if "y" not in {c["to"] for c in conns}:
        connect(names[n], "y")
    layers = [{"name": x, "size": size[x]} for x in names]
    if rng.random() < 0.5:
        layers.insert(0, {"name": "bias", "size": 1})
        for k, x in enumerate(names[1:]):
            if k == 0 or rng.randint(0, 2) == 0:
                conns.append({"from": "bias", "to": x, "kind": "dense"})
    if rng.randint(0, 3) == 0:
        layers.append({"name": "aux", "size": 1})
        conns.append({"from": rng.choice(names[1:-1]), "to": "aux", "kind": "dense"})
    return {"name": "dag", "layers": layers, "connections": conns}


def torchvision_spec(name: str) -> dict:
    """bench/specs/NET.json at width factor F (``NET@F``), as bench/case.py's ``scaled_spec``
    makes it (as of this tool's baseline): every layer but ``bias`` and ``x`` F times as wide, at
    least 2."""
    base, factor = name.split("@")
    spec = json.loads((ROOT / "bench" / "specs" / f"{base}.json").read_text())
    for layer in spec["layers"]:
        if layer["name"] not in ("bias", "x"):
            layer["size"] = max(2, round(layer["size"] * float(factor)))
    spec["name"] = name
    return spec


def networks() -> list[tuple[str, tuple]]:
    """(case prefix, how to build it) for every network, in a fixed order."""
    from basispath_graph.presets import FAMILIES, PresetError, preset_spec

    out: list[tuple[str, tuple]] = [(f"bench/{n}", ("bench", n)) for n in BENCH_NETS]
    local = {}
    for path in sorted((ROOT / "examples").glob("*")):
        if path.suffix in (".json", ".yaml", ".yml"):
            local[path.name] = path.read_bytes()
            out.append((f"examples/{path.stem}", ("file", str(path))))
    for path in sorted(SHARED_EXAMPLES.glob("*.json")) if SHARED_EXAMPLES.is_dir() else []:
        if local.get(path.name) != path.read_bytes():
            out.append((f"shared/{path.stem}", ("file", str(path))))
    for family in sorted(FAMILIES):
        for depth in PRESET_DEPTHS:
            for width in PRESET_WIDTHS:
                for stride in PRESET_STRIDES if family == "stride" else (None,):
                    try:
                        spec = preset_spec(family, depth, width, stride=stride)
                    except PresetError:
                        continue
                    out.append((f"preset/{spec['name']}", ("preset", family, depth, width, stride)))
    rng = random.Random(FIDELITY_SEED)
    for k in range(FIDELITY_N):
        family = FIDELITY_FAMILIES[k % len(FIDELITY_FAMILIES)]
        widths, skips = fidelity_network(rng, family)
        out.append((f"fidelity/{k:03d}-{family}", ("spec", widths, skips)))
    rng = random.Random(DAG_SEED)
    out += [(f"dag/{k:03d}", ("general", layer_dag_spec(rng), True)) for k in range(DAG_N)]
    out += [(f"torchvision/{name}", ("general", torchvision_spec(name), False)) for name in TORCHVISION_NETS]
    return out


def build(how: tuple):
    from basispath_graph.network import Network
    from basispath_graph.presets import preset_network
    from basispath_graph.spec import load_spec

    if how[0] == "bench":
        family, dims = how[1].rsplit("-", 1)
        depth, width = (int(x) for x in dims.split("x"))
        return preset_network(BENCH_FAMILIES[family], depth, width)
    if how[0] == "file":
        return load_spec(how[1])
    if how[0] == "preset":
        return preset_network(how[1], how[2], how[3], stride=how[4])
    if how[0] == "general":
        from basispath_graph.general.model import parse_general

        return parse_general(how[1], how[1]["name"], 10**12)
    return Network.build(how[1], how[2])


def sha(obj) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _path(layers, indices) -> list[list[int]]:
    return [[int(l), int(i)] for l, i in zip(layers, indices)]


def solve_function():
    """``basispath_graph.solve.solve`` (the module is ``solver`` after the rename of issue 15)."""
    try:
        from basispath_graph.solver import solve
    except ImportError:
        from basispath_graph.solve import solve
    return solve


def solve_cases(item: tuple[str, tuple]) -> dict[str, str]:
    """The export, kept-set and certificate hashes of one network under every engine."""
    from basispath_graph.export import export_document

    prefix, how = item
    if how[0] == "general":
        from basispath_graph.general.solve import solve_general as solve
    else:
        solve = solve_function()
    net = build(how)
    out = {}
    for engine in ENGINES:
        case = f"{prefix}/{engine}"
        try:
            result = solve(net, engine=engine, seed=0)
        except Exception as exc:  # a refusal is an output too
            err = f"error: {type(exc).__name__}: {exc}"
            out.update({f"{case}/{k}": sha(err) for k in ("export", "kept", "certificates")})
            continue
        if how[0] == "general":
            out.update(general_hashes(case, result, exported=how[2]))
            continue
        out[f"{case}/export"] = sha(json.dumps(export_document(result), sort_keys=True))
        kept = sorted(_path(b.layers, nodes) for b in result.basis for nodes in b.nodes)
        out[f"{case}/kept"] = sha(kept)
        certs = sorted(
            [_path(d.layers, d.indices), sorted([int(c), _path(*result.basis_path(int(i)))] for i, c in d.certificate)]
            for d in result.discarded
        )
        out[f"{case}/certificates"] = sha(certs)
    return out


def general_hashes(case: str, result, exported: bool) -> dict[str, str]:
    """A general run's hashes: its paths export (basis, discards with their certificates; when
    ``exported``, else the basis and the run's summary), the kept set, and each repair and
    discard with its reason."""
    document = result.export("paths") if exported else {"basis": result.basis_paths, "summary": _untimed(result.summary())}
    out = {f"{case}/export": sha(json.dumps(document, sort_keys=True))}
    out[f"{case}/kept"] = sha(sorted(json.dumps(p, sort_keys=True) for p in result.basis_paths))
    repairs = [[r.action, list(r.layers), list(r.indices), repr(r.taps), repr(r.substructure)] for r in result.repairs]
    discards = [[list(d.layers), list(d.indices), repr(d.taps), repr(d.substructure), repr(d.reason)] for d in result.discarded]
    out[f"{case}/certificates"] = sha([repairs, discards])
    return out


def _untimed(doc):
    """``doc`` without its ``timings`` (at any depth: a general run's core has its own)."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k != "timings"}
    return [_untimed(v) for v in doc] if isinstance(doc, list) else doc


def _graph_dump_module():
    spec = importlib.util.spec_from_file_location("graph_dump", ROOT / "tests" / "reliability" / "graph_dump.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CLI = "import sys; from basispath_graph.cli.main import main; sys.exit(main())"


def store_case(item: tuple[str, tuple, str]) -> dict[str, str]:
    """``basispath run`` into a fresh LadybugDB store, canonical dump, hash."""
    from basispath_graph.network import Network
    from basispath_graph.store import open_store

    prefix, how, engine = item
    case = f"store/{prefix.split('/', 1)[1]}/{engine}"
    with tempfile.TemporaryDirectory(prefix="output-hashes-") as tmp:
        if how[0] == "file":
            spec_path = how[1]
        else:
            net = build(how)
            spec_path = os.path.join(tmp, "spec.json")
            Path(spec_path).write_text(json.dumps(Network.to_dict(net)))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BASISPATH_", "NEO4J_"))}
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        store = os.path.join(tmp, "store")
        proc = subprocess.run([sys.executable, "-c", CLI, "run", spec_path, "--engine", engine, "--seed", "0",
                               "--store", store, "--json"], cwd=tmp, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            return {case: sha(f"error: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}")}
        with open_store(store) as s:
            nodes, rels = _graph_dump_module().canonical_dump(s)
    return {case: sha("\n".join(nodes) + "\n--\n" + "\n".join(rels))}


def compute(jobs: int, only: list[str] | None) -> dict[str, str]:
    def wanted(prefix: str) -> bool:
        return not only or any(fnmatch.fnmatchcase(f"{prefix}/{e}/{k}", p) for p in only for e in ENGINES
                               for k in ("export", "kept", "certificates"))

    nets = networks()
    items = [it for it in nets if wanted(it[0])]
    by_name = dict(nets)
    stores = [(n, by_name[n], e) for n in STORE_NETS for e in ENGINES
              if not only or any(fnmatch.fnmatchcase(f"store/{n.split('/', 1)[1]}/{e}", p) for p in only)]
    # Largest first so the two processes finish together.
    items.sort(key=lambda it: 0 if it[0].startswith("bench/") else 1)
    out: dict[str, str] = {}
    with Pool(jobs) as pool:
        store_async = pool.map_async(store_case, stores, chunksize=1)
        for part in pool.imap_unordered(solve_cases, items, chunksize=1 if len(items) < 50 else 4):
            out.update(part)
        for part in store_async.get():
            out.update(part)
    if only:
        out = {k: v for k, v in out.items() if any(fnmatch.fnmatchcase(k, p) for p in only)}
    return dict(sorted(out.items()))


def total_digest(cases: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{k} {v}\n" for k, v in sorted(cases.items())).encode()).hexdigest()


def provenance() -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    dirty = git("status", "--porcelain", "--", "basispath_graph", "cypher", "tests/reliability/graph_dump.py")
    return {"commit": git("rev-parse", "HEAD"), "package_changes_uncommitted": bool(dirty)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", metavar="FILE.json", help="write {case: sha256} (with the commit) to this file")
    mode.add_argument("--check", metavar="FILE.json", help="recompute and compare; exit 1 on any difference")
    ap.add_argument("--only", action="append", metavar="GLOB", help="only cases matching this glob (repeatable)")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cases = compute(args.jobs, args.only)
    elapsed = time.perf_counter() - t0
    digest = total_digest(cases)
    if args.out:
        doc = {**provenance(), "tool": "tools/output_hashes.py", "total": digest, "cases": cases}
        Path(args.out).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{len(cases)} cases, total {digest} ({elapsed:.0f} s); wrote {args.out}")
        return 0
    want = json.loads(Path(args.check).read_text(encoding="utf-8"))["cases"]
    if args.only:
        want = {k: v for k, v in want.items() if any(fnmatch.fnmatchcase(k, p) for p in args.only)}
    differ = sorted(k for k in cases.keys() & want.keys() if cases[k] != want[k])
    missing = sorted(want.keys() - cases.keys())
    new = sorted(cases.keys() - want.keys())
    for k in differ:
        print(f"DIFFERS  {k}")
    for k in missing:
        print(f"MISSING  {k} (in {args.check}, not computed)")
    for k in new:
        print(f"NEW      {k} (not in {args.check})")
    bad = len(differ) + len(missing) + len(new)
    verdict = "all equal" if not bad else f"{len(differ)} differ, {len(missing)} missing, {len(new)} new"
    print(f"{len(cases)} cases, total {digest} ({elapsed:.0f} s): {verdict} (against {args.check})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

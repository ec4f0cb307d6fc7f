"""G-SGD against SGD on data that ships in a package (scikit-learn's digits): ``make gsgd-bench``.

Three BatchNorm-free networks (``basispath_graph.gsgd.models``: an MLP of unequal widths with
skips, a plain CNN, a ResNet-20), four optimizers:

- ``sgd``: torch.optim.SGD;
- ``gsgd-skeleton``: G-SGD over the skeleton basis (one global basis-path space);
- ``gsgd-deah``: G-SGD over the deah-complete basis (the same space, other coordinates);
- ``blockwise``: the official G-SGD code's scheme for residual networks: G-SGD inside each
  residual block, SGD on the rest (ResNet only; the other two have no residual blocks).

For each network and optimizer the learning rate is picked from a grid by validation accuracy
(seed 0), then every seed trains from the same initialisation for each optimizer (one
``torch.manual_seed`` per seed before building the model). Reported: test accuracy (mean and
spread over seeds), the final training loss, time per step (2 CPU threads), and the loss curves
as a PNG. Writes docs/gsgd-experiment.md, .json and .png (``--out``).

    python bench/gsgd_experiment.py            # the full run (about 15 minutes on 2 cores)
    python bench/gsgd_experiment.py --quick    # a smoke run: one model, 2 epochs, 1 seed
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from basispath_graph.gsgd import GSGD, GSGDError  # noqa: E402
from basispath_graph.gsgd.blockwise import BlockwiseGSGD  # noqa: E402
from basispath_graph.gsgd.models import PlainCNN, ResNet20, SkipMLP, residual_blocks  # noqa: E402

MODELS = {
    "skip-mlp": (lambda: SkipMLP(in_features=64, widths=(48, 32, 24), classes=10), "MLP 64-48-32-24-10, skips (concatenation)"),
    "plain-cnn": (lambda: PlainCNN(in_channels=1, channels=(16, 32), classes=10), "CNN 3 convs (16, 16, 32), max + global pool"),
    "resnet20": (lambda: ResNet20(in_channels=1, width=16, blocks=3, classes=10), "ResNet-20 (16-32-64), no BatchNorm"),
}
OPTIMIZERS = ("sgd", "gsgd-skeleton", "gsgd-deah", "blockwise")
GRIDS = {
    "sgd": (0.3, 0.1, 0.03, 0.01),
    "gsgd-skeleton": (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7),
    "gsgd-deah": (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7),
    "blockwise": (0.3, 0.1, 0.03, 0.01),
}


def digits(seed: int = 0):
    """(train, validation, test) tensors of scikit-learn's 8x8 digits, pixels scaled to [0, 1]:
    1,197 / 300 / 300 images."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = torch.tensor(data.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(data.target, dtype=torch.long)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    x, y = x[order], y[order]
    return (x[600:], y[600:]), (x[:300], y[:300]), (x[300:600], y[300:600])


def make_optimizer(kind: str, model, lr: float, momentum: float):
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    if kind == "blockwise":
        return BlockwiseGSGD(model, residual_blocks(model), lr=lr, momentum=momentum)
    engine = "skeleton" if kind == "gsgd-skeleton" else "deah-complete"
    return GSGD(model, engine=engine, lr=lr, momentum=momentum, input_shape=(1, 1, 8, 8))


def path_value_spread(name: str) -> dict:
    """Percentiles of log10 |v_b| over the basis paths at seed 0's initialisation, per basis: why
    one learning rate does not fit every path (G-SGD moves v_b by lr * dL/dv_b)."""
    torch.manual_seed(0)
    model = MODELS[name][0]()
    out = {}
    for engine in ("skeleton", "deah-complete"):
        v = GSGD(model, engine=engine, input_shape=(1, 1, 8, 8)).path_values().abs().log10().numpy()
        out[engine] = [float(x) for x in np.percentile(v, [1, 50, 99])]
    return out


def accuracy(model, x, y) -> float:
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def train(name: str, kind: str, lr: float, seed: int, epochs: int, batch: int, momentum: float, data) -> dict:
    (xt, yt), (xv, yv), (xs, ys) = data
    torch.manual_seed(seed)
    model = MODELS[name][0]()
    opt = make_optimizer(kind, model, lr, momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.Generator().manual_seed(1000 + seed)
    curve, step_times, diverged = [], [], False
    for _ in range(epochs):
        perm = torch.randperm(len(yt), generator=order)
        total, count = 0.0, 0
        for start in range(0, len(yt), batch):
            idx = perm[start:start + batch]
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            try:
                opt.step()
            except GSGDError:  # the step would have made weights that are not finite: refused
                diverged = True
                break
            step_times.append(time.perf_counter() - t0)
            if not math.isfinite(loss.item()):
                diverged = True
                break
            total += loss.item() * len(idx)
            count += len(idx)
        if diverged:
            break
        curve.append(total / count)
    finite = not diverged and all(torch.isfinite(p).all() for p in model.parameters())
    return {
        "model": name, "optimizer": kind, "lr": lr, "seed": seed, "diverged": not finite, "curve": curve,
        "val": accuracy(model, xv, yv) if finite else 0.1, "test": accuracy(model, xs, ys) if finite else 0.1,
        "step_ms": 1000 * float(np.median(step_times[5:] or step_times)) if step_times else float("nan"),
    }


def applicable(name: str, kind: str) -> bool:
    return kind != "blockwise" or name == "resnet20"


def run(models, seeds, epochs, batch, momentum, log) -> list[dict]:
    data = digits()
    runs = []
    for name in models:
        for kind in OPTIMIZERS:
            if not applicable(name, kind):
                continue
            tried = [train(name, kind, lr, 0, epochs, batch, momentum, data) for lr in GRIDS[kind]]
            for r in tried:
                log(f"{name:10s} {kind:14s} lr {r['lr']:<8g} val {r['val']:.3f}{' diverged' if r['diverged'] else ''}")
            best = max(tried, key=lambda r: (r["val"], -r["lr"]))
            runs.append({**best, "picked": True, "grid": [{"lr": r["lr"], "val": r["val"], "diverged": r["diverged"]} for r in tried]})
            for seed in seeds[1:]:
                r = train(name, kind, best["lr"], seed, epochs, batch, momentum, data)
                log(f"{name:10s} {kind:14s} lr {r['lr']:<8g} seed {seed} test {r['test']:.3f}")
                runs.append(r)
    return runs


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    for name in dict.fromkeys(r["model"] for r in runs):
        for kind in OPTIMIZERS:
            mine = [r for r in runs if r["model"] == name and r["optimizer"] == kind]
            if not mine:
                continue
            tests = np.array([r["test"] for r in mine])
            rows.append({
                "model": name, "optimizer": kind, "lr": mine[0]["lr"], "seeds": len(mine),
                "test_mean": float(tests.mean()), "test_std": float(tests.std()), "diverged": sum(r["diverged"] for r in mine),
                "final_loss": float(np.mean([r["curve"][-1] for r in mine if r["curve"]])) if any(r["curve"] for r in mine) else None,
                "step_ms": float(np.median([r["step_ms"] for r in mine])),
            })
    return rows


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r["model"] for r in runs))
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 3.6), squeeze=False)
    for ax, name in zip(axes[0], models):
        for kind in OPTIMIZERS:
            mine = [r for r in runs if r["model"] == name and r["optimizer"] == kind and r["curve"]]
            if not mine:
                continue
            n = min(len(r["curve"]) for r in mine)
            curves = np.array([r["curve"][:n] for r in mine])
            x = np.arange(1, n + 1)
            ax.plot(x, curves.mean(0), label=f"{kind} (lr {mine[0]['lr']:g})")
            ax.fill_between(x, curves.min(0), curves.max(0), alpha=0.2)
        ax.set_title(MODELS[name][1], fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def report(rows, runs, spreads, args, seconds: float) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    lines = [
        "# G-SGD on scikit-learn's digits: SGD, global G-SGD (skeleton and deah-complete bases), block-wise G-SGD",
        "",
        f"Written by `make gsgd-bench` (`bench/gsgd_experiment.py`) at commit {commit or '?'}, {platform.machine()}, "
        f"{torch.get_num_threads()} CPU threads, torch {torch.__version__}, in {seconds / 60:.1f} min.",
        f"Data: 1,197 training, 300 validation, 300 test images (8x8). {args.epochs} epochs, batch {args.batch}, "
        f"momentum {args.momentum}, seeds {list(args.seeds)}; the learning rate of each optimizer picked from its grid by "
        "validation accuracy on seed 0; every optimizer starts from the same initialisation per seed (PyTorch's default).",
        "",
        "| network | optimizer | lr | test accuracy (mean ± sd) | seeds diverged | final training loss | ms per step |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        loss = f"{r['final_loss']:.3f}" if r["final_loss"] is not None else "-"
        lines.append(f"| {MODELS[r['model']][1]} | {r['optimizer']} | {r['lr']:g} | {r['test_mean']:.3f} ± {r['test_std']:.3f} | "
                     f"{r['diverged']} of {r['seeds']} | {loss} | {r['step_ms']:.1f} |")
    lines += ["", "Learning-rate grids (validation accuracy, seed 0; d: diverged):", ""]
    for r in runs:
        if r.get("picked"):
            grid = ", ".join(f"{g['lr']:g}: {g['val']:.2f}{' d' if g['diverged'] else ''}" for g in r["grid"])
            lines.append(f"- {r['model']} / {r['optimizer']}: {grid}")
    lines += ["", "Basis path values at initialisation (seed 0), log10 |v_b| at the 1st, 50th and 99th percentile:", ""]
    for name, spread in spreads.items():
        lines.append(f"- {name}: " + "; ".join(f"{engine} {a:.1f} / {b:.1f} / {c:.1f}" for engine, (a, b, c) in spread.items()))
    lines += ["", "![loss curves](gsgd-experiment.png)", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--quick", action="store_true", help="one model (skip-mlp), 2 epochs, seed 0: a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.models, args.seeds, args.epochs = ["skip-mlp"], [0], 2
    torch.set_num_threads(2)
    began = time.time()
    runs = run(args.models, args.seeds, args.epochs, args.batch, args.momentum, lambda s: print(s, flush=True))
    rows = summarise(runs)
    spreads = {name: path_value_spread(name) for name in args.models}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gsgd-experiment.json").write_text(json.dumps({"rows": rows, "spreads": spreads, "runs": runs}, indent=1) + "\n")
    plot(runs, args.out / "gsgd-experiment.png")
    (args.out / "gsgd-experiment.md").write_text(report(rows, runs, spreads, args, time.time() - began))
    print(f"wrote {args.out / 'gsgd-experiment.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

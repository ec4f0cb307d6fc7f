"""Time per training step of G-SGD against SGD on the same model (bench case ``gsgd-step/NET``).

NET: ``resnet20-cifar`` (the BatchNorm-free ResNet-20 of ``basispath_graph.gsgd.models``, 16-32-64
channels, 3 x 32 x 32 inputs, batch 128: the CIFAR setting) or ``resnet20-digits`` (1 x 8 x 8,
batch 64: the experiment's, where the forward and backward pass are cheap and the optimizer's own
work weighs most). A step is zero_grad + forward + cross-entropy + backward + ``step()``; each
optimizer's median over ``steps`` steps after ``warmup``, the optimizer's ``step()`` alone
reported too. G-SGD runs with learning rate 0 (its weights stay as they are, and finite: from
PyTorch's default initialisation any positive rate moves some tiny path values past 0 here, see
docs/gsgd.md); the work of a step does not depend on the rate.

    python bench/gsgd_step.py resnet20-cifar [--device cuda] [--steps 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NETS = {"resnet20-cifar": ((3, 32, 32), 128), "resnet20-digits": ((1, 8, 8), 64)}
OPTIMIZERS = ("sgd", "gsgd-skeleton", "gsgd-deah-complete")


def measure(net: str, device: str = "cpu", steps: int = 20, warmup: int = 3, log=lambda *_: None) -> dict:
    import torch

    from basispath_graph.gsgd import GSGD
    from basispath_graph.gsgd.models import ResNet20

    if net not in NETS:
        raise SystemExit(f"unknown net {net!r}: one of {', '.join(NETS)}")
    shape, batch = NETS[net]
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, *shape, generator=gen).to(device)
    y = torch.randint(0, 10, (batch,), generator=gen).to(device)
    loss_fn = torch.nn.CrossEntropyLoss()
    out = {"net": net, "device": device, "batch": batch, "input": list(shape), "steps": steps,
           "threads": torch.get_num_threads(), "torch": torch.__version__}
    if device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name(0)
    for kind in OPTIMIZERS:
        torch.manual_seed(0)
        model = ResNet20(in_channels=shape[0]).to(device)
        t0 = time.perf_counter()
        if kind == "sgd":
            opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        else:
            opt = GSGD(model, engine=kind.removeprefix("gsgd-"), lr=0.0, momentum=0.9, input_shape=(1, *shape))
        setup = time.perf_counter() - t0
        whole, own = [], []
        for i in range(warmup + steps):
            sync()
            a = time.perf_counter()
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            sync()
            b = time.perf_counter()
            opt.step()
            sync()
            c = time.perf_counter()
            if i >= warmup:
                whole.append(c - a)
                own.append(c - b)
        finite = all(bool(torch.isfinite(p).all()) for p in model.parameters())
        out[kind] = {"setup_s": round(setup, 3), "step_ms": 1000 * statistics.median(whole),
                     "optimizer_ms": 1000 * statistics.median(own), "finite": finite}
        if kind != "sgd":
            out[kind]["m"] = opt.network.m
            out[kind]["core_paths"] = opt.space.n_core
        log(f"{net} {device} {kind}: step {out[kind]['step_ms']:.1f} ms, optimizer {out[kind]['optimizer_ms']:.2f} ms")
    for kind in OPTIMIZERS[1:]:
        out[f"ratio_{kind}"] = out[kind]["step_ms"] / out["sgd"]["step_ms"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=list(NETS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.net, args.device, args.steps, log=lambda s: print(s, file=sys.stderr)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

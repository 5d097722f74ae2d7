"""`numprobe run` records the training, not the set-up: on an unmodified script that builds its
model inside the script and trains under torch.multiprocessing.spawn (gloo, 2 processes, CPU),
no record comes from model construction, every step folder is named by rank from step 0, and no
folder is left empty."""
import json
import os
import socket
import subprocess
import sys

import pytest

import numprobe

SPAWNED_TRAINING = """
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        nn.init.constant_(self.fc1.bias, 0.5)  # Tensor.fill_ on fresh memory: set-up, not training

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def worker(rank, port, steps):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.manual_seed(rank)
    model = Net()  # built before the process group: it learns its rank later
    dist.init_process_group("gloo", rank=rank, world_size=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 8)
    for _ in range(steps):
        loss = model(x).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        opt.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(int(sys.argv[1]), int(sys.argv[2])), nprocs=2)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("level", ["L1", "mix"])
def test_spawned_training_is_recorded_by_rank_without_set_up_or_empty_folders(tmp_path, level):
    binary = os.environ.get("NUMPROBE_BIN")
    if not binary or not os.path.exists(binary):
        pytest.skip("numprobe binary not built")
    steps = 2
    script = tmp_path / "train.py"
    script.write_text(SPAWNED_TRAINING)
    dump = tmp_path / "dump"
    (tmp_path / "cfg.json").write_text(json.dumps({"task": "statistics", "level": level,
                                                    "dump_path": str(dump)}))
    env = dict(os.environ)
    env["NUMPROBE_PYTHONPATH"] = os.path.dirname(os.path.dirname(numprobe.__file__))
    proc = subprocess.run([binary, "run", "--config", str(tmp_path / "cfg.json"), "--",
                           sys.executable, str(script), str(free_port()), str(steps)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    # One folder per optimizer step, none after the last one; rank folders only, from step 0.
    assert sorted(os.listdir(dump)) == [f"step{s}" for s in range(steps)]
    for s in range(steps):
        assert sorted(os.listdir(dump / f"step{s}")) == ["rank0", "rank1"], s
    # No folder is empty.
    for folder, subfolders, files in os.walk(dump):
        assert subfolders or files, f"empty folder {folder}"

    for s in range(steps):
        for rank in (0, 1):
            with open(dump / f"step{s}" / f"rank{rank}" / "dump.json") as f:
                names = list(json.load(f)["data"])
            # Model construction (nn.init's fill_, Linear's kaiming/uniform init) is not recorded.
            set_up = [n for n in names if n.split(".")[1] in ("fill_", "uniform_", "normal_",
                                                               "kaiming_uniform_", "zero_")]
            assert not set_up, (s, rank, set_up)
            # The training is: the forward, the collectives and the optimizer's update.
            assert "Functional.linear.0.forward" in names, (s, rank, names[:5])
            assert "Tensor.pow.0.forward" in names
            assert "Distributed.all_reduce.0.forward" in names
            assert any(n.startswith("Tensor.add_.") for n in names)
            if level == "mix":
                assert "Module.fc1.Linear.forward.0" in names

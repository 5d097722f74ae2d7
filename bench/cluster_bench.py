"""Cluster scale (issue 18; docs/cluster.md): `mpirun -n P numprobe compare` on a simulated
tensor-parallel run of R ranks x N ops (bench/make_cluster_dump.py, statistics mode), P = 1, 2, 4
(--oversubscribe: this machine may have fewer cores), against the physical reference measured in
the same run: reading the same dump.json bytes with `cat` into /dev/null (page cache warm for
both). Prints, per P, the median wall time, the speed-up over P = 1, and each process's
throughput (bytes it was given / wall time) as a ratio of cat's; checks that every P finds the
planted first divergence. Then the same for `mpirun -n P numprobe scan` of the target side (its
bytes against cat's rate), checking that every P names the same first anomaly.

  /usr/bin/python3 bench/cluster_bench.py BUILD/tools/numprobe/numprobe

NUMPROBE_BENCH_CLUSTER_RANKS (default 1024), NUMPROBE_BENCH_CLUSTER_OPS (default 2000),
NUMPROBE_BENCH_REPS (default 1; the median is taken), NUMPROBE_BENCH_DIR the scratch folder,
NUMPROBE_BENCH_CLUSTER_COMMANDS (default "compare,scan") which commands to time.
Needs a numprobe built with NUMPROBE_WITH_MPI and Open MPI's mpiexec; says so and exits 0 without.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def timed(args):
    t0 = time.perf_counter()
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, proc.stdout


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cluster_bench.py NUMPROBE")
    numprobe = sys.argv[1]
    mpiexec = shutil.which("mpiexec")
    version = subprocess.run([numprobe, "--version"], capture_output=True, text=True).stdout
    if mpiexec is None or "mpi: on" not in version:
        print("BENCH cluster: skipped (numprobe built without MPI, or no mpiexec)")
        return
    ranks = int(os.environ.get("NUMPROBE_BENCH_CLUSTER_RANKS", "1024"))
    ops = int(os.environ.get("NUMPROBE_BENCH_CLUSTER_OPS", "2000"))
    reps = int(os.environ.get("NUMPROBE_BENCH_REPS", "1"))
    scratch = tempfile.mkdtemp(prefix="numprobe_cluster_",
                               dir=os.environ.get("NUMPROBE_BENCH_DIR") or None)
    try:
        t0 = time.perf_counter()
        gen = subprocess.run([sys.executable, os.path.join(HERE, "make_cluster_dump.py"), scratch,
                              "--ranks", str(ranks), "--ops", str(ops)],
                             check=True, capture_output=True, text=True).stdout
        gen_s = time.perf_counter() - t0
        planted = re.search(r"planted: (\S+ \S+)", gen).group(1)
        files = []
        for side in ("target", "golden"):
            for root, _, names in os.walk(os.path.join(scratch, side)):
                files += [os.path.join(root, n) for n in names]
        size = sum(os.path.getsize(f) for f in files)
        # The physical reference: the same bytes read by cat (twice: the first warms the cache).
        cat = ["sh", "-c", 'xargs -0 cat > /dev/null']
        listing = "\0".join(files).encode()
        cat_runs = []
        for _ in range(reps + 1):
            t = time.perf_counter()
            subprocess.run(cat, input=listing, check=True)
            cat_runs.append(time.perf_counter() - t)
        cat_s = statistics.median(cat_runs[1:])
        cat_rate = size / cat_s
        print(f"BENCH cluster: {ranks} ranks x {ops} ops, {size / 2**30:.2f} GiB of dump.json "
              f"(generated in {gen_s:.0f} s), cat {cat_s:.2f} s = {cat_rate / 2**20:.0f} MiB/s, "
              f"{os.cpu_count()} cores")
        commands = os.environ.get("NUMPROBE_BENCH_CLUSTER_COMMANDS", "compare,scan").split(",")
        base = None
        for processes in (1, 2, 4) if "compare" in commands else ():
            runs = []
            for rep in range(reps):
                out = os.path.join(scratch, f"out{processes}_{rep}")
                seconds, stdout = timed([mpiexec, "-n", str(processes), "--oversubscribe", numprobe,
                                         "compare", "-tp", os.path.join(scratch, "target"),
                                         "-gp", os.path.join(scratch, "golden"), "-o", out])
                found = re.search(r"^earliest divergence across ranks: (\S+ \S+)$", stdout, re.M)
                if not found or found.group(1) != planted:
                    sys.exit(f"{processes} processes found {found and found.group(1)}, "
                             f"not the planted {planted}")
                shutil.rmtree(out)
                runs.append(seconds)
            wall = statistics.median(runs)
            base = base or wall
            per_process = size / processes / wall
            print(f"BENCH cluster compare, {processes} MPI processes: wall {wall:.1f} s, "
                  f"speed-up {base / wall:.2f}x, {per_process / 2**20:.1f} MiB/s per process = "
                  f"ratio {per_process / cat_rate:.3f} of cat | found {planted}")
        target_size = sum(os.path.getsize(f) for f in files
                          if f.startswith(os.path.join(scratch, "target") + os.sep))
        base = None
        answers = set()
        for processes in (1, 2, 4) if "scan" in commands else ():
            runs = []
            for rep in range(reps):
                out = os.path.join(scratch, f"scan{processes}_{rep}")
                seconds, stdout = timed([mpiexec, "-n", str(processes), "--oversubscribe", numprobe,
                                         "scan", os.path.join(scratch, "target"), "-o", out])
                answers.add(re.search(r"^First anomaly: .*$", stdout, re.M).group(0))
                shutil.rmtree(out)
                runs.append(seconds)
            if len(answers) != 1:
                sys.exit(f"scan answers differ across process counts: {sorted(answers)}")
            wall = statistics.median(runs)
            base = base or wall
            per_process = target_size / processes / wall
            print(f"BENCH cluster scan, {processes} MPI processes: wall {wall:.1f} s, "
                  f"speed-up {base / wall:.2f}x, {per_process / 2**20:.1f} MiB/s per process = "
                  f"ratio {per_process / cat_rate:.3f} of cat | {next(iter(answers))}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The replay half of `numprobe precheck -api_info DUMP.json ...`: the numprobe command checks its
arguments and the dump, then runs this module with Debian's interpreter (the one that has torch).
It shows a progress bar on a terminal, prints the summary and exits 0 (every API passed or
warned), 1 (an API failed), 2 (usage) or 3 (unreadable input)."""
import argparse
import os
import sys

from .. import _numprobe


def _progress_bar(stream):
    if not stream.isatty():
        return None
    width = 30

    def show(done, total, api):
        filled = width * done // max(total, 1)
        text = f"\rprecheck [{'#' * filled}{' ' * (width - filled)}] {done}/{total} {api}"
        stream.write(text[:120].ljust(120) if done < total else "\r" + " " * 120 + "\r")
        stream.flush()

    return show


def _first_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def main(argv=None):
    p = argparse.ArgumentParser(prog="numprobe precheck", description=__doc__.split("\n")[0])
    p.add_argument("--api-info", required=True)
    p.add_argument("--out", default=".")
    p.add_argument("-n", type=int, default=1)
    p.add_argument("--csv-path")
    p.add_argument("--filter", action="store_true")
    p.add_argument("--save-error-data", action="store_true")
    p.add_argument("--config")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--threads", type=int, default=1)
    # Under mpirun (the numprobe command runs these): each process replays its share into a
    # shard file, then process 0 merges the shards into the result files.
    p.add_argument("--timestamp", help="the {ts} of the result files (MPI runs)")
    p.add_argument("--shard", help="INDEX/COUNT: replay only this process's share")
    p.add_argument("--shard-file", help="--shard: where its results go (or, failed, the error)")
    p.add_argument("--merge-shards", nargs="+", help="write the result files from these shards")
    args = p.parse_args(argv)
    from . import _merge_shards, _replay_shard, precheck

    options = dict(filter_api=args.filter, save_error_data=args.save_error_data,
                   config=args.config, white_list=None, black_list=None, seed=args.seed,
                   device=args.device, custom_apis=None)
    try:
        if args.shard:
            index, count = (int(x) for x in args.shard.split("/"))
            _replay_shard(args.api_info, args.shard_file, index, count, out=args.out,
                          csv_path=args.csv_path, timestamp=args.timestamp, n=args.n,
                          threads=args.threads, progress=_progress_bar(sys.stderr), **options)
            return 0
        if args.merge_shards:
            result = _merge_shards(args.api_info, args.merge_shards, out=args.out,
                                   csv_path=args.csv_path, timestamp=args.timestamp, **options)
        else:
            result = precheck(args.api_info, args.out, n=args.n, csv_path=args.csv_path,
                              threads=args.threads, progress=_progress_bar(sys.stderr), **options)
    except (_numprobe.Error, OSError, ValueError) as e:
        code = e.code if isinstance(e, _numprobe.Error) else 3
        if args.shard:  # the numprobe command reports it once, for every process
            with open(args.shard_file, "w", encoding="utf-8") as f:
                f.write(str(e))
        else:
            print(f"numprobe: error: {e}", file=sys.stderr)
        return code
    s = result.summary
    print(f"precheck ({result.mode} mode): {s['apis']} APIs: {s['pass']} pass, {s['warning']} "
          f"warning, {s['error']} error, {s['skip']} skipped")
    for a in result.apis:
        if a["verdict"] != "error":
            continue
        rows = [r for r in a["forward_rows"] + a["backward_rows"] if r["verdict"] == "error"]
        why = (rows[0]["reason"] if rows and rows[0]["standard_result"] == "error"
               else _first_line(rows[0]["message"]) if rows else a["message"])
        print(f"  error  {a['api']}  {rows[0]['name'] if rows else ''}: {why}")
    for key in ("result_csv", "details_csv", "json"):
        path = result.files[key]
        rel = os.path.relpath(path)
        print(f"  wrote {path if rel.startswith('..') else rel}")
    for w in result.warnings:
        print(f"numprobe: warning: {w}", file=sys.stderr)
    return 1 if s["error"] else 0


if __name__ == "__main__":
    sys.exit(main())

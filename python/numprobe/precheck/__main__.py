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
    args = p.parse_args(argv)
    from . import precheck

    try:
        result = precheck(args.api_info, args.out, n=args.n, csv_path=args.csv_path,
                          filter_api=args.filter, save_error_data=args.save_error_data,
                          config=args.config, seed=args.seed, device=args.device,
                          threads=args.threads, progress=_progress_bar(sys.stderr))
    except _numprobe.Error as e:
        print(f"numprobe: error: {e}", file=sys.stderr)
        return e.code
    except (OSError, ValueError) as e:
        print(f"numprobe: error: {e}", file=sys.stderr)
        return 3
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

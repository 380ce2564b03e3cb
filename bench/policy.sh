#!/bin/bash
# Policy benchmarks: library decisions/s (bench_policy) and `moat check
# --batch` throughput. Prints a markdown section on stdout.
set -eu
build=${1:-build}
secs=${BENCH_SECONDS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build/bench/bench_policy" "$secs" >"$tmp/lib.jsonl"
ws=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d["bench"]=="workspace": print(d["path"])' "$tmp/lib.jsonl")

# 200,000 calls for --batch: the same mix, half bash, half read_file
python3 - "$tmp/batch.jsonl" "$ws" <<'PY'
import json, sys
out, ws = sys.argv[1], sys.argv[2]
cmds = ["git status", "ls -la src", "make -j4 && ./run_tests", "rm -rf ./build",
        "grep -rn 'TODO' src | head -n 20", "cat README.md"]
files = ["src/main.c", "README.md", "src/net/http.c", "Makefile"]
with open(out, "w") as f:
    for i in range(200000):
        if i % 2:
            f.write(json.dumps({"tool": "bash", "args": {"command": cmds[i % len(cmds)]}}) + "\n")
        else:
            f.write(json.dumps({"tool": "read_file", "args": {"path": ws + "/" + files[i % len(files)]}}) + "\n")
PY
start=$(date +%s.%N)
"$build/moat" check --batch --cwd "$ws" <"$tmp/batch.jsonl" >"$tmp/batch.out"
end=$(date +%s.%N)
lines=$(wc -l <"$tmp/batch.out")
rm -rf "$ws"

python3 - "$tmp/lib.jsonl" "$lines" "$start" "$end" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lines, start, end = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
pol = [r for r in rows if r["bench"] == "policy"]
parse = [r for r in rows if r["bench"] == "parse_100k"]
print("| configuration | bash decisions/s | read_file decisions/s |")
print("|---|---:|---:|")
for r in pol:
    print(f"| {r['config']} | {r['bash_per_s']:,.0f} | {r['read_file_per_s']:,.0f} |")
if len(pol) == 2:
    print()
    print(f"10,000 rules cost {pol[0]['bash_per_s']/pol[1]['bash_per_s']:.2f}x (bash) and "
          f"{pol[0]['read_file_per_s']/pol[1]['read_file_per_s']:.2f}x (read_file) the default configuration.")
for r in parse:
    print()
    print(f"Analysing a {r['bytes']:,}-byte command: {r['best_ms']:.2f} ms (best of 20).")
print()
print(f"`moat check --batch`: {lines:,} mixed calls in {end-start:.2f} s = {lines/(end-start):,.0f} decisions/s "
      "(one process, JSON in and out).")
PY

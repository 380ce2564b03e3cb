#!/bin/bash
# moat inside real containers: the three kinds agents meet, run with
# podman over this machine's own root (an overlay: nothing written inside
# stays), each judged from outside the sandbox by what its command could
# read and write. Prints a markdown table (docs/sandbox.md, "Inside
# containers", keeps the current one).
#
#   scripts/container-check.sh [BUILD]     (root; podman and runc)
#
# Kinds:
#   docker      Docker's default rules: podman's seccomp profile with
#               unshare, mount, setns and the new mount API refused
#               (EPERM, as without CAP_SYS_ADMIN), clone only without
#               namespace flags, clone3 answered ENOSYS
#   podman      podman's defaults (a Kubernetes pod with unconfined
#               seccomp is the same): user namespaces, a masked /proc
#   privileged  --privileged
# `make check` never calls it (CI has no container engine); the same
# kinds are reproduced there by tests/integration/test_containers.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
moat=$(realpath -e "${1:-build}/moat") || { echo "no ${1:-build}/moat: make first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "container-check: run as root (podman --rootfs)" >&2; exit 2; }
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	echo "container-check: needs podman and runc (apt-get install podman runc)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Docker's namespace rules over podman's profile
python3 - /usr/share/containers/seccomp.json "$tmp/docker.json" <<'EOF' || exit 2
import json, sys
prof = json.load(open(sys.argv[1]))
refused = {"unshare", "mount", "umount", "umount2", "setns", "pivot_root", "open_tree",
           "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"}
for rule in prof["syscalls"]:
    if rule.get("action") == "SCMP_ACT_ALLOW":
        rule["names"] = [n for n in rule["names"] if n not in refused | {"clone", "clone3"}]
prof["syscalls"] = [r for r in prof["syscalls"] if r["names"]]
# CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
ns_flags = 0x7E020000
prof["syscalls"] += [
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": ns_flags, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    {"names": sorted(refused), "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
]
prof["defaultErrnoRet"] = 1
json.dump(prof, open(sys.argv[2], "w"))
EOF

# What runs inside: a workspace and a home with canaries, `moat status`,
# then a run of a command that tries to read each and to write beside
# them, as root and as nobody; one line of results per user.
cat >"$tmp/probe.sh" <<'EOF'
#!/bin/bash
moat=$1 who=$2
set -u
w=$(mktemp -d /var/tmp/moat-cc.XXXXXX)
h=$w.home
mkdir -p "$w/sub/dir" "$w/src" "$h/.ssh" "$h/.aws"
echo readme-ok >"$w/README"
echo env-canary >"$w/.env"
echo pem-canary >"$w/sub/dir/key.pem"
echo ssh-canary >"$h/.ssh/id_rsa"
echo aws-canary >"$h/.aws/credentials"
run=()
if [ "$who" = nobody ]; then
	chown -R 65534:65534 "$w" "$h"
	run=(setpriv --reuid 65534 --regid 65534 --clear-groups)
fi
gaps=$(HOME=$h "${run[@]}" "$moat" status 2>&1 | awk '$2 == "yes" && $3 == "NO" { printf "%s%s", s, $1; s = ", " }')
cmd='cat README .env sub/dir/key.pem "$HOME/.ssh/id_rsa" "$HOME/.aws/credentials" 2>/dev/null; echo written >new.txt; echo written >src/new.txt; echo done'
out=$(cd "$w" && HOME=$h "${run[@]}" "$moat" run --workspace "$w" -- sh -c "$cmd" 2>&1)
rc=$?
accept=$(printf '%s' "$gaps" | tr -d ' ')
warn=$(cd "$w" && HOME=$h "${run[@]}" "$moat" run --accept-gap "$accept" --workspace "$w" -- sh -c "$cmd" 2>/dev/null)
wrc=$?
judge() { # OUTPUT: the readme, the secrets read, the writes
	local read="" s e=no
	for s in env pem ssh aws; do
		case $1 in *"$s-canary"*) read="$read $s" ;; esac
	done
	case $1 in *readme-ok*) r=yes ;; *) r=no ;; esac
	[ -f "$w/src/new.txt" ] && e=yes
	printf '%s | %s | %s | %s' "$r" "${read:- none}" "$2" "$e"
}
wrote=no
[ -f "$w/new.txt" ] && wrote=yes
if [ $rc = 0 ]; then
	echo "| $who | ${gaps:-none} | runs | $(judge "$out" "$wrote") |"
else
	rm -f "$w/new.txt" "$w/src/new.txt"
	echo "| $who | ${gaps:-none} | refused ($rc): $(printf '%s' "$out" | head -n 1 | cut -c1-80) | - | - | - | - |"
	[ -f "$w/new.txt" ] && wrote=yes || wrote=no
	(cd "$w" && HOME=$h "${run[@]}" "$moat" run --accept-gap "$accept" --workspace "$w" -- sh -c "$cmd" >/dev/null 2>&1)
	[ -f "$w/new.txt" ] && wrote=yes
	echo "| $who, --accept-gap those | ${gaps:-none} | exit $wrc | $(judge "$warn" "$wrote") |"
fi
rm -rf "$w" "$h"
EOF
chmod +x "$tmp/probe.sh"

echo "| kind | user | missing protections (moat status) | moat run | README read | secrets read | new file beside a secret | new file elsewhere |"
echo "|---|---|---|---|---|---|---|---|"
for kind in docker podman privileged; do
	case $kind in
	docker) opts=(--security-opt "seccomp=$tmp/docker.json") ;;
	podman) opts=() ;;
	privileged) opts=(--privileged) ;;
	esac
	for who in root nobody; do
		line=$(podman --runtime runc run --rm -i --network host --ulimit nofile=4096:4096 \
			--ulimit nproc=8192:8192 -v "$repo:$repo" -v "$tmp:$tmp" -w "$repo" \
			-e PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			"${opts[@]}" --rootfs /:O /bin/bash "$tmp/probe.sh" "$moat" "$who" 2>&1)
		printf '%s\n' "$line" | grep '^| ' | sed "s/^| /| $kind | /" ||
			echo "| $kind | $who | (the container did not start: $(printf '%s' "$line" | tail -n 1 | cut -c1-80)) | | | | | |"
	done
done

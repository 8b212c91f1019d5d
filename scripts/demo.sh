#!/usr/bin/env bash
# `make demo`: starts anvil-supervisor and anvil-broker in a temporary state directory, shows
# the isolation probe's findings, runs the example tool over data/sales.csv and the four canned escape attempts through anvilctl,
# prints their traces and artifact paths, says for each attempt what stopped it (read off
# the run's own result, not assumed), and stops the daemons.
set -u
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
        echo "make demo: the supervisor builds jails and must run as root" >&2
        exit 1
fi
STATE=$(mktemp -d /tmp/anvil-demo.XXXXXX)
chmod 711 "$STATE"
export ANVIL_SOCKET="$STATE/anvil.sock"
"$BUILD/anvil-supervisor" --listen "$STATE/supervisor.sock" --state-dir "$STATE/sup" >"$STATE/supervisor.log" 2>&1 &
SUP=$!
for _ in $(seq 100); do [ -S "$STATE/supervisor.sock" ] && break; sleep 0.1; done
"$BUILD/anvil-broker" --supervisor "$STATE/supervisor.sock" --listen "$ANVIL_SOCKET" \
        --state-dir "$STATE/broker" >"$STATE/broker.log" 2>&1 &
BRO=$!
for _ in $(seq 100); do [ -S "$ANVIL_SOCKET" ] && break; sleep 0.1; done
stop() {
        kill "$BRO" "$SUP" 2>/dev/null
        wait "$BRO" "$SUP" 2>/dev/null
}
trap stop EXIT
if [ ! -S "$ANVIL_SOCKET" ]; then
        echo "The daemons did not start:" >&2
        cat "$STATE/supervisor.log" "$STATE/broker.log" >&2
        exit 1
fi
CTL="$BUILD/anvilctl"

echo "== Anvil demo (state in $STATE)"
echo
echo "== 0. What is in force: the isolation probe (anvilctl probe)"
"$CTL" probe || exit 1
echo
echo "== 1. The example tool: revenue by region over data/sales.csv"
"$CTL" run "$TOP/examples/revenue_by_region.py" --input "$TOP/data/sales.csv" || exit 1

echo
echo "== 2. Four escape attempts"
verdicts=()
for name in net_connect fork write_outside read_passwd; do
        echo
        echo "-- examples/escapes/$name.py"
        out=$("$CTL" run "$TOP/examples/escapes/$name.py" --json) || exit 1
        # The run's result, shown from its own JSON (the verdict below reads the same run).
        jq -r '"run \(.run_id): \(.killed // .status)\(if .exit_code != null then " (exit code \(.exit_code))" else "" end) in \(.wall_ms) ms; isolation: \(.isolation.tier)",
               "trace:", (.events[] | "  \(.t_ms) ms  \(.layer)  \(.kind)  \(.message // .op // "")"),
               "stdout:", (.stdout | split("\n")[] | select(length > 0) | "  " + .)' <<<"$out" | sed 's/^/   /'
        stdout=$(jq -r .stdout <<<"$out")
        v=""
        # What stopped it, read off this run's own result: a refusal by the Python layers
        # (pre-check or audit hook), or by Landlock as the kernel's audit records tell it, is
        # an event; otherwise what the namespaces did is in the tool's own output. Seccomp is
        # not built yet.
        refusal=$(jq -r '[.events[] | select((.layer == "precheck" or .layer == "audit" or .layer == "landlock") and .kind == "blocked")][0] | select(.) | "\(.layer): \(.message)"' <<<"$out")
        if [ -n "$refusal" ]; then
                v="STOPPED by the $refusal"
        else
                case "$name" in
                net_connect) grep -q "Network is unreachable" <<<"$stdout" &&
                        v="STOPPED by the network namespace only ('Network is unreachable')" ;;
                fork) grep -q "fork succeeded" <<<"$stdout" &&
                        v="NOT STOPPED: the fork succeeded, contained in the jail's pid namespace" ;;
                write_outside) grep -q "Read-only file system" <<<"$stdout" &&
                        v="STOPPED by the mount namespace only ('Read-only file system')" ;;
                read_passwd) grep -q "tool:x:1000:1000:Anvil tool:" <<<"$stdout" &&
                        v="NOT STOPPED as a read: it read the jail's synthetic /etc/passwd, not the host's" ;;
                esac
                [ -n "${v:-}" ] || v="UNEXPECTED: status $(jq -r .status <<<"$out"), stdout: $(head -3 <<<"$stdout" | tr '\n' ' ')"
        fi
        verdicts+=("$(printf '%-14s %s' "$name" "$v")")
done

echo
echo "== What stopped each attempt"
printf '  %s\n' "${verdicts[@]}"
echo
echo "Run results are stored by the broker under $STATE/broker/results/"

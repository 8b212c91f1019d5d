# The configuration file (issue 10, docs/configuration.md), read by both daemons with libinih:
#   refused: every class of error, in either daemon, stops it at once (exit 2) with one line
#       that names the file, the line, the key, the value and what is allowed, verbatim; no
#       socket and no state directory made
#   in force: a supervisor's max_runs ("busy" past it) and [limits] (a default in the
#       RunResult's limits, a request over a maximum refused, at it accepted), against the
#       suite's supervisor (the compiled table) as the control; a broker's keep_results (runs
#       pruned to it) and [model] (a task's request goes to the file's url, with its name and
#       the key from its key_file)
#   flags over the file: --max-runs (the third run then accepted), --allow-uid (the file's
#       list replaced), --keep-results
#   the other daemon's sections skipped (and the same lines refused by their own daemon)
#   the shipped etc/anvil.conf: every option of both daemons has its key there; with its paths
#       and names made this test's, and every commented-out default uncommented, both daemons
#       start from it alone and serve a run, the sockets as it says (the root pass only: its
#       service is root's, with kernel_audit = on)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
SUP="$ANVIL_BUILD/anvil-supervisor"
BRO="$ANVIL_BUILD/anvil-broker"
OFF=1100000000 # this test's jail uids: ANVIL_E2E_UID_BASE + OFF and up
F="$T/e.conf"

# refused WHAT DAEMON WANT [ARGS...] (the file $F from stdin, unless ARGS has a --config):
# the daemon exits 2 and says WANT, its only line; it made neither socket nor state.
refused() {
        local what=$1 daemon=$2 want=$3 out rc cmd
        shift 3
        [[ " $* " == *" --config "* ]] || { cat >"$F"; set -- --config "$F" "$@"; }
        case $daemon in
        sup) cmd=("${SUP_WRAP[@]}" "$SUP" --listen "$T/r.sock" --state-dir "$T/r" --uid-base $((ANVIL_E2E_UID_BASE + OFF))) ;;
        bro) cmd=("$BRO" --supervisor "$T/nosuch.sock" --listen "$T/r.sock" --state-dir "$T/r") ;;
        nobody-sup) cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SUP" --listen "$T/r.sock" --state-dir "$T/r") ;;
        nobody-bro) cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$BRO" --supervisor "$T/nosuch.sock"
                --listen "$T/r.sock" --state-dir "$T/r") ;;
        esac
        out=$(timeout 30 "${cmd[@]}" "$@" 2>&1 </dev/null)
        rc=$?
        expect_eq "$what: exit" 2 "$rc"
        expect_eq "$what" "$want" "$out"
        [ ! -e "$T/r.sock" ] && [ ! -e "$T/r" ] || fail "$what: the daemon made its socket or state directory"
}
S="anvil-supervisor: $F"
B="anvil-broker: $F"

# ---- the supervisor refuses ----
refused "an unknown section" sup "$S:2: [supervisr]: unknown section (expected [supervisor], [limits], [broker] or [model])" <<'EOF'
# a typo
[supervisr]
max_runs = 2
EOF
refused "an unknown section with no key" sup "$S:3: [limit]: unknown section (expected [supervisor], [limits], [broker] or [model])" \
        <<<$'[supervisor]\nmax_runs = 2\n[limit]'
refused "an unknown key" sup "$S:2: max_run = 2: unknown key in [supervisor]" <<<$'[supervisor]\nmax_run = 2'
refused "an unknown key in [limits]" sup "$S:2: wall_s_min = 1: unknown key in [limits]" <<<$'[limits]\nwall_s_min = 1'
refused "a number out of range" sup "$S:4: max_runs = 0: expected 1..256" <<<$'[supervisor]\nspares = 1\n; the runs\nmax_runs = 0'
refused "not a number" sup "$S:2: max_runs = many: expected 1..256" <<<$'[supervisor]\nmax_runs = many'
refused "a comment after a value is the value's" sup "$S:2: max_runs = 2 # two: expected 1..256" <<<$'[supervisor]\nmax_runs = 2 # two'
refused "a bound out of range" sup "$S:2: idle_timeout = 0: expected 1..86400 seconds" <<<$'[supervisor]\nidle_timeout = 0'
refused "a limit under its compiled minimum" sup "$S:2: memory_mb = 32: expected 64..65536" <<<$'[limits]\nmemory_mb = 32'
refused "a maximum over its compiled one" sup "$S:2: pids_max = 2000: expected 8..1024" <<<$'[limits]\npids_max = 2000'
refused "a limit not a number" sup "$S:2: wall_s = 10s: expected 1..3600" <<<$'[limits]\nwall_s = 10s'
refused "a bad cgroup mode" sup "$S:2: cgroup = v1: expected auto, delegated or none" <<<$'[supervisor]\ncgroup = v1'
refused "a bad kernel_audit" sup "$S:2: kernel_audit = yes: expected on or off" <<<$'[supervisor]\nkernel_audit = yes'
refused "an unknown user" sup \
        "$S:3: allow_uid = anvil-no-such-user: 'anvil-no-such-user' is neither a user name nor a uid" \
        <<<$'[supervisor]\nallow_uid = nobody\nallow_uid = anvil-no-such-user'
refused "an unknown group" sup \
        "$S:2: socket_group = anvil-no-such-group: 'anvil-no-such-group' is neither a group name nor a gid" \
        <<<$'[supervisor]\nsocket_group = anvil-no-such-group'
refused "a runner that is not there" sup "$S:2: runner = $T/no-runner: No such file or directory" \
        <<<$'[supervisor]\nrunner = '"$T/no-runner"
refused "a default over its maximum" sup "$S:3: wall_s = 30 is over wall_s_max = 20 (wall_s on line 2)" \
        <<<$'[limits]\nwall_s = 30\nwall_s_max = 20'
refused "a maximum under the compiled default" sup \
        "$S:2: memory_mb = 512 is over memory_mb_max = 256 (memory_mb is the compiled default: set it too)" \
        <<<$'[limits]\nmemory_mb_max = 256'
refused "a key given twice" sup "$S:4: max_runs = 3: given twice, first on line 2" <<<$'[supervisor]\nmax_runs = 2\n\nmax_runs = 3'
refused "a key before any section" sup \
        "$S:1: max_runs = 2: before any [section]: put it under [supervisor], [limits], [broker] or [model]" <<<'max_runs = 2'
refused "a line that is not key = value" sup \
        "$S:3: not a [section], a key = value line or a comment line ('#' or ';')" <<<$'[supervisor]\nmax_runs = 2\nspares 1'
refused "an unclosed section" sup "$S:1: not a [section], a key = value line or a comment line ('#' or ';')" \
        <<<$'[supervisor\nmax_runs = 2'
refused "a continuation line" sup "$S:3: max_runs = 4: given twice, first on line 2" <<<$'[supervisor]\nmax_runs = 2\n  max_runs = 4'
long=$(printf 'x%.0s' $(seq 4300))
refused "a line too long" sup "$S:3: the line is longer than 4200 bytes" <<<$'[supervisor]\n# the runner\nrunner = /'"$long"
refused "a NUL byte" sup "$S:2: the line has a NUL byte" < <(printf '[supervisor]\nmax_runs = 2\x003\n')
refused "a --config that is not there" sup "anvil-supervisor: --config $T/none.conf: No such file or directory" \
        --config "$T/none.conf"
refused "a --config that is a directory" sup "anvil-supervisor: --config $T: not a regular file" --config "$T"
printf '[supervisor]\nmax_runs = 2\n' >"$T/root-only.conf"
chmod 600 "$T/root-only.conf"
refused "a --config the daemon may not read" nobody-sup "anvil-supervisor: --config $T/root-only.conf: Permission denied" \
        --config "$T/root-only.conf"
# A flag's message is what it was before the file existed.
refused "the same value as a flag" sup "anvil-supervisor: --max-runs: expected 1..256" --config /dev/null --max-runs 0
refused "an unknown user as a flag" sup "anvil-supervisor: --allow-uid: 'anvil-no-such-user' is neither a user name nor a uid" \
        --config /dev/null --allow-uid anvil-no-such-user

# ---- the broker refuses ----
refused "broker: an unknown section" bro "$B:1: [brokr]: unknown section (expected [supervisor], [limits], [broker] or [model])" \
        <<<$'[brokr]\nkeep_results = 2'
refused "broker: an unknown key" bro "$B:3: model = m: unknown key in [model]" <<<$'[model]\nurl = http://127.0.0.1:9/v1\nmodel = m'
refused "broker: an unknown key in [broker]" bro "$B:2: no_such_key = 1: unknown key in [broker]" <<<$'[broker]\nno_such_key = 1'
refused "broker: a number out of range" bro "$B:2: keep_results = 0: '0' is not a whole number within 1..1000000" \
        <<<$'[broker]\nkeep_results = 0'
refused "broker: not a number" bro "$B:2: timeout = 2m: '2m' is not a whole number of seconds within 1..3600" \
        <<<$'[model]\ntimeout = 2m'
refused "broker: a bad temperature" bro "$B:2: temperature = hot: 'hot' is not a number within 0..2" <<<$'[model]\ntemperature = hot'
refused "broker: a bad model URL" bro "$B:2: url = ftp://127.0.0.1/v1: model URL: only http:// and https:// are supported" \
        <<<$'[model]\nurl = ftp://127.0.0.1/v1\nname = m'
refused "broker: an unknown group" bro \
        "$B:2: socket_group = anvil-no-such-group: 'anvil-no-such-group' is neither a group name nor a gid" \
        <<<$'[broker]\nsocket_group = anvil-no-such-group'
refused "broker: a key file that is not there" bro "$B:4: key_file = $T/no.key: key file $T/no.key: No such file or directory" \
        <<<$'[model]\nurl = http://127.0.0.1:9/v1\nname = m\nkey_file = '"$T/no.key"
refused "broker: a key given twice" bro "$B:3: name = n: given twice, first on line 2" <<<$'[model]\nname = m\nname = n'
refused "broker: a syntax error" bro "$B:2: not a [section], a key = value line or a comment line ('#' or ';')" <<<$'[broker]\nkeep_results'
refused "broker: a --config that is not there" bro "anvil-broker: --config $T/none.conf: No such file or directory (see --help)" \
        --config "$T/none.conf"
refused "broker: a --config it may not read" nobody-bro "anvil-broker: --config $T/root-only.conf: Permission denied (see --help)" \
        --config "$T/root-only.conf"
refused "broker: --config twice" bro "anvil-broker: --config is given twice (/dev/null, $T/root-only.conf) (see --help)" \
        --config /dev/null --config "$T/root-only.conf"
refused "broker: the same value as a flag" bro "anvil-broker: --keep-results: '0' is not a whole number within 1..1000000 (see --help)" \
        --config /dev/null --keep-results 0

# ---- the supervisor's settings in force ----
conf() { cat >"$T/$1.conf"; }
ROOT_ONLY=""
[ -z "$ROOTLESS_USER" ] && ROOT_ONLY=$'socket_group = 65534\nallow_uid = 65534'
conf sup <<EOF
[supervisor]
max_runs = 2
spares = 0
$ROOT_ONLY
[limits]
wall_s = 7
wall_s_max = 20
memory_mb = 200
memory_mb_max = 300
# the broker's: skipped, whatever they say (the broker refuses both, above)
[broker]
no_such_key = 1
[model]
url = ftp://127.0.0.1/v1
EOF
SUP_CONFIG="$T/sup.conf" start_sup cfg "$OFF"
grep -q ": configuration: $T/sup.conf\$" "$T/cfg.log" || fail "the log does not name the file: $(cat "$T/cfg.log")"
tool hello.py <<<'print("hello")'
ANVIL_SOCKET="$T/cfg.sock" run_json "$T/hello.py"
expect_eq "a run: ok" "ok hello" "$(j '"\(.status) \(.stdout)"')"
expect_eq "the file's defaults in the RunResult's limits (wall_s, memory_mb; cpu_s compiled)" "7 200 5" \
        "$(j '.blast_radius.limits | "\(.wall_s) \(.memory_mb) \(.cpu_s)"')"
run_json "$T/hello.py"
expect_eq "control: the suite's supervisor, compiled defaults" "10 512 5" \
        "$(j '.blast_radius.limits | "\(.wall_s) \(.memory_mb) \(.cpu_s)"')"
ANVIL_SOCKET="$T/cfg.sock" run_json "$T/hello.py" --timeout 20 --memory 300
expect_eq "at the file's maxima: accepted" "ok 20 300" "$(j '"\(.status) \(.blast_radius.limits.wall_s) \(.blast_radius.limits.memory_mb)"')"
over() { # WHAT WANT OPTIONS...: anvilctl's run refused with WANT
        local what=$1 want=$2 rc
        shift 2
        ANVIL_SOCKET="$T/cfg.sock" "$CTL" run "$T/hello.py" "$@" --json >"$T/over.out" 2>"$T/over.err"
        rc=$?
        [ "$rc" -ne 0 ] || fail "$what: accepted: $(jq -c '{status, limits: .blast_radius.limits}' "$T/over.out")"
        expect_eq "$what" "$want" "$(cat "$T/over.err")"
}
over "over the file's wall_s_max" "anvilctl: bad_request: run_request.limits.wall_s: 21 is over the maximum of 20" --timeout 21
over "over the file's memory_mb_max" "anvilctl: bad_request: run_request.limits.memory_mb: 301 is over the maximum of 300" \
        --memory 301
run_json "$T/hello.py" --timeout 21 --memory 301
expect_eq "control: the suite's supervisor takes them" "ok 21 301" \
        "$(j '"\(.status) \(.blast_radius.limits.wall_s) \(.blast_radius.limits.memory_mb)"')"

# max_runs = 2: a third run at once is busy; with --max-runs 3 over the file, it is taken.
tool sleep.py <<<'import time; time.sleep(4); print("slept")'
three_at_once() { # NAME: two sleepers on $T/NAME.sock, then a third run; its outcome in $T/third.*
        local name=$1 n0 i
        n0=$(grep -c ": started for " "$T/$name.log")
        for i in 1 2; do
                ANVIL_SOCKET="$T/$name.sock" "$CTL" run "$T/sleep.py" --json >"$T/$name.sleep$i" 2>&1 &
                OWN_PIDS+=("$!")
        done
        for _ in $(seq 200); do
                [ "$(grep -c ": started for " "$T/$name.log")" -ge $((n0 + 2)) ] && break
                sleep 0.1
        done
        [ "$(grep -c ": started for " "$T/$name.log")" -ge $((n0 + 2)) ] || fail "$name: the two runs did not start"
        ANVIL_SOCKET="$T/$name.sock" "$CTL" run "$T/hello.py" --json >"$T/third.out" 2>"$T/third.err"
        wait "${OWN_PIDS[@]: -2}"
}
three_at_once cfg
expect_eq "max_runs = 2 from the file: a third run" "anvilctl: busy: All 2 run slots are in use; try again later" \
        "$(cat "$T/third.err")"
SUP_CONFIG="$T/sup.conf" start_sup flags $((OFF + 1000)) --max-runs 3 --allow-uid 65533
three_at_once flags
expect_eq "--max-runs 3 over the file: the third run" ok "$(jq -r .status "$T/third.out")"
expect_eq "--max-runs 3 over the file: the two others" "ok ok" \
        "$(jq -r .status "$T/flags.sleep1") $(jq -r .status "$T/flags.sleep2")"
FT="$ANVIL_BUILD/tests/frametool"
if [ -z "$ROOTLESS_USER" ]; then
        expect_eq "allow_uid = 65534 from the file: may connect" "ok hello" \
                "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FT" "$T/cfg.sock" hello 2>&1)"
        expect_eq "65533, not in the file's list: refused" \
                "error code=forbidden field=- message=This uid may not use the supervisor (see --allow-uid)" \
                "$(setpriv --reuid=65533 --regid=65534 --clear-groups "$FT" "$T/cfg.sock" hello 2>&1)"
        expect_eq "--allow-uid 65533 replaces the file's list: 65534 refused" \
                "error code=forbidden field=- message=This uid may not use the supervisor (see --allow-uid)" \
                "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FT" "$T/flags.sock" hello 2>&1)"
        expect_eq "--allow-uid 65533: may connect" "ok hello" \
                "$(setpriv --reuid=65533 --regid=65534 --clear-groups "$FT" "$T/flags.sock" hello 2>&1)"
else
        echo "skip (rootless): allow_uid and socket_group need root to open the socket to group 65534"
fi

# ---- the broker's settings in force ----
model_script m <<'PY'
[code('with open("artifacts/out.txt", "w") as f:\n    f.write("1\\n")\nfinal_answer(1)\n')]
PY
start_model m
KEY="anvil-e2e-config-key-$RANDOM$RANDOM"
printf '%s\n' "$KEY" >"$T/model.key"
chmod 600 "$T/model.key"
conf bro <<EOF
[broker]
keep_results = 2
[model]
url = http://127.0.0.1:$PORT_m/v1
name = from-the-file
key_file = $T/model.key
timeout = 7
# the supervisor's: skipped (the supervisor refuses both, above)
[supervisor]
max_runs = 0
[limits]
bogus = 1
EOF
BRO_CONFIG="$T/bro.conf" start_bro bcfg
grep -q ": configuration: $T/bro.conf\$" "$T/bcfg.log" || fail "the broker's log does not name the file: $(cat "$T/bcfg.log")"
grep -q "keeping 2 results, 1000 tasks" "$T/bcfg.log" || fail "keep_results not in force: $(cat "$T/bcfg.log")"
grep -qF "model: from-the-file at http://127.0.0.1:$PORT_m/v1, key from $T/model.key, timeout 7 s, 3 retries" "$T/bcfg.log" ||
        fail "the model's settings not in force: $(cat "$T/bcfg.log")"
results() { # DIR N: until DIR/results holds N results (up to 5 s: pruning follows the result)
        for _ in $(seq 50); do
                [ "$(find "$1/results" -name '*.json' | wc -l)" = "$2" ] && break
                sleep 0.1
        done
        find "$1/results" -name '*.json' | wc -l
}
for _ in 1 2 3; do ANVIL_SOCKET="$T/bcfg.sock" run_json "$T/hello.py"; done
expect_eq "keep_results = 2 from the file: three runs, two kept" 2 "$(results "$T/bcfg" 2)"
BRO_CONFIG="$T/bro.conf" start_bro bflags --keep-results 3
for _ in 1 2 3 4; do ANVIL_SOCKET="$T/bflags.sock" run_json "$T/hello.py"; done
expect_eq "--keep-results 3 over the file: four runs, three kept" 3 "$(results "$T/bflags" 3)"
printf '{"task": "write 1"}\n' >"$T/task.json"
ANVIL_SOCKET="$T/bcfg.sock" "$CTL" submit "$T/task.json" --json >"$T/task.out" 2>"$T/task.err" ||
        fail "the task: exited $?: $(cat "$T/task.err")"
expect_eq "a task with no model of its own: ok" ok "$(jq -r .status "$T/task.out")"
expect_eq "its request went to the file's url, with the file's model name" from-the-file \
        "$(head -1 "$T/logs/m.jsonl" | jq -r .json.model)"
expect_eq "with the key from the file's key_file" "Bearer $KEY" "$(head -1 "$T/logs/m.jsonl" | jq -r .headers.Authorization)"

# ---- no file: the default is read when it exists, and its absence is no error ----
if [ ! -e /etc/anvil/anvil.conf ]; then
        "$BRO" --supervisor "$T/nosuch.sock" --listen "$T/nofile.sock" --state-dir "$T/nofile" >"$T/nofile.log" 2>&1 &
        OWN_PIDS+=("$!")
        for _ in $(seq 100); do grep -q ": listening on " "$T/nofile.log" && break; sleep 0.1; done
        expect_eq "no --config and no /etc/anvil/anvil.conf: the broker starts, saying so" \
                "anvil-broker: info: configuration: none (/etc/anvil/anvil.conf does not exist)" \
                "$(grep ": configuration: " "$T/nofile.log")"
else
        echo "skip: /etc/anvil/anvil.conf exists on this host: a start without --config would read it"
fi

# ---- the shipped file ----
SHIP="$TOP/etc/anvil.conf"
for opt in $("$SUP" --help | grep -oE '^  --[a-z-]+' | sed 's/^  --//'); do
        case $opt in help | version | config | enable-kernel-audit | test-*) continue ;; esac
        grep -qE "^#?${opt//-/_} = " "$SHIP" || fail "the shipped file has no key for --$opt"
done
for opt in $("$BRO" --help | grep -oE '^  --[a-z-]+' | sed 's/^  --//'); do
        case $opt in help | version | config) continue ;; model) opt=name ;; model-*) opt=${opt#model-} ;; esac
        grep -qE "^#?${opt//-/_} = " "$SHIP" || fail "the shipped file has no key for the broker's --$opt"
done
for l in wall_s cpu_s memory_mb output_bytes files_bytes pids; do
        grep -qE "^#?$l = " "$SHIP" && grep -qE "^#?${l}_max = " "$SHIP" || fail "the shipped file has no $l or ${l}_max"
done
echo "ok: every option of both daemons, and every limit, has its key in the shipped file"
if [ -n "$ROOTLESS_USER" ]; then
        echo "skip (rootless): the shipped file's service runs as root (its kernel_audit = on)"
        exit 0
fi
# Its paths and names made this test's; cgroup = auto (this test's cgroup is not delegated to it);
# every commented-out default uncommented, in [model] the first example of each key, but the
# key file's (the example's path is not there); the web UI on any free port, its files this
# test's directory.
awk -v T="$T" -v base=$((ANVIL_E2E_UID_BASE + OFF + 2000)) -v runner="$ANVIL_BUILD/anvil-py" '
        /^\[/ { sec = $0 }
        { gsub("/run/anvil/supervisor.sock", T "/ship-sup.sock"); gsub("/run/anvil.sock", T "/ship-bro.sock")
          gsub("/var/lib/anvil/supervisor", T "/ship-sup"); gsub("/var/lib/anvil/broker", T "/ship-bro") }
        /^(socket_group|allow_uid) = anvil(-users)?$/ { sub(/= .*/, "= 65534") }
        /^cgroup = delegated$/ { $0 = "cgroup = auto" }
        /^#[a-z_]+ = / {
                k = substr($1, 2)
                if (k == "key_file" || seen[sec, k]++) { print; next }
                sub(/^#/, "")
                if (k == "uid_base") $0 = "uid_base = " base
                if (k == "runner") $0 = "runner = " runner
                if (k == "http") $0 = "http = 127.0.0.1:0" # any free port: tests run side by side
                if (k == "web_dir") $0 = "web_dir = " T
        }
        { print }' "$SHIP" >"$T/ship.conf"
grep -q "^max_runs = 32$" "$T/ship.conf" && grep -q "^url = http://127.0.0.1:11434/v1$" "$T/ship.conf" ||
        fail "the shipped file's defaults were not uncommented: $(cat "$T/ship.conf")"
"$SUP" --config "$T/ship.conf" >"$T/ship-sup.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 300); do grep -q ": listening on $T/ship-sup.sock " "$T/ship-sup.log" && break; sleep 0.1; done
grep -q ": listening on $T/ship-sup.sock " "$T/ship-sup.log" || fail "the shipped supervisor did not start: $(cat "$T/ship-sup.log")"
"$BRO" --config "$T/ship.conf" >"$T/ship-bro.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do grep -q ": listening on $T/ship-bro.sock " "$T/ship-bro.log" && break; sleep 0.1; done
grep -q ": listening on $T/ship-bro.sock " "$T/ship-bro.log" || fail "the shipped broker did not start: $(cat "$T/ship-bro.log")"
expect_eq "the shipped supervisor's socket" "660 65534" "$(stat -c '%a %g' "$T/ship-sup.sock")"
expect_eq "the shipped broker's socket" "660 65534" "$(stat -c '%a %g' "$T/ship-bro.sock")"
ANVIL_SOCKET="$T/ship-bro.sock" run_json "$T/hello.py"
expect_eq "a run through the shipped file's daemons" "ok hello" "$(j '"\(.status) \(.stdout)"')"
expect_eq "its limits: the shipped defaults" "10 5 512 1048576 67108864" \
        "$(j '.blast_radius.limits | "\(.wall_s) \(.cpu_s) \(.memory_mb) \(.output_bytes) \(.files_bytes)"')"

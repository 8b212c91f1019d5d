# Start-up errors that say what is wrong (issue 10, deliverable 5): each cause stops the daemon
# with one line that names the path and the fix (POL_STARTUP, policy/reasons.h), exit status 1,
# and leaves nothing behind (no state directory, no socket); each has its control: the same
# start, the cause removed, succeeds. Before, a missing socket directory read "permission
# denied" (libuv turns bind()'s ENOENT into EACCES), and only after the probe had run and the
# state directory was made. The mounts (read-only, noexec, full) are below $T and root's only.
. "$(dirname "$0")/lib.sh"
SUP="$ANVIL_BUILD/anvil-supervisor"
BRO="$ANVIL_BUILD/anvil-broker"
UIDB=$((ANVIL_E2E_UID_BASE + 740000000))
MOUNTS=()
st_cleanup() {
        local p m
        for p in "${OWN_PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${OWN_PIDS[@]}"; do wait "$p" 2>/dev/null; done
        for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
        cleanup
}
trap st_cleanup EXIT
mnt() { # DIR OPTIONS: a small tmpfs of the test's
        mkdir -p "$1"
        mount -t tmpfs -o "$2" anvil-e2e-startup "$1" || fail "cannot mount a tmpfs at $1"
        MOUNTS+=("$1")
}
as_me() { "${SUP_WRAP[@]}" "$@"; }

# fails WHAT EXPECTED-LINE CMD...: CMD exits 1 and its last line of stderr is EXPECTED-LINE.
fails() {
        local what=$1 want=$2 rc
        shift 2
        "$@" >"$T/out.log" 2>&1
        rc=$?
        expect_eq "$what: exit status" 1 "$rc"
        expect_eq "$what: the line" "$want" "$(tail -1 "$T/out.log")"
}
# starts WHAT LISTEN CMD...: CMD starts (logs "listening on LISTEN"); then it is stopped.
starts() {
        local what=$1 sock=$2 pid
        shift 2
        "$@" >"$T/ctl.log" 2>&1 &
        pid=$!
        OWN_PIDS+=("$pid")
        for _ in $(seq 300); do
                grep -qF ": listening on $sock " "$T/ctl.log" && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        grep -qF ": listening on $sock " "$T/ctl.log" || fail "control: $what: did not start: $(cat "$T/ctl.log")"
        echo "ok: control: $what: started"
        kill "$pid"
        wait "$pid"
}
# The supervisor as the pass runs them (root, or the rootless user): a command, not a function,
# so that a background start's $! is the daemon itself.
sup=("${SUP_WRAP[@]}" "$SUP" --config /dev/null --uid-base "$UIDB" --spares 0 --max-runs 2)
E="anvil-supervisor: error:"
me=$(id -u "${ROOTLESS_USER:-root}")

# ---- the socket's directory ----
fails "missing socket directory" \
        "$E --listen $T/run/anvil/supervisor.sock: the directory $T/run/anvil does not exist: create it (mkdir -p $T/run/anvil), or choose a path in one that does; installed, anvil-supervisor.service makes /run/anvil (RuntimeDirectory=anvil)" \
        "${sup[@]}" --listen "$T/run/anvil/supervisor.sock" --state-dir "$T/s1"
[ -e "$T/s1" ] && fail "missing socket directory: the state directory was made"
echo "ok: missing socket directory: no state directory left"
as_me mkdir -p "$T/run/anvil"
starts "missing socket directory" "$T/run/anvil/supervisor.sock" "${sup[@]}" --listen "$T/run/anvil/supervisor.sock" --state-dir "$T/s1"

as_me touch "$T/plain"
fails "socket directory not a directory" \
        "$E --listen $T/plain/sup.sock: $T/plain is not a directory: choose a path in a directory" \
        "${sup[@]}" --listen "$T/plain/sup.sock" --state-dir "$T/s2"
starts "socket directory not a directory" "$T/run/sup.sock" "${sup[@]}" --listen "$T/run/sup.sock" --state-dir "$T/s2"

if [ -z "$ROOTLESS_USER" ]; then
        mnt "$T/rosock" ro,size=1m
        why="Read-only file system"
else
        as_me mkdir "$T/rosock" && chmod 555 "$T/rosock"
        why="Permission denied"
fi
fails "socket directory not writable" \
        "$E --listen $T/rosock/sup.sock: uid $me cannot make a socket in $T/rosock ($why): make the directory writable for it, or choose a path in another" \
        "${sup[@]}" --listen "$T/rosock/sup.sock" --state-dir "$T/s3"
if [ -z "$ROOTLESS_USER" ]; then mount -o remount,rw "$T/rosock"; else chmod 755 "$T/rosock"; fi
starts "socket directory not writable" "$T/rosock/sup.sock" "${sup[@]}" --listen "$T/rosock/sup.sock" --state-dir "$T/s3"

# ---- what is at the socket's path ----
as_me sh -c "echo keep >'$T/run/notsock'"
fails "not a socket" \
        "$E --listen $T/run/notsock: exists and is not a socket (it is a regular file): it is left in place; remove it, or choose another path" \
        "${sup[@]}" --listen "$T/run/notsock" --state-dir "$T/s4"
expect_eq "not a socket: the file is left as it was" keep "$(cat "$T/run/notsock")"
rm "$T/run/notsock"
starts "not a socket" "$T/run/notsock" "${sup[@]}" --listen "$T/run/notsock" --state-dir "$T/s4"

# A live supervisor: a second one on its socket names its pid and leaves its socket.
"${SUP_WRAP[@]}" "$SUP" --config /dev/null --uid-base "$UIDB" --spares 0 --max-runs 2 --listen "$T/run/live.sock" \
        --state-dir "$T/live" >"$T/live.log" 2>&1 &
LIVE=$!
OWN_PIDS+=("$LIVE")
for _ in $(seq 300); do grep -q ": listening on " "$T/live.log" && break; sleep 0.1; done
grep -q ": listening on " "$T/live.log" || fail "the live supervisor did not start: $(cat "$T/live.log")"
fails "socket in use" \
        "$E --listen $T/run/live.sock: another daemon (pid $LIVE) is listening there: stop it, or choose another path; its socket is left in place" \
        "${sup[@]}" --listen "$T/run/live.sock" --state-dir "$T/s5"
ANVIL_SOCKET="$T/run/live.sock" "$CTL" probe >/dev/null 2>"$T/probe.err" ||
        fail "socket in use: the live supervisor no longer answers on its socket: $(cat "$T/probe.err")"
echo "ok: socket in use: the live supervisor still answers on it"
# Killed outright, it leaves its socket: stale, removed with one line, and the start goes on.
kill -9 "$LIVE"
wait "$LIVE" 2>/dev/null
[ -S "$T/run/live.sock" ] || fail "the killed supervisor left no socket to test with"
starts "stale socket" "$T/run/live.sock" "${sup[@]}" --listen "$T/run/live.sock" --state-dir "$T/s5"
expect_eq "stale socket: the line" \
        "anvil-supervisor: info: --listen $T/run/live.sock: a stale socket (nothing listens on it) was removed" \
        "$(grep -F "stale socket" "$T/ctl.log")"
starts "no stale socket" "$T/run/live.sock" "${sup[@]}" --listen "$T/run/live.sock" --state-dir "$T/s5"
expect_eq "control: no socket there, no such line" 0 "$(grep -cF "stale socket" "$T/ctl.log")"

# ---- the state directory ----
fails "state directory's parent missing" \
        "$E --state-dir $T/var/lib/anvil/supervisor: the directory $T/var/lib/anvil does not exist: create it (mkdir -p $T/var/lib/anvil), or choose another; installed, the units make theirs below /var/lib/anvil (StateDirectory=)" \
        "${sup[@]}" --listen "$T/run/s6.sock" --state-dir "$T/var/lib/anvil/supervisor"
[ -e "$T/run/s6.sock" ] && fail "state directory's parent missing: a socket was left"
as_me mkdir -p "$T/var/lib/anvil"
starts "state directory's parent missing" "$T/run/s6.sock" "${sup[@]}" --listen "$T/run/s6.sock" --state-dir "$T/var/lib/anvil/supervisor"

fails "state directory not a directory" \
        "$E --state-dir $T/plain: $T/plain is not a directory: choose another path" \
        "${sup[@]}" --listen "$T/run/s7.sock" --state-dir "$T/plain"

# The runner and pid 1, looked for beside the binary (a copy of the build's, in $T/bin).
as_me mkdir "$T/bin"
cp "$SUP" "$ANVIL_BUILD/anvil-py" "$T/bin/"
[ -n "$ROOTLESS_USER" ] && chown -R "$ROOTLESS_USER:" "$T/bin"
fails "pid 1 missing" \
        "$E the jail's pid 1 anvil-init: $T/bin/anvil-init: No such file or directory: build it (make), or install it (make install puts it in /usr/lib/anvil); it is looked for beside anvil-supervisor, then in /usr/lib/anvil" \
        "${SUP_WRAP[@]}" "$T/bin/anvil-supervisor" --config /dev/null --uid-base "$UIDB" --spares 0 --max-runs 2 --listen "$T/run/s8.sock" --state-dir "$T/s8"
cp "$ANVIL_BUILD/anvil-init" "$T/bin/"
chmod 644 "$T/bin/anvil-py"
[ -n "$ROOTLESS_USER" ] && chown -R "$ROOTLESS_USER:" "$T/bin"
fails "runner not executable" \
        "$E the runner anvil-py: $T/bin/anvil-py is not an executable file: make it one (chmod 0755), or reinstall it; --runner PATH names another" \
        "${SUP_WRAP[@]}" "$T/bin/anvil-supervisor" --config /dev/null --uid-base "$UIDB" --spares 0 --max-runs 2 --listen "$T/run/s8.sock" --state-dir "$T/s8"
[ -e "$T/s8" ] && fail "runner not executable: the state directory was made"
chmod 755 "$T/bin/anvil-py"
starts "runner not executable" "$T/run/s8.sock" "${SUP_WRAP[@]}" "$T/bin/anvil-supervisor" --config /dev/null --uid-base "$UIDB" --spares 0 \
        --max-runs 2 --listen "$T/run/s8.sock" --state-dir "$T/s8"

# ---- the broker: its socket, and a supervisor that is not there ----
BE="anvil-broker: error:"
fails "broker: missing socket directory" \
        "$BE --listen $T/nodir/anvil.sock: the directory $T/nodir does not exist: create it (mkdir -p $T/nodir), or choose a path in one that does; installed, anvil-supervisor.service makes /run/anvil (RuntimeDirectory=anvil)" \
        "$BRO" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/nodir/anvil.sock" --state-dir "$T/b1"
[ -e "$T/b1" ] && fail "broker: missing socket directory: the state directory was made"
starts "broker" "$T/run/b1.sock" "$BRO" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/run/b1.sock" --state-dir "$T/b1"
expect_eq "control: the broker on a live supervisor: no warning" 0 "$(grep -c "cannot reach the supervisor" "$T/ctl.log")"

NOSUP="cannot reach the supervisor at $T/run/none.sock (No such file or directory): no socket is there: start anvil-supervisor (systemctl start anvil-supervisor), or give the broker the path it listens on (--supervisor)"
"$BRO" --config /dev/null --supervisor "$T/run/none.sock" --listen "$T/run/b2.sock" --state-dir "$T/b2" >"$T/b2.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do grep -q ": listening on " "$T/b2.log" && break; sleep 0.1; done
expect_eq "broker: no supervisor: the warning" \
        "anvil-broker: warning: --supervisor: $NOSUP; serving anyway: each run and probe gets this error (unavailable) until the supervisor answers" \
        "$(grep -F "cannot reach" "$T/b2.log")"
ANVIL_SOCKET="$T/run/b2.sock" "$CTL" probe >/dev/null 2>"$T/b2.err"
expect_eq "broker: no supervisor: anvilctl's exit status (refused)" 123 "$?"
expect_eq "broker: no supervisor: the client's error" "anvilctl: unavailable: $NOSUP" "$(cat "$T/b2.err")"

# ---- what only root can set up: filesystems that cannot hold the state ----
if [ -n "$ROOTLESS_USER" ]; then
        echo "the read-only, noexec, full and no-chown cases need root (mounts, a user namespace): root pass only"
        exit 0
fi
mnt "$T/ro" ro,size=8m
fails "state directory read-only" \
        "$E --state-dir $T/ro: its filesystem is read-only: choose a directory on a writable one" \
        "${sup[@]}" --listen "$T/run/s9.sock" --state-dir "$T/ro"
mount -o remount,rw "$T/ro"
chmod 0711 "$T/ro"
starts "state directory read-only" "$T/run/s9.sock" "${sup[@]}" --listen "$T/run/s9.sock" --state-dir "$T/ro"

mnt "$T/noexec" noexec,size=8m,mode=0711
fails "state directory noexec" \
        "$E --state-dir $T/noexec: its filesystem is mounted noexec, and jails execute the runner and their pid 1 from $T/noexec/bin: choose a directory on a filesystem mounted without noexec" \
        "${sup[@]}" --listen "$T/run/s10.sock" --state-dir "$T/noexec"
expect_eq "state directory noexec: nothing left in it" "" "$(ls -A "$T/noexec")"
mount -o remount,exec "$T/noexec"
starts "state directory noexec" "$T/run/s10.sock" "${sup[@]}" --listen "$T/run/s10.sock" --state-dir "$T/noexec"

mnt "$T/full" size=4m,nr_inodes=64,mode=0711
head -c 8m /dev/zero >"$T/full/fill" 2>/dev/null
need=$(($(stat -c %s "$ANVIL_BUILD/anvil-py") + $(stat -c %s "$ANVIL_BUILD/anvil-init") + 1048576))
inodes=$(($(stat -f -c %d "$T/full") - 2)) # the probe's directory and file are there when it fails
fails "state directory full" \
        "$E --state-dir $T/full: its filesystem is full (0 bytes and $inodes inodes free; start-up needs $need bytes): free some space, or choose a directory on another filesystem" \
        "${sup[@]}" --listen "$T/run/s11.sock" --state-dir "$T/full"
expect_eq "state directory full: nothing left but the filler" fill "$(ls -A "$T/full")"
rm "$T/full/fill"
starts "state directory full" "$T/run/s11.sock" "${sup[@]}" --listen "$T/run/s11.sock" --state-dir "$T/full"

# A file that cannot be given to the jails' uid: a vfat filesystem (this kernel has none to
# mount), or, as here, a root whose user namespace maps no such uid: chown() is refused
# (EINVAL) as the supervisor's own would be for every run directory.
mkfifo "$T/go"
unshare --user -- bash -c 'read -r _ <"$1"; shift; exec "$@"' sh "$T/go" \
        "$SUP" --config /dev/null --uid-base "$UIDB" --spares 0 --max-runs 2 --listen "$T/run/s12.sock" --state-dir "$T/s12" \
        >"$T/out.log" 2>&1 &
NS=$!
sleep 0.2
echo "0 0 65536" >"/proc/$NS/uid_map" && echo "0 0 65536" >"/proc/$NS/gid_map" || fail "cannot map the namespace's ids"
echo go >"$T/go"
wait "$NS"
expect_eq "no chown: exit status" 1 "$?"
expect_eq "no chown: the line" \
        "$E --state-dir $T/s12: a file there cannot be given to the jails' uid $UIDB (chown: Invalid argument): choose a directory on a Unix filesystem (ext4, xfs, btrfs, tmpfs; not vfat), and run the supervisor as root outside any user namespace that lacks that uid" \
        "$(tail -1 "$T/out.log")"
[ -e "$T/s12" ] && fail "no chown: the state directory was left"
starts "no chown" "$T/run/s12.sock" "${sup[@]}" --listen "$T/run/s12.sock" --state-dir "$T/s12"

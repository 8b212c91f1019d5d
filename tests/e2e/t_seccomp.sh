# seccomp holds alone and explains itself (DESIGN §5): with the Python layers off, a tool
# makes every refused system call of policy/seccomp_rules.c's table itself, through ctypes (raw
# syscall(2), so the arguments are exactly the ones shown), and each fails with EPERM and is
# recorded by the supervisor, outside the jail, with its exact message, in order. Controls
# in the same run: what the rules let by really runs (AF_UNIX sockets and pairs, a connect
# to an AF_UNIX address, threads, personality's query, ioctl TCGETS), and clone3 is
# answered ENOSYS without an event (libc falls back to clone, which is judged). A call of
# the i386 ABI (int 0x80) and of the x32 ABI each kill the run, explained. The same
# attempts run on the host, outside the jail, are not refused (the control that shows the
# check can fail).
. "$(dirname "$0")/lib.sh"

tool calls.py <<'PY'
import ctypes, errno, os, socket, struct, sys, threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
S = lambda s: ctypes.c_char_p(s.encode())

def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    e = ctypes.get_errno()
    print(f"{name} {r} {errno.errorcode.get(e, e) if r < 0 else 'ok'}", flush=True)
    return r

pair = socket.socketpair()
fd = pair[0].fileno()
sin = struct.pack("!HH4s8x", socket.AF_INET, 8080, bytes([127, 0, 0, 1]))
sin = struct.pack("=H", socket.AF_INET) + sin[2:]
sun = struct.pack("=H", socket.AF_UNIX) + b"/tmp/anvil-nothing\0"
sunb = struct.pack("=H", socket.AF_UNIX) + b"/tmp/s\0"

# refused, in this order
call("socket_inet", 41, socket.AF_INET, socket.SOCK_STREAM, 0)
call("socket_inet6", 41, socket.AF_INET6, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, 0)
call("socket_netlink", 41, socket.AF_NETLINK, socket.SOCK_RAW, 0)
call("socket_packet", 41, 17, socket.SOCK_RAW, 0)
call("socketpair_inet", 53, socket.AF_INET, socket.SOCK_STREAM, 0, ctypes.byref((ctypes.c_int * 2)()))
call("connect_inet", 42, fd, ctypes.c_char_p(sin), len(sin))
call("bind_unix", 49, fd, ctypes.c_char_p(sunb), len(sunb))
call("listen", 50, fd, 1)
call("accept4", 288, fd, 0, 0, 0)
call("fork", 57)
call("vfork", 58)
call("clone_fork", 56, 0x01200011, 0, 0, 0, 0)
call("execve", 59, S("/bin/sh"), 0, 0)
call("execveat", 322, -100, S("/usr/bin/python3"), 0, 0, 0)
call("ptrace", 101, 16, 1, 0, 0)
call("process_vm_readv", 310, 1, 0, 0, 0, 0, 0)
call("pidfd_getfd", 438, 0, 0, 0)
call("kcmp", 312, 1, 1, 0, 0, 0)
call("mount", 165, S("none"), S("/tmp"), S("tmpfs"), 0, 0)
call("umount2", 166, S("/work"), 0)
call("pivot_root", 155, S("."), S("."))
call("chroot", 161, S("/tmp"))
call("fsopen", 430, S("tmpfs"), 0)
call("fsconfig", 431, 3, 0, 0, 0, 0)
call("fsmount", 432, 3, 0, 0)
call("fspick", 433, -100, S("/tmp"), 0)
call("move_mount", 429, -100, S("/tmp"), -100, S("/work"), 0)
call("open_tree", 428, -100, S("/tmp"), 0)
call("mount_setattr", 442, -100, S("/tmp"), 0, 0, 0)
call("unshare", 272, 0x10000000)
call("setns", 308, 0, 0x40000000)
call("io_uring_setup", 425, 8, ctypes.byref((ctypes.c_char * 120)()))
call("io_uring_enter", 426, 3, 1, 0, 0, 0, 0)
call("io_uring_register", 427, 3, 0, 0, 0)
call("bpf", 321, 5, 0, 0)
call("perf_event_open", 298, 0, 0, -1, -1, 0)
call("userfaultfd", 323, 0)
call("keyctl", 250, 1, 0, 0, 0, 0)
call("add_key", 248, S("user"), S("k"), S("v"), 1, -3)
call("request_key", 249, S("user"), S("k"), 0, 0)
call("open_by_handle_at", 304, 3, 0, 0)
call("name_to_handle_at", 303, -100, S("/etc/passwd"), 0, 0, 0)
call("kexec_load", 246, 0, 0, 0, 0)
call("kexec_file_load", 320, 0, 0, 0, 0, 0)
call("init_module", 175, 0, 0, S(""))
call("finit_module", 313, 0, S(""), 0)
call("delete_module", 176, S("x"), 0)
call("reboot", 169, 0, 0, 0, 0)
call("swapon", 167, S("/tmp/x"), 0)
call("swapoff", 168, S("/tmp/x"))
call("acct", 163, S("/tmp/x"))
call("landlock_create_ruleset", 444, 0, 0, 1)
call("landlock_add_rule", 445, 3, 1, 0, 0)
call("landlock_restrict_self", 446, 3, 0)
call("personality", 135, 0x0400000)
call("ioctl_tiocsti", 16, 0, 0x5412, S("x"))
call("ioctl_tioclinux", 16, 0, 0x541C, S("x"))
# let by: controls
print("---", flush=True)
call("clone3", 435, 0, 0)
call("personality_query", 135, 0xffffffff)
call("socket_unix", 41, socket.AF_UNIX, socket.SOCK_STREAM, 0)
call("connect_unix", 42, fd, ctypes.c_char_p(sun), len(sun))
call("ioctl_tcgets", 16, fd, 0x5401, ctypes.byref((ctypes.c_char * 64)()))
t = threading.Thread(target=lambda: print("thread ran", flush=True)); t.start(); t.join()
PY

# The i386 ABI (int 0x80, getpid) and x32 (getpid with the x32 bit), from executable memory.
tool abi.py <<'PY'
import ctypes, mmap, sys
which = sys.argv[1] if len(sys.argv) > 1 else open("inputs/which").read().strip()
code = {"i386": b"\xb8\x14\x00\x00\x00\xcd\x80\xc3",                      # mov eax,20; int 0x80; ret
        "x32": b"\xb8\x27\x00\x00\x40\x0f\x05\xc3"}[which]                 # mov eax,0x40000027; syscall; ret
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print("calling", which, flush=True)
r = ctypes.CFUNCTYPE(ctypes.c_long)(addr)()
print("ESCAPED: returned", r, flush=True)
PY

expected=(
        "socket(AF_INET, SOCK_STREAM) (network denied by seccomp)"
        "socket(AF_INET6, SOCK_DGRAM) (network denied by seccomp)"
        "socket(AF_NETLINK, SOCK_RAW) (network denied by seccomp)"
        "socket(AF_PACKET, SOCK_RAW) (network denied by seccomp)"
        "socketpair(AF_INET, SOCK_STREAM) (network denied by seccomp)"
        "connect(127.0.0.1:8080) (network denied by seccomp)"
        "bind('/tmp/s') (network denied by seccomp)"
        "listen(fd FD) (network denied by seccomp)"
        "accept4(fd FD) (network denied by seccomp)"
        "fork() (process creation denied by seccomp)"
        "vfork() (process creation denied by seccomp)"
        "clone(CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD) (process creation denied by seccomp)"
        "execve('/bin/sh') (process creation denied by seccomp)"
        "execveat('/usr/bin/python3') (process creation denied by seccomp)"
        "ptrace(PTRACE_ATTACH, pid 1) (access to other processes denied by seccomp)"
        "process_vm_readv(pid 1) (access to other processes denied by seccomp)"
        "pidfd_getfd() (access to other processes denied by seccomp)"
        "kcmp(pid 1) (access to other processes denied by seccomp)"
        "mount('none', '/tmp', 'tmpfs') (mounting denied by seccomp)"
        "umount2('/work') (mounting denied by seccomp)"
        "pivot_root('.', '.') (mounting denied by seccomp)"
        "chroot('/tmp') (mounting denied by seccomp)"
        "fsopen('tmpfs') (mounting denied by seccomp)"
        "fsconfig() (mounting denied by seccomp)"
        "fsmount() (mounting denied by seccomp)"
        "fspick('/tmp') (mounting denied by seccomp)"
        "move_mount('/tmp', '/work') (mounting denied by seccomp)"
        "open_tree('/tmp') (mounting denied by seccomp)"
        "mount_setattr('/tmp') (mounting denied by seccomp)"
        "unshare(CLONE_NEWUSER) (namespace changes denied by seccomp)"
        "setns(fd 0, CLONE_NEWNET) (namespace changes denied by seccomp)"
        "io_uring_setup() (kernel interface denied by seccomp)"
        "io_uring_enter() (kernel interface denied by seccomp)"
        "io_uring_register() (kernel interface denied by seccomp)"
        "bpf(5) (kernel interface denied by seccomp)"
        "perf_event_open() (kernel interface denied by seccomp)"
        "userfaultfd() (kernel interface denied by seccomp)"
        "keyctl(1) (kernel interface denied by seccomp)"
        "add_key('user') (kernel interface denied by seccomp)"
        "request_key('user') (kernel interface denied by seccomp)"
        "open_by_handle_at() (kernel interface denied by seccomp)"
        "name_to_handle_at('/etc/passwd') (kernel interface denied by seccomp)"
        "kexec_load() (kernel interface denied by seccomp)"
        "kexec_file_load() (kernel interface denied by seccomp)"
        "init_module() (kernel interface denied by seccomp)"
        "finit_module() (kernel interface denied by seccomp)"
        "delete_module('x') (kernel interface denied by seccomp)"
        "reboot() (kernel interface denied by seccomp)"
        "swapon('/tmp/x') (kernel interface denied by seccomp)"
        "swapoff('/tmp/x') (kernel interface denied by seccomp)"
        "acct('/tmp/x') (kernel interface denied by seccomp)"
        "landlock_create_ruleset() (kernel interface denied by seccomp)"
        "landlock_add_rule() (kernel interface denied by seccomp)"
        "landlock_restrict_self() (kernel interface denied by seccomp)"
        "personality(0x400000) (kernel interface denied by seccomp)"
        "ioctl(fd 0, TIOCSTI) (terminal input injection denied by seccomp)"
        "ioctl(fd 0, TIOCLINUX) (terminal input injection denied by seccomp)"
)

bare_json "$T/calls.py" --timeout 30
expect_eq "status" ok "$(j .status)"
out=$(j .stdout)
refused=$(sed -n '1,/^---$/p' <<<"$out" | grep -v '^---$')
expect_eq "every refused call failed with EPERM" "${#expected[@]}" "$(grep -c ' -1 EPERM$' <<<"$refused")"
bad=$(grep -v ' -1 EPERM$' <<<"$refused" || true)
expect_eq "refused calls that did not fail with EPERM" "" "$bad"
fd=$(j '.events[] | select(.layer == "seccomp" and (.op | startswith("listen("))) | .op' | sed 's/listen(fd \([0-9]*\))/\1/')
got=$(j '.events[] | select(.layer == "seccomp") | .message')
want=$(for m in "${expected[@]}"; do echo "blocked at kernel: ${m//fd FD/fd $fd}"; done)
if [ "$got" != "$want" ]; then
        diff <(echo "$want") <(echo "$got") | head -20
        fail "the supervisor's seccomp events differ from the expected ones (above: < expected, > got)"
fi
echo "ok: ${#expected[@]} refused calls, each explained by the supervisor, in order, verbatim"
expect_eq "each event's reason is its why" "${#expected[@]}" \
        "$(j '[.events[] | select(.layer == "seccomp") | select(.reason as $r | .message | endswith("(" + $r + ")"))] | length')"
controls=$(sed -n '/^---$/,$p' <<<"$out" | grep -v '^---$')
expect_eq "controls: clone3 is ENOSYS, the rest run" "clone3 -1 ENOSYS
personality_query 0 ok
socket_unix 5 ok
connect_unix -1 ENOENT
ioctl_tcgets -1 ENOTTY
thread ran" "$(sed 's/^socket_unix [0-9]* ok$/socket_unix 5 ok/' <<<"$controls")"

# Non-native ABIs: recorded, then the run is killed.
for abi in i386 x32; do
        echo "$abi" >"$T/which"
        bare_json "$T/abi.py" --input "$T/which" --timeout 10
        expect_eq "$abi: status" killed "$(j .status)"
        expect_eq "$abi: killed" "killed: a non-native syscall ABI (seccomp)" "$(j .killed)"
        case $abi in
        i386) op="syscall 20 of the i386 ABI" ;;
        x32) op="syscall 39 of the x32 ABI" ;;
        esac
        expect_eq "$abi: explained" "blocked at kernel: $op (non-native syscall ABI denied by seccomp)" \
                "$(j '.events[] | select(.layer == "seccomp" and .kind == "blocked") | .message')"
        expect_eq "$abi: the call never returned" "calling $abi" "$(j .stdout)"
done
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"

# Control: outside any jail (as nobody, and only the harmless network calls: the rest would
# act on the host), the same calls are not refused: the EPERMs above are the filter's.
tool control.py <<'PY'
import ctypes, errno, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
pair = socket.socketpair()
sin = struct.pack("=H", socket.AF_INET) + struct.pack("!H4s8x", 8080, bytes([127, 0, 0, 1]))
for name, nr, args in [("socket_inet", 41, (socket.AF_INET, socket.SOCK_STREAM, 0)),
                       ("socket_inet6", 41, (socket.AF_INET6, socket.SOCK_DGRAM, 0)),
                       ("connect_inet", 42, (pair[0].fileno(), ctypes.c_char_p(sin), len(sin)))]:
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno()))
PY
host=$(cd "$T" && setpriv --reuid=65534 --regid=65534 --clear-groups $PY -I control.py 2>&1)
expect_eq "control: the same network calls outside the jail" "socket_inet ok
socket_inet6 ok
connect_inet EINVAL" "$host"
expect_match "control: the i386 call outside the jail returns" "^calling i386
ESCAPED: returned [0-9]+$" "$(cd "$T" && setpriv --reuid=65534 --regid=65534 --clear-groups $PY -I abi.py i386)"
expect_serving

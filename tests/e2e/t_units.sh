# The systemd units (systemd/), as `make install` puts them: `systemd-analyze verify` finds
# nothing to say about them, and `systemd-analyze security --offline=yes` scores each at or
# under its bound (the observed exposure printed): the broker 2.0 (issue 10's target), the
# egress proxy 2.0 too; the
# supervisor 5.8, what it scores today: issue 10's 4.0 is not reached, and the unit says what
# forbids going lower (above all: every seccomp directive is inherited by the jails, and
# would refuse their calls before their own filter explains them). A change that lowers the
# supervisor's hardening fails here.
# Verified in a root made of a DESTDIR install tree (PREFIX=/usr) and this host's own
# systemd units (the targets and slices ours name), so that ExecStart=, Documentation=man:
# and the units' references are all checked in the tree that was installed.
# Controls: a unit with an invalid value, and one whose ExecStart names no file, fail the
# verification; the broker as root with every capability and the supervisor without
# ProtectSystem= and its capability bound score over their bounds, so this would catch them.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the units are checked once, in the root pass: nothing here depends on the daemons' user"
command -v systemd-analyze >/dev/null || fail "no systemd-analyze: apt-get install systemd"
D=$T/root
R=$T/vroot
# The suite's build as it was made: a sanitized one stays one (as in t_install), whether or not
# make's own SANITIZE=1 reached this test through MAKEFLAGS.
SAN=()
[ -n "${ANVIL_E2E_SANITIZE:-}" ] && SAN=(SANITIZE=1)
make -s -C "$TOP" install PREFIX=/usr DESTDIR="$D" BUILD="$ANVIL_BUILD" TEST_CFLAGS=-DANVIL_TEST_BUILD "${SAN[@]}" \
        >"$T/install.out" 2>&1 ||
        fail "make install: $(tail -5 "$T/install.out")"
UNITDIR=$(pkg-config --variable=systemdsystemunitdir systemd)
UNITS=(anvil-supervisor.service anvil-broker.service anvil-broker.socket anvil-egress.service)
for u in "${UNITS[@]}"; do [ -f "$D$UNITDIR/$u" ] || fail "make install put no $UNITDIR/$u"; done
cp -a "$D" "$R"
cp -a /lib/systemd/system/*.target /lib/systemd/system/*.slice "$R$UNITDIR/"

# verify UNIT: systemd-analyze verify in $R; it must exit 0 and say nothing.
verify() {
        MANPATH=$R/usr/share/man systemd-analyze verify --root="$R" "$1" >"$T/verify.out" 2>&1 && [ ! -s "$T/verify.out" ]
}
for u in "${UNITS[@]}"; do
        verify "$u" || fail "systemd-analyze verify $u: $(cat "$T/verify.out")"
        echo "ok: systemd-analyze verify $u: nothing to say"
done

# exposure UNIT: the overall exposure systemd-analyze security --offline gives UNIT in $R
exposure() {
        systemd-analyze security --offline=yes --root="$R" "$1" 2>&1 |
                sed -n "s/^→ Overall exposure level for $1: \([0-9.]*\) .*/\1/p"
}
# at_most VALUE MAX: VALUE <= MAX, as decimals
at_most() { awk -v v="$1" -v m="$2" 'BEGIN { exit !(v != "" && v + 0 <= m + 0) }'; }
for um in anvil-supervisor.service:5.8 anvil-broker.service:2.0 anvil-egress.service:2.0; do
        u=${um%%:*} max=${um#*:}
        e=$(exposure "$u")
        [ -n "$e" ] || fail "$u: systemd-analyze security gave no exposure: $(systemd-analyze security --offline=yes --root="$R" "$u" 2>&1 | tail -3)"
        at_most "$e" "$max" || fail "$u: exposure $e, over its target $max"
        echo "ok: $u: exposure $e (target $max)"
done

# The controls, each on a copy of a unit in $R, put back after.
U=$R$UNITDIR
cp "$U/anvil-broker.service" "$T/broker.orig"
cp "$U/anvil-supervisor.service" "$T/supervisor.orig"
sed -i 's/^ProtectSystem=strict/ProtectSystem=bogus/' "$U/anvil-broker.service"
verify anvil-broker.service && fail "control: ProtectSystem=bogus passed the verification"
echo "control: ProtectSystem=bogus: $(head -1 "$T/verify.out")"
cp "$T/broker.orig" "$U/anvil-broker.service"
sed -i 's|^ExecStart=/usr/sbin/anvil-broker|ExecStart=/usr/sbin/anvil-broker-missing|' "$U/anvil-broker.service"
verify anvil-broker.service && fail "control: an ExecStart= naming no file passed the verification"
echo "control: ExecStart= naming no file: $(head -1 "$T/verify.out")"
cp "$T/broker.orig" "$U/anvil-broker.service"
sed -i '/^User=anvil/d; /^Group=anvil/d; /^CapabilityBoundingSet=/d' "$U/anvil-broker.service"
e=$(exposure anvil-broker.service)
at_most "$e" 2.0 && fail "control: the broker as root with every capability scored $e, within its target"
echo "control: the broker without User= and CapabilityBoundingSet= (root, every capability): exposure $e, over 2.0"
cp "$T/broker.orig" "$U/anvil-broker.service"
sed -i '/^ProtectSystem=/d; /^CapabilityBoundingSet=/d' "$U/anvil-supervisor.service"
e=$(exposure anvil-supervisor.service)
at_most "$e" 5.8 && fail "control: the supervisor without ProtectSystem= and its capability bound scored $e, within its bound"
echo "control: the supervisor without ProtectSystem= and CapabilityBoundingSet=: exposure $e, over 5.8"
cp "$T/supervisor.orig" "$U/anvil-supervisor.service"
verify anvil-supervisor.service || fail "the units put back do not verify: $(cat "$T/verify.out")"

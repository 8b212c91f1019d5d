/* Unit tests for policy/kaudit.c: the parser of Landlock's kernel audit records and the
 * explanations made of them. The well-formed records of the parse tests are real: captured
 * from the audit multicast group of this project's machine (Linux 6.18, Landlock ABI 7), from
 * jails of the test suite and from a sandboxed python3 on the host (hence host paths in some),
 * except the scope.signal and abstract-socket ones, which no jail can cause (its pid and
 * network namespaces hold nothing outside its domain): they follow the kernel's documentation
 * and lsm_audit.c. The explanation table adds records made up in the same form ("audit(1.000:1)")
 * for the blockers no test triggers. The malformed records are real ones with one thing wrong
 * each, and each must be refused with a reason, never half-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jail/compat.h"
#include "lib/cleanup.h"
#include "policy/kaudit.h"

#define ACCESS AUDIT_LANDLOCK_ACCESS
#define DOMAIN AUDIT_LANDLOCK_DOMAIN

static struct pol_ka_record rec; /* large: not on the stack */

static int parse(int type, const char *text, char *why, size_t why_size)
{
        why[0] = 0;
        return pol_ka_parse(type, text, strlen(text), &rec, why, why_size);
}

static void must_parse(int type, const char *text)
{
        char why[160];
        if (parse(type, text, why, sizeof(why)) != 0)
                fail_msg("refused a well-formed record (%s): %s", why, text);
}

/* ---- well-formed, one by one ---- */

static void test_access_path(void **state)
{
        (void)state;
        must_parse(ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" dev=\"tmpfs\" ino=1");
        assert_int_equal(rec.kind, POL_KA_ACCESS);
        assert_true(rec.time_ms == 1796041148098ull);
        assert_true(rec.serial == 144);
        assert_true(rec.domain == 0x18d2f6b10ull);
        assert_int_equal(rec.blockers, 1u << POL_KA_FS_READ_DIR);
        assert_int_equal(rec.object, POL_KA_OBJ_PATH);
        assert_string_equal(rec.path, "/");
        assert_int_equal(rec.path_len, 1);
}

static void test_access_hex_path(void **state)
{
        (void)state;
        /* a path with a space: the kernel writes it in hex */
        must_parse(ACCESS, "audit(1796040618.982:4): domain=18d2f6a10 blockers=fs.read_file "
                           "path=2F746D702F6C6C2D6578702F7A6F6E652F77697468207370616365 dev=\"vda\" ino=10953813");
        assert_string_equal(rec.path, "/tmp/ll-exp/zone/with space");
        /* lower-case hex is read too */
        must_parse(ACCESS, "audit(1796040618.982:4): domain=18d2f6a10 blockers=fs.read_file path=2f6120620a dev=\"vda\" ino=1");
        assert_string_equal(rec.path, "/a b\n");
}

static void test_access_two_blockers(void **state)
{
        (void)state;
        must_parse(ACCESS, "audit(1796040618.982:5): domain=18d2f6a10 blockers=fs.write_file,fs.read_file "
                           "path=\"/tmp/ll-exp/zone/f\" dev=\"vda\" ino=10953811");
        assert_int_equal(rec.blockers, (1u << POL_KA_FS_WRITE_FILE) | (1u << POL_KA_FS_READ_FILE));
        must_parse(ACCESS, "audit(1796040618.982:13): domain=18d2f6a10 blockers=fs.make_reg,fs.refer "
                           "path=\"/tmp/ll-exp/zone\" dev=\"vda\" ino=10953809");
        assert_int_equal(rec.blockers, (1u << POL_KA_FS_MAKE_REG) | (1u << POL_KA_FS_REFER));
}

static void test_access_ioctl(void **state)
{
        (void)state;
        must_parse(ACCESS, "audit(1796040618.982:15): domain=18d2f6a10 blockers=fs.ioctl_dev path=\"/dev/null\" "
                           "dev=\"devtmpfs\" ino=3 ioctlcmd=0x5401");
        assert_true(rec.has_ioctl);
        assert_int_equal(rec.ioctlcmd, 0x5401);
}

static void test_access_net(void **state)
{
        (void)state;
        must_parse(ACCESS, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.1 dest=57839");
        assert_int_equal(rec.object, POL_KA_OBJ_NET);
        assert_string_equal(rec.addr, "127.0.0.1");
        assert_int_equal(rec.port, 57839);
        must_parse(ACCESS, "audit(1796040618.982:18): domain=18d2f6a10 blockers=net.bind_tcp saddr=127.0.0.1");
        assert_string_equal(rec.addr, "127.0.0.1");
        assert_int_equal(rec.port, 0);
        must_parse(ACCESS, "audit(1796041401.070:735): domain=18d2f7263 blockers=net.connect_tcp daddr=::1 dest=80");
        assert_string_equal(rec.addr, "::1");
        assert_int_equal(rec.port, 80);
        must_parse(ACCESS, "audit(1796041401.070:736): domain=18d2f7263 blockers=net.bind_tcp src=8080");
        assert_string_equal(rec.addr, "");
        assert_int_equal(rec.port, 8080);
}

static void test_access_task(void **state)
{
        (void)state;
        /* the form of the kernel's documentation (Documentation/admin-guide/LSM/landlock.rst) */
        must_parse(ACCESS, "audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm=\"systemd\"");
        assert_int_equal(rec.object, POL_KA_OBJ_TASK);
        assert_int_equal(rec.opid, 1);
        assert_string_equal(rec.ocomm, "systemd");
}

static void test_access_abstract_socket(void **state)
{
        (void)state;
        /* an abstract name is hex and starts with a NUL, shown as '@' */
        must_parse(ACCESS, "audit(1729738800.300:31): domain=1a6fdc66f blockers=scope.abstract_unix_socket path=006C6C657870");
        assert_int_equal(rec.object, POL_KA_OBJ_PATH);
        assert_string_equal(rec.path, "@llexp");
}

static void test_domain(void **state)
{
        (void)state;
        must_parse(DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=enforcing pid=5542 "
                           "uid=2500000021 exe=\"/work/wt-landlock/build/test/anvil-supervisor\" comm=\"anvil-superviso\"");
        assert_int_equal(rec.kind, POL_KA_DOMAIN);
        assert_true(rec.allocated);
        assert_true(rec.domain == 0x18d2f6b10ull);
        assert_int_equal(rec.pid, 5542);
        assert_true(rec.uid == 2500000021ull);
        assert_true(rec.serial == 144);
        must_parse(DOMAIN, "audit(1796041148.138:146): domain=18d2f6b10 status=deallocated denials=1");
        assert_false(rec.allocated);
        assert_true(rec.denials == 1);
}

static void test_eoe_marker_ignored(void **state)
{
        (void)state;
        must_parse(AUDIT_EOE, "audit(1796041147.586:143): ");
        assert_int_equal(rec.kind, POL_KA_EOE);
        assert_true(rec.serial == 143);
        must_parse(1121, "audit(1796041148.102:145): pid=5092 uid=0 auid=4294967295 ses=4294967295 "
                         "msg='anvil-drain=d04c6b335cd2bc52'");
        assert_int_equal(rec.kind, POL_KA_MARKER);
        assert_int_equal(rec.pid, 5092);
        assert_true(rec.nonce == 0xd04c6b335cd2bc52ull);
        /* someone else's user message of that type: not a marker, not an error */
        must_parse(1121, "audit(1796041148.102:146): pid=77 uid=0 auid=4294967295 ses=4294967295 msg='hello'");
        assert_int_equal(rec.kind, POL_KA_IGNORED);
        /* a SYSCALL record is not read at all */
        must_parse(AUDIT_SYSCALL, "audit(1796040618.982:3): arch=c000003e syscall=257 success=no exit=-13");
        assert_int_equal(rec.kind, POL_KA_IGNORED);
        /* the kernel's NUL after the text */
        char why[160];
        static const char with_nul[] = "audit(1796041147.586:143): \0";
        assert_int_equal(pol_ka_parse(AUDIT_EOE, with_nul, sizeof(with_nul) - 1, &rec, why, sizeof(why)), 0);
}

/* ---- malformed: each refused, with its reason ---- */

static const struct {
        int type;
        const char *text;
        const char *why; /* a part of the reason */
} malformed[] = {
        { ACCESS, "", "header" },
        { ACCESS, "domain=18d2f6b10 blockers=fs.read_dir path=\"/\"", "header" },
        { ACCESS, "audit(1796041148:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\"", "header" },
        { ACCESS, "audit(1796041148.09:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\"", "header" },
        { ACCESS, "audit(1796041148.098:): domain=18d2f6b10 blockers=fs.read_dir path=\"/\"", "header" },
        { ACCESS, "audit(1796041148.098:144):domain=18d2f6b10 blockers=fs.read_dir", "space" },
        { ACCESS, "audit(1796041148.098:144): blockers=fs.read_dir path=\"/\"", "domain" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2g6b10 blockers=fs.read_dir path=\"/\"", "domain" },
        { ACCESS, "audit(1796041148.098:144): domain=0 blockers=fs.read_dir path=\"/\"", "domain" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10", "no blockers" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 path=\"/\" blockers=fs.read_dir", "blockers" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_everything path=\"/\"", "unknown blocker" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir, path=\"/\"", "trailing comma" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir,fs.read_dir path=\"/\"", "twice" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=", "no value" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/a\"b\"", "path" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/unterminated", "path" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=2F6", "path" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=2F0061", "path" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=2FZZ", "path" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" path=\"/etc\"", "two objects" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" uid=0", "unexpected field" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" ", "trailing space" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir  path=\"/\"", "key=value" },
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" ino=12a", "ino" },
        { ACCESS, "audit(1796040618.982:15): domain=18d2f6a10 blockers=fs.ioctl_dev path=\"/dev/null\" ioctlcmd=5401", "ioctlcmd" },
        { ACCESS, "audit(1796040618.982:15): domain=18d2f6a10 blockers=fs.ioctl_dev path=\"/dev/null\" ioctlcmd=0x12345", "ioctlcmd" },
        { ACCESS, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.1 dest=0", "dest" },
        { ACCESS, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.1 dest=65536", "dest" },
        { ACCESS, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.x dest=80", "daddr" },
        { ACCESS, "audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=-1 ocomm=\"systemd\"", "opid" },
        { ACCESS, "audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm=sys temd", "ocomm" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=enforcing uid=2500000021", "pid" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=enforcing pid=5542", "uid" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=enforcing pid=0 uid=1", "pid" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=permissive pid=5 uid=1", "mode" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated pid=5 uid=99999999999", "uid" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=borrowed pid=5 uid=1", "status" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 pid=5 uid=1", "status" },
        { DOMAIN, "audit(1796041148.138:146): domain=18d2f6b10 status=deallocated", "denials" },
        { DOMAIN, "audit(1796041148.138:146): domain=18d2f6b10 status=deallocated denials=1 pid=3", "unexpected field" },
        { DOMAIN, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated pid=5 pid=6 uid=1", "pid" },
        { AUDIT_EOE, "audit(1796041147.586:143): domain=1", "EOE" },
        { 1121, "audit(1796041148.102:145): uid=0 msg='anvil-drain=d04c'", "pid" },
        { 1121, "audit(1796041148.102:145): pid=5092 uid=0 msg='anvil-drain=xyz'", "marker" },
        { 1121, "audit(1796041148.102:145): pid=5092 uid=0 msg='anvil-drain=d04c' extra", "marker" },
};

static void test_malformed(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
                char why[160];
                if (parse(malformed[i].type, malformed[i].text, why, sizeof(why)) != -EINVAL)
                        fail_msg("accepted a malformed record: %s", malformed[i].text);
                if (!strstr(why, malformed[i].why))
                        fail_msg("record %s: reason '%s' does not mention '%s'", malformed[i].text, why, malformed[i].why);
        }
}

static void test_malformed_bytes(void **state)
{
        (void)state;
        char why[160];
        /* a NUL inside the text */
        static const char inner_nul[] = "audit(1796041148.098:144): domain=18d2f6b10\0 blockers=fs.read_dir";
        assert_int_equal(pol_ka_parse(ACCESS, inner_nul, sizeof(inner_nul) - 1, &rec, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "NUL"));
        /* longer than the kernel ever writes */
        static char big[POL_KA_TEXT_MAX + 2];
        memset(big, 'a', sizeof(big) - 1);
        assert_int_equal(pol_ka_parse(ACCESS, big, sizeof(big) - 1, &rec, why, sizeof(why)), -EINVAL);
        /* a path longer than the buffer is refused, not cut */
        static char longpath[2 * POL_KA_OBJECT_MAX + 256];
        int n = snprintf(longpath, sizeof(longpath), "audit(1.000:1): domain=1 blockers=fs.read_file path=");
        for (int i = 0; i < POL_KA_OBJECT_MAX + 10 && (size_t)n + 3 < sizeof(longpath); i++)
                n += snprintf(longpath + n, sizeof(longpath) - (size_t)n, "41");
        assert_int_equal(pol_ka_parse(ACCESS, longpath, (size_t)n, &rec, why, sizeof(why)), -EINVAL);
}

/* ---- explanations, verbatim ---- */

static const struct {
        int type;
        const char *text;
        const char *op, *blockers, *message;
} explained[] = {
        { ACCESS, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_file path=\"/etc/hostname\" dev=\"tmpfs\" ino=7",
          "read '/etc/hostname'", "fs.read_file",
          "blocked at kernel: read '/etc/hostname' (outside the jail's read roots, landlock)" },
        { ACCESS, "audit(1796041235.386:678): domain=18d2f7219 blockers=fs.read_dir path=\"/etc\" dev=\"tmpfs\" ino=7",
          "list '/etc'", "fs.read_dir", "blocked at kernel: list '/etc' (outside the jail's read roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.write_file,fs.read_file path=\"/work/inputs/sales.csv\" dev=\"vda\" ino=9",
          "write '/work/inputs/sales.csv'", "fs.write_file,fs.read_file",
          "blocked at kernel: write '/work/inputs/sales.csv' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.execute path=\"/tmp/x\" dev=\"tmpfs\" ino=9", "execute '/tmp/x'",
          "fs.execute", "blocked at kernel: execute '/tmp/x' (outside the jail's execute roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_reg,fs.refer path=\"/usr\" dev=\"vda\" ino=9",
          "create a file in '/usr'", "fs.make_reg,fs.refer",
          "blocked at kernel: create a file in '/usr' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_dir path=\"/proc/2\" dev=\"proc\" ino=9",
          "create a directory in '/proc/2'", "fs.make_dir",
          "blocked at kernel: create a directory in '/proc/2' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_sym path=\"/etc\" dev=\"tmpfs\" ino=9",
          "create a symlink in '/etc'", "fs.make_sym",
          "blocked at kernel: create a symlink in '/etc' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.remove_file path=\"/work/inputs\" dev=\"vda\" ino=9",
          "remove a file from '/work/inputs'", "fs.remove_file",
          "blocked at kernel: remove a file from '/work/inputs' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.remove_dir path=\"/work/inputs\" dev=\"vda\" ino=9",
          "remove a directory from '/work/inputs'", "fs.remove_dir",
          "blocked at kernel: remove a directory from '/work/inputs' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.truncate path=\"/dev/zero\" dev=\"devtmpfs\" ino=9",
          "truncate '/dev/zero'", "fs.truncate",
          "blocked at kernel: truncate '/dev/zero' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.refer path=\"/tmp\" dev=\"tmpfs\" ino=9",
          "move or link a file across '/tmp'", "fs.refer",
          "blocked at kernel: move or link a file across '/tmp' (outside the jail's write roots, landlock)" },
        { ACCESS, "audit(1796041343.254:702): domain=18d2f7233 blockers=fs.make_fifo path=\"/work/artifacts\" dev=\"tmpfs\" ino=1",
          "create a fifo in '/work/artifacts'", "fs.make_fifo",
          "blocked at kernel: create a fifo in '/work/artifacts' (device nodes, fifos and socket files denied, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_sock path=\"/tmp\" dev=\"tmpfs\" ino=9",
          "create a socket file in '/tmp'", "fs.make_sock",
          "blocked at kernel: create a socket file in '/tmp' (device nodes, fifos and socket files denied, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_char path=\"/tmp\" dev=\"tmpfs\" ino=9",
          "create a character device in '/tmp'", "fs.make_char",
          "blocked at kernel: create a character device in '/tmp' (device nodes, fifos and socket files denied, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.make_block path=\"/tmp\" dev=\"tmpfs\" ino=9",
          "create a block device in '/tmp'", "fs.make_block",
          "blocked at kernel: create a block device in '/tmp' (device nodes, fifos and socket files denied, landlock)" },
        { ACCESS, "audit(1796040618.982:15): domain=18d2f6a10 blockers=fs.ioctl_dev path=\"/dev/null\" dev=\"devtmpfs\" ino=3 ioctlcmd=0x5401",
          "ioctl 0x5401 on '/dev/null'", "fs.ioctl_dev",
          "blocked at kernel: ioctl 0x5401 on '/dev/null' (device ioctl denied, landlock)" },
        { ACCESS, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.1 dest=57839",
          "connect to 127.0.0.1 port 57839", "net.connect_tcp",
          "blocked at kernel: connect to 127.0.0.1 port 57839 (network denied, landlock)" },
        { ACCESS, "audit(1796040618.982:18): domain=18d2f6a10 blockers=net.bind_tcp saddr=127.0.0.1",
          "bind a TCP socket to 127.0.0.1", "net.bind_tcp",
          "blocked at kernel: bind a TCP socket to 127.0.0.1 (network denied, landlock)" },
        { ACCESS, "audit(1796041401.070:736): domain=18d2f7263 blockers=net.bind_tcp src=8080", "bind a TCP socket to port 8080", "net.bind_tcp",
          "blocked at kernel: bind a TCP socket to port 8080 (network denied, landlock)" },
        { ACCESS, "audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm=\"systemd\"",
          "signal pid 1 ('systemd')", "scope.signal",
          "blocked at kernel: signal pid 1 ('systemd') (signals out of the jail denied, landlock)" },
        { ACCESS, "audit(1729738800.300:31): domain=1a6fdc66f blockers=scope.abstract_unix_socket path=006C6C657870",
          "connect to abstract unix socket '@llexp'", "scope.abstract_unix_socket",
          "blocked at kernel: connect to abstract unix socket '@llexp' (abstract unix sockets out of the jail denied, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=ptrace opid=7 ocomm=\"python3\"", "trace pid 7 ('python3')", "ptrace",
          "blocked at kernel: trace pid 7 ('python3') (tracing out of the jail denied, landlock)" },
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.change_topology name=\"mnt\" dev=\"tmpfs\" ino=9",
          "change mounts at 'mnt'", "fs.change_topology",
          "blocked at kernel: change mounts at 'mnt' (mount changes denied, landlock)" },
        /* the tool names the path: escaped, not trusted */
        { ACCESS, "audit(1.000:1): domain=1 blockers=fs.read_file path=2F746D702F612062" "0A" "27" "63" "E280AE" "C3A9" "5C",
          "read '/tmp/a b\\x0a\\x27c\\xe2\\x80\\xae\xc3\xa9\\x5c'", "fs.read_file",
          "blocked at kernel: read '/tmp/a b\\x0a\\x27c\\xe2\\x80\\xae\xc3\xa9\\x5c' (outside the jail's read roots, landlock)" },
};

static void test_explained(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(explained); i++) {
                char op[1024], msg[1536], blockers[256];
                enum pol_why why;
                must_parse(explained[i].type, explained[i].text);
                pol_ka_explain(&rec, op, sizeof(op), &why, msg, sizeof(msg), blockers, sizeof(blockers));
                assert_string_equal(op, explained[i].op);
                assert_string_equal(blockers, explained[i].blockers);
                assert_string_equal(msg, explained[i].message);
        }
}

/* Every blocker the kernel names has an explanation with a why of its own kind. */
static void test_every_blocker(void **state)
{
        (void)state;
        for (unsigned b = 0; b < _POL_KA_BLOCKER_MAX; b++) {
                char text[256], op[1024], msg[1536], blockers[256];
                enum pol_why why = POL_WHY_NONE;
                snprintf(text, sizeof(text), "audit(1.000:1): domain=1 blockers=%s path=\"/x\"",
                         pol_ka_blocker_name((enum pol_ka_blocker)b));
                must_parse(ACCESS, text);
                pol_ka_explain(&rec, op, sizeof(op), &why, msg, sizeof(msg), blockers, sizeof(blockers));
                assert_string_equal(blockers, pol_ka_blocker_name((enum pol_ka_blocker)b));
                assert_true(why >= POL_WHY_LL_READ && why <= POL_WHY_LL_TOPOLOGY);
                assert_non_null(strstr(msg, "blocked at kernel: "));
                assert_non_null(strstr(msg, ", landlock)"));
        }
}

static void test_escape_bounds(void **state)
{
        (void)state;
        char out[64];
        pol_ka_escape("abc", 3, 512, out, sizeof(out));
        assert_string_equal(out, "abc");
        /* cut at max bytes of output, then "..." */
        pol_ka_escape("abcdefghij", 10, 4, out, sizeof(out));
        assert_string_equal(out, "abcd...");
        /* never past the buffer, and never half an escape */
        char tiny[8];
        pol_ka_escape("\x01\x02\x03", 3, 512, tiny, sizeof(tiny));
        assert_string_equal(tiny, "\\x01...");
        /* a NUL (an abstract socket's name may hold one) and invalid UTF-8 */
        pol_ka_escape("a\0b\xff\xc3", 5, 512, out, sizeof(out));
        assert_string_equal(out, "a\\x00b\\xff\\xc3");
        /* C1 controls and U+2028 escaped, U+00E9 and U+4E2D kept */
        pol_ka_escape("\xc2\x85\xe2\x80\xa8\xc3\xa9\xe4\xb8\xad", 10, 512, out, sizeof(out));
        assert_string_equal(out, "\\xc2\\x85\\xe2\\x80\\xa8\xc3\xa9\xe4\xb8\xad");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_access_path),     cmocka_unit_test(test_access_hex_path),
                cmocka_unit_test(test_access_two_blockers), cmocka_unit_test(test_access_ioctl),
                cmocka_unit_test(test_access_net),      cmocka_unit_test(test_access_task),
                cmocka_unit_test(test_access_abstract_socket), cmocka_unit_test(test_domain),
                cmocka_unit_test(test_eoe_marker_ignored), cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_malformed_bytes), cmocka_unit_test(test_explained),
                cmocka_unit_test(test_every_blocker),   cmocka_unit_test(test_escape_bounds),
        };
        return cmocka_run_group_tests_name("kaudit", tests, NULL, NULL);
}

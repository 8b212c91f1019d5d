/* libFuzzer target for the kernel audit record parser (`make fuzz`): policy/kaudit.c reads text
 * the kernel writes, with paths in it that a tool chose. The first input byte picks the record
 * type; the rest is the record's text. A record that parses must explain into a message that is
 * valid UTF-8, has no NUL and no control byte, and fits the catalog's bounds; one that does not
 * must say why.
 *
 * Built with -DFUZZ_SEEDS instead, this file is a small program that writes a seed corpus of
 * records captured on a 6.18 kernel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jail/compat.h"
#include "lib/utf8.h"
#include "policy/kaudit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int types[] = { AUDIT_LANDLOCK_ACCESS, AUDIT_LANDLOCK_DOMAIN, AUDIT_EOE, 1121, AUDIT_SYSCALL };

#ifndef FUZZ_SEEDS

static struct pol_ka_record rec;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        int type = types[data[0] % (sizeof(types) / sizeof(types[0]))];
        char why[160];
        why[0] = 0;
        int r = pol_ka_parse(type, (const char *)data + 1, size - 1, &rec, why, sizeof(why));
        if (r < 0) {
                if (!why[0])
                        abort(); /* a refusal without a reason */
                return 0;
        }
        if (r != 0 || rec.kind != POL_KA_ACCESS)
                return 0;
        if (rec.path_len >= sizeof(rec.path) || !rec.blockers)
                abort();
        char op[1024], msg[1536], blockers[512];
        enum pol_why w;
        pol_ka_explain(&rec, op, sizeof(op), &w, msg, sizeof(msg), blockers, sizeof(blockers));
        size_t n = strlen(msg);
        if (!utf8_valid((const uint8_t *)msg, n) || strncmp(msg, "blocked at kernel: ", 19) != 0)
                abort();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
                        abort();
        return 0;
}

#else

static const struct {
        int type_index;
        const char *text;
} seeds[] = {
        { 0, "audit(1796041148.098:144): domain=18d2f6b10 blockers=fs.read_dir path=\"/\" dev=\"tmpfs\" ino=1" },
        { 0, "audit(1796040618.982:4): domain=18d2f6a10 blockers=fs.read_file "
             "path=2F746D702F6C6C2D6578702F7A6F6E652F77697468207370616365 dev=\"vda\" ino=10953813" },
        { 0, "audit(1796040618.982:13): domain=18d2f6a10 blockers=fs.make_reg,fs.refer path=\"/tmp/ll-exp/zone\" dev=\"vda\" ino=10953809" },
        { 0, "audit(1796040618.982:15): domain=18d2f6a10 blockers=fs.ioctl_dev path=\"/dev/null\" dev=\"devtmpfs\" ino=3 ioctlcmd=0x5401" },
        { 0, "audit(1796041218.414:603): domain=18d2f7141 blockers=net.connect_tcp daddr=127.0.0.1 dest=57839" },
        { 0, "audit(1796041401.070:735): domain=18d2f7263 blockers=net.connect_tcp daddr=::1 dest=80" },
        { 0, "audit(1796041401.070:736): domain=18d2f7263 blockers=net.bind_tcp src=8080" },
        { 0, "audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm=\"systemd\"" },
        { 1, "audit(1796041148.098:144): domain=18d2f6b10 status=allocated mode=enforcing pid=5542 uid=2500000021 "
             "exe=\"/work/wt-landlock/build/test/anvil-supervisor\" comm=\"anvil-superviso\"" },
        { 1, "audit(1796041148.138:146): domain=18d2f6b10 status=deallocated denials=1" },
        { 2, "audit(1796041147.586:143): " },
        { 3, "audit(1796041148.102:145): pid=5092 uid=0 auid=4294967295 ses=4294967295 msg='anvil-drain=d04c6b335cd2bc52'" },
};

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : "seeds";
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
        if (system(cmd) != 0)
                return 1;
        for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
                char path[4200];
                snprintf(path, sizeof(path), "%s/kaudit-%02zu", dir, i);
                FILE *f = fopen(path, "wb");
                if (!f)
                        return 1;
                fputc(seeds[i].type_index, f);
                fputs(seeds[i].text, f);
                fclose(f);
        }
        return 0;
}

#endif

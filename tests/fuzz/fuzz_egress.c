/* libFuzzer target for anvil-egress's host and rule parsers (`make fuzz-egress`): egress/rules.c
 * reads the host of every request a run's client sends (untrusted) and the rules its control
 * client sends. The first input byte picks the parser: a host as sent, a host that was inside
 * [] in the URL, a rule, an address range; the rest is its text. What parses must hold its
 * invariants: a name is lowercase DNS text of at most 253 bytes, with no empty label and no
 * trailing dot; an address's text parses back to the same address; a rule for an exact host
 * matches that host at its own port; a range's prefix fits its family.
 *
 * Built with -DFUZZ_SEEDS instead, this file is a small program that writes a seed corpus. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_SEEDS

static void check_name(const struct egr_host *h)
{
        size_t n = strlen(h->name);
        if (n == 0 || n > EGR_HOST_MAX || h->name[0] == '.' || h->name[n - 1] == '.' || strstr(h->name, ".."))
                abort();
        for (size_t i = 0; i < n; i++) {
                char ch = h->name[i];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.'))
                        abort();
        }
}

static void check_ip(const struct egr_host *h)
{
        uint8_t a[16];
        int fam = h->addr.ss_family;
        if ((fam != AF_INET && fam != AF_INET6) || inet_pton(fam, h->name, a) != 1)
                abort();
        const void *want = fam == AF_INET ? (const void *)&((const struct sockaddr_in *)&h->addr)->sin_addr
                                          : (const void *)&((const struct sockaddr_in6 *)&h->addr)->sin6_addr;
        if (memcmp(a, want, fam == AF_INET ? 4 : 16) != 0)
                abort();
        (void)egr_addr_range((const struct sockaddr *)&h->addr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char text[512];
        struct egr_host h;
        struct egr_rule r;
        struct egr_cidr c;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (size < 1 || size > sizeof(text))
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        switch (data[0] % 4) {
        case 0:
        case 1:
                switch (egr_host_parse((const char *)data + 1, size - 1, data[0] % 4 == 1, &h)) {
                case EGR_HOST_NAME: check_name(&h); break;
                case EGR_HOST_IP: check_ip(&h); break;
                default: break;
                }
                break;
        case 2:
                if (egr_rule_parse(text, &r, &err) == 0) {
                        if (r.host.kind == EGR_HOST_NAME)
                                check_name(&r.host);
                        else if (r.host.kind == EGR_HOST_IP)
                                check_ip(&r.host);
                        else
                                abort();
                        if (!r.wildcard && egr_rules_match(&r, 1, &r.host, r.port ? r.port : 443) != EGR_MATCH)
                                abort();
                } else if (err.msg[0] == '\0') {
                        abort();
                }
                break;
        default:
                if (egr_cidr_parse(text, &c, &err) == 0 && c.prefix > (c.family == AF_INET ? 32u : 128u))
                        abort();
                break;
        }
        return 0;
}

#else

static const struct {
        int picker;
        const char *text;
} seeds[] = {
        { 0, "api.example.com" },  { 0, "API.Example.COM." }, { 0, "0x7f.1" },       { 0, "2130706433" },
        { 0, "127.0.0.1" },        { 1, "::ffff:127.0.0.1" }, { 1, "fe80::1%eth0" }, { 2, "*.example.com:8443" },
        { 2, "[2001:db8::1]:80" }, { 2, "10.0.0.5" },         { 3, "10.9.0.0/16" },  { 3, "fd00::/8" },
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
                snprintf(path, sizeof(path), "%s/egress-%02zu", dir, i);
                FILE *f = fopen(path, "wb");
                if (!f)
                        return 1;
                fputc(seeds[i].picker, f);
                fputs(seeds[i].text, f);
                fclose(f);
        }
        return 0;
}

#endif

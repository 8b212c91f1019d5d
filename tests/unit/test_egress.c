/* The egress proxy's pure part (egress/rules.c): what a host is, whether rules approve it,
 * and what range an address is in. Each rule both ways: what it lets through, what it
 * refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "egress/rules.h"

static enum egr_host_kind kind_of(const char *s, bool br)
{
        struct egr_host h;
        return egr_host_parse(s, strlen(s), br, &h);
}

static void test_host_kinds(void **state)
{
        (void)state;
        static const struct {
                const char *s;
                bool br;
                enum egr_host_kind k;
        } cases[] = {
                { "api.example.com", false, EGR_HOST_NAME },
                { "API.Example.COM.", false, EGR_HOST_NAME },
                { "localhost", false, EGR_HOST_NAME },
                { "_srv.example.com", false, EGR_HOST_NAME },
                { "xn--bcher-kva.example", false, EGR_HOST_NAME },
                { "1a.example.com", false, EGR_HOST_NAME },
                { "127.0.0.1", false, EGR_HOST_IP },
                { "10.0.0.5", false, EGR_HOST_IP },
                { "::1", true, EGR_HOST_IP },
                { "::ffff:127.0.0.1", true, EGR_HOST_IP },
                { "2130706433", false, EGR_HOST_IP_ODD }, /* decimal */
                { "0x7f000001", false, EGR_HOST_IP_ODD }, /* hex */
                { "0x7f.0.0.1", false, EGR_HOST_IP_ODD },
                { "017700000001", false, EGR_HOST_IP_ODD }, /* octal */
                { "0177.0.0.01", false, EGR_HOST_IP_ODD },
                { "127.1", false, EGR_HOST_IP_ODD },     /* short */
                { "1.2.3.4.5", false, EGR_HOST_IP_ODD }, /* numeric last label */
                { "999.1.1.1", false, EGR_HOST_IP_ODD },
                { "a.0x10", false, EGR_HOST_IP_ODD },
                { "", false, EGR_HOST_INVALID },
                { "-a.example", false, EGR_HOST_INVALID },
                { "a..example", false, EGR_HOST_INVALID },
                { "a b.example", false, EGR_HOST_INVALID },
                { "ex\xc3\xa4mple.com", false, EGR_HOST_INVALID },
                { "fe80::1%eth0", true, EGR_HOST_INVALID },
                { "127.0.0.1", true, EGR_HOST_INVALID }, /* [127.0.0.1] */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                enum egr_host_kind k = kind_of(cases[i].s, cases[i].br);
                if (k != cases[i].k)
                        fail_msg("'%s': kind %d, expected %d", cases[i].s, k, cases[i].k);
        }
        struct egr_host h;
        egr_host_parse("API.Example.COM.", 16, false, &h);
        assert_string_equal(h.name, "api.example.com");
        char long_label[80];
        memset(long_label, 'a', 64);
        strcpy(long_label + 64, ".example");
        assert_int_equal(kind_of(long_label, false), EGR_HOST_INVALID);
        strcpy(long_label + 63, ".example"); /* 63 bytes: a label's most */
        assert_int_equal(kind_of(long_label, false), EGR_HOST_NAME);
}

static enum egr_match match(const char *rule, const char *host, bool br, unsigned port)
{
        struct egr_rule r;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct egr_host h;
        if (egr_rule_parse(rule, &r, &err) < 0)
                fail_msg("rule '%s': %s", rule, err.msg);
        if (egr_host_parse(host, strlen(host), br, &h) != EGR_HOST_NAME && h.kind != EGR_HOST_IP)
                fail_msg("host '%s' does not parse", host);
        return egr_rules_match(&r, 1, &h, (uint16_t)port);
}

static void test_rules(void **state)
{
        (void)state;
        /* exact, any case, default ports 80 and 443 */
        assert_int_equal(match("api.example.com", "api.example.com", false, 443), EGR_MATCH);
        assert_int_equal(match("api.example.com", "API.example.com.", false, 80), EGR_MATCH);
        assert_int_equal(match("api.example.com", "api.example.com", false, 8080), EGR_MATCH_PORT_NOT_APPROVED);
        assert_int_equal(match("api.example.com", "example.com", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("api.example.com", "xapi.example.com", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("api.example.com", "api.example.com.evil", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        /* a port named: that port alone */
        assert_int_equal(match("api.example.com:8443", "api.example.com", false, 8443), EGR_MATCH);
        assert_int_equal(match("api.example.com:8443", "api.example.com", false, 443), EGR_MATCH_PORT_NOT_APPROVED);
        /* a wildcard: one label or more before the domain, never the domain itself */
        assert_int_equal(match("*.example.com", "a.example.com", false, 443), EGR_MATCH);
        assert_int_equal(match("*.example.com", "a.b.example.com", false, 443), EGR_MATCH);
        assert_int_equal(match("*.example.com", "example.com", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("*.example.com", "badexample.com", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("*.example.com", "a.example.com.evil.net", false, 443), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("*.example.com:81", "a.example.com", false, 80), EGR_MATCH_PORT_NOT_APPROVED);
        /* IP literals: only the address a rule names, in its standard form */
        assert_int_equal(match("10.0.0.5", "10.0.0.5", false, 80), EGR_MATCH);
        assert_int_equal(match("10.0.0.5", "10.0.0.6", false, 80), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("[2001:db8::1]:8080", "2001:db8:0::1", true, 8080), EGR_MATCH);
        assert_int_equal(match("[2001:db8::1]:8080", "2001:db8::2", true, 8080), EGR_MATCH_HOST_NOT_APPROVED);
        assert_int_equal(match("10.0.0.5", "::ffff:10.0.0.5", true, 80), EGR_MATCH_HOST_NOT_APPROVED);
        /* a name rule never approves an address, nor the reverse */
        assert_int_equal(match("api.example.com", "93.184.216.34", false, 443), EGR_MATCH_HOST_NOT_APPROVED);

        struct egr_rule r;
        struct anvil_err err = ANVIL_ERR_INIT;
        static const char *const bad[] = { "*.com",
                                           "*",
                                           "*.",
                                           "a.*.example.com",
                                           "api.example.com:0",
                                           "api.example.com:65536",
                                           "api.example.com:",
                                           "2130706433",
                                           "[::1",
                                           "[::1]x",
                                           "",
                                           "*.10.0.0.1",
                                           "a.example.com:80x" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (egr_rule_parse(bad[i], &r, &err) == 0)
                        fail_msg("rule '%s' parsed", bad[i]);
        assert_int_equal(egr_rule_parse("*.example.com:443", &r, &err), 0);
        assert_true(r.wildcard);
        assert_int_equal(r.port, 443);
}

static enum egr_range range_of(const char *s)
{
        struct sockaddr_storage ss = { 0 };
        if (strchr(s, ':')) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                a->sin6_family = AF_INET6;
                assert_int_equal(inet_pton(AF_INET6, s, &a->sin6_addr), 1);
        } else {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                a->sin_family = AF_INET;
                assert_int_equal(inet_pton(AF_INET, s, &a->sin_addr), 1);
        }
        return egr_addr_range((struct sockaddr *)&ss);
}

static void test_ranges(void **state)
{
        (void)state;
        static const struct {
                const char *a;
                enum egr_range r;
        } cases[] = {
                { "93.184.216.34", EGR_RANGE_PUBLIC },
                { "8.8.8.8", EGR_RANGE_PUBLIC },
                { "11.0.0.10", EGR_RANGE_PUBLIC },
                { "172.32.0.1", EGR_RANGE_PUBLIC },
                { "100.128.0.1", EGR_RANGE_PUBLIC },
                { "169.253.255.255", EGR_RANGE_PUBLIC },
                { "0.0.0.0", EGR_RANGE_UNSPECIFIED },
                { "0.1.2.3", EGR_RANGE_UNSPECIFIED },
                { "127.0.0.1", EGR_RANGE_LOOPBACK },
                { "127.255.255.254", EGR_RANGE_LOOPBACK },
                { "10.1.2.3", EGR_RANGE_PRIVATE },
                { "172.16.0.1", EGR_RANGE_PRIVATE },
                { "172.31.255.255", EGR_RANGE_PRIVATE },
                { "192.168.1.1", EGR_RANGE_PRIVATE },
                { "100.64.0.1", EGR_RANGE_CGNAT },
                { "100.127.255.255", EGR_RANGE_CGNAT },
                { "169.254.169.254", EGR_RANGE_LINK_LOCAL },
                { "224.0.0.1", EGR_RANGE_MULTICAST },
                { "239.255.255.250", EGR_RANGE_MULTICAST },
                { "255.255.255.255", EGR_RANGE_RESERVED },
                { "240.0.0.1", EGR_RANGE_RESERVED },
                { "192.0.2.1", EGR_RANGE_RESERVED },
                { "2600::10", EGR_RANGE_PUBLIC },
                { "2a00:1450:4001::1", EGR_RANGE_PUBLIC },
                { "::", EGR_RANGE_UNSPECIFIED },
                { "::1", EGR_RANGE_LOOPBACK },
                { "fd00::1", EGR_RANGE_PRIVATE },
                { "fc00::1", EGR_RANGE_PRIVATE },
                { "fe80::1", EGR_RANGE_LINK_LOCAL },
                { "ff02::1", EGR_RANGE_MULTICAST },
                { "2001:db8::1", EGR_RANGE_RESERVED },
                { "2002:7f00:1::", EGR_RANGE_RESERVED },
                { "::ffff:127.0.0.1", EGR_RANGE_LOOPBACK },
                { "::ffff:10.0.0.1", EGR_RANGE_PRIVATE },
                { "::ffff:169.254.169.254", EGR_RANGE_LINK_LOCAL },
                { "::ffff:93.184.216.34", EGR_RANGE_PUBLIC },
                { "::127.0.0.1", EGR_RANGE_LOOPBACK },
                { "64:ff9b::10.0.0.1", EGR_RANGE_PRIVATE },
                { "64:ff9b::8.8.8.8", EGR_RANGE_PUBLIC },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                enum egr_range r = range_of(cases[i].a);
                if (r != cases[i].r)
                        fail_msg("%s: range %s, expected %s", cases[i].a, egr_range_name(r),
                                 egr_range_name(cases[i].r));
        }
}

static bool held(const char *cidr, const char *addr)
{
        struct egr_cidr c;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (egr_cidr_parse(cidr, &c, &err) < 0)
                fail_msg("%s: %s", cidr, err.msg);
        struct sockaddr_storage ss = { 0 };
        if (strchr(addr, ':')) {
                ss.ss_family = AF_INET6;
                assert_int_equal(inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
        } else {
                ss.ss_family = AF_INET;
                assert_int_equal(inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr), 1);
        }
        return egr_cidrs_hold(&c, 1, (struct sockaddr *)&ss);
}

static void test_cidrs(void **state)
{
        (void)state;
        assert_true(held("10.9.0.0/16", "10.9.255.1"));
        assert_false(held("10.9.0.0/16", "10.10.0.1"));
        assert_true(held("10.9.0.5", "10.9.0.5"));
        assert_false(held("10.9.0.5", "10.9.0.6"));
        assert_true(held("10.9.0.0/16", "::ffff:10.9.0.1")); /* the mapped form is the same address */
        assert_true(held("fd00::/8", "fd12::1"));
        assert_false(held("fd00::/8", "fe80::1"));
        assert_true(held("0.0.0.0/0", "127.0.0.1"));
        assert_false(held("10.0.0.0/9", "10.128.0.1"));
        assert_true(held("10.0.0.0/9", "10.127.0.1"));
        struct egr_cidr c;
        struct anvil_err err = ANVIL_ERR_INIT;
        static const char *const bad[] = { "10.0.0.0/33", "fd00::/129",  "10.0.0/8",   "x",
                                           "10.0.0.0/",   "10.0.0.0/-1", "example.com" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (egr_cidr_parse(bad[i], &c, &err) == 0)
                        fail_msg("range '%s' parsed", bad[i]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_host_kinds),
                cmocka_unit_test(test_rules),
                cmocka_unit_test(test_ranges),
                cmocka_unit_test(test_cidrs),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

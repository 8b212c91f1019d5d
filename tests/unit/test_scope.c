/* A capability's scope (policy/cap_scope.c): what is a capability as written, and
 * granted = requested ∩ approved ∩ server policy on hosts. Each rule both ways: what it
 * grants, what it refuses, and that the intersection is never wider than either side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cap_scope.h"

static void test_check(void **state)
{
        (void)state;
        static const struct {
                const char *cap;
                const char *msg; /* NULL: accepted */
        } cases[] = {
                { "network", NULL },
                { "process", NULL },
                { "network=api.example.com", NULL },
                { "network=api.example.com,*.github.com", NULL },
                { "network=API.Example.com.:8443", NULL },
                { "network=10.0.0.5,[2001:db8::1]:443,10.9.0.0/16,fd00::/8", NULL },
                { "network=a.example,a.example", NULL }, /* once */
                { "gpu", "--cap: 'gpu' is not a capability (there are: network, process)" },
                { "networks=a.example",
                  "--cap: 'networks=a.example' is not a capability (there are: network, process)" },
                { "process=a.example", "--cap: 'process=a.example' names hosts, and only network takes them" },
                { "network=", "--cap: '' is not a host (a name, *.domain, an IPv4 address or [IPv6], each with "
                              ":PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network=a.example,", "--cap: '' is not a host (a name, *.domain, an IPv4 address or [IPv6], each "
                                        "with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network=http://a.example", "--cap: 'http://a.example' is not a host (a name, *.domain, an IPv4 "
                                              "address or [IPv6], each with :PORT or not) nor an address range "
                                              "(ADDRESS/PREFIX)" },
                { "network=*.com", "--cap: '*.com' is not a host (a name, *.domain, an IPv4 address or [IPv6], each "
                                   "with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network=a.example:0", "--cap: 'a.example:0' is not a host (a name, *.domain, an IPv4 address or "
                                         "[IPv6], each with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network=2130706433", "--cap: '2130706433' is not a host (a name, *.domain, an IPv4 address or "
                                        "[IPv6], each with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network=10.0.0.0/33", "--cap: '10.0.0.0/33' is not a host (a name, *.domain, an IPv4 address or "
                                         "[IPv6], each with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
                { "network= a.example", "--cap: ' a.example' is not a host (a name, *.domain, an IPv4 address or "
                                        "[IPv6], each with :PORT or not) nor an address range (ADDRESS/PREFIX)" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char msg[512] = "";
                int r = pol_cap_check("--cap", cases[i].cap, msg, sizeof(msg));
                if (!cases[i].msg) {
                        if (r != 0)
                                fail_msg("'%s' refused: %s", cases[i].cap, msg);
                        continue;
                }
                if (r != -EINVAL)
                        fail_msg("'%s' accepted", cases[i].cap);
                assert_string_equal(msg, cases[i].msg);
        }
}

static void test_bounds(void **state)
{
        (void)state;
        size_t size = 16 + 70 * 16;
        char *cap = malloc(size), msg[256];
        assert_non_null(cap);
        strcpy(cap, "network=");
        for (int i = 0; i < 64; i++)
                sprintf(cap + strlen(cap), "%sh%d.example", i ? "," : "", i);
        assert_int_equal(pol_cap_check("--cap", cap, msg, sizeof(msg)), 0); /* 64: the most */
        strcat(cap, ",h64.example");
        assert_int_equal(pol_cap_check("--cap", cap, msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "--cap: more than 64 hosts");
        strcpy(cap, "network=a.example");
        for (int i = 0; i < 17; i++)
                sprintf(cap + strlen(cap), ",10.%d.0.0/16", i);
        assert_int_equal(pol_cap_check("--cap", cap, msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "--cap: more than 16 address ranges");
        free(cap);
        /* the standard form: lowercase, no trailing dot, IPv6 bracketed, a range's address */
        struct pol_scope *s = calloc(1, sizeof(*s));
        assert_non_null(s);
        assert_int_equal(
                pol_scope_add(s, "x", "API.Example.com.,*.GitHub.com:443,[2001:DB8::1],10.9.1.2/16", msg, sizeof(msg)),
                0);
        char text[512];
        assert_string_equal(pol_scope_text(s, text, sizeof(text)),
                            "api.example.com, *.github.com:443, [2001:db8::1], 10.9.1.2/16");
        free(s);
}

#define N(a) (sizeof(a) / sizeof(a[0]))

struct resolve_case {
        const char *requested[3];
        const char *approved[3];
        bool allowed;
        enum pol_why why;
        const char *granted; /* pol_scope_text */
};

static void test_resolve(void **state)
{
        (void)state;
        static const struct resolve_case cases[] = {
                /* granted: the same hosts asked and approved (anvilctl --cap) */
                { { "network=api.example.com,*.github.com" },
                  { "network=api.example.com,*.github.com" },
                  true,
                  POL_WHY_NONE,
                  "api.example.com, *.github.com" },
                /* a request with no host asks for every host approved (the model's "network") */
                { { "network" }, { "network=api.example.com" }, true, POL_WHY_NONE, "api.example.com" },
                /* narrower than the approval: the request */
                { { "network=api.github.com" }, { "network=*.github.com" }, true, POL_WHY_NONE, "api.github.com" },
                { { "network=*.a.github.com" }, { "network=*.github.com" }, true, POL_WHY_NONE, "*.a.github.com" },
                /* wider than the approval: the approval */
                { { "network=*.github.com" }, { "network=api.github.com" }, true, POL_WHY_NONE, "api.github.com" },
                /* ports meet: 80 and 443 by default */
                { { "network=a.example" }, { "network=a.example:443" }, true, POL_WHY_NONE, "a.example:443" },
                { { "network=a.example:80" }, { "network=a.example" }, true, POL_WHY_NONE, "a.example:80" },
                { { "network=a.example:8080" }, { "network=a.example:8080" }, true, POL_WHY_NONE, "a.example:8080" },
                /* only what both name */
                { { "network=a.example,b.example" },
                  { "network=b.example,c.example" },
                  true,
                  POL_WHY_NONE,
                  "b.example" },
                /* several capabilities of network together */
                { { "network=a.example", "network=b.example" },
                  { "network=a.example", "network=b.example" },
                  true,
                  POL_WHY_NONE,
                  "a.example, b.example" },
                /* ranges: those approved come with the hosts */
                { { "network=db.internal" },
                  { "network=db.internal,10.9.0.0/16" },
                  true,
                  POL_WHY_NONE,
                  "db.internal, 10.9.0.0/16" },
                { { "network=db.internal,10.9.1.0/24" },
                  { "network=db.internal,10.9.0.0/16" },
                  true,
                  POL_WHY_NONE,
                  "db.internal, 10.9.1.0/24" },
                /* a range asked for and not approved is not granted; the host still is */
                { { "network=db.internal,10.8.0.0/16" },
                  { "network=db.internal,10.9.0.0/16" },
                  true,
                  POL_WHY_NONE,
                  "db.internal" },
                /* denied: */
                { { "network=api.example.com" }, { "process" }, true, POL_WHY_CAP_NOT_APPROVED, "" },
                { { "network=api.example.com" }, { NULL }, true, POL_WHY_CAP_NOT_APPROVED, "" },
                { { "network=api.example.com" }, { "network=api.example.com" }, false, POL_WHY_CAP_NET_FORBIDDEN, "" },
                { { "network=api.example.com" }, { "network" }, true, POL_WHY_CAP_NO_HOSTS, "" },
                { { "network" }, { "network" }, true, POL_WHY_CAP_NO_HOSTS, "" },
                { { "network" }, { "network=10.9.0.0/16" }, true, POL_WHY_CAP_NO_HOSTS, "" },
                { { "network=evil.example" }, { "network=api.example.com" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                { { "network=example.com" }, { "network=*.example.com" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                { { "network=xexample.com" }, { "network=*.example.com" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                { { "network=*.example.com" },
                  { "network=*.a.example.com:22" },
                  true,
                  POL_WHY_CAP_HOSTS_NOT_APPROVED,
                  "" },
                { { "network=a.example:22" }, { "network=a.example" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                { { "network=a.example:8080" },
                  { "network=a.example:8443" },
                  true,
                  POL_WHY_CAP_HOSTS_NOT_APPROVED,
                  "" },
                { { "network=10.0.0.5" }, { "network=10.0.0.6" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                { { "network=10.0.0.5" }, { "network=*.example.com" }, true, POL_WHY_CAP_HOSTS_NOT_APPROVED, "" },
                /* a scope that does not parse grants nothing */
                { { "network=http://a.example" }, { "network=a.example" }, true, POL_WHY_NONE, "a.example" },
                { { "network=a.example" }, { "network=http://a.example" }, true, POL_WHY_CAP_NO_HOSTS, "" },
        };
        struct pol_scope *g = malloc(sizeof(*g));
        assert_non_null(g);
        for (size_t i = 0; i < N(cases); i++) {
                const struct resolve_case *c = &cases[i];
                size_t nr = 0, na = 0;
                while (nr < 3 && c->requested[nr])
                        nr++;
                while (na < 3 && c->approved[na])
                        na++;
                enum pol_why w = pol_net_resolve(c->requested, nr, c->approved, na, c->allowed, g);
                char text[1024];
                pol_scope_text(g, text, sizeof(text));
                if (w != c->why || strcmp(text, c->granted) != 0)
                        fail_msg("case %zu (%s / %s): why '%s' granted '%s', expected '%s' '%s'", i, c->requested[0],
                                 c->approved[0] ? c->approved[0] : "-", pol_why_text(w), text, pol_why_text(c->why),
                                 c->granted);
                if (w != POL_WHY_NONE)
                        assert_int_equal(g->n_hosts + g->n_ranges, 0);
        }
        free(g);
}

/* The intersection is never wider than either side: each granted host is one the proxy
 * would let through under the request's rules and under the approval's. */
static void test_never_wider(void **state)
{
        (void)state;
        static const char *const sides[] = { "network=a.x.example",
                                             "network=*.x.example",
                                             "network=b.a.x.example:443",
                                             "network=*.a.x.example:80",
                                             "network=a.x.example:8080,c.x.example",
                                             "network=*.x.example:443" };
        static const char *const probes[] = { "a.x.example", "b.a.x.example", "y.b.a.x.example", "c.x.example",
                                              "x.example" };
        static const uint16_t ports[] = { 80, 443, 8080, 22 };
        struct pol_scope *g = malloc(sizeof(*g)), *r = calloc(1, sizeof(*r)), *a = calloc(1, sizeof(*a));
        assert_true(g && r && a);
        char msg[256];
        for (size_t i = 0; i < N(sides); i++)
                for (size_t k = 0; k < N(sides); k++) {
                        const char *req[] = { sides[i] }, *appr[] = { sides[k] };
                        (void)pol_net_resolve(req, 1, appr, 1, true, g);
                        memset(r, 0, sizeof(*r));
                        memset(a, 0, sizeof(*a));
                        assert_int_equal(pol_scope_add(r, "", strchr(sides[i], '=') + 1, msg, sizeof(msg)), 0);
                        assert_int_equal(pol_scope_add(a, "", strchr(sides[k], '=') + 1, msg, sizeof(msg)), 0);
                        struct egr_rule rr[8], ar[8], gr[POL_SCOPE_HOSTS_MAX];
                        for (size_t j = 0; j < r->n_hosts; j++)
                                rr[j] = r->hosts[j].rule;
                        for (size_t j = 0; j < a->n_hosts; j++)
                                ar[j] = a->hosts[j].rule;
                        for (size_t j = 0; j < g->n_hosts; j++)
                                gr[j] = g->hosts[j].rule;
                        for (size_t p = 0; p < N(probes); p++)
                                for (size_t q = 0; q < N(ports); q++) {
                                        struct egr_host h;
                                        assert_int_equal(egr_host_parse(probes[p], strlen(probes[p]), false, &h),
                                                         EGR_HOST_NAME);
                                        bool in_g = egr_rules_match(gr, g->n_hosts, &h, ports[q]) == EGR_MATCH;
                                        bool in_r = egr_rules_match(rr, r->n_hosts, &h, ports[q]) == EGR_MATCH;
                                        bool in_a = egr_rules_match(ar, a->n_hosts, &h, ports[q]) == EGR_MATCH;
                                        if (in_g != (in_r && in_a))
                                                fail_msg("%s ∩ %s: %s:%u granted %d, in both %d", sides[i], sides[k],
                                                         probes[p], ports[q], in_g, in_r && in_a);
                                }
                }
        free(g);
        free(r);
        free(a);
}

static void test_listed(void **state)
{
        (void)state;
        const char *a[] = { "process", "network=a.example" }, *b[] = { "process", "networks" }, *c[] = { "network" };
        assert_true(pol_net_listed(a, 2));
        assert_false(pol_net_listed(b, 2));
        assert_true(pol_net_listed(c, 1));
        assert_false(pol_net_listed(c, 0));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check),       cmocka_unit_test(test_bounds), cmocka_unit_test(test_resolve),
                cmocka_unit_test(test_never_wider), cmocka_unit_test(test_listed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

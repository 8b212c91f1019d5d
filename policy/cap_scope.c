/* A capability's scope: its hosts, parsed, met, written (cap_scope.h). */
#include "policy/cap_scope.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/rules.h"
#include "policy/variables.h"

const char *pol_cap_scope(const char *cap, size_t *name_len)
{
        const char *eq = strchr(cap, '=');
        *name_len = eq ? (size_t)(eq - cap) : strlen(cap);
        return eq ? eq + 1 : NULL;
}

static void rule_text(const struct egr_rule *r, char *buf, size_t size)
{
        bool v6 = r->host.kind == EGR_HOST_IP && r->host.addr.ss_family == AF_INET6;
        int n = snprintf(buf, size, "%s%s%s%s", r->wildcard ? "*." : "", v6 ? "[" : "", r->host.name, v6 ? "]" : "");
        if (r->port && n >= 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, ":%u", (unsigned)r->port);
}

static void cidr_text(const struct egr_cidr *c, char *buf, size_t size)
{
        char a[INET6_ADDRSTRLEN];
        if (!inet_ntop(c->family, c->addr, a, sizeof(a)))
                a[0] = '\0';
        snprintf(buf, size, "%s/%u", a, c->prefix);
}

static bool has_text(const struct pol_scope_item *v, size_t n, const char *text)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].text, text) == 0)
                        return true;
        return false;
}

/* Adds one parsed item (its text set) unless it is there: -E2BIG when full. */
static int push(struct pol_scope *s, bool range, const struct pol_scope_item *it)
{
        struct pol_scope_item *v = range ? s->ranges : s->hosts;
        size_t *n = range ? &s->n_ranges : &s->n_hosts;
        if (has_text(v, *n, it->text))
                return 0;
        if (*n >= (range ? POL_SCOPE_RANGES_MAX : POL_SCOPE_HOSTS_MAX))
                return -E2BIG;
        v[(*n)++] = *it;
        return 0;
}

int pol_scope_add(struct pol_scope *s, const char *field, const char *text, char *msg, size_t size)
{
        const char *p = text;
        for (;;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                char item[POL_SCOPE_ITEM_MAX + 1], shown[96];
                struct pol_scope_item it;
                struct anvil_err err = ANVIL_ERR_INIT;
                memset(&it, 0, sizeof(it));
                bool range = memchr(p, '/', len) != NULL;
                int r = -EINVAL;
                if (len > 0 && len <= POL_SCOPE_ITEM_MAX && !memchr(p, '\0', len)) {
                        memcpy(item, p, len);
                        item[len] = '\0';
                        r = range ? egr_cidr_parse(item, &it.cidr, &err) : egr_rule_parse(item, &it.rule, &err);
                }
                if (r < 0) {
                        pol_var_show(p, len, shown, sizeof(shown));
                        POL_REASON(msg, size, CAP_SCOPE_BAD, field, shown);
                        return -EINVAL;
                }
                if (range)
                        cidr_text(&it.cidr, it.text, sizeof(it.text));
                else
                        rule_text(&it.rule, it.text, sizeof(it.text));
                if (push(s, range, &it) < 0) {
                        POL_REASON(msg, size, CAP_SCOPE_TOO_MANY, field,
                                   range ? POL_SCOPE_RANGES_MAX : POL_SCOPE_HOSTS_MAX,
                                   range ? "address ranges" : "hosts");
                        return -EINVAL;
                }
                if (!end)
                        return 0;
                p = end + 1;
        }
}

int pol_cap_check(const char *field, const char *cap, char *msg, size_t size)
{
        size_t n;
        const char *scope = pol_cap_scope(cap, &n);
        char name[32];
        if (n >= sizeof(name) || (snprintf(name, sizeof(name), "%.*s", (int)n, cap), pol_cap_from_name(name) < 0)) {
                pol_cap_unknown(field, cap, msg, size);
                return -EINVAL;
        }
        if (!scope)
                return 0;
        if (pol_cap_from_name(name) != POL_CAP_NETWORK) {
                char shown[96];
                pol_var_show(cap, strlen(cap), shown, sizeof(shown));
                POL_REASON(msg, size, CAP_SCOPE_NOT_NETWORK, field, shown);
                return -EINVAL;
        }
        struct pol_scope *s = calloc(1, sizeof(*s));
        if (!s) {
                snprintf(msg, size, "Out of memory");
                return -ENOMEM;
        }
        int r = pol_scope_add(s, field, scope, msg, size);
        free(s);
        return r;
}

static bool is_network(const char *cap, const char **scope)
{
        size_t n;
        *scope = pol_cap_scope(cap, &n);
        return n == strlen("network") && strncmp(cap, "network", n) == 0;
}

bool pol_net_listed(const char *const *caps, size_t n)
{
        const char *scope;
        for (size_t i = 0; i < n; i++)
                if (caps[i] && is_network(caps[i], &scope))
                        return true;
        return false;
}

/* Every network capability of caps, its items together; whether there was one. A scope that
 * does not parse adds nothing (and the rest of its items neither). */
static bool gather(const char *const *caps, size_t n, struct pol_scope *s)
{
        bool found = false;
        char msg[16];
        for (size_t i = 0; i < n; i++) {
                const char *scope;
                if (!caps[i] || !is_network(caps[i], &scope))
                        continue;
                found = true;
                if (scope) {
                        struct pol_scope one;
                        memset(&one, 0, sizeof(one));
                        if (pol_scope_add(&one, "", scope, msg, sizeof(msg)) < 0)
                                continue;
                        for (size_t k = 0; k < one.n_hosts; k++)
                                (void)push(s, false, &one.hosts[k]);
                        for (size_t k = 0; k < one.n_ranges; k++)
                                (void)push(s, true, &one.ranges[k]);
                }
        }
        return found;
}

/* Whether every host a names is one b names (ports aside). */
static bool host_within(const struct egr_rule *a, const struct egr_rule *b)
{
        if (a->host.kind != b->host.kind)
                return false;
        if (!b->wildcard)
                return !a->wildcard && strcmp(a->host.name, b->host.name) == 0;
        if (a->wildcard && strcmp(a->host.name, b->host.name) == 0)
                return true;
        /* a's name (or a's wildcard's suffix) is one label or more, then ".b's suffix" */
        size_t n = strlen(a->host.name), sn = strlen(b->host.name);
        return n > sn + 1 && a->host.name[n - sn - 1] == '.' && strcmp(a->host.name + n - sn, b->host.name) == 0;
}

/* The ports both allow (0: 80 and 443): whether there is one, and which. */
static bool port_meet(uint16_t a, uint16_t b, uint16_t *out)
{
        if (a == b)
                *out = a;
        else if (a == 0 && (b == 80 || b == 443))
                *out = b;
        else if (b == 0 && (a == 80 || a == 443))
                *out = a;
        else
                return false;
        return true;
}

static bool cidr_within(const struct egr_cidr *a, const struct egr_cidr *b)
{
        if (a->family != b->family || a->prefix < b->prefix)
                return false;
        unsigned full = b->prefix / 8, rest = b->prefix % 8;
        if (memcmp(a->addr, b->addr, full) != 0)
                return false;
        return !rest || ((a->addr[full] ^ b->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

enum pol_why pol_net_resolve(const char *const *requested, size_t n_requested, const char *const *approved,
                             size_t n_approved, bool allowed, struct pol_scope *granted)
{
        memset(granted, 0, sizeof(*granted));
        struct pol_scope *req = calloc(1, sizeof(*req)), *appr = calloc(1, sizeof(*appr));
        enum pol_why why = POL_WHY_NONE;
        if (!req || !appr) {
                why = POL_WHY_CAP_NOT_APPROVED; /* out of memory: nothing granted */
                goto out;
        }
        (void)gather(requested, n_requested, req);
        if (!gather(approved, n_approved, appr)) {
                why = POL_WHY_CAP_NOT_APPROVED;
                goto out;
        }
        if (!allowed) {
                why = POL_WHY_CAP_NET_FORBIDDEN;
                goto out;
        }
        if (!appr->n_hosts) {
                why = POL_WHY_CAP_NO_HOSTS;
                goto out;
        }
        if (!req->n_hosts) { /* asks for every host approved */
                for (size_t i = 0; i < appr->n_hosts; i++)
                        (void)push(granted, false, &appr->hosts[i]);
        } else {
                for (size_t i = 0; i < req->n_hosts; i++)
                        for (size_t k = 0; k < appr->n_hosts; k++) {
                                const struct egr_rule *r = &req->hosts[i].rule, *a = &appr->hosts[k].rule;
                                struct pol_scope_item it;
                                uint16_t port;
                                if (!port_meet(r->port, a->port, &port))
                                        continue;
                                if (host_within(r, a))
                                        it.rule = *r;
                                else if (host_within(a, r))
                                        it.rule = *a;
                                else
                                        continue;
                                it.rule.port = port;
                                rule_text(&it.rule, it.text, sizeof(it.text));
                                /* full: the rest is left out, never more than either side */
                                (void)push(granted, false, &it);
                        }
        }
        if (!granted->n_hosts) {
                why = POL_WHY_CAP_HOSTS_NOT_APPROVED;
                goto out;
        }
        /* Ranges: those approved, or those asked for within them. */
        for (size_t k = 0; k < appr->n_ranges; k++) {
                if (!req->n_ranges) {
                        (void)push(granted, true, &appr->ranges[k]);
                        continue;
                }
                for (size_t i = 0; i < req->n_ranges; i++) {
                        const struct pol_scope_item *r = &req->ranges[i], *a = &appr->ranges[k];
                        if (cidr_within(&r->cidr, &a->cidr))
                                (void)push(granted, true, r);
                        else if (cidr_within(&a->cidr, &r->cidr))
                                (void)push(granted, true, a);
                }
        }
out:
        if (why != POL_WHY_NONE)
                memset(granted, 0, sizeof(*granted));
        free(req);
        free(appr);
        return why;
}

char *pol_scope_text(const struct pol_scope *s, char *buf, size_t size)
{
        size_t used = 0;
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < s->n_hosts + s->n_ranges && used < size; i++) {
                const char *t = i < s->n_hosts ? s->hosts[i].text : s->ranges[i - s->n_hosts].text;
                int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", t);
                if (n < 0)
                        break;
                used += (size_t)n;
        }
        return buf;
}

int pol_cap_join(const char *const *items, size_t n, char *buf, size_t size)
{
        size_t used = (size_t)snprintf(buf, size, "network=");
        if (n == 0 || n > POL_SCOPE_HOSTS_MAX + POL_SCOPE_RANGES_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(items[i]);
                /* an item with a comma would be two: refused, not split */
                if (!len || strchr(items[i], ',') || used + len + 2 > size)
                        return -EINVAL;
                used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "", items[i]);
        }
        return 0;
}

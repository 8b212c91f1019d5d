/* The host matcher and the address classifier (rules.h). Pure: runs in anvil-egress, no
 * privilege, and in the unit tests. */
#include "egress/rules.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label: letters, digits, '-' and '_' (service names), 1 to 63 bytes, no '-' at either end. */
static bool label_ok(const char *s, size_t len)
{
        if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
                        return false;
        return true;
}

static bool all_digits(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (!isdigit((unsigned char)s[i]))
                        return false;
        return len > 0;
}

/* A DNS name, lowercase, without its trailing dot. Its last label may not be all digits nor
 * 0x-hex: that is an IPv4 address in some form (WHATWG URL's rule), never a name. */
static enum egr_host_kind name_parse(const char *s, size_t len, struct egr_host *out)
{
        if (len > 0 && s[len - 1] == '.')
                len--;
        if (len == 0 || len > EGR_HOST_MAX)
                return EGR_HOST_INVALID;
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '.')
                        continue;
                if (!label_ok(s + start, i - start))
                        return EGR_HOST_INVALID;
                if (i == len) {
                        const char *last = s + start;
                        size_t n = i - start;
                        if (all_digits(last, n) || (n > 2 && last[0] == '0' && (last[1] | 0x20) == 'x'))
                                return EGR_HOST_IP_ODD;
                }
                start = i + 1;
        }
        for (size_t i = 0; i < len; i++)
                out->name[i] = (char)tolower((unsigned char)s[i]);
        out->name[len] = '\0';
        return out->kind = EGR_HOST_NAME;
}

enum egr_host_kind egr_host_parse(const char *host, size_t len, bool bracketed, struct egr_host *out)
{
        char buf[EGR_HOST_MAX + 2];
        memset(out, 0, sizeof(*out));
        out->kind = EGR_HOST_INVALID;
        if (len == 0 || len > EGR_HOST_MAX + 1 || memchr(host, '\0', len))
                return EGR_HOST_INVALID;
        memcpy(buf, host, len);
        buf[len] = '\0';
        if (bracketed) {
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->addr;
                if (inet_pton(AF_INET6, buf, &a6->sin6_addr) != 1) /* a zone ("%eth0") too */
                        return EGR_HOST_INVALID;
                a6->sin6_family = AF_INET6;
                (void)egr_addr_text((struct sockaddr *)a6, out->name, sizeof(out->name));
                return out->kind = EGR_HOST_IP;
        }
        struct sockaddr_in *a4 = (struct sockaddr_in *)&out->addr;
        if (inet_pton(AF_INET, buf, &a4->sin_addr) == 1) {
                a4->sin_family = AF_INET;
                (void)egr_addr_text((struct sockaddr *)a4, out->name, sizeof(out->name));
                return out->kind = EGR_HOST_IP;
        }
        struct in_addr odd;
        if (inet_aton(buf, &odd) == 1) /* 2130706433, 0x7f.1, 017700000001, 127.1 */
                return out->kind = EGR_HOST_IP_ODD;
        enum egr_host_kind k = name_parse(buf, len, out);
        if (k != EGR_HOST_NAME)
                memset(out, 0, sizeof(*out));
        out->kind = k;
        return k;
}

/* Splits "HOST[:PORT]" / "[V6][:PORT]" into the host's text and the port (0 if none). */
static int split_port(const char *s, const char **host, size_t *hlen, bool *bracketed, uint16_t *port,
                      struct anvil_err *err)
{
        const char *colon;
        *bracketed = s[0] == '[';
        if (*bracketed) {
                const char *close = strchr(s, ']');
                if (!close)
                        return anvil_err_set(err, EINVAL, "rule '%s': no ']'", s);
                *host = s + 1;
                *hlen = (size_t)(close - s - 1);
                colon = close[1] == ':' ? close + 1 : NULL;
                if (!colon && close[1] != '\0')
                        return anvil_err_set(err, EINVAL, "rule '%s': text after ']'", s);
        } else {
                colon = strrchr(s, ':');
                *host = s;
                *hlen = colon ? (size_t)(colon - s) : strlen(s);
        }
        *port = 0;
        if (colon) {
                char *end;
                errno = 0;
                unsigned long p = strtoul(colon + 1, &end, 10);
                if (!isdigit((unsigned char)colon[1]) || *end || errno || p == 0 || p > 65535)
                        return anvil_err_set(err, EINVAL, "rule '%s': the port is not 1 to 65535", s);
                *port = (uint16_t)p;
        }
        return 0;
}

int egr_rule_parse(const char *s, struct egr_rule *out, struct anvil_err *err)
{
        const char *host = NULL;
        size_t hlen = 0;
        bool br = false;
        memset(out, 0, sizeof(*out));
        int r = split_port(s, &host, &hlen, &br, &out->port, err);
        if (r < 0)
                return r;
        if (!br && hlen >= 2 && host[0] == '*' && host[1] == '.') {
                out->wildcard = true;
                host += 2;
                hlen -= 2;
        }
        enum egr_host_kind k = egr_host_parse(host, hlen, br, &out->host);
        if (k == EGR_HOST_IP_ODD || k == EGR_HOST_INVALID)
                return anvil_err_set(err, EINVAL, "rule '%s': not a host name, a dotted IPv4 address or a [IPv6] one",
                                     s);
        if (out->wildcard && (k != EGR_HOST_NAME || !strchr(out->host.name, '.')))
                return anvil_err_set(err, EINVAL, "rule '%s': a wildcard is *. and a domain of two labels or more", s);
        return 0;
}

int egr_cidr_parse(const char *s, struct egr_cidr *out, struct anvil_err *err)
{
        char buf[INET6_ADDRSTRLEN + 8];
        memset(out, 0, sizeof(*out));
        if (strlen(s) >= sizeof(buf))
                return anvil_err_set(err, EINVAL, "address range '%.60s...': too long", s);
        strcpy(buf, s);
        char *slash = strchr(buf, '/');
        if (slash)
                *slash = '\0';
        if (inet_pton(AF_INET, buf, out->addr) == 1)
                out->family = AF_INET;
        else if (inet_pton(AF_INET6, buf, out->addr) == 1)
                out->family = AF_INET6;
        else
                return anvil_err_set(err, EINVAL, "address range '%s': not ADDRESS[/PREFIX]", s);
        unsigned max = out->family == AF_INET ? 32 : 128;
        out->prefix = max;
        if (slash) {
                char *end;
                unsigned long p = strtoul(slash + 1, &end, 10);
                if (!isdigit((unsigned char)slash[1]) || *end || p > max)
                        return anvil_err_set(err, EINVAL, "address range '%s': the prefix is not 0 to %u", s, max);
                out->prefix = (unsigned)p;
        }
        return 0;
}

static bool host_match(const struct egr_rule *r, const struct egr_host *h)
{
        if (r->host.kind != h->kind)
                return false;
        if (!r->wildcard)
                return strcmp(r->host.name, h->name) == 0;
        size_t n = strlen(h->name), sn = strlen(r->host.name);
        /* one or more labels, then ".suffix": never the suffix itself, never "xsuffix" */
        return n > sn + 1 && h->name[n - sn - 1] == '.' && strcmp(h->name + n - sn, r->host.name) == 0;
}

enum egr_match egr_rules_match(const struct egr_rule *rules, size_t n, const struct egr_host *host, uint16_t port)
{
        bool named = false;
        for (size_t i = 0; i < n; i++) {
                if (!host_match(&rules[i], host))
                        continue;
                named = true;
                if (rules[i].port == port || (rules[i].port == 0 && (port == 80 || port == 443)))
                        return EGR_MATCH;
        }
        return named ? EGR_MATCH_PORT_NOT_APPROVED : EGR_MATCH_HOST_NOT_APPROVED;
}

static const char *const range_names[_EGR_RANGE_MAX] = {
#define X(id, name) [EGR_RANGE_##id] = name,
        EGR_RANGES(X)
#undef X
};

const char *egr_range_name(enum egr_range r)
{
        return (unsigned)r < _EGR_RANGE_MAX ? range_names[r] : "unknown";
}

/* addr (network order, len bytes) is in net/prefix. */
static bool in_prefix(const uint8_t *addr, const uint8_t *net, unsigned prefix)
{
        unsigned full = prefix / 8, rest = prefix % 8;
        if (memcmp(addr, net, full) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t)(0xff << (8 - rest));
        return (addr[full] & mask) == (net[full] & mask);
}

struct range4 {
        uint8_t net[4];
        unsigned prefix;
        enum egr_range range;
};

static const struct range4 ranges4[] = {
        { { 0, 0, 0, 0 }, 8, EGR_RANGE_UNSPECIFIED }, /* "this network"; 0.0.0.0 is the host */
        { { 10, 0, 0, 0 }, 8, EGR_RANGE_PRIVATE },
        { { 100, 64, 0, 0 }, 10, EGR_RANGE_CGNAT },
        { { 127, 0, 0, 0 }, 8, EGR_RANGE_LOOPBACK },
        { { 169, 254, 0, 0 }, 16, EGR_RANGE_LINK_LOCAL },
        { { 172, 16, 0, 0 }, 12, EGR_RANGE_PRIVATE },
        { { 192, 0, 0, 0 }, 24, EGR_RANGE_RESERVED },   /* IETF protocol assignments */
        { { 192, 0, 2, 0 }, 24, EGR_RANGE_RESERVED },   /* documentation */
        { { 192, 88, 99, 0 }, 24, EGR_RANGE_RESERVED }, /* 6to4 relays, deprecated */
        { { 192, 168, 0, 0 }, 16, EGR_RANGE_PRIVATE },
        { { 198, 18, 0, 0 }, 15, EGR_RANGE_RESERVED }, /* benchmarking */
        { { 198, 51, 100, 0 }, 24, EGR_RANGE_RESERVED },
        { { 203, 0, 113, 0 }, 24, EGR_RANGE_RESERVED },
        { { 224, 0, 0, 0 }, 4, EGR_RANGE_MULTICAST },
        { { 240, 0, 0, 0 }, 4, EGR_RANGE_RESERVED }, /* and 255.255.255.255 */
};

static enum egr_range range4(const uint8_t *a)
{
        for (size_t i = 0; i < sizeof(ranges4) / sizeof(ranges4[0]); i++)
                if (in_prefix(a, ranges4[i].net, ranges4[i].prefix))
                        return ranges4[i].range;
        return EGR_RANGE_PUBLIC;
}

/* The IPv4 address an IPv6 one carries: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d
 * (deprecated, but a stack may still route it), NAT64's 64:ff9b::a.b.c.d. */
static const uint8_t *embedded4(const uint8_t *a)
{
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        static const uint8_t compat[12] = { 0 };
        static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
        if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12))
                return a + 12;
        if (!memcmp(a, compat, 12) && (a[12] | a[13] | a[14]) != 0) /* not :: nor ::1 */
                return a + 12;
        return NULL;
}

struct range6 {
        uint8_t net[16];
        unsigned prefix;
        enum egr_range range;
};

static const struct range6 ranges6[] = {
        { { 0 }, 128, EGR_RANGE_UNSPECIFIED },
        { { [15] = 1 }, 128, EGR_RANGE_LOOPBACK },
        { { 0 }, 8, EGR_RANGE_RESERVED },                       /* the rest of ::/8 */
        { { 0x01 }, 64, EGR_RANGE_RESERVED },                   /* discard-only 100::/64 */
        { { 0x20, 0x01, 0x0d, 0xb8 }, 32, EGR_RANGE_RESERVED }, /* documentation */
        { { 0x20, 0x02 }, 16, EGR_RANGE_RESERVED },             /* 6to4: carries any IPv4 address */
        { { 0x20, 0x01, 0, 0 }, 32, EGR_RANGE_RESERVED },       /* Teredo: likewise */
        { { 0xfc }, 7, EGR_RANGE_PRIVATE },                     /* unique local */
        { { 0xfe, 0x80 }, 10, EGR_RANGE_LINK_LOCAL },
        { { 0xfe, 0xc0 }, 10, EGR_RANGE_PRIVATE }, /* site-local, deprecated */
        { { 0xff }, 8, EGR_RANGE_MULTICAST },
};

enum egr_range egr_addr_range(const struct sockaddr *sa)
{
        if (sa->sa_family == AF_INET)
                return range4((const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr);
        if (sa->sa_family != AF_INET6)
                return EGR_RANGE_RESERVED;
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        const uint8_t *v4 = embedded4(a);
        if (v4)
                return range4(v4);
        for (size_t i = 0; i < sizeof(ranges6) / sizeof(ranges6[0]); i++)
                if (in_prefix(a, ranges6[i].net, ranges6[i].prefix))
                        return ranges6[i].range;
        return EGR_RANGE_PUBLIC;
}

bool egr_cidrs_hold(const struct egr_cidr *cidrs, size_t n, const struct sockaddr *sa)
{
        const uint8_t *a4 = NULL, *a6 = NULL;
        if (sa->sa_family == AF_INET)
                a4 = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
        else if (sa->sa_family == AF_INET6) {
                a6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
                a4 = embedded4(a6);
        }
        for (size_t i = 0; i < n; i++) {
                if (cidrs[i].family == AF_INET && a4 && in_prefix(a4, cidrs[i].addr, cidrs[i].prefix))
                        return true;
                if (cidrs[i].family == AF_INET6 && a6 && in_prefix(a6, cidrs[i].addr, cidrs[i].prefix))
                        return true;
        }
        return false;
}

const char *egr_addr_text(const struct sockaddr *sa, char *buf, size_t size)
{
        const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                                                 : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)size))
                (void)snprintf(buf, size, "?");
        return buf;
}

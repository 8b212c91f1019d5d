/* egress/: anvil-egress, the egress proxy. It runs as an unprivileged user of its own (the unit
 * anvil-egress.service: no capability, no file but its runtime directory), and is the only
 * Anvil process that opens connections for a run's tool: an HTTP forward proxy and CONNECT,
 * each request checked against its run's approved hosts, resolved by the proxy itself and
 * connected to the very address it checked. docs/egress.md is its reference.
 *
 * rules.c: the pure part (no I/O, no allocation but a rule list's): what a host in a request
 * is (a name, an IP literal, neither), whether a run's rules approve it and its port, and what
 * range an address is in. Unit-tested both ways (tests/unit/test_egress.c). */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/err.h"

#define EGR_HOST_MAX 253 /* a DNS name's longest text form, without the trailing dot */

/* What a request's host is. */
enum egr_host_kind {
        EGR_HOST_INVALID = 0, /* not a DNS name, nor an address */
        EGR_HOST_NAME,        /* a DNS name: lowercased, its one trailing dot removed */
        EGR_HOST_IP,          /* an IP literal in its standard form (dotted quad, or [v6]) */
        EGR_HOST_IP_ODD,      /* an IPv4 address in another form (decimal, octal, hex, short) */
};

struct egr_host {
        enum egr_host_kind kind;
        char name[EGR_HOST_MAX + 1];  /* EGR_HOST_NAME: normalised; EGR_HOST_IP: canonical text */
        struct sockaddr_storage addr; /* EGR_HOST_IP: the address, port 0 */
};

/* Classifies host (len bytes, not NUL-terminated; bracketed: it was inside [] in the URL). */
enum egr_host_kind egr_host_parse(const char *host, size_t len, bool bracketed, struct egr_host *out);

/* One approved destination: "api.example.com", "*.example.com" (one or more labels before
 * .example.com, never example.com itself), "10.1.2.3", "[2001:db8::1]", each with ":PORT" or
 * not (then ports 80 and 443). */
struct egr_rule {
        bool wildcard;
        struct egr_host host; /* a wildcard's: the suffix, without "*." */
        uint16_t port;        /* 0: 80 and 443 */
};

/* An address range approved as such: "10.9.0.0/16", "fd00::/8", or one address. */
struct egr_cidr {
        int family;
        uint8_t addr[16];
        unsigned prefix;
};

int egr_rule_parse(const char *s, struct egr_rule *out, struct anvil_err *err);
int egr_cidr_parse(const char *s, struct egr_cidr *out, struct anvil_err *err);

enum egr_match {
        EGR_MATCH = 0,
        EGR_MATCH_HOST_NOT_APPROVED,
        EGR_MATCH_PORT_NOT_APPROVED, /* some rule names the host, none its port */
};

/* Whether rules approve host (EGR_HOST_NAME or EGR_HOST_IP) at port. */
enum egr_match egr_rules_match(const struct egr_rule *rules, size_t n, const struct egr_host *host, uint16_t port);

/* The ranges an address may be in; every one but PUBLIC is refused unless approved. */
#define EGR_RANGES(X)                 \
        X(PUBLIC, "public")           \
        X(UNSPECIFIED, "unspecified") \
        X(LOOPBACK, "loopback")       \
        X(PRIVATE, "private")         \
        X(LINK_LOCAL, "link-local")   \
        X(CGNAT, "shared (CGNAT)")    \
        X(MULTICAST, "multicast")     \
        X(RESERVED, "reserved")

enum egr_range {
#define X(id, name) EGR_RANGE_##id,
        EGR_RANGES(X)
#undef X
        _EGR_RANGE_MAX
};

const char *egr_range_name(enum egr_range r);

/* The range of sa (AF_INET or AF_INET6; an IPv4-mapped, -compatible or NAT64 IPv6 address is
 * classified by the IPv4 address it holds). Any other family is RESERVED. */
enum egr_range egr_addr_range(const struct sockaddr *sa);

/* Whether one of cidrs holds sa (an IPv4-mapped IPv6 address matches IPv4 ranges too). */
bool egr_cidrs_hold(const struct egr_cidr *cidrs, size_t n, const struct sockaddr *sa);

/* sa's address as text ("10.0.0.1", "2001:db8::1"), into buf of at least INET6_ADDRSTRLEN. */
const char *egr_addr_text(const struct sockaddr *sa, char *buf, size_t size);

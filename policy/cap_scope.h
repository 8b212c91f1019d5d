/* A capability's scope (DESIGN §7, issue 17 part 3): `network` carries the hosts it is for.
 *
 * A capability is written NAME or NAME=ITEM,ITEM,...; only network takes items. An item is a
 * host rule as anvil-egress enforces it (egress/rules.h: "api.example.com", "*.github.com",
 * "10.0.0.5", "[2001:db8::1]", each with ":PORT" or not, then ports 80 and 443), or an address
 * range approved as such ("10.9.0.0/16": what a '/' marks), which lets an approved host resolve
 * to a private, loopback or link-local address. The same text is every client's: anvilctl's
 * --cap, task.json (its {"network": [...]} form is written into it), the web UI, the model's
 * declaration, the frames.
 *
 * The rule for network (pol_net_resolve): granted hosts = requested ∩ approved ∩ server
 * policy. A "network" approved with no host approves none (it grants nothing); a "network"
 * requested with no host asks for every host approved. Hosts meet by inclusion: a request for
 * api.github.com under an approved *.github.com is api.github.com, and a request for
 * *.github.com under an approved api.github.com is api.github.com; ports meet likewise. The
 * intersection is never wider than either side.
 *
 * Pure: no I/O, no privilege (linked by the broker and anvilctl with egress/rules.o; never by
 * the supervisor, which is given names alone). Unit-tested both ways (tests/unit/test_scope.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "egress/rules.h"
#include "policy/reasons.h"

#define POL_SCOPE_HOSTS_MAX 64                 /* anvil-egress's rules per run (docs/egress.md) */
#define POL_SCOPE_RANGES_MAX 16                /* and its address ranges */
#define POL_SCOPE_ITEM_MAX (EGR_HOST_MAX + 10) /* "*." a name ":65535", or "[v6]:65535" */

struct pol_scope_item {
        struct egr_rule rule;              /* hosts */
        struct egr_cidr cidr;              /* ranges */
        char text[POL_SCOPE_ITEM_MAX + 1]; /* its standard form: lowercase, no trailing dot */
};

struct pol_scope {
        size_t n_hosts, n_ranges;
        struct pol_scope_item hosts[POL_SCOPE_HOSTS_MAX];
        struct pol_scope_item ranges[POL_SCOPE_RANGES_MAX];
};

/* The capability's name's length, and its scope: the text after '=', or NULL. */
const char *pol_cap_scope(const char *cap, size_t *name_len);

/* Adds the items of text (ITEM,ITEM...) to s, each in its standard form and once. -EINVAL and
 * msg (a CAP_SCOPE_ reason, prefixed by field) if one is no item or there are too many. */
int pol_scope_add(struct pol_scope *s, const char *field, const char *text, char *msg, size_t size);

/* Whether cap is a capability as written (NAME or network=ITEMS): 0, or -EINVAL with msg
 * (CAP_NOT_A_CAPABILITY or a CAP_SCOPE_ reason, prefixed by field). -ENOMEM: out of memory. */
int pol_cap_check(const char *field, const char *cap, char *msg, size_t size);

/* Whether network is among caps (with a scope or not). */
bool pol_net_listed(const char *const *caps, size_t n);

/* granted = requested ∩ approved ∩ server policy, for network (which the caller has seen
 * requested): POL_WHY_NONE and granted (at least one host), or why not: CAP_NOT_APPROVED,
 * CAP_NET_FORBIDDEN (allowed false), CAP_NO_HOSTS, CAP_HOSTS_NOT_APPROVED. A capability that
 * does not parse counts as not written (the caller checked them with pol_cap_check). */
enum pol_why pol_net_resolve(const char *const *requested, size_t n_requested, const char *const *approved,
                             size_t n_approved, bool allowed, struct pol_scope *granted);

/* The hosts of s, then its ranges, parted by ", " (cut to size, terminated). Is buf. */
char *pol_scope_text(const struct pol_scope *s, char *buf, size_t size);

/* The text of {"network": [ITEM, ...]} (task.json's form, the web UI's): "network=ITEM,...",
 * into buf (at least 16 bytes). -EINVAL if there is no item, too many, an empty one, one with
 * a comma, or the text would not fit; then check it with pol_cap_check. */
int pol_cap_join(const char *const *items, size_t n, char *buf, size_t size);

/* The prose of a result (DESIGN §4, §6), written here rather than in the root daemon: the
 * supervisor decides what holds and sends facts (proto_blast_facts, proto_probe_facts); this
 * file turns them into the sentences the catalog holds (POL_PROSE), the same a client always
 * saw. It runs unprivileged, in the broker for every frame from the supervisor and in anvilctl
 * for a supervisor it talks to directly. The facts came from the supervisor (trusted, its
 * socket is the broker's alone) but the probe's outcomes are the words of a tool that ran in
 * a jail: bounded by the decoder (32 bytes) and only ever formatted in as %s. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker/render.h"
#include "lib/cleanup.h"
#include "proto/schema.h"

static const char *const prose_formats[_POL_PROSE_MAX] = {
#define X(id, fmt) [POL_PROSE_##id] = fmt,
        POL_PROSE(X)
#undef X
};

const char *bro_prose_format(enum pol_prose t)
{
        return (unsigned)t < _POL_PROSE_MAX ? prose_formats[t] : "unknown prose";
}

#define P(buf, id, ...) BRO_PROSE(buf, sizeof(buf), id, ##__VA_ARGS__)

/* ---- the blast radius ---- */

static int push(struct proto_strv *v, const char *s)
{
        return proto_strv_push(v, s) < 0 ? -ENOMEM : 0;
}

static int render_blast(struct proto_blast_radius *b, const struct proto_blast_facts *f)
{
        char line[PROTO_PATH_MAX + 256], inputs[PROTO_PATH_MAX + 16], artifacts[PROTO_PATH_MAX + 16];
        unsigned long long files = (unsigned long long)b->limits.files_bytes;
        snprintf(inputs, sizeof(inputs), "%s/inputs", f->workdir);
        snprintf(artifacts, sizeof(artifacts), "%s/artifacts", f->workdir);
        /* read: the jail's paths (the supervisor's), then the run's own directories */
        if (push(&b->read, P(line, BLAST_INPUTS, inputs, (unsigned long long)f->inputs, f->inputs == 1 ? "" : "s",
                             (unsigned long long)f->inputs_bytes)) < 0 ||
            push(&b->read, artifacts) < 0 || push(&b->read, P(line, BLAST_TMP_READ, f->tmp)) < 0)
                return -ENOMEM;
        /* write: without a tmpfs (direct) RLIMIT_FSIZE bounds each file, not their sum */
        if (f->direct) {
                if (push(&b->write, P(line, BLAST_WRITE_DIRECT, artifacts, files)) < 0 ||
                    push(&b->write, P(line, BLAST_WRITE_DIRECT, f->tmp, files)) < 0)
                        return -ENOMEM;
        } else if (push(&b->write, P(line, BLAST_WRITE_ARTIFACTS, artifacts, files)) < 0 ||
                   push(&b->write, P(line, BLAST_WRITE_TMP, f->tmp, files)) < 0)
                return -ENOMEM;
        char none[128], sc[160], ns[128], ll[96];
        bool isolated = f->seccomp_verified || f->netns || f->landlock_abi > 0;
        if (f->egress) /* granted: the broker adds the approved hosts (docs/egress.md) */
                snprintf(line, sizeof(line), "%s%s%s%s%s", P(none, BLAST_NET_EGRESS),
                         f->seccomp_verified ? P(sc, BLAST_NET_EGRESS_SECCOMP) : "",
                         f->seccomp_verified && f->netns ? "; " : "", f->netns ? P(ns, BLAST_NET_EGRESS_NETNS) : "",
                         f->landlock_abi >= 4 ? P(ll, BLAST_NET_EGRESS_LANDLOCK) : "");
        else
                snprintf(line, sizeof(line), "%s%s%s%s%s",
                         isolated ? P(none, BLAST_NET_NONE) : P(none, BLAST_NET_NOT_ISOLATED),
                         f->seccomp_verified ? P(sc, BLAST_NET_SECCOMP) : "",
                         f->seccomp_verified && f->netns ? "; " : "", f->netns ? P(ns, BLAST_NET_NETNS) : "",
                         f->landlock_abi >= 4 ? P(ll, BLAST_NET_LANDLOCK) : "");
        free(b->network);
        if (!(b->network = strdup(line)))
                return -ENOMEM;
        char pidns[64];
        P(pidns, BLAST_PIDNS);
        if (f->seccomp_verified && f->pids_unbounded)
                P(line, BLAST_PROC_THREADS_UNBOUNDED);
        else if (f->seccomp_verified)
                P(line, BLAST_PROC_THREADS, (unsigned long long)b->limits.pids, f->pidns ? pidns : "");
        else
                P(line, BLAST_PROC_PROCESSES, (unsigned long long)b->limits.pids, f->pidns ? pidns : "");
        free(b->processes);
        return (b->processes = strdup(line)) ? 0 : -ENOMEM;
}

/* ---- the probe's evidence ---- */

static const char *outcome(const char *o, char *buf, size_t size)
{
        if (strcmp(o, "ok") == 0)
                return BRO_PROSE(buf, size, PROBE_SUCCEEDED);
        return o;
}

static const char *answer(const char *o, char *buf, size_t size)
{
        return o[0] ? o : BRO_PROSE(buf, size, PROBE_NO_ANSWER);
}

/* s into ev, cut at size - 1 bytes (on a character's boundary: every text here is UTF-8). */
static void say(char *ev, size_t size, const char *s)
{
        size_t n = strlen(s);
        if (n >= size) {
                n = size - 1;
                while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                        n--;
        }
        memcpy(ev, s, n);
        ev[n] = 0;
}

/* The evidence of one mechanism, by its name; in_force and available as the supervisor found. */
static void evidence(const struct proto_mechanism *m, const struct proto_probe_facts *f, char *ev, size_t size)
{
        char a[64], b[64], c[64], d[64], t[512], failed[PROTO_EV_MESSAGE_MAX + 64];
        BRO_PROSE(failed, sizeof(failed), PROBE_JAIL_FAILED, f->jail_failure ? f->jail_failure : "?");
        const char *name = m->name;
        ev[0] = 0;
        if (f->start_failure)
                BRO_PROSE(ev, size, PROBE_START_FAILED, f->start_failure);
        else if (strcmp(name, "interpreter") == 0)
                say(ev, size, !f->jail_ran ? failed : f->interp ? P(a, PROBE_INTERP_OK) : P(a, PROBE_INTERP_SILENT));
        else if (strcmp(name, "namespaces") == 0) {
                if (f->direct)
                        BRO_PROSE(ev, size, PROBE_NS_DIRECT, f->no_userns ? f->no_userns : "");
                else
                        say(ev, size, m->in_force ? P(t, PROBE_NS_OK) : f->jail_ran ? P(a, PROBE_NS_PARTIAL) : failed);
        } else if (strcmp(name, "seccomp") == 0) {
                if (m->in_force)
                        BRO_PROSE(ev, size, PROBE_SC_IN_FORCE, f->seccomp_refusal, f->seccomp_mech);
                else
                        say(ev, size,
                            !f->jail_ran        ? failed
                            : f->seccomp_loaded ? P(a, PROBE_SC_NOTHING)
                                                : P(a, PROBE_SC_NOT_LOADED));
        } else if (strcmp(name, "landlock") == 0) {
                if (m->in_force)
                        BRO_PROSE(ev, size, PROBE_LL_IN_FORCE, f->landlock_refusal[0] ? ": " : "", f->landlock_refusal,
                                  outcome(f->control_unlisted, a, sizeof(a)), f->landlock_mech);
                else
                        snprintf(ev, size, "%s%s",
                                 f->kernel_landlock_abi > 0 ? P(a, PROBE_LL_OFFERED) : P(a, PROBE_LL_NONE),
                                 f->jail_ran ? P(t, PROBE_LL_JAIL_READ, answer(f->jail_unlisted, b, sizeof(b))) : "");
        } else if (strcmp(name, "kernel audit") == 0)
                say(ev, size,
                    f->landlock_refusal[0] ? P(t, PROBE_AUDIT_EXPLAINED)
                    : f->audit_off         ? f->audit_off
                                           : P(t, PROBE_AUDIT_NO_RECORD));
        else if (strcmp(name, "cgroup") == 0)
                say(ev, size, m->in_force ? f->cgroup_mech : f->cgroup_description);
        else if (strcmp(name, "rlimits") == 0)
                say(ev, size, m->in_force ? f->rlimits_mech : P(a, PROBE_RL_NOT_SEEN));
        else if (strcmp(name, "network isolation") == 0)
                BRO_PROSE(ev, size, PROBE_NET, (unsigned long long)f->port, answer(f->jail_connect, a, sizeof(a)),
                          (unsigned long long)f->accepted_jail, outcome(f->control_connect, b, sizeof(b)),
                          (unsigned long long)f->accepted_control);
        else if (strcmp(name, "filesystem isolation") == 0)
                BRO_PROSE(ev, size, PROBE_FS, f->jail_target, answer(f->jail_write, a, sizeof(a)), f->canary,
                          answer(f->jail_read, b, sizeof(b)), outcome(f->control_write, c, sizeof(c)),
                          outcome(f->control_read, d, sizeof(d)));
}

static int render_probe(struct proto_probe_result *r, const struct proto_probe_facts *f)
{
        char ev[768]; /* as the supervisor cut it before the evidence moved here */
        for (size_t i = 0; i < r->mechanisms.n; i++) {
                struct proto_mechanism *m = (struct proto_mechanism *)r->mechanisms.items + i;
                evidence(m, f, ev, sizeof(ev));
                free(m->evidence);
                if (!(m->evidence = strdup(ev)))
                        return -ENOMEM;
        }
        return 0;
}

int bro_render(struct proto_msg *m)
{
        int r = 0;
        if (m->type == PROTO_RUN_RESULT && m->u.run_result.blast_facts) {
                struct proto_run_result *res = &m->u.run_result;
                r = render_blast(&res->blast_radius, res->blast_facts);
                proto_schema_free(&proto_blast_facts_schema, res->blast_facts);
                free(res->blast_facts);
                res->blast_facts = NULL;
        } else if (m->type == PROTO_PROBE_RESULT && m->u.probe_result.facts) {
                struct proto_probe_result *res = &m->u.probe_result;
                r = render_probe(res, res->facts);
                proto_schema_free(&proto_probe_facts_schema, res->facts);
                free(res->facts);
                res->facts = NULL;
        }
        return r;
}

/* ---- the artifacts' hashes ---- */

/* path (relative, as the supervisor listed it) opened below dfd with no link followed: by
 * openat2, or, where it is missing or filtered (ENOSYS: a kernel before 5.6, or a seccomp
 * filter that does not know it, as systemd's SystemCallFilter= under Debian 12 answers the
 * broker's unit), one component at a time with O_NOFOLLOW, refusing "", "." and "..". */
int bro_open_beneath(int dfd, const char *path)
{
        struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
        int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
        if (fd >= 0 || (errno != ENOSYS && errno != E2BIG))
                return fd;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -1;
        int cur = -1;
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                const char *next = save && *save ? save : NULL;
                if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0 || path[0] == '/') {
                        if (cur >= 0)
                                (void)close(cur);
                        errno = EXDEV;
                        return -1;
                }
                int nfd = openat(cur >= 0 ? cur : dfd, c, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : 0));
                int e = errno;
                if (cur >= 0)
                        (void)close(cur);
                if (nfd < 0) {
                        errno = e == ENOTDIR && next ? ELOOP : e; /* a link where a directory was */
                        return -1;
                }
                cur = nfd;
        }
        if (cur < 0)
                errno = ENOENT;
        return cur;
}

static int hash_file(int dfd, const char *path, char hex[SHA256_DIGEST_STRING_LENGTH], uint64_t *bytes)
{
        _cleanup_close_ int fd = bro_open_beneath(dfd, path);
        if (fd < 0)
                return -errno;
        SHA2_CTX h;
        SHA256Init(&h);
        uint8_t buf[65536];
        *bytes = 0;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                SHA256Update(&h, buf, (size_t)n);
                *bytes += (uint64_t)n;
        }
        SHA256End(&h, hex);
        return 0;
}

int bro_hash_artifacts(struct proto_run_result *res, char *failed, size_t size)
{
        failed[0] = 0;
        if (!res->artifacts.n || !res->artifacts_dir)
                return 0;
        _cleanup_close_ int dfd = open(res->artifacts_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < res->artifacts.n; i++) {
                struct proto_artifact *a = (struct proto_artifact *)res->artifacts.items + i;
                if (a->sha256 && a->sha256[0])
                        continue;
                char hex[SHA256_DIGEST_STRING_LENGTH];
                uint64_t bytes;
                int r = dfd < 0 ? -errno : hash_file(dfd, a->path, hex, &bytes);
                /* The copy is root's and done: its size is the one the supervisor counted. */
                if (r == 0 && bytes != a->bytes)
                        r = -ESTALE;
                if (r < 0) {
                        if (!failed[0])
                                snprintf(failed, size, "%s/%s: %s", res->artifacts_dir, a->path, strerror(-r));
                        continue;
                }
                free(a->sha256);
                if (!(a->sha256 = strdup(hex)))
                        return -ENOMEM;
        }
        return 0;
}

/* anvilctl verify's check 9 (docs/verify.md): no secret of either daemon reaches a jail.
 *
 * The secrets are read where they are: each daemon's environment (/proc/PID/environ: the
 * broker's pid from our own connection to it, SO_PEERCRED; the supervisor's from a
 * connection to the socket the broker's command line names, or the installed default) and
 * the model's key file (the broker's --model-key-file, or key_file in its config file). That
 * takes root, or the daemons' own uid; otherwise the check says what it could not read and is
 * not counted as passed. A jail then gathers what it can see (its environment, every
 * /proc/PID/environ and cmdline of its jail, its /proc/self, every file it can list and read,
 * and the key file's and config's paths tried by name), read past the Python layers as 2b
 * does, into one artifact, which is searched here for each secret. The secrets never go into
 * the jail, nor on stdout: a secret found is named by where it came from (the variable's name).
 *
 * Control: what the jail gathered must hold a canary it was given as an input, and its own
 * environment: a search that cannot find those would find no secret either. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/client.h"
#include "ctl/verify.h"
#include "lib/cleanup.h"
#include "lib/fd.h"

#define SECRETS_MAX 256

struct secret {
        char where[160]; /* "the broker's ANVIL_MODEL_KEY", never the value */
        char *value;
};

struct secrets {
        struct secret s[SECRETS_MAX];
        size_t n;
        unsigned skipped; /* variables not taken as secrets: see benign() */
        char not_read[1024];
};

/* Variables whose values are no secret and that a jail may well hold the same of (its own
 * PATH, LANG, HOME): left out, and counted. So are values under 12 bytes (a user name such as
 * "anvil" is in the host paths a jail's mount table shows) and absolute paths
 * (a jail's mount table names host paths: the blast radius says which). */
static bool benign(const char *name, const char *value)
{
        static const char *const names[] = { "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "SHELL", "USER", "LOGNAME",
                                             "PWD", "OLDPWD", "SHLVL", "_", "TZ", "MAIL", "HOSTNAME", "COLUMNS",
                                             "LINES", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "SYSTEMD_EXEC_PID" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return strncmp(name, "LC_", 3) == 0 || strlen(value) < 12 || value[0] == '/';
}

static void add(struct secrets *s, const char *where, const char *value)
{
        if (s->n < SECRETS_MAX && (s->s[s->n].value = strdup(value))) {
                snprintf(s->s[s->n].where, sizeof(s->s[s->n].where), "%s", where);
                s->n++;
        }
}

static void note(struct secrets *s, const char *fmt, const char *a, const char *b)
{
        size_t l = strlen(s->not_read);
        snprintf(s->not_read + l, sizeof(s->not_read) - l, "%s", l ? "; " : "");
        l = strlen(s->not_read);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(s->not_read + l, sizeof(s->not_read) - l, fmt, a, b);
#pragma GCC diagnostic pop
}

/* The pid at the other end of a connection to path, or 0. */
static pid_t peer_pid(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return 0;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct ucred uc;
        socklen_t len = sizeof(uc);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
                return 0;
        return uc.pid;
}

/* The NUL-separated file /proc/pid/what: its data and length, or NULL. */
static uint8_t *proc_file(pid_t pid, const char *what, size_t *len, struct anvil_err *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
        uint8_t *data = NULL;
        return fd_read_file(path, 1u << 20, &data, len, err) == 0 ? data : NULL;
}

/* An option's value in a NUL-separated command line: "--opt VALUE" or "--opt=VALUE". */
static const char *cmdline_opt(const uint8_t *cl, size_t len, const char *opt)
{
        size_t n = strlen(opt);
        for (size_t i = 0; cl && i < len; i += strlen((const char *)cl + i) + 1) {
                const char *a = (const char *)cl + i;
                if (strcmp(a, opt) == 0 && i + n + 1 < len)
                        return a + n + 1;
                if (strncmp(a, opt, n) == 0 && a[n] == '=')
                        return a + n + 1;
        }
        return NULL;
}

static void take_environ(struct secrets *s, const char *daemon, pid_t pid)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t len;
        _cleanup_free_ uint8_t *env = proc_file(pid, "environ", &len, &err);
        if (!env) {
                char p[32];
                snprintf(p, sizeof(p), "%d", (int)pid);
                note(s, "the %s's environment (pid %s): cannot be read by this uid", daemon, p);
                return;
        }
        for (size_t i = 0; i < len; i += strlen((char *)env + i) + 1) {
                char *kv = (char *)env + i, *eq = strchr(kv, '=');
                if (!eq)
                        continue;
                *eq = '\0';
                if (benign(kv, eq + 1)) {
                        s->skipped++;
                        continue;
                }
                char where[160];
                snprintf(where, sizeof(where), "the %s's %s", daemon, kv);
                add(s, where, eq + 1);
        }
}

/* key_file in the [model] section of an INI file, into out. */
static bool conf_key_file(const char *conf, char *out, size_t size)
{
        _cleanup_fclose_ FILE *f = fopen(conf, "re");
        char line[1024];
        bool model = false;
        while (f && fgets(line, sizeof(line), f)) {
                char *p = line + strspn(line, " \t");
                p[strcspn(p, "\r\n")] = '\0';
                if (*p == '[')
                        model = strncmp(p, "[model]", 7) == 0;
                else if (model && strncmp(p, "key_file", 8) == 0 && strchr(p, '=')) {
                        char *val = strchr(p, '=') + 1;
                        val += strspn(val, " \t");
                        val[strcspn(val, " \t;#")] = '\0';
                        snprintf(out, size, "%s", val);
                        return *out != '\0';
                }
        }
        return false;
}

/* Both daemons' secrets, and the paths a jail should try by name. */
static void gather(struct secrets *s, char *key_path, size_t kp_size, char *conf_path, size_t cp_size)
{
        pid_t bro = peer_pid(ctl_socket_path());
        if (!bro) {
                note(s, "the broker's pid: no SO_PEERCRED from %s%s", ctl_socket_path(), "");
                return;
        }
        take_environ(s, "broker", bro);
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t len = 0;
        _cleanup_free_ uint8_t *cl = proc_file(bro, "cmdline", &len, &err);
        const char *sup_sock = cmdline_opt(cl, len, "--supervisor");
        pid_t sup = peer_pid(sup_sock ? sup_sock : "/run/anvil/supervisor.sock");
        if (sup)
                take_environ(s, "supervisor", sup);
        else
                note(s, "the supervisor's environment: no connection to %s%s",
                     sup_sock ? sup_sock : "/run/anvil/supervisor.sock", " to learn its pid (root may connect)");
        const char *conf = cmdline_opt(cl, len, "--config");
        snprintf(conf_path, cp_size, "%s", conf ? conf : "/etc/anvil/anvil.conf");
        const char *key = cmdline_opt(cl, len, "--model-key-file");
        if (key)
                snprintf(key_path, kp_size, "%s", key);
        else if (!conf_key_file(conf_path, key_path, kp_size))
                key_path[0] = '\0';
        if (key_path[0]) {
                _cleanup_free_ uint8_t *k = NULL;
                size_t kl;
                if (fd_read_file(key_path, 64 * 1024, &k, &kl, &err) == 0) {
                        while (kl && (k[kl - 1] == '\n' || k[kl - 1] == '\r' || k[kl - 1] == ' '))
                                k[--kl] = '\0';
                        if (kl && !memchr(k, '\0', kl))
                                add(s, "the model key (its key file)", (char *)k);
                } else {
                        note(s, "the model's key file %s: %s", key_path, err.msg);
                }
        }
}

static const char gather_tool[] =
        "import os, pathlib\n"
        "out = open('./artifacts/seen.bin', 'wb')\n"
        "total = files = 0\n"
        "def take(label, data):\n"
        "    global total\n"
        "    if data and total < (48 << 20):\n"
        "        out.write(b'\\n== ' + label.encode() + b'\\n' + data[:8 << 20])\n"
        "        total += min(len(data), 8 << 20)\n"
        "def read(p):\n"
        "    global files\n"
        "    try:\n"
        "        d = lib(pathlib.Path(p).read_bytes)\n"
        "        files += 1\n"
        "        return d\n"
        "    except Exception:\n"
        "        return None\n"
        "take('os.environ', '\\n'.join('%s=%s' % kv for kv in os.environ.items()).encode())\n"
        "for pid in lib(os.listdir, '/proc'):\n"
        "    if pid.isdigit() or pid == 'self':\n"
        "        for f in ('environ', 'cmdline', 'status', 'mountinfo', 'cgroup'):\n"
        "            take('/proc/%s/%s' % (pid, f), read('/proc/%s/%s' % (pid, f)))\n"
        "for p in NAMED:\n"
        "    take(p, read(p))\n"
        "for top in ('/', '/etc', '/work', '/tmp', '/root', '/home', '/var', '/run', '/anvil'):\n"
        "    for d, dirs, names in os.walk(top):\n"
        "        dirs[:] = [x for x in dirs if os.path.join(d, x) not in ('/proc', '/sys', '/usr', '/dev')]\n"
        "        for n in names:\n"
        "            p = os.path.join(d, n)\n"
        "            if p != '/work/artifacts/seen.bin':\n"
        "                take(p, read(p))\n"
        "out.close()\n"
        "print('gathered', files, 'files', total, 'bytes')\n";

bool vfy_check_secrets(struct vfy *v)
{
        struct secrets *s = calloc(1, sizeof(*s));
        if (!s)
                return vfy_fail(v, "out of memory");
        char key_path[1024] = "", conf_path[1024] = "";
        gather(s, key_path, sizeof(key_path), conf_path, sizeof(conf_path));
        vfy_say("secrets: %zu values from the daemons' environment and key file (%u variables left out as no secret: "
                "PATH, HOME, LANG and the like, values under 12 bytes, absolute paths)",
                s->n, s->skipped);
        for (size_t i = 0; i < s->n; i++)
                vfy_say("  %s (%zu bytes)", s->s[i].where, strlen(s->s[i].value));
        if (s->not_read[0])
                vfy_say("could not check: %s", s->not_read);
        bool ok = false;
        char canary[64], src[8192], named[2200];
        snprintf(canary, sizeof(canary), "anvil-verify-canary-%d-%ld", (int)getpid(), (long)time(NULL));
        snprintf(named, sizeof(named), "NAMED = [p for p in (%s%s%s, %s%s%s, '/etc/shadow', '/etc/anvil/anvil.conf') if p]\n",
                 key_path[0] ? "'" : "", key_path[0] ? key_path : "None", key_path[0] ? "'" : "", "'", conf_path, "'");
        if (strpbrk(key_path, "'\\\n") || strpbrk(conf_path, "'\\\n"))
                snprintf(named, sizeof(named), "NAMED = ['/etc/shadow', '/etc/anvil/anvil.conf']\n");
        snprintf(src, sizeof(src), "%s%s%s", vfy_py_prelude, named, gather_tool);
        struct vfy_run rq = { .source = src, .wall_s = 20, .cpu_s = 10, .memory_mb = 512,
                              .input_name = "canary.txt", .input_data = canary, .python_layers_off = true };
        struct proto_run_result r;
        if (vfy_run(v, &rq, &r) < 0)
                goto out;
        char last[160] = "";
        sscanf(r.out_text ? r.out_text : "", "%159[^\n]", last);
        vfy_say("a jail (run %s, %s) gathered what it can see: %s", r.run_id, r.status, last[0] ? last : "(nothing said)");
        char path[4200];
        snprintf(path, sizeof(path), "%s/seen.bin", r.artifacts_dir ? r.artifacts_dir : "");
        _cleanup_free_ uint8_t *seen = NULL;
        size_t len = 0;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (!r.artifacts_dir || fd_read_file(path, 64u << 20, &seen, &len, &err) < 0) {
                snprintf(v->skipped, sizeof(v->skipped), "what the jail gathered (%.200s) cannot be read here: %.200s",
                         path, r.artifacts_dir ? err.msg : "no artifacts_dir");
                vfy_run_free(&r);
                goto out;
        }
        vfy_run_free(&r);
        /* The control: the search finds what the jail was given and what it has itself. */
        bool sees_canary = memmem(seen, len, canary, strlen(canary)) != NULL;
        bool sees_env = memmem(seen, len, "\n== os.environ\n", 15) != NULL;
        vfy_say("control: what it gathered (%zu bytes) holds its input's canary: %s; its own environment: %s", len,
                sees_canary ? "yes" : "NO", sees_env ? "yes" : "NO");
        if (!sees_canary || !sees_env) {
                vfy_fail(v, "control: the jail's gathering misses what it was given: the search proves nothing");
                goto out;
        }
        ok = true;
        for (size_t i = 0; i < s->n; i++)
                if (memmem(seen, len, s->s[i].value, strlen(s->s[i].value))) {
                        vfy_say("FOUND in the jail: %s", s->s[i].where);
                        ok = vfy_fail(v, "%s reached the jail", s->s[i].where);
                }
        if (ok)
                vfy_say("none of the %zu found in what the jail could see", s->n);
        if (ok && (s->not_read[0] || !s->n))
                snprintf(v->skipped, sizeof(v->skipped), "%.500s", s->n ? s->not_read : "no secret could be read here (run as root)");
out:
        for (size_t i = 0; i < s->n; i++) {
                explicit_bzero(s->s[i].value, strlen(s->s[i].value));
                free(s->s[i].value);
        }
        free(s);
        return ok;
}

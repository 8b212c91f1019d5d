/* The RunResult (DESIGN §4): every figure is an observation of this run, never a configured
 * intention: peaks from the sampler, the cgroup and rusage, times from the supervisor's
 * clock, what is in force from jail/verify.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/utf8.h"
#include "supervisor/run.h"
#include "proto/names.h"

static const char *signal_name(int sig)
{
        static char buf[16];
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
                snprintf(buf, sizeof(buf), "SIG%s", abbrev);
        else
                snprintf(buf, sizeof(buf), "signal %d", sig);
        return buf;
}

/* Output as UTF-8 (invalid bytes become U+FFFD) and never longer than the cap. */
static char *capture_text(const struct capture *c, bool *truncated)
{
        size_t n;
        char *s = utf8_sanitize((const uint8_t *)(c->buf ? c->buf : ""), c->len, &n);
        *truncated = c->total > c->len;
        if (s && n > c->cap) {
                size_t cut = (size_t)c->cap;
                while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
                        cut--;
                s[cut] = 0;
                *truncated = true;
        }
        return s ? s : strdup("");
}

static bool host_has(const char *path)
{
        return access(path, F_OK) == 0;
}

static void push_read(void *ctx, const char *line)
{
        (void)proto_strv_push(&((struct proto_blast_radius *)ctx)->read, line);
}

/* What the tool could read, write and reach, derived from this run: its inputs and limits,
 * the binds the jail had, and what was verified for it (namespaces, seccomp). The jail's paths
 * are listed here; the rest is sent as facts, which the broker writes out (broker/render.c):
 * no prose in the root daemon. */
static void set_blast_radius(struct sup_run *run, struct proto_blast_radius *b, struct proto_blast_facts *f)
{
        char line[PATH_MAX + 256];
        bool direct = run->srv->cfg.direct;
        /* Where Landlock is in force, what it allows of them (jail/landlock.c). */
        bool ll = run->ka.abi > 0 && run->layers_in_force; /* applied (C10) and seen enforced (R6) */
        /* The jail's fixed paths, from its table (policy/jail_paths.h); direct: the host's own,
         * as far as Landlock lets the tool reach them. */
        pol_jail_blast_lines(direct, ll, host_has, push_read, b);
        /* The inputs, as they are in the run's directory. */
        snprintf(line, sizeof(line), "%s/inputs", run->dir);
        _cleanup_closedir_ DIR *d = opendir(line);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.') {
                        struct stat st;
                        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
                                f->inputs++;
                                f->inputs_bytes += (uint64_t)st.st_size;
                        }
                }
        f->inputs_bytes += run->bound_bytes;
        f->direct = direct;
        f->workdir = strdup(direct ? run->jail_dir : JAIL_WORKDIR);
        snprintf(line, sizeof(line), "%s%s", direct ? run->jail_dir : JAIL_TMP, direct ? "/tmp" : "");
        f->tmp = strdup(line);
        f->landlock_abi = ll ? (uint64_t)run->ka.abi : 0;
        f->seccomp_verified = run->seccomp_verified;
        f->netns = proto_mechanisms_include(&run->mechanisms, "netns");
        f->pidns = proto_mechanisms_include(&run->mechanisms, "pidns");
        f->egress = run->egress; /* the broker names the hosts (its run at anvil-egress) */
        /* The kernel's limits as read back before the tool started (jail_cgroup_verify): the
         * pids cgroup's when there is one, else RLIMIT_NPROC, which verify.c read back equal to
         * the run's limit; the CPU quota only when one was written and read back. */
        const struct jail_cgroup *cg = &run->jp.cg;
        b->limits = run->lim;
        if (cg->verified && cg->applied.pids_max)
                b->limits.pids = cg->applied.pids_max;
        if (cg->verified && cg->applied.cpu_quota_us && cg->applied.cpu_period_us) {
                b->limits.cpu_quota_pct.set = true;
                b->limits.cpu_quota_pct.v = (int64_t)(cg->applied.cpu_quota_us * 100 / cg->applied.cpu_period_us);
        }
        f->pids_unbounded = run->rl.nproc == 0 && !jail_cgroup_has(&run->jp.cg, JAIL_CG_PIDS);
        if (f->pids_unbounded)
                b->limits.pids = 0; /* as applied: none (the processes line says why) */
        /* Rendered by the broker; until then, the two lines are empty. */
        b->network = strdup("");
        b->processes = strdup("");
}

static void opt(struct proto_opt_int *o, bool has, uint64_t v)
{
        o->set = has;
        o->v = has ? (int64_t)v : 0;
}

/* What the kernel counted in the run's cgroup, each figure only if this kernel offers it. */
static struct proto_cgroup_figures *cgroup_figures(const struct sup_run *run, const struct jail_cgroup_stats *st)
{
        struct proto_cgroup_figures *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        f->version = run->jp.cg.mode == JAIL_CG_V2 ? "v2" : "v1";
        opt(&f->memory_peak_bytes, st->has_peak, st->peak_bytes);
        opt(&f->oom_kills, st->has_oom, st->oom_kills);
        opt(&f->pids_peak, st->has_pids_peak, st->pids_peak);
        opt(&f->forks_refused, st->has_forks_refused, st->forks_refused);
        opt(&f->cpu_throttled_ms, st->has_throttled, st->throttled_us / 1000);
        return f;
}

/* The runner says so with a "blocked" event: the pre-check refused the tool, or a refusal it
 * did not catch ended it (an in-jail claim, like every runner event: the refusals
 * themselves are on the record beside it). */
static bool ended_by_refusal(const struct sup_run *run)
{
        const struct proto_event *e = run->events.items;
        for (size_t i = 0; i < run->events.n; i++)
                if (proto_event_is(&e[i], PROTO_LAYER_RUNNER, PROTO_KIND_BLOCKED))
                        return true;
        return false;
}

void sup_result_build(struct sup_run *run, struct proto_run_result *res)
{
        char msg[160];
        memset(res, 0, sizeof(*res));
        res->request_id = run->request_id;
        res->run_id = run->id;
        res->wall_ms = run->t0 ? run->t_end - run->t0 : 0; /* 0: no tool was started (killed before GO) */
        /* Peaks and times as observed: the cgroup's when there is one. */
        struct jail_cgroup_stats st = { 0 };
        bool have_cg = jail_cgroup_read(&run->jp.cg, &st) == 0;
        res->cpu_ms = (have_cg && st.has_cpu ? st.cpu_us : run->rusage_cpu_us) / 1000;
        /* The kernel's OOM killer acted at the cgroup's hard limit (the sampler's cap is below
         * it): the tool outgrew a sampling period, and the peak is the kernel's. */
        if (have_cg && st.has_oom && st.oom_kills > 0) {
                double kpeak = st.has_peak ? (double)st.peak_bytes / MB : 0;
                if (kpeak > run->peak_mb)
                        run->peak_mb = kpeak;
                sup_run_kill_for(run, POL_KILLED_MEMORY, "cgroup", run->peak_mb);
        }
        /* The kernel's own high-water mark of the runner's resident set (rusage) catches a
         * tool shorter than one sampling period; the larger of the two observations is kept. */
        double ru_mb = (double)run->rusage_maxrss_kb / 1024.0;
        double peak = run->peak_mb > ru_mb ? run->peak_mb : ru_mb;
        res->peak_rss_mb = (double)(uint64_t)(peak * 10 + 0.5) / 10;
        if (sup_run_reached(run, SUP_RUN_EXITED) && WIFSIGNALED(run->wait_status)) {
                int sig = WTERMSIG(run->wait_status);
                if (sig == SIGXCPU || (sig == SIGKILL && res->cpu_ms >= run->lim.cpu_s * 1000))
                        sup_run_kill_for(run, POL_KILLED_CPU, "rlimit", 0);
        }
        if (sup_run_reached(run, SUP_RUN_EXITED) && WIFEXITED(run->wait_status)) {
                res->exit_code.set = true;
                res->exit_code.v = WEXITSTATUS(run->wait_status);
        } else if (sup_run_reached(run, SUP_RUN_EXITED) && WIFSIGNALED(run->wait_status))
                res->signal = strdup(signal_name(WTERMSIG(run->wait_status)));
        if (run->verdict == SUP_RUN_KILLED) {
                if (run->killed == POL_KILLED_MEMORY)
                        POL_REASON(msg, sizeof(msg), KILLED_MEMORY,
                                   run->kill_peak_mb > run->peak_mb ? run->kill_peak_mb : run->peak_mb,
                                   (unsigned long long)run->lim.memory_mb);
                else
                        snprintf(msg, sizeof(msg), "%s", pol_reason_format(run->killed)); /* no argument */
                res->killed = strdup(msg);
                res->status = "killed";
                sup_run_event(run, run->killed_layer, "killed", NULL, NULL, msg);
        } else if (res->exit_code.set && res->exit_code.v == 0)
                res->status = "ok";
        else if (res->exit_code.set && ended_by_refusal(run))
                res->status = "blocked";
        else
                res->status = "error";
        /* What the tool left for an agent's next step and its final answer (DESIGN §8): the
         * runner's last word on each (the tool's word, as every event after "started"). A
         * killed tool never reached its end: whatever it sent before is not its state. */
        if (run->verdict != SUP_RUN_KILLED) {
                res->variables = run->variables;
                res->variables_dropped = run->variables_dropped;
                res->final_answer = run->final_answer;
        }
        if (have_cg) {
                res->cgroup = cgroup_figures(run, &st);
                if (st.has_forks_refused && st.forks_refused > 0)
                        sup_run_event(run, "cgroup", "refused", "fork", NULL,
                                      POL_REASON(msg, sizeof(msg), FORKS_REFUSED, (unsigned long long)st.forks_refused,
                                                 (unsigned long long)run->jp.cg.applied.pids_max));
        }
        res->out_text = capture_text(&run->out, &res->stdout_truncated);
        res->err_text = capture_text(&run->err, &res->stderr_truncated);
        res->stdout_bytes = run->out.total;
        res->stderr_bytes = run->err.total;
        if (res->stdout_truncated)
                sup_run_event(run, "supervisor", "truncated", "stdout", NULL,
                              POL_REASON(msg, sizeof(msg), OUTPUT_TRUNCATED, "stdout",
                                         (unsigned long long)strlen(res->out_text),
                                         (unsigned long long)run->out.total));
        if (res->stderr_truncated)
                sup_run_event(run, "supervisor", "truncated", "stderr", NULL,
                              POL_REASON(msg, sizeof(msg), OUTPUT_TRUNCATED, "stderr",
                                         (unsigned long long)strlen(res->err_text),
                                         (unsigned long long)run->err.total));
        for (size_t i = 0; i < run->notes.n; i++) {
                struct proto_event *e = (struct proto_event *)run->notes.items + i;
                sup_run_event(run, e->layer, e->kind, e->op, NULL, e->message);
        }
        /* The jail's /tmp, as pid 1 found it when the runner ended (it goes with the jail). */
        if (run->tmp_full & JAIL_TMP_FULL_BYTES)
                sup_run_event(run, "supervisor", "tmp_full", "/tmp", NULL,
                              POL_REASON(msg, sizeof(msg), TMP_CAP_REACHED, (unsigned long long)run->lim.files_bytes));
        if (run->tmp_full & JAIL_TMP_FULL_ENTRIES)
                sup_run_event(run, "supervisor", "tmp_entries_full", "/tmp", NULL,
                              POL_REASON(msg, sizeof(msg), TMP_ENTRIES_REACHED, (unsigned)JAIL_TMP_ENTRIES));
        if (run->events_dropped) {
                struct proto_event *e = proto_array_push(&run->events, sizeof(*e));
                if (e) {
                        e->t_ms = res->wall_ms;
                        e->layer = strdup("supervisor");
                        e->kind = strdup("events_dropped");
                        e->message = strdup(
                                POL_REASON(msg, sizeof(msg), EVENTS_DROPPED, (unsigned long long)run->events_dropped));
                }
        }
        res->events = run->events;
        /* What was verified for this run: namespaces by verify.c before GO, or the run was
         * refused; seccomp from outside before the runner read the request's variables and
         * source (S6a); Landlock applied by the child (it said so, C10) and seen enforced by
         * the runner, which otherwise refuses, as its first event says (R6). All of them are
         * in force before the pre-check (R6b): a tool it refused has the full tier. */
        res->isolation.tier =
                (char *)sup_tier(!run->srv->cfg.direct, run->seccomp_verified, run->ka.abi > 0 && run->layers_in_force);
        res->isolation.mechanisms = run->mechanisms;
        char dir[PATH_MAX + 16];
        snprintf(dir, sizeof(dir), "%s/artifacts", run->dir);
        res->artifacts_dir = strdup(dir);
        res->artifacts = run->artifacts;
        res->capabilities.requested = run->caps_requested;
        res->capabilities.granted = run->caps_granted;
        res->capabilities.denied = run->caps_denied;
        res->blast_facts = calloc(1, sizeof(*res->blast_facts));
        if (res->blast_facts)
                set_blast_radius(run, &res->blast_radius, res->blast_facts);
}

void sup_result_free_own(struct proto_run_result *res)
{
        /* Only what build_result allocated; the rest belongs to the run. */
        free(res->signal);
        free(res->killed);
        free(res->out_text);
        free(res->err_text);
        free(res->artifacts_dir);
        free(res->cgroup); /* its version is a literal */
        struct proto_blast_radius *b = &res->blast_radius;
        proto_strv_free(&b->read);
        proto_strv_free(&b->write);
        free(b->network);
        free(b->processes);
        if (res->blast_facts) {
                free(res->blast_facts->workdir);
                free(res->blast_facts->tmp);
                free(res->blast_facts);
        }
}

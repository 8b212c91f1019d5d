/* Stored results: DIR/results/<run_id>.json, the RunResult JSON of DESIGN §4 (the same
 * rendering as `anvilctl run --json`), pretty-printed, mode 0640; beside it
 * DIR/results/<run_id>.meta, whose it is (the client's uid, the tool's name, its status and
 * artifacts: what serve.c reads to answer listings, shows and artifact copies), written first
 * so that no result is ever there without its owner. A task's runs that end ok with artifacts
 * have them copied into DIR/tasks/<task_id>.runs/<run_id>/ by the same job, before the task
 * hears of the result; the task's end keeps its deliverable's copy as
 * DIR/tasks/<task_id>.artifacts/ (keep_deliverable), which the supervisor's --keep-runs
 * cannot remove.
 *
 * Each is rendered and written on libuv's thread pool, so a large result never stalls the
 * loop: to a temporary file in the same directory, fsync'd, then renamed over the final
 * name, so a reader sees the whole file or none; a write that fails (a full disk) removes
 * its temporary file, and the result still goes to its client, saying it was not stored
 * (not_stored). The worker touches nothing but its job.
 *
 * Retention: the newest --keep-results results and --keep-tasks tasks are kept. After each
 * stored result (or task), a prune is queued on the thread pool, after the result has gone
 * to its client: it lists the directory, sorts the names (run ids and task ids begin with
 * their UTC time to the microsecond, so names sort by age) and removes the oldest beyond the
 * count, each with its .meta (and a task's trace, source and artifacts' copies). One prune of
 * each kind at a time; one asked for meanwhile runs when it is done. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/render.h"
#include "lib/beneath.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "policy/reasons.h"
#include "proto/json.h"

#define TMP_SUFFIX ".tmp"

struct store_job {
        uv_work_t work;
        struct bro_relay *relay;
        struct proto_msg msg; /* the run_result */
        int dirfd, tasks_dirfd;
        char name[PROTO_ID_MAX + 8];
        char tmp[PROTO_ID_MAX + 64];
        char meta_name[PROTO_ID_MAX + 8];
        char meta_tmp[PROTO_ID_MAX + 64];
        uid_t uid;                       /* the relay's: whose run */
        char task_id[PROTO_ID_MAX + 1];  /* a task's run: its id */
        char tool[PROTO_NAME_MAX + 1];
        int rc;
        struct anvil_err err;
        char hash_failed[PROTO_PATH_MAX + 128]; /* the first artifact not hashed, and why */
};

bool bro_run_id_valid(const char *run_id)
{
        if (!run_id)
                return false;
        size_t n = 0;
        for (const char *p = run_id; *p; p++, n++) {
                char ch = *p;
                bool ok = (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                          ch == '_' || ch == '-';
                if (!ok || n >= 64)
                        return false;
        }
        return n >= 1;
}

static int make_dir(const char *path, struct anvil_err *err)
{
        if (mkdir(path, 0750) == 0) {
                /* Ours: exactly 0750 whatever the umask. An existing one keeps its mode (it may
                 * be systemd's StateDirectory=). */
                if (chmod(path, 0750) < 0)
                        return anvil_err_sys(err, errno, "Failed to chmod %s", path);
        } else if (errno != EEXIST) {
                return anvil_err_sys(err, errno, "Failed to create %s", path);
        }
        struct stat st;
        if (stat(path, &st) < 0)
                return anvil_err_sys(err, errno, "Failed to stat %s", path);
        if (!S_ISDIR(st.st_mode))
                return anvil_err_set(err, ENOTDIR, "%s exists and is not a directory", path);
        return 0;
}

/* Temporary files left by a broker that died mid-write. */
static void sweep_tmp(int dirfd, const char *dir)
{
        _cleanup_closedir_ DIR *d = fd_opendir_at(dirfd);
        if (!d)
                return;
        struct dirent *de;
        size_t sl = strlen(TMP_SUFFIX);
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (de->d_name[0] != '.' || n <= sl + 1 || strcmp(de->d_name + n - sl, TMP_SUFFIX) != 0)
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) < 0)
                        log_warn("Failed to remove %s/%s: %s, ignoring", dir, de->d_name, strerror(errno));
        }
}

/* DIR/sub: made if missing, opened, writable by this user (fail now, not at the first
 * write), swept of temporary files left by a broker that died mid-write. */
static int open_state_sub(const char *sd, const char *sub, char *path, size_t size, int *dirfd,
                          struct anvil_err *err)
{
        if (snprintf(path, size, "%s/%s", sd, sub) >= (int)size)
                return anvil_err_set(err, ENAMETOOLONG, "State directory path is too long: %s", sd);
        int r = make_dir(path, err);
        if (r < 0)
                return r;
        *dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*dirfd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", path);
        if (faccessat(*dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
                return anvil_err_sys(err, errno, "%s is not writable", path);
        sweep_tmp(*dirfd, path);
        return 0;
}

int bro_store_init(struct bro_server *srv, struct anvil_err *err)
{
        const char *sd = srv->cfg.state_dir;
        int r = make_dir(sd, err);
        if (r < 0)
                return r;
        /* DIR/results: RunResults; the agent's DIR/tasks (TaskResults, deliverables' sources)
         * and DIR/traces (JSONL). */
        char tasks[PATH_MAX], traces[PATH_MAX];
        if ((r = open_state_sub(sd, "results", srv->results_dir, sizeof(srv->results_dir), &srv->results_dirfd, err)) < 0 ||
            (r = open_state_sub(sd, "tasks", tasks, sizeof(tasks), &srv->tasks_dirfd, err)) < 0 ||
            (r = open_state_sub(sd, "traces", traces, sizeof(traces), &srv->traces_dirfd, err)) < 0)
                return r;
        return 0;
}

/* text to dirfd/name, whole or not at all: a temporary file, fsync'd, renamed over name. */
static int write_text(int dirfd, const char *name, const char *tmp, const char *text, struct anvil_err *err)
{
        _cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", tmp);
        int r;
        if ((r = fd_write_all(fd, text, strlen(text), err)) < 0 || (r = fd_write_all(fd, "\n", 1, err)) < 0)
                goto fail;
        if (fchmod(fd, 0640) < 0) { /* whatever the umask */
                r = anvil_err_sys(err, errno, "Failed to chmod %s", tmp);
                goto fail;
        }
        if (fsync(fd) < 0) {
                r = anvil_err_sys(err, errno, "Failed to write %s", tmp);
                goto fail;
        }
        if (renameat(dirfd, tmp, dirfd, name) < 0) {
                r = anvil_err_sys(err, errno, "Failed to rename %s to %s", tmp, name);
                goto fail;
        }
        return 0;
fail:
        (void)unlinkat(dirfd, tmp, 0);
        return r;
}

static int write_result(struct store_job *job)
{
        struct anvil_err *err = &job->err;
        json_t *j = proto_to_json(proto_schemas[PROTO_RUN_RESULT], &job->msg.u.run_result);
        if (!j)
                return anvil_err_set(err, ENOMEM, "Failed to render the result as JSON");
        _cleanup_free_ char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(j);
        if (!text)
                return anvil_err_set(err, ENOMEM, "Failed to render the result as JSON");
        return write_text(job->dirfd, job->name, job->tmp, text, err);
}

/* ---- the record beside each result: whose it is (DIR/results/<id>.meta, tasks/<id>.meta) ---- */

void bro_store_time(char *buf, size_t size)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* {"uid", "tool", "status", "time", "task_id", "artifacts_dir", "artifacts"}: what a listing,
 * a show and an artifact's copy read instead of the result, which may be megabytes. */
static char *meta_text(uid_t uid, const char *tool, const char *task_id, const char *status, const char *dir,
                       const struct proto_array *artifacts, const char *deliverable_run)
{
        char when[32];
        bro_store_time(when, sizeof(when));
        json_t *arts = json_array();
        const struct proto_artifact *a = artifacts ? artifacts->items : NULL;
        for (size_t i = 0; arts && artifacts && i < artifacts->n; i++)
                json_array_append_new(arts, json_pack("{s:s, s:I, s:s}", "path", a[i].path, "bytes",
                                                      (json_int_t)a[i].bytes, "sha256", a[i].sha256 ? a[i].sha256 : ""));
        json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:o?}", "uid", (json_int_t)uid, "tool",
                              tool ? tool : "", "status", status ? status : "", "time", when, "task_id",
                              task_id && *task_id ? task_id : NULL, "artifacts_dir", dir, "deliverable_run",
                              deliverable_run, "artifacts", arts);
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        return text;
}

char *bro_task_meta_text(uid_t uid, const char *tool, const char *status, const char *deliverable_run,
                         const struct proto_array *artifacts)
{
        return meta_text(uid, tool, NULL, status, NULL, artifacts, deliverable_run);
}

/* ---- a task's deliverable, kept by the broker (DESIGN §6, Retention) ----
 * Each run of a task's that ends ok with artifacts has them copied, as its result is stored
 * and before the task learns of it, to tasks/<task_id>.runs/<run_id>/; at the task's end its
 * deliverable's copy becomes tasks/<task_id>.artifacts/ and the others go. The supervisor's
 * retention may then remove the run's directory: the task's artifacts are the broker's. */

/* dst/path made of regular files and directories only: no link followed on either side. */
static int copy_one(int sfd, int dfd, const struct proto_artifact *a)
{
        _cleanup_close_ int in = bro_open_beneath(sfd, a->path);
        struct stat st;
        if (in < 0 || fstat(in, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != a->bytes)
                return -ESTALE;
        _cleanup_close_ int out = fd_create_beneath(dfd, a->path, 0750, 0640);
        if (out < 0)
                return out;
        uint8_t buf[65536];
        uint64_t left = a->bytes;
        struct anvil_err err = ANVIL_ERR_INIT;
        while (left > 0) {
                ssize_t n = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -ESTALE;
                if (fd_write_all(out, buf, (size_t)n, &err) < 0)
                        return -err.code;
                left -= (uint64_t)n;
        }
        return 0;
}

static int copy_task_run_to(struct store_job *job, const struct proto_run_result *res)
{
        char runs[PROTO_ID_MAX + 8];
        snprintf(runs, sizeof(runs), "%s.runs", job->task_id);
        if (mkdirat(job->tasks_dirfd, runs, 0750) < 0 && errno != EEXIST)
                return -errno;
        _cleanup_close_ int rfd = openat(job->tasks_dirfd, runs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd < 0 || mkdirat(rfd, res->run_id, 0750) < 0)
                return -errno;
        _cleanup_close_ int dfd = openat(rfd, res->run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        _cleanup_close_ int sfd = open(res->artifacts_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0)
                return -errno;
        const struct proto_artifact *a = res->artifacts.items;
        for (size_t i = 0; i < res->artifacts.n; i++) {
                int r = copy_one(sfd, dfd, &a[i]);
                if (r < 0)
                        log_warn("task %s: run %s: %s not kept: %s", job->task_id, res->run_id, a[i].path, strerror(-r));
        }
        return 0;
}

static void copy_task_run(struct store_job *job)
{
        const struct proto_run_result *res = &job->msg.u.run_result;
        if (!job->task_id[0] || !res->status || strcmp(res->status, "ok") != 0 || !res->artifacts.n ||
            !res->artifacts_dir)
                return;
        int r = copy_task_run_to(job, res);
        if (r < 0)
                log_warn("task %s: the artifacts of run %s are not kept: %s", job->task_id, res->run_id, strerror(-r));
}

/* At the task's end (on the thread pool, before its files): the deliverable's copy kept, the
 * rest removed. */
static void keep_deliverable(int tasks_dirfd, const char *task_id, const char *run_id)
{
        char runs[PROTO_ID_MAX + 8], kept[PROTO_ID_MAX + 16];
        snprintf(runs, sizeof(runs), "%s.runs", task_id);
        snprintf(kept, sizeof(kept), "%s.artifacts", task_id);
        _cleanup_close_ int rfd = openat(tasks_dirfd, runs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd >= 0 && run_id && renameat(rfd, run_id, tasks_dirfd, kept) < 0)
                log_warn("task %s: its deliverable's artifacts are not kept: %s", task_id, strerror(errno));
        struct anvil_err err = ANVIL_ERR_INIT;
        if (fd_rm_tree_at(tasks_dirfd, runs, 16, &err) < 0)
                log_warn("task %s: %s, ignoring", task_id, err.msg);
}

static void store_work(uv_work_t *w)
{
        struct store_job *job = w->data;
        struct proto_run_result *res = &job->msg.u.run_result;
        /* The artifacts' hashes first, off the loop: they are stored and sent with the result. */
        if (bro_hash_artifacts(res, job->hash_failed, sizeof(job->hash_failed)) < 0) {
                job->rc = anvil_err_set(&job->err, ENOMEM, "Out of memory hashing the artifacts");
                return;
        }
        /* Whose it is, first: a result is never there without its owner. */
        _cleanup_free_ char *meta =
                meta_text(job->uid, job->tool, job->task_id, res->status, res->artifacts_dir, &res->artifacts, NULL);
        if (!meta) {
                job->rc = anvil_err_set(&job->err, ENOMEM, "Out of memory");
                return;
        }
        if ((job->rc = write_text(job->dirfd, job->meta_name, job->meta_tmp, meta, &job->err)) < 0)
                return;
        if ((job->rc = write_result(job)) < 0) {
                (void)unlinkat(job->dirfd, job->meta_name, 0);
                return;
        }
        copy_task_run(job);
}

void bro_not_stored(char **slot, const char *dir, const char *name, int code)
{
        char file[PROTO_ID_MAX + 32], msg[512];
        snprintf(file, sizeof(file), "%s/%s", dir, name);
        POL_REASON(msg, sizeof(msg), NOT_STORED, file, strerror(code));
        free(*slot);
        *slot = strdup(msg);
}

static void store_done(uv_work_t *w, int status)
{
        struct store_job *job = w->data;
        struct bro_server *srv = job->relay->srv;
        (void)status; /* jobs are never cancelled */
        bool stored = job->rc == 0;
        if (job->hash_failed[0])
                log_error("request #%" PRIu64 ": run %s: an artifact is not hashed: %s", job->relay->seq,
                          job->msg.u.run_result.run_id, job->hash_failed);
        if (!stored) {
                log_error("request #%" PRIu64 ": run %s not stored: %s", job->relay->seq,
                          job->msg.u.run_result.run_id, job->err.msg);
                bro_not_stored(&job->msg.u.run_result.not_stored, "results", job->name, -job->rc);
        }
        bro_relay_stored(job->relay, &job->msg);
        free(job);
        if (stored) /* after the result has gone to its client */
                bro_store_prune(srv, BRO_PRUNE_RESULTS);
}

int bro_store_result(struct bro_relay *r, struct proto_msg *m, struct anvil_err *err)
{
        struct bro_server *srv = r->srv;
        const char *run_id = m->u.run_result.run_id;
        if (!bro_run_id_valid(run_id))
                return anvil_err_set(err, EINVAL, "run_id is not of [0-9A-Za-z_-]{1,64}");
        struct store_job *job = calloc(1, sizeof(*job));
        if (!job)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        job->relay = r;
        job->dirfd = srv->results_dirfd;
        job->tasks_dirfd = srv->tasks_dirfd;
        job->uid = r->uid;
        snprintf(job->task_id, sizeof(job->task_id), "%s", r->task_id);
        snprintf(job->tool, sizeof(job->tool), "%s", r->tool);
        snprintf(job->name, sizeof(job->name), "%s.json", run_id);
        snprintf(job->tmp, sizeof(job->tmp), ".%s.%d.%" PRIu64 TMP_SUFFIX, run_id, (int)getpid(), ++srv->next_tmp);
        snprintf(job->meta_name, sizeof(job->meta_name), "%s" BRO_META_SUFFIX, run_id);
        snprintf(job->meta_tmp, sizeof(job->meta_tmp), ".%s.meta.%d.%" PRIu64 TMP_SUFFIX, run_id, (int)getpid(),
                 ++srv->next_tmp);
        job->msg = *m;
        job->work.data = job;
        int e = uv_queue_work(srv->loop, &job->work, store_work, store_done);
        if (e < 0) {
                free(job); /* *m stays the caller's */
                return anvil_err_set(err, -e, "Failed to queue the write: %s", uv_strerror(e));
        }
        r->store_pending = true;
        return 0;
}

/* ---- files of a task's (agent.c) ---- */

struct files_job {
        uv_work_t work;
        struct bro_server *srv;
        int dirfd;
        struct bro_save_file files[BRO_SAVE_FILES_MAX];
        char tmp[BRO_SAVE_FILES_MAX][PROTO_ID_MAX + 96];
        size_t n;
        size_t failed; /* the file that failed, when rc < 0 */
        bro_saved_cb cb;
        void *data;
        int rc;
        struct anvil_err err;
        char task_id[PROTO_ID_MAX + 1], deliverable[PROTO_ID_MAX + 1]; /* keep_deliverable's */
};

/* All or none: a file that fails takes those written before it in the same job away (a
 * task's tool.py without its TaskResult is half a result). */
static void files_work(uv_work_t *w)
{
        struct files_job *job = w->data;
        size_t i;
        if (job->task_id[0])
                keep_deliverable(job->dirfd, job->task_id, job->deliverable[0] ? job->deliverable : NULL);
        for (i = 0; i < job->n && job->rc == 0; i++)
                job->rc = write_text(job->dirfd, job->files[i].name, job->tmp[i], job->files[i].text, &job->err);
        if (job->rc == 0)
                return;
        job->failed = i - 1;
        for (size_t k = 0; k + 1 < i; k++)
                (void)unlinkat(job->dirfd, job->files[k].name, 0);
        if (job->task_id[0]) { /* the deliverable's copy goes with the result it belonged to */
                char kept[PROTO_ID_MAX + 16];
                struct anvil_err err = ANVIL_ERR_INIT;
                snprintf(kept, sizeof(kept), "%s.artifacts", job->task_id);
                (void)fd_rm_tree_at(job->dirfd, kept, 16, &err);
        }
}

static void files_done(uv_work_t *w, int status)
{
        struct files_job *job = w->data;
        (void)status;
        job->cb(job->data, job->rc, job->rc < 0 ? job->files[job->failed].name : NULL, job->err.msg);
        bool prune = job->rc == 0 && job->dirfd == job->srv->tasks_dirfd;
        struct bro_server *srv = job->srv;
        for (size_t i = 0; i < job->n; i++) {
                free(job->files[i].name);
                free(job->files[i].text);
        }
        free(job);
        if (prune)
                bro_store_prune(srv, BRO_PRUNE_TASKS);
}

int bro_store_files(struct bro_server *srv, int dirfd, const struct bro_save_file *files, size_t n,
                    const char *task_id, const char *deliverable_run, bro_saved_cb cb, void *data,
                    struct anvil_err *err)
{
        if (n > BRO_SAVE_FILES_MAX)
                return anvil_err_set(err, E2BIG, "Too many files to save at once");
        struct files_job *job = calloc(1, sizeof(*job));
        if (!job)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        job->srv = srv;
        job->dirfd = dirfd;
        job->cb = cb;
        job->data = data;
        snprintf(job->task_id, sizeof(job->task_id), "%s", task_id ? task_id : "");
        snprintf(job->deliverable, sizeof(job->deliverable), "%s", deliverable_run ? deliverable_run : "");
        for (size_t i = 0; i < n; i++) {
                job->files[i].name = strdup(files[i].name);
                job->files[i].text = files[i].text;
                snprintf(job->tmp[i], sizeof(job->tmp[i]), ".%s.%d.%" PRIu64 TMP_SUFFIX, files[i].name, (int)getpid(),
                         ++srv->next_tmp);
        }
        job->n = n;
        job->work.data = job;
        int e = -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!job->files[i].name)
                        goto fail;
        if ((e = uv_queue_work(srv->loop, &job->work, files_work, files_done)) == 0)
                return 0;
fail:
        for (size_t i = 0; i < n; i++)
                free(job->files[i].name);
        free(job); /* the texts stay the caller's */
        return anvil_err_set(err, -e, "Failed to queue the write: %s", uv_strerror(e));
}

int bro_store_write_now(struct bro_server *srv, int dirfd, const char *name, const char *text, struct anvil_err *err)
{
        char tmp[PROTO_ID_MAX + 96];
        snprintf(tmp, sizeof(tmp), ".%s.%d.%" PRIu64 TMP_SUFFIX, name, (int)getpid(), ++srv->next_tmp);
        return write_text(dirfd, name, tmp, text, err);
}

void bro_store_mark_unstored(struct bro_server *srv, const char *task_id)
{
        char name[PROTO_ID_MAX + 16];
        snprintf(name, sizeof(name), "%s" BRO_UNSTORED_SUFFIX, task_id);
        int fd = openat(srv->tasks_dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (fd < 0) {
                log_warn("task %s: tasks/%s cannot be created: %s; its next start will take it for interrupted", task_id,
                         name, strerror(errno));
                return;
        }
        (void)close(fd);
}

/* ---- retention ---- */

struct prune_job {
        uv_work_t work;
        struct bro_server *srv;
        enum bro_prune kind;
        int dirfd, traces_dirfd;
        unsigned keep;
        int rc; /* the first failure to remove, -errno */
};

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stems of dirfd's entries that start with prefix and end with one of suffixes (the
 * suffix cut off), not temporary files; sorted. */
static char **list_stems(int dirfd, const char *prefix, const char *const *suffixes, size_t *n)
{
        *n = 0;
        _cleanup_closedir_ DIR *d = fd_opendir_at(dirfd);
        if (!d)
                return NULL;
        char **names = NULL;
        size_t cap = 0, pl = strlen(prefix);
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name), sl = 0;
                for (const char *const *sfx = suffixes; *sfx && !sl; sfx++)
                        if (len > strlen(*sfx) && strcmp(de->d_name + len - strlen(*sfx), *sfx) == 0)
                                sl = strlen(*sfx);
                if (de->d_name[0] == '.' || !sl || strncmp(de->d_name, prefix, pl) != 0)
                        continue;
                if (*n == cap) {
                        char **nn = realloc(names, (cap = cap ? cap * 2 : 256) * sizeof(*names));
                        if (!nn)
                                break;
                        names = nn;
                }
                if (!(names[*n] = strndup(de->d_name, len - sl)))
                        break;
                (*n)++;
        }
        if (*n)
                qsort(names, *n, sizeof(*names), cmp_names);
        return names;
}

static void prune_unlink(struct prune_job *job, int dirfd, const char *stem, const char *suffix)
{
        char name[PATH_MAX];
        snprintf(name, sizeof(name), "%s%s", stem, suffix);
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT && job->rc == 0)
                job->rc = -errno;
}

static void prune_tree(struct prune_job *job, const char *stem, const char *suffix)
{
        char name[PATH_MAX];
        struct anvil_err err = ANVIL_ERR_INIT;
        snprintf(name, sizeof(name), "%s%s", stem, suffix);
        if (fd_rm_tree_at(job->dirfd, name, 16, &err) < 0 && job->rc == 0)
                job->rc = -err.code;
}

/* results/: <run_id>.json. tasks/: an ended task is its <task_id>.json, or its
 * <task_id>.unstored when its result could not be written (a running task has neither yet,
 * and is never pruned), with its trace and its deliverable's source: the trace goes first,
 * so that a broker killed in the middle leaves no trace without a result (which its next
 * start would take for an interrupted task). */
static void prune_work(uv_work_t *w)
{
        struct prune_job *job = w->data;
        bool tasks = job->kind == BRO_PRUNE_TASKS;
        static const char *const result_sfx[] = { ".json", NULL };
        static const char *const task_sfx[] = { ".json", BRO_UNSTORED_SUFFIX, NULL };
        size_t n;
        char **stems = list_stems(job->dirfd, tasks ? "task-" : "", tasks ? task_sfx : result_sfx, &n);
        size_t excess = n > job->keep ? n - job->keep : 0;
        for (size_t i = 0; i < n; i++) {
                if (i < excess) {
                        if (tasks) {
                                prune_unlink(job, job->traces_dirfd, stems[i], ".jsonl");
                                prune_unlink(job, job->dirfd, stems[i], ".tool.py");
                                prune_unlink(job, job->dirfd, stems[i], BRO_UNSTORED_SUFFIX);
                                prune_tree(job, stems[i], ".artifacts");
                                prune_tree(job, stems[i], ".runs");
                        }
                        prune_unlink(job, job->dirfd, stems[i], BRO_META_SUFFIX);
                        prune_unlink(job, job->dirfd, stems[i], ".json");
                }
                free(stems[i]);
        }
        free(stems);
}

static void prune_queue(struct bro_server *srv, enum bro_prune kind);

static void prune_done(uv_work_t *w, int status)
{
        struct prune_job *job = w->data;
        struct bro_server *srv = job->srv;
        (void)status;
        if (job->rc < 0)
                log_warn("retention: Failed to remove an old %s: %s, ignoring",
                         job->kind == BRO_PRUNE_TASKS ? "task" : "result", strerror(-job->rc));
        enum bro_prune kind = job->kind;
        free(job);
        srv->prune[kind].busy = false;
        if (srv->prune[kind].again) {
                srv->prune[kind].again = false;
                prune_queue(srv, kind);
        }
}

static void prune_queue(struct bro_server *srv, enum bro_prune kind)
{
        struct prune_job *job = calloc(1, sizeof(*job));
        if (!job)
                return; /* the next stored result tries again */
        job->srv = srv;
        job->kind = kind;
        job->dirfd = kind == BRO_PRUNE_TASKS ? srv->tasks_dirfd : srv->results_dirfd;
        job->traces_dirfd = srv->traces_dirfd;
        job->keep = kind == BRO_PRUNE_TASKS ? srv->cfg.keep_tasks : srv->cfg.keep_results;
        job->work.data = job;
        if (uv_queue_work(srv->loop, &job->work, prune_work, prune_done) < 0) {
                free(job);
                return;
        }
        srv->prune[kind].busy = true;
}

void bro_store_prune(struct bro_server *srv, enum bro_prune kind)
{
        if (srv->prune[kind].busy)
                srv->prune[kind].again = true;
        else
                prune_queue(srv, kind);
}

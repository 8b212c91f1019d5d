/* At the broker's start (main.c, before its socket is opened): the tasks the last broker left
 * unfinished.
 *
 * A task has a trace from its submission (DIR/traces/<task_id>.jsonl) and a result from its
 * end (DIR/tasks/<task_id>.json). A trace without a result is a task whose broker was killed
 * (or crashed, or lost its machine) while it ran. Nothing can carry it on: its conversation
 * with the model was in that broker's memory, its client's connection is gone, and its run
 * in flight, if any, was killed by the supervisor when that broker's connection closed. So
 * it is ended as "interrupted":
 *   I1  an unfinished last line (the kill came in the middle of its write) is removed: a
 *       replay refuses a malformed line, and the bytes are not a line of anything
 *   I2  an "end" line is appended, as a task that ends writes one: status "interrupted",
 *       error POL_TASK_INTERRUPTED. The trace is what it was up to the kill, plus that line
 *   I3  its TaskResult is stored: status "interrupted", the same error, and as steps the
 *       actions the trace shows with a stored result (a "code" line, then the "run_result"
 *       naming its run, whose RunResult is DIR/results/<run_id>.json), up to the same budget
 *       as a TaskResult's; no deliverable (the task never ended well)
 * A task that ended but whose result could not be written (its client was told: not_stored)
 * is left as it is: its DIR/tasks/<task_id>.unstored says so (its trace may lack its end, on
 * a full disk), and so does a trace whose last line is the "end" of another status. One whose
 * "end" says interrupted (a broker killed between I2 and I3) gets I3.
 *
 * This runs before the loop and the socket, on the main thread: the files are the broker's
 * own, a trace is read line by line within the replay's bounds (agent.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "policy/reasons.h"

#define RECOVER_STEPS_MAX 100             /* task_result.steps (proto/messages.c) */
#define RECOVER_RESULTS_BUDGET (12u << 20) /* the RunResults read back, as a TaskResult's budget */

/* What the trace says. */
struct seen {
        off_t good_end;      /* the end of its last whole line */
        off_t size;
        json_int_t t_ms, step; /* of its last line that parsed */
        char last_kind[64];  /* "" if the last whole line did not parse */
        char last_status[32]; /* an "end" line's */
        json_t *steps;       /* [{"code", "run"}] */
        size_t results_bytes;
        unsigned steps_left_out; /* runs named in the trace whose result is not read back */
};

/* A step: the code line's text and the run's stored RunResult, if it is there and fits. */
static void add_step(struct bro_server *srv, struct seen *s, const char *code, const char *run_id)
{
        char name[PROTO_ID_MAX + 8];
        struct stat st;
        if (!bro_run_id_valid(run_id) || json_array_size(s->steps) >= RECOVER_STEPS_MAX) {
                s->steps_left_out++;
                return;
        }
        snprintf(name, sizeof(name), "%s.json", run_id);
        _cleanup_close_ int fd = openat(srv->results_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
            s->results_bytes + (size_t)st.st_size > RECOVER_RESULTS_BUDGET) {
                s->steps_left_out++;
                return;
        }
        json_error_t je;
        json_t *run = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(run)) {
                json_decref(run);
                s->steps_left_out++;
                return;
        }
        s->results_bytes += (size_t)st.st_size;
        json_array_append_new(s->steps, json_pack("{s:s, s:o}", "code", code, "run", run));
}

/* Reads the trace line by line: where its last whole line ends, what that line was, and the
 * steps it shows. */
static int read_trace(struct bro_server *srv, int fd, struct seen *s)
{
        int rfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (rfd < 0)
                return -errno;
        _cleanup_fclose_ FILE *f = fdopen(rfd, "r");
        if (!f) {
                (void)close(rfd);
                return -ENOMEM;
        }
        _cleanup_free_ char *buf = NULL, *code = NULL;
        size_t cap = 0;
        ssize_t n;
        off_t off = 0;
        while ((n = getline(&buf, &cap, f)) > 0) {
                off += n;
                if (buf[n - 1] != '\n')
                        break; /* unfinished: I1 */
                s->good_end = off;
                s->last_kind[0] = s->last_status[0] = '\0';
                if ((size_t)n > BRO_TRACE_LINE_MAX)
                        continue;
                json_error_t je;
                _cleanup_(json_decrefp) json_t *o = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
                json_t *kind = json_object_get(o, "kind"), *t_ms = json_object_get(o, "t_ms");
                json_t *step = json_object_get(o, "step"), *status = json_object_get(o, "status");
                if (!json_is_string(kind))
                        continue;
                snprintf(s->last_kind, sizeof(s->last_kind), "%s", json_string_value(kind));
                if (json_is_string(status))
                        snprintf(s->last_status, sizeof(s->last_status), "%s", json_string_value(status));
                if (json_is_integer(t_ms))
                        s->t_ms = json_integer_value(t_ms);
                if (json_is_integer(step))
                        s->step = json_integer_value(step);
                if (strcmp(s->last_kind, "code") == 0 && json_is_string(json_object_get(o, "code"))) {
                        free(code);
                        code = strdup(json_string_value(json_object_get(o, "code")));
                } else if (strcmp(s->last_kind, "run_result") == 0 && code) {
                        json_t *rid = json_object_get(o, "run_id");
                        if (json_is_string(rid))
                                add_step(srv, s, code, json_string_value(rid));
                        free(code);
                        code = NULL;
                }
        }
        return ferror(f) ? -EIO : 0;
}

static int append_end(int fd, const struct seen *s, const char *error, struct anvil_err *err)
{
        char msg[1024], cut[160] = "";
        if (s->size > s->good_end)
                snprintf(cut, sizeof(cut), "; %s",
                         POL_REASON(msg, sizeof(msg), TRACE_CUT, (unsigned long long)(s->size - s->good_end)));
        snprintf(msg, sizeof(msg), "interrupted: %s%s", error, cut);
        json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:s}", "t_ms", s->t_ms, "step", s->step, "kind", "end",
                              "status", "interrupted", "error", error, "message", msg);
        _cleanup_free_ char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!line)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        _cleanup_free_ char *withnl = NULL;
        if (asprintf(&withnl, "%s\n", line) < 0)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        return fd_write_all(fd, withnl, strlen(withnl), err);
}

/* The TaskResult, rendered as every stored one is (proto_to_json's keys, in its order). */
static char *interrupted_result(const char *task_id, const char *error, json_t *steps)
{
        json_t *j = json_pack("{s:s, s:s, s:s, s:O, s:n, s:n, s:n}", "task_id", task_id, "status", "interrupted",
                              "error", error, "steps", steps, "deliverable", "not_stored", "trace_incomplete");
        char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(j);
        return text;
}

static void recover_one(struct bro_server *srv, const char *task_id, const char *trace_name)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = openat(srv->traces_dirfd, trace_name, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                log_warn("task %s: its trace cannot be opened: %s, ignoring", task_id, fd < 0 ? strerror(errno) : "not a file");
                return;
        }
        struct seen s = { .size = st.st_size, .steps = json_array() };
        int r = s.steps ? read_trace(srv, fd, &s) : -ENOMEM;
        if (r < 0) {
                log_warn("task %s: its trace cannot be read: %s, ignoring", task_id, strerror(-r));
                goto out;
        }
        bool ended = strcmp(s.last_kind, "end") == 0;
        if (ended && strcmp(s.last_status, "interrupted") != 0) {
                log_warn("task %s: it ended (%s) but its result was not stored; left as it is", task_id, s.last_status);
                goto out;
        }
        char error[512];
        POL_REASON(error, sizeof(error), TASK_INTERRUPTED);
        if (!ended) {
                if (s.size > s.good_end && ftruncate(fd, s.good_end) < 0) {
                        log_warn("task %s: its unfinished last line cannot be removed: %s, ignoring", task_id,
                                 strerror(errno));
                        goto out;
                }
                if (append_end(fd, &s, error, &err) < 0) {
                        log_warn("task %s: its trace cannot be ended: %s, ignoring", task_id, err.msg);
                        goto out;
                }
        }
        text = interrupted_result(task_id, error, s.steps);
        char name[PROTO_ID_MAX + 8];
        snprintf(name, sizeof(name), "%s.json", task_id);
        if (!text || bro_store_write_now(srv, srv->tasks_dirfd, name, text, &err) < 0) {
                log_warn("task %s: its result cannot be stored: %s, ignoring", task_id, text ? err.msg : "out of memory");
                goto out;
        }
        log_info("task %s: interrupted (the broker ended before it did): its trace ended%s, its result stored with "
                 "%zu steps%s",
                 task_id, s.size > s.good_end ? " (an unfinished last line removed)" : "", json_array_size(s.steps),
                 s.steps_left_out ? " (runs whose result is not there left out)" : "");
out:
        json_decref(s.steps);
}

void bro_recover_tasks(struct bro_server *srv)
{
        _cleanup_closedir_ DIR *d = fd_opendir_at(srv->traces_dirfd);
        if (!d)
                return;
        struct dirent *de;
        const size_t sl = strlen(".jsonl");
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                char id[PROTO_ID_MAX + 1], result[PROTO_ID_MAX + 16];
                if (n <= sl || n - sl > PROTO_ID_MAX || strcmp(de->d_name + n - sl, ".jsonl") != 0)
                        continue;
                snprintf(id, sizeof(id), "%.*s", (int)(n - sl), de->d_name);
                if (strncmp(id, "task-", 5) != 0 || !bro_run_id_valid(id))
                        continue;
                snprintf(result, sizeof(result), "%s.json", id);
                if (faccessat(srv->tasks_dirfd, result, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                        continue;
                snprintf(result, sizeof(result), "%s" BRO_UNSTORED_SUFFIX, id);
                if (faccessat(srv->tasks_dirfd, result, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
                        log_info("task %s: ended, its result not stored (tasks/%s); left as it is", id, result);
                        continue;
                }
                recover_one(srv, id, de->d_name);
        }
}

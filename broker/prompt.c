/* What the model is shown (agent.h): the observation after each action, and the system
 * prompt. Every fixed sentence is a POL_AGENT_TEXTS entry of the catalog; what comes from
 * elsewhere (a tool's output, a CSV's header, a layer's name) is cleaned (bro_tb_clean: valid
 * UTF-8, no control characters but the line ends a text may have) and bounded before it is
 * put in. Pure: no I/O, nothing global. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "broker/reply.h"
#include "policy/reasons.h"
#include "policy/rules.h"
#include "broker/textbuf.h"
#include "proto/names.h"

/* ---- helpers ---- */

/* The cleaned, bounded text of s as a string of its own (for a %s); NULL if out of memory. */
static char *clean_dup(const char *s, enum bro_clean how, size_t max)
{
        struct bro_tb b = { 0 };
        if (s)
                bro_tb_clean_max(&b, s, strlen(s), how, max);
        return bro_tb_take(&b);
}

static void trim_end(struct bro_tb *b)
{
        while (b->len && (b->p[b->len - 1] == '\n' || b->p[b->len - 1] == ' ' || b->p[b->len - 1] == '\t'))
                b->p[--b->len] = 0;
}

/* names[0..n) cleaned, each at most max bytes, joined by ", "; after `shown` of them, "N more";
 * "none" when there are none. */
static char *join_names(const char *const *names, size_t n, size_t max, size_t shown)
{
        struct bro_tb b = { 0 };
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (!names[i])
                        continue;
                if (k == shown) {
                        size_t rest = 0;
                        for (size_t j = i; j < n; j++)
                                rest += names[j] != NULL;
                        bro_tb_str(&b, ", ");
                        BRO_TB_TEXT(&b, NAMES_MORE, (unsigned long long)rest);
                        break;
                }
                if (k++)
                        bro_tb_str(&b, ", ");
                bro_tb_clean_max(&b, names[i], strlen(names[i]), BRO_CLEAN_LINE, max);
        }
        if (k == 0)
                BRO_TB_TEXT(&b, NONE);
        return bro_tb_take(&b);
}

/* ---- which events are told ---- */

enum bro_obs_class bro_obs_event_class(const char *layer_name, const char *kind_name)
{
        if (!layer_name || !kind_name)
                return BRO_OBS_SKIP;
        enum proto_event_kind kind = proto_kind_from_name(kind_name);
        switch (proto_layer_from_name(layer_name)) {
        case PROTO_LAYER_PRECHECK:
        case PROTO_LAYER_AUDIT:
        case PROTO_LAYER_SECCOMP:
        case PROTO_LAYER_LANDLOCK:
                return kind == PROTO_KIND_BLOCKED || kind == PROTO_KIND_DROPPED ? BRO_OBS_REFUSAL : BRO_OBS_SKIP;
        case PROTO_LAYER_PROXY: /* "blocked at proxy: GET evil.example:80 (host not approved)": final */
                return kind == PROTO_KIND_BLOCKED ? BRO_OBS_REFUSAL : BRO_OBS_SKIP;
        case PROTO_LAYER_CGROUP: /* forks refused at the pids limit */
                return kind == PROTO_KIND_REFUSED ? BRO_OBS_REFUSAL : BRO_OBS_SKIP;
        case PROTO_LAYER_RUNNER: /* "the pre-check refused the tool ...; none of it ran" */
                return kind == PROTO_KIND_BLOCKED || kind == PROTO_KIND_REFUSED ? BRO_OBS_NOTE : BRO_OBS_SKIP;
        case PROTO_LAYER_SUPERVISOR:
                return kind == PROTO_KIND_ARTIFACTS_FULL || kind == PROTO_KIND_ARTIFACT_SKIPPED ||
                                       kind == PROTO_KIND_EVENTS_DROPPED
                               ? BRO_OBS_NOTE
                               : BRO_OBS_SKIP;
        case PROTO_LAYER_POLICY: /* "capability network denied: not approved": what the model declared, and what came of it */
                return kind == PROTO_KIND_CAPABILITY_GRANTED || kind == PROTO_KIND_CAPABILITY_DENIED ? BRO_OBS_NOTE
                                                                                                     : BRO_OBS_SKIP;
        default: return BRO_OBS_SKIP;
        }
}

int bro_obs_from_result(const struct proto_run_result *res, struct bro_obs_run *obs)
{
        memset(obs, 0, sizeof(*obs));
        obs->status = res->status;
        obs->has_exit_code = res->exit_code.set;
        obs->exit_code = res->exit_code.v;
        obs->signal = res->signal;
        obs->killed = res->killed;
        obs->out = res->out_text;
        obs->out_truncated = res->stdout_truncated;
        obs->out_bytes = res->stdout_bytes;
        obs->err = res->err_text;
        const struct proto_event *e = res->events.items;
        size_t n = res->events.n;
        struct bro_obs_refusal *refusals = n ? calloc(n, sizeof(*refusals)) : NULL;
        const char **notes = n ? calloc(n, sizeof(*notes)) : NULL;
        if (n && (!refusals || !notes)) {
                free(refusals);
                free(notes);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                if (!e[i].message)
                        continue;
                if (proto_event_is(&e[i], PROTO_LAYER_RUNNER, PROTO_KIND_EXCEPTION)) {
                        obs->traceback = e[i].traceback;
                        obs->error = e[i].message;
                        continue;
                }
                switch (bro_obs_event_class(e[i].layer, e[i].kind)) {
                case BRO_OBS_REFUSAL:
                        refusals[obs->n_refusals++] =
                                (struct bro_obs_refusal){ e[i].layer, e[i].message, e[i].line.set ? e[i].line.v : 0 };
                        break;
                case BRO_OBS_NOTE: notes[obs->n_notes++] = e[i].message; break;
                case BRO_OBS_SKIP: break;
                }
        }
        obs->refusals = refusals;
        obs->notes = notes;
        return 0;
}

void bro_obs_clear(struct bro_obs_run *obs)
{
        free((void *)obs->refusals);
        free((void *)obs->notes);
        obs->refusals = NULL;
        obs->notes = NULL;
        obs->n_refusals = obs->n_notes = 0;
}

/* ---- the observation ---- */

static bool starts_with_format(const char *s, enum pol_reason r)
{
        const char *f = pol_reason_format(r);
        const char *pct = strchr(f, '%');
        size_t n = pct ? (size_t)(pct - f) : strlen(f) + 1; /* no argument: the whole, exactly */
        return strncmp(s, f, n) == 0;
}

static void status_lines(struct bro_tb *b, const struct bro_obs_run *run)
{
        const char *st = run->status ? run->status : "";
        if (run->killed || strcmp(st, "killed") == 0) {
                _cleanup_free_ char *k = clean_dup(run->killed ? run->killed : "killed", BRO_CLEAN_LINE, 200);
                if (!k) {
                        b->oom = true;
                        return;
                }
                BRO_TB_TEXT(b, OBS_KILLED, k);
                if (run->killed && (starts_with_format(run->killed, POL_KILLED_TIMEOUT) ||
                                    starts_with_format(run->killed, POL_KILLED_CPU) ||
                                    starts_with_format(run->killed, POL_KILLED_MEMORY))) {
                        bro_tb_str(b, "\n");
                        BRO_TB_TEXT(b, OBS_KILLED_LIMIT);
                }
        } else if (strcmp(st, "ok") == 0)
                BRO_TB_TEXT(b, OBS_OK);
        else if (strcmp(st, "blocked") == 0)
                BRO_TB_TEXT(b, OBS_BLOCKED);
        else if (strcmp(st, "error") == 0) {
                if (run->signal) {
                        _cleanup_free_ char *sig = clean_dup(run->signal, BRO_CLEAN_LINE, 32);
                        if (!sig) {
                                b->oom = true;
                                return;
                        }
                        BRO_TB_TEXT(b, OBS_FAILED_SIGNAL, sig);
                } else if (run->has_exit_code)
                        BRO_TB_TEXT(b, OBS_FAILED_EXIT, run->exit_code);
                else
                        BRO_TB_TEXT(b, OBS_FAILED);
        } else {
                _cleanup_free_ char *s = clean_dup(run->status ? run->status : "unknown", BRO_CLEAN_LINE, 32);
                if (!s) {
                        b->oom = true;
                        return;
                }
                BRO_TB_TEXT(b, OBS_STATUS, s);
        }
}

static void refusal_lines(struct bro_tb *b, const struct bro_obs_run *run)
{
        size_t shown = 0, n = 0;
        if (!run->refusals)
                return;
        for (size_t i = 0; i < run->n_refusals; i++)
                n += run->refusals[i].message != NULL;
        if (!n)
                return;
        bro_tb_str(b, "\n");
        BRO_TB_TEXT(b, OBS_REFUSALS);
        for (size_t i = 0; i < run->n_refusals && shown < BRO_OBS_REFUSALS_SHOWN; i++) {
                const struct bro_obs_refusal *r = &run->refusals[i];
                if (!r->message)
                        continue;
                _cleanup_free_ char *layer = clean_dup(r->layer ? r->layer : "sandbox", BRO_CLEAN_LINE, 24);
                _cleanup_free_ char *msg = clean_dup(r->message, BRO_CLEAN_LINE, BRO_OBS_MESSAGE_MAX);
                if (!layer || !msg) {
                        b->oom = true;
                        return;
                }
                bro_tb_str(b, "\n");
                if (r->line > 0)
                        BRO_TB_TEXT(b, OBS_REFUSAL_AT, layer, r->line, msg);
                else
                        BRO_TB_TEXT(b, OBS_REFUSAL, layer, msg);
                shown++;
        }
        if (n > shown) {
                bro_tb_str(b, "\n");
                BRO_TB_TEXT(b, OBS_REFUSALS_MORE, (unsigned long long)(n - shown));
        }
        bro_tb_str(b, "\n");
        BRO_TB_TEXT(b, OBS_REFUSALS_FINAL);
}

static void note_line(struct bro_tb *b, const char *text)
{
        _cleanup_free_ char *msg = clean_dup(text, BRO_CLEAN_LINE, BRO_OBS_MESSAGE_MAX);
        if (!msg) {
                b->oom = true;
                return;
        }
        bro_tb_str(b, "\n");
        BRO_TB_TEXT(b, OBS_NOTE, msg);
}

/* A section of the observation: a header, a body of untrusted text that shares the space
 * left, a trailer. */
struct section {
        struct bro_tb header, body, trailer;
        unsigned head_share; /* percent of the kept body taken from its start */
        size_t reserve;      /* what the body has before the sharing: all of it, or room for the cut note */
        size_t budget;
};

static size_t cut_note_len(size_t cut)
{
        char note[96];
        return strlen(BRO_AGENT_TEXT(note, sizeof(note), CUT, (unsigned long long)cut));
}

/* Cuts s->body to its budget (>= s->reserve): its start and its end around a CUT note, or the
 * note alone when nothing more fits. */
static void cut_body(struct section *s)
{
        struct bro_tb *b = &s->body;
        if (b->len <= s->budget)
                return;
        size_t kept = s->budget - s->reserve; /* reserve is the note and its two LFs here */
        size_t h = bro_utf8_floor(b->p, kept * s->head_share / 100);
        size_t t = bro_utf8_ceil(b->p, b->len, b->len - (kept - kept * s->head_share / 100));
        if (t < h)
                t = h;
        /* On a line's end when one is near (the last quarter of the head, the first of the
         * tail): whole lines read better than halves. */
        for (size_t q = h; q > h - h / 4 && q > 0; q--)
                if (b->p[q - 1] == '\n') {
                        h = q - 1;
                        break;
                }
        for (size_t q = t; q < b->len && q < t + (b->len - t) / 4; q++)
                if (b->p[q] == '\n') {
                        t = q + 1;
                        break;
                }
        struct bro_tb out = { 0 };
        bro_tb_add(&out, b->p, h);
        if (h)
                bro_tb_str(&out, "\n");
        BRO_TB_TEXT(&out, CUT, (unsigned long long)(t - h));
        if (t < b->len)
                bro_tb_str(&out, "\n");
        bro_tb_add(&out, b->p + t, b->len - t);
        if (out.oom) {
                b->oom = true;
                bro_tb_free(&out);
                return;
        }
        bro_tb_free(b);
        *b = out;
}

/* Shares `avail` bytes between the bodies beyond their reserve: each gets what it needs if
 * that is below an equal share of what is left, the rest split evenly. */
static void share(struct section *s, size_t n, size_t avail)
{
        bool open[8] = { 0 };
        size_t n_open = 0;
        for (size_t i = 0; i < n; i++) {
                s[i].budget = s[i].reserve;
                if (s[i].body.len > s[i].reserve) {
                        open[i] = true;
                        n_open++;
                }
        }
        while (n_open) {
                size_t each = avail / n_open;
                bool any = false;
                for (size_t i = 0; i < n; i++)
                        if (open[i] && s[i].body.len - s[i].reserve <= each) {
                                avail -= s[i].body.len - s[i].reserve;
                                s[i].budget = s[i].body.len;
                                open[i] = false;
                                n_open--;
                                any = true;
                        }
                if (!any) {
                        for (size_t i = 0; i < n; i++)
                                if (open[i])
                                        s[i].budget += each;
                        return;
                }
        }
}

/* stderr without the traceback the runner also printed there. */
static void stderr_body(struct bro_tb *b, const struct bro_obs_run *run)
{
        if (!run->err)
                return;
        size_t n = strlen(run->err);
        const char *tb = run->traceback;
        const char *at = tb && *tb ? memmem(run->err, n, tb, strlen(tb)) : NULL;
        if (at) {
                bro_tb_clean(b, run->err, (size_t)(at - run->err), BRO_CLEAN_LINES);
                size_t after = (size_t)(at - run->err) + strlen(tb);
                bro_tb_clean(b, run->err + after, n - after, BRO_CLEAN_LINES);
        } else
                bro_tb_clean(b, run->err, n, BRO_CLEAN_LINES);
        trim_end(b);
        size_t i = 0;
        while (i < b->len && (b->p[i] == '\n' || b->p[i] == ' '))
                i++;
        if (i == b->len)
                bro_tb_free(b);
}

char *bro_observation(const struct bro_obs_run *run, size_t max_len)
{
        if (!run) {
                errno = EINVAL;
                return NULL;
        }
        struct bro_tb head = { 0 }, tail = { 0 };
        struct section sec[3] = { { .head_share = 50 }, { .head_share = 33 }, { .head_share = 50 } };

        status_lines(&head, run);
        refusal_lines(&head, run);
        for (size_t i = 0, shown = 0; run->notes && i < run->n_notes && shown < BRO_OBS_NOTES_SHOWN; i++)
                if (run->notes[i]) {
                        note_line(&head, run->notes[i]);
                        shown++;
                }

        /* stdout */
        if (run->out)
                bro_tb_clean(&sec[0].body, run->out, strlen(run->out), BRO_CLEAN_LINES);
        trim_end(&sec[0].body);
        if (sec[0].body.len)
                BRO_TB_TEXT(&sec[0].header, OBS_STDOUT);
        else {
                bro_tb_free(&sec[0].body);
                BRO_TB_TEXT(&sec[0].header, OBS_STDOUT_NONE);
        }
        if (run->out_truncated) {
                struct bro_tb r = { 0 };
                BRO_TB_REASON(&r, OUTPUT_TRUNCATED, "stdout", (unsigned long long)(run->out ? strlen(run->out) : 0),
                              run->out_bytes);
                _cleanup_free_ char *msg = bro_tb_take(&r);
                if (msg)
                        BRO_TB_TEXT(&sec[0].trailer, OBS_NOTE, msg);
                else
                        sec[0].trailer.oom = true;
        }
        /* the error */
        const char *err = run->traceback && *run->traceback ? run->traceback : run->error;
        if (err) {
                bro_tb_clean(&sec[1].body, err, strlen(err), BRO_CLEAN_LINES);
                trim_end(&sec[1].body);
                if (sec[1].body.len)
                        BRO_TB_TEXT(&sec[1].header, OBS_TRACEBACK);
        }
        /* stderr */
        stderr_body(&sec[2].body, run);
        if (sec[2].body.len)
                BRO_TB_TEXT(&sec[2].header, OBS_STDERR);

        /* the variables */
        if (run->kept && run->n_kept) {
                _cleanup_free_ char *names = join_names(run->kept, run->n_kept, BRO_OBS_NAME_MAX, BRO_OBS_NAMES_SHOWN);
                if (names)
                        BRO_TB_TEXT(&tail, OBS_KEPT, names);
                else
                        tail.oom = true;
        } else
                BRO_TB_TEXT(&tail, OBS_KEPT_NONE);
        if (run->dropped && run->n_dropped) {
                _cleanup_free_ char *names =
                        join_names(run->dropped, run->n_dropped, BRO_OBS_NAME_MAX, BRO_OBS_NAMES_SHOWN);
                bro_tb_str(&tail, "\n");
                if (names)
                        BRO_TB_TEXT(&tail, OBS_DROPPED, names);
                else
                        tail.oom = true;
        }

        /* The budget: the fixed parts first, then the bodies share what is left. Every part
         * is a line (or lines) of its own: one LF after each but the last. */
        size_t fixed = head.len + 1 + tail.len;
        for (size_t i = 0; i < 3; i++) {
                if (sec[i].header.len)
                        fixed += sec[i].header.len + 1;
                if (sec[i].body.len) {
                        size_t note = cut_note_len(sec[i].body.len) + 2;
                        sec[i].reserve = sec[i].body.len < note ? sec[i].body.len : note;
                        fixed += 1 + sec[i].reserve;
                }
                if (sec[i].trailer.len)
                        fixed += sec[i].trailer.len + 1;
        }
        share(sec, 3, max_len > fixed ? max_len - fixed : 0);
        struct bro_tb all = { 0 };
        bro_tb_add(&all, head.p ? head.p : "", head.len);
        for (size_t i = 0; i < 3; i++) {
                cut_body(&sec[i]);
                struct bro_tb *parts[] = { &sec[i].header, &sec[i].body, &sec[i].trailer };
                for (size_t k = 0; k < 3; k++) {
                        if (parts[k]->oom)
                                all.oom = true;
                        if (!parts[k]->len)
                                continue;
                        bro_tb_str(&all, "\n");
                        bro_tb_add(&all, parts[k]->p ? parts[k]->p : "", parts[k]->len);
                }
                bro_tb_free(&sec[i].header);
                bro_tb_free(&sec[i].body);
                bro_tb_free(&sec[i].trailer);
        }
        bro_tb_str(&all, "\n");
        bro_tb_add(&all, tail.p ? tail.p : "", tail.len);
        if (head.oom || tail.oom)
                all.oom = true;
        bro_tb_free(&head);
        bro_tb_free(&tail);
        if (!all.oom && all.len > max_len) {
                all.len = bro_utf8_floor(all.p, max_len);
                all.p[all.len] = 0;
        }
        return bro_tb_take(&all);
}

/* ---- the system prompt ---- */

/* A column's name as a Python string literal ("a\"b"), at most BRO_PROMPT_COLUMN_MAX bytes of
 * it: the model can use it as written. */
static void py_literal(struct bro_tb *b, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        size_t n = strlen(s), i = 0;
        bro_tb_str(b, "\"");
        while (i < n) {
                size_t k = bro_utf8_seq((const uint8_t *)s + i, n - i);
                if (i + (k ? k : 1) > BRO_PROMPT_COLUMN_MAX)
                        break;
                uint8_t c = (uint8_t)s[i];
                if (k == 0)
                        bro_tb_str(b, "\xEF\xBF\xBD"); /* not UTF-8: the name is not exact */
                else if (c == '"' || c == '\\') {
                        char e[2] = { '\\', (char)c };
                        bro_tb_add(b, e, 2);
                } else if (c == '\n')
                        bro_tb_str(b, "\\n");
                else if (c == '\r')
                        bro_tb_str(b, "\\r");
                else if (c == '\t')
                        bro_tb_str(b, "\\t");
                else if (k == 1 && (c < 0x20 || c == 0x7F)) {
                        char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
                        bro_tb_add(b, e, 4);
                } else if (k == 2 && c == 0xC2 && (uint8_t)s[i + 1] < 0xA0) {
                        uint8_t d = (uint8_t)s[i + 1];
                        char e[4] = { '\\', 'x', hex[d >> 4], hex[d & 15] };
                        bro_tb_add(b, e, 4);
                } else
                        bro_tb_add(b, s + i, k);
                i += k ? k : 1;
        }
        bro_tb_str(b, "\"");
        if (i < n)
                BRO_TB_TEXT(b, PROMPT_NAME_CUT, (unsigned long long)n);
}

/* The first rows, cleaned and bounded, in a fence longer than any backtick run they hold. */
static void head_block(struct bro_tb *b, const char *head)
{
        struct bro_tb raw = { 0 }, rows = { 0 };
        bro_tb_clean_max(&raw, head, strlen(head), BRO_CLEAN_LINES, BRO_PROMPT_HEAD_MAX);
        trim_end(&raw);
        size_t p = 0, lines = 0;
        while (raw.p && p < raw.len && lines < BRO_PROMPT_HEAD_LINES) {
                const char *nl = memchr(raw.p + p, '\n', raw.len - p);
                size_t e = nl ? (size_t)(nl - raw.p) : raw.len;
                if (lines++)
                        bro_tb_str(&rows, "\n");
                bro_tb_clean_max(&rows, raw.p + p, e - p, BRO_CLEAN_LINES, BRO_PROMPT_HEAD_LINE_MAX);
                p = e + 1;
        }
        size_t run = 0, longest = 0;
        for (size_t i = 0; i < rows.len; i++) {
                run = rows.p[i] == '`' ? run + 1 : 0;
                if (run > longest)
                        longest = run;
        }
        /* at most BRO_PROMPT_HEAD_LINE_MAX + 1 backticks */
        char fence[BRO_PROMPT_HEAD_LINE_MAX + 2];
        size_t ticks = longest + 1 > 3 ? longest + 1 : 3;
        memset(fence, '`', ticks);
        if (raw.oom || rows.oom)
                b->oom = true;
        if (rows.len) {
                bro_tb_str(b, "\n");
                BRO_TB_TEXT(b, PROMPT_FIRST_ROWS);
                bro_tb_str(b, "\n");
                bro_tb_add(b, fence, ticks);
                bro_tb_str(b, "text\n");
                bro_tb_add(b, rows.p, rows.len);
                bro_tb_str(b, "\n");
                bro_tb_add(b, fence, ticks);
        }
        bro_tb_free(&raw);
        bro_tb_free(&rows);
}

static bool plain_path(const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-' || c == '/'))
                        return false;
        }
        return true;
}

/* Level 0: everything; 1: without the first rows; 2: and BRO_PROMPT_COLUMNS_SHORT columns;
 * 3: and no columns. */
static void inputs_part(struct bro_tb *b, const struct bro_prompt_in *in, const char *dir, int level)
{
        if (!in->n_inputs || !in->inputs) {
                BRO_TB_TEXT(b, PROMPT_NO_INPUTS);
                return;
        }
        BRO_TB_TEXT(b, PROMPT_INPUTS);
        size_t shown = in->n_inputs < BRO_PROMPT_INPUTS_SHOWN ? in->n_inputs : BRO_PROMPT_INPUTS_SHOWN;
        size_t cols_max = level >= 3 ? 0 : level == 2 ? BRO_PROMPT_COLUMNS_SHORT : BRO_PROMPT_COLUMNS_SHOWN;
        for (size_t i = 0; i < shown; i++) {
                const struct bro_prompt_input *x = &in->inputs[i];
                struct bro_tb path = { 0 };
                bro_tb_str(&path, dir);
                bro_tb_str(&path, "/");
                bro_tb_clean_max(&path, x->name ? x->name : "", x->name ? strlen(x->name) : 0, BRO_CLEAN_LINE,
                                 BRO_PROMPT_PATH_MAX);
                _cleanup_free_ char *p = bro_tb_take(&path);
                if (!p) {
                        b->oom = true;
                        return;
                }
                size_t ncol = x->columns ? x->n_columns : 0;
                unsigned long long total = x->columns_total > ncol ? x->columns_total : ncol;
                bro_tb_str(b, "\n");
                if (x->rows_known)
                        BRO_TB_TEXT(b, PROMPT_INPUT, p, x->rows, total);
                else
                        BRO_TB_TEXT(b, PROMPT_INPUT_NO_ROWS, p, total);
                size_t cshown = ncol < cols_max ? ncol : cols_max;
                for (size_t c = 0; c < cshown; c++) {
                        struct bro_tb lit = { 0 };
                        py_literal(&lit, x->columns[c].name ? x->columns[c].name : "");
                        _cleanup_free_ char *l = bro_tb_take(&lit);
                        _cleanup_free_ char *d = clean_dup(x->columns[c].dtype ? x->columns[c].dtype : "unknown",
                                                           BRO_CLEAN_LINE, BRO_PROMPT_DTYPE_MAX);
                        if (!l || !d) {
                                b->oom = true;
                                return;
                        }
                        bro_tb_str(b, "\n");
                        BRO_TB_TEXT(b, PROMPT_COLUMN, l, d);
                }
                if (total > cshown && cols_max) {
                        bro_tb_str(b, "\n");
                        BRO_TB_TEXT(b, PROMPT_COLUMNS_MORE, total - cshown);
                }
                if (level == 0 && x->head)
                        head_block(b, x->head);
        }
        if (in->n_inputs > shown) {
                bro_tb_str(b, "\n");
                BRO_TB_TEXT(b, PROMPT_INPUTS_MORE, (unsigned long long)(in->n_inputs - shown));
        }
}

static char *prompt_at(const struct bro_prompt_in *in, int level)
{
        struct bro_tb b = { 0 };
        /* Where the inputs are, as the tool writes it; it goes into a Python string of the
         * example, so it must be a plain path. */
        const char *dir =
                in->inputs_dir && plain_path(in->inputs_dir, BRO_PROMPT_PATH_MAX) ? in->inputs_dir : "./inputs";
        const char *first = in->n_inputs && in->inputs ? in->inputs[0].name : NULL;
        struct bro_tb ex = { 0 };
        bro_tb_str(&ex, dir);
        bro_tb_str(&ex, "/");
        bro_tb_str(&ex, first && first[0] != '.' && plain_path(first, 64) && !strchr(first, '/') ? first : "data.csv");
        _cleanup_free_ char *example = bro_tb_take(&ex);

        const char *const *caps = in->caps_possible;
        size_t n_caps = in->n_caps_possible;
        const char *grantable[_POL_CAP_MAX];
        if (!caps || !n_caps) {
                n_caps = 0;
                for (int c = 0; c < _POL_CAP_MAX; c++)
                        if (pol_cap_server_policy((enum pol_cap)c) != POL_WHY_CAP_NEVER)
                                grantable[n_caps++] = pol_cap_name((enum pol_cap)c);
                caps = grantable;
        }
        _cleanup_free_ char *reads = join_names(in->read_roots, in->read_roots ? in->n_read_roots : 0,
                                                BRO_PROMPT_PATH_MAX, BRO_PROMPT_ROOTS_SHOWN);
        _cleanup_free_ char *writes = join_names(in->write_roots, in->write_roots ? in->n_write_roots : 0,
                                                 BRO_PROMPT_PATH_MAX, BRO_PROMPT_ROOTS_SHOWN);
        _cleanup_free_ char *possible = join_names(caps, n_caps, BRO_CAP_NAME_MAX, PROTO_CAPS_MAX);
        /* the names approved: network=HOSTS is network (its hosts are said below) */
        char names[PROTO_CAPS_MAX][BRO_CAP_NAME_MAX + 1];
        const char *shown[PROTO_CAPS_MAX];
        size_t n_shown = 0;
        for (size_t i = 0; in->caps_approved && i < in->n_caps_approved && n_shown < PROTO_CAPS_MAX; i++) {
                size_t len = strcspn(in->caps_approved[i], "=");
                snprintf(names[n_shown], sizeof(names[n_shown]), "%.*s",
                         (int)(len > BRO_CAP_NAME_MAX ? BRO_CAP_NAME_MAX : len), in->caps_approved[i]);
                bool seen = false;
                for (size_t k = 0; k < n_shown; k++)
                        seen |= strcmp(shown[k], names[n_shown]) == 0;
                if (!seen) {
                        shown[n_shown] = names[n_shown];
                        n_shown++;
                }
        }
        _cleanup_free_ char *approved = join_names(shown, n_shown, BRO_CAP_NAME_MAX, PROTO_CAPS_MAX);
        if (!example || !reads || !writes || !possible || !approved)
                return NULL;

        BRO_TB_TEXT(&b, PROMPT_INTRO, example);
        bro_tb_str(&b, "\n\n");
        BRO_TB_TEXT(&b, PROMPT_RUN);
        bro_tb_str(&b, "\n\n");
        BRO_TB_TEXT(&b, PROMPT_FILES, reads, writes);
        bro_tb_str(&b, "\n\n");
        inputs_part(&b, in, dir, level);
        bro_tb_str(&b, "\n\n");
        BRO_TB_TEXT(&b, PROMPT_FINISH, writes);
        bro_tb_str(&b, "\n\n");
        BRO_TB_TEXT(&b, PROMPT_REFUSALS);
        bro_tb_str(&b, "\n\n");
        BRO_TB_TEXT(&b, PROMPT_CAPS, possible, approved);
        bro_tb_str(&b, "\n\n");
        if (in->net_hosts && in->net_hosts[0])
                BRO_TB_TEXT(&b, PROMPT_NETWORK, in->net_hosts);
        else
                BRO_TB_TEXT(&b, PROMPT_NO_NETWORK);
        bro_tb_str(&b, "\n\n");

        struct bro_tb task = { 0 };
        size_t n = in->task ? strlen(in->task) : 0;
        bro_tb_clean_max(&task, in->task ? in->task : "", n, BRO_CLEAN_LINES, BRO_PROMPT_TASK_MAX);
        trim_end(&task);
        if (n > BRO_PROMPT_TASK_MAX) {
                bro_tb_str(&task, "\n");
                BRO_TB_TEXT(&task, CUT, (unsigned long long)(n - BRO_PROMPT_TASK_MAX));
        }
        _cleanup_free_ char *t = bro_tb_take(&task);
        if (!t) {
                bro_tb_free(&b);
                return NULL;
        }
        BRO_TB_TEXT(&b, PROMPT_TASK, t);
        return bro_tb_take(&b);
}

char *bro_system_prompt(const struct bro_prompt_in *in, size_t max_len)
{
        if (!in) {
                errno = EINVAL;
                return NULL;
        }
        for (int level = 0; level <= 3; level++) {
                char *p = prompt_at(in, level);
                if (!p) {
                        errno = ENOMEM;
                        return NULL;
                }
                if (strlen(p) <= max_len)
                        return p;
                free(p);
        }
        errno = E2BIG;
        return NULL;
}

/* The catalog's agent texts (policy/reasons.h, POL_AGENT_TEXTS) are formatted here, in the
 * broker, so that no other program carries the model's prompt. */
static const char *const agent_formats[_POL_AGENT_TEXT_MAX] = {
#define X(id, fmt) [POL_AGENT_##id] = fmt,
        POL_AGENT_TEXTS(X)
#undef X
};

const char *bro_agent_format(enum pol_agent_text t)
{
        return (unsigned)t < _POL_AGENT_TEXT_MAX ? agent_formats[t] : "unknown agent text";
}

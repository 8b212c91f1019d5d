/* The agent's pure pieces (DESIGN §8): what is read out of a model's reply, and every text the
 * model is shown (the system prompt, the observation after each action). No side effects: the
 * loop (broker/) does the talking and the running; these functions only compute, and are
 * unit-tested both ways (tests/unit/test_agent.c). Every fixed sentence comes from the catalog
 * (POL_AGENT_TEXTS in policy/reasons.h).
 *
 * Everything here is handed untrusted text: a reply is whatever the model sent (megabytes,
 * NUL bytes, broken UTF-8), a CSV header is whatever the user's file holds, a tool's output is
 * whatever the tool printed. Nothing is read past the length given; everything produced is
 * bounded, NUL-terminated, valid UTF-8. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"
#include "policy/agent_texts.h"

/* ---- a model's reply: one code action (broker/reply.c) ----
 *
 * Not the reply's action (docs/agent.md has the rules with their reasons):
 *   - <think> ... </think>: a line whose first non-blank characters are <think> opens it, the
 *     first </think> after it closes it, wherever on a line; unclosed, it hides the rest.
 *   - everything from the first line that starts (its first bytes) with "Observation:" or
 *     "Calling tools:", outside a <think>: the reply is read as if it ended there.
 * The blocks, in the order they come:
 *   - <code> ... </code>, the <code> at the start of a line (or after "Code:"): an inline
 *     <code>x</code> in a sentence is prose. A </code> inside a Python string does not close
 *     it. A fenced block alone inside it is unwrapped. A last <code> without its </code> runs
 *     to the end of the reply, a trailing partial closing tag ("</", "</c", ... "</code")
 *     dropped. A reply with any <code> block: its <code> blocks are the action, fences not.
 *   - fenced blocks: a line of ``` (three or more backticks; leading spaces allowed, and a
 *     leading "Code:") with the tag py, python, python3, py3, ipython in any case, or no tag;
 *     closed by a later line whose first non-blank characters are at least as many backticks,
 *     whatever follows them, or by a line <end_code>; LF or CRLF line ends. A fence indented by
 *     n spaces has up to n spaces taken off each of its lines. A closing line inside a
 *     triple-quoted Python string does not close the block (a tool that writes Markdown);
 *     should the string never end, the first closing line does, and from there on strings are
 *     not looked at (so the scan stays linear). The limit of it: a string the model left open
 *     is closed by a quote in a later block, and what lies between runs as one string.
 *   - Thought:/Code: lines and <end_code> around them are prose, and ignored.
 * Never code: prose; a fence of another language (```json, ```bash, ```text); an untagged
 * fence or a py block that holds a JSON tool call; an untagged fence whose text starts with
 * '{' or '[' (JSON); a reply with a NUL byte or invalid UTF-8 anywhere (refused whole).
 *
 * Several blocks: every block of the kind that is the action (<code>; else Python fences;
 * else untagged fences) is taken, in order, joined by a blank line. Untagged fences count only
 * when the reply has no tagged one: beside tagged code they are a model's sample output
 * ("Output:\n```\n  region  revenue\n```"), not code. Why join rather than take the last: a
 * model that writes its action in steps ("load the data:" block, "now aggregate:" block)
 * means them to run in order as one action, and the later blocks use the earlier ones' names;
 * taking the last would fail with a NameError. A model that repeats a block it corrected runs
 * both, and sees the first one's error if it has one: an honest failure, never a silent
 * half-action. This is smolagents' rule too.
 *
 * Refused as NO_CODE with why: a fence that is never closed (a reply cut by the model's
 * length limit: running its first half is not what it meant), code over PROTO_SOURCE_MAX
 * bytes, only empty blocks. */
enum bro_reply_kind { BRO_REPLY_CODE, BRO_REPLY_NO_CODE };

struct bro_reply {
        enum bro_reply_kind kind;
        /* CODE: malloc'd, NUL-terminated, valid UTF-8 without NUL, LF line ends, ending in
         * "\n", at most PROTO_SOURCE_MAX bytes. NULL for NO_CODE. */
        char *code;
        /* NO_CODE: malloc'd, which form was seen (a REPLY_* text of the catalog: "prose only,
         * no code block", "a JSON tool call; ...", "an empty reply"), for the observation.
         * NULL for CODE. */
        char *why;
        unsigned blocks;  /* Python code blocks found: joined into code, or empty, unclosed, too long */
        unsigned skipped; /* fenced blocks not taken: other languages, JSON, untagged beside tagged */
};

/* 0, with *out filled (free it with bro_reply_free); -EINVAL if out is NULL or reply is NULL
 * with len > 0; -ENOMEM. A reply without code is 0 with kind NO_CODE, never an error. */
int bro_reply_parse(const char *reply, size_t len, struct bro_reply *out);
void bro_reply_free(struct bro_reply *r);

/* A reply that called tools and holds no code (OpenAI's content null with tool_calls, or
 * prose beside them): NO_CODE, why REPLY_TOOL_CALLS with the functions' names (printable, as the
 * model client made them). Never run. 0 or -ENOMEM (-EINVAL without names or out). */
int bro_reply_tool_calls(const char *names, struct bro_reply *out);

/* "No code was received. What was seen: <why>." then the format hint (FORMAT_HINT), at most
 * max_len bytes. malloc'd; NULL if out of memory. */
char *bro_observation_no_code(const struct bro_reply *r, size_t max_len);

/* ---- the observation of a run (broker/prompt.c) ---- */

struct bro_obs_refusal {
        const char *layer;   /* precheck|audit|seccomp|landlock|cgroup|... */
        const char *message; /* the event's message, verbatim ("blocked at runtime: ...") */
        long long line;      /* the tool's line, 0 if none */
};

/* Borrowed strings and arrays, any of them NULL when absent (a NULL array is empty, whatever
 * its count). Each string is sanitized (invalid UTF-8 and control characters but tab and line
 * ends become U+FFFD; CRLF and a lone CR become LF) and bounded before it is shown. */
struct bro_obs_run {
        const char *status; /* ok|error|blocked|killed, the RunResult's */
        bool has_exit_code;
        long long exit_code;
        const char *signal; /* "SIGSEGV" when the tool died of a signal */
        const char *killed; /* the RunResult's killed ("killed: timeout") */
        const char *out;    /* stdout, as the RunResult kept it */
        bool out_truncated;
        unsigned long long out_bytes; /* all the tool wrote to stdout, kept or not */
        const char *err;              /* stderr; the traceback in it is not shown twice */
        const char *error;            /* the exception, one line ("KeyError: 'x'"), shown only without traceback */
        const char *traceback;
        const struct bro_obs_refusal *refusals;
        size_t n_refusals;
        const char *const *notes; /* other events worth telling, their messages */
        size_t n_notes;
        const char *const *kept; /* variables the step left, that the next one will have */
        size_t n_kept;
        const char *const *dropped; /* names whose values were not JSON-serialisable */
        size_t n_dropped;
};

/* What is shown of each part, at most. */
#define BRO_OBS_REFUSALS_SHOWN 20
#define BRO_OBS_NOTES_SHOWN 10
#define BRO_OBS_NAMES_SHOWN 50
#define BRO_OBS_NAME_MAX 64       /* bytes of one variable name */
#define BRO_OBS_MESSAGE_MAX 600   /* bytes of one refusal or note */

/* The observation after a run, at most max_len bytes (malloc'd, valid UTF-8; NULL if out of
 * memory). In this order, each part only when there is something to say:
 *
 *   <status line>                       OBS_OK, OBS_FAILED_EXIT, OBS_BLOCKED, OBS_KILLED, ...
 *   <OBS_KILLED_LIMIT>                  after a kill by timeout, cpu or memory
 *   Refused by the sandbox:
 *   - [audit] line 4: blocked at runtime: socket.connect (...)
 *   <OBS_REFUSALS_FINAL>                the policy, the layers, no workaround
 *   Note: <message>                     each note; "stdout truncated: ..." when it was
 *   Output (stdout):                    or "Output (stdout): nothing was printed."
 *   <stdout>
 *   Error:
 *   <traceback>                         (or the one-line error)
 *   Other output (stderr):
 *   <stderr without the traceback>
 *   Variables kept for the next action: a, b.
 *   Not kept, as their values are not JSON-serialisable (gone in the next action): df.
 *
 * The fixed parts come first in the budget; what is left of max_len is shared between stdout,
 * the traceback and stderr, and a text too long keeps its head and its tail around
 * "[... N bytes cut here ...]". Should max_len be too small for the fixed parts, the whole is
 * cut at max_len (on a character's boundary). */
char *bro_observation(const struct bro_obs_run *run, size_t max_len);

/* Which events of a RunResult the observation tells: the refusals (precheck, audit, seccomp,
 * landlock: blocked and dropped; cgroup: refused), notes (the runner's "blocked" and "refused",
 * the supervisor's artifact notes and dropped events), and the rest not (started, finished,
 * the exception and the kill, told from their own fields). */
enum bro_obs_class { BRO_OBS_SKIP, BRO_OBS_REFUSAL, BRO_OBS_NOTE };
enum bro_obs_class bro_obs_event_class(const char *layer, const char *kind);

/* Fills *obs from a RunResult: every string borrowed from res (which must outlive obs), the
 * refusals and notes arrays malloc'd; the traceback and error from the runner's "exception"
 * event. kept and dropped are the caller's (the RunResult does not know them). 0 or -ENOMEM;
 * free with bro_obs_clear. */
int bro_obs_from_result(const struct proto_run_result *res, struct bro_obs_run *obs);
void bro_obs_clear(struct bro_obs_run *obs);

/* ---- the system prompt (broker/prompt.c) ---- */

struct bro_prompt_column {
        const char *name;  /* untrusted: anything a CSV header holds */
        const char *dtype; /* "int64", "object", ... */
};

struct bro_prompt_input {
        const char *name; /* the file name under inputs_dir */
        bool rows_known;
        unsigned long long rows;
        const struct bro_prompt_column *columns;
        size_t n_columns;
        const char *head; /* the first rows as text (df.head().to_string(), or the CSV's lines) */
        unsigned long long columns_total; /* the file's columns, if more than the n_columns described */
};

struct bro_prompt_in {
        const char *task;
        const struct bro_prompt_input *inputs;
        size_t n_inputs;
        const char *inputs_dir; /* where the inputs are, as the tool writes it; NULL: "./inputs" */
        const char *const *read_roots; /* "./inputs", "./artifacts" */
        size_t n_read_roots;
        const char *const *write_roots; /* "./artifacts" */
        size_t n_write_roots;
        const char *const *caps_possible; /* what may be requested; none given: every capability
                                           * the server could grant (not "process") */
        size_t n_caps_possible;
        const char *const *caps_approved; /* what the user approved for this task (names
                                           * shown, a scope cut off) */
        size_t n_caps_approved;
        const char *net_hosts; /* the hosts network may reach ("a.example, *.b.example"), NULL: none */
};

/* Bounds of what goes into the prompt from the inputs (untrusted). */
#define BRO_PROMPT_TASK_MAX (64u * 1024) /* task_submit's own bound */
#define BRO_PROMPT_INPUTS_SHOWN 32
#define BRO_PROMPT_COLUMNS_SHOWN 64
#define BRO_PROMPT_COLUMNS_SHORT 16 /* when the prompt must shrink */
#define BRO_PROMPT_COLUMN_MAX 80    /* bytes of a column name shown */
#define BRO_PROMPT_DTYPE_MAX 32
#define BRO_PROMPT_HEAD_LINES 10
#define BRO_PROMPT_HEAD_LINE_MAX 300
#define BRO_PROMPT_HEAD_MAX 4096
#define BRO_PROMPT_PATH_MAX 128 /* a root's or an input's name */
#define BRO_PROMPT_ROOTS_SHOWN 8

/* The system prompt (malloc'd, valid UTF-8, at most max_len bytes): PROMPT_INTRO, PROMPT_RUN,
 * PROMPT_FILES, the inputs (each with its rows, its columns as Python string literals with
 * their dtypes, and its first rows in a fence longer than any backtick run they hold),
 * PROMPT_FINISH, PROMPT_REFUSALS, PROMPT_CAPS, PROMPT_TASK, in that order, separated by blank
 * lines. Should it not fit max_len, the inputs shrink, in steps: without their first rows,
 * with BRO_PROMPT_COLUMNS_SHORT columns each, then without columns. NULL with errno E2BIG if
 * even that does not fit (the task itself is never cut but at BRO_PROMPT_TASK_MAX), ENOMEM,
 * or EINVAL (in NULL). */
char *bro_system_prompt(const struct bro_prompt_in *in, size_t max_len);

/* ---- the capability declaration (broker/reply.c) ----
 *
 * The prompt asks for {"capabilitiesRequested": ["network"]} on a line of its own. A
 * declaration is a JSON object holding that key, outside the code: in the prose (on a line of
 * its own, inline in a sentence, in backticks) or in a ```json fence (or an untagged fence of
 * JSON), on one line or several, other keys ignored; never in a code block, a <think> or after
 * a stop line. Each quoted key "capabilitiesRequested" is looked up: its object starts at the
 * nearest '{' before it over balanced braces and is read with jansson (duplicate keys
 * refused); its value must be a list of 0..PROTO_CAPS_MAX strings, each 1..BRO_CAP_NAME_MAX
 * bytes of [A-Za-z0-9_.-], no escapes. The key unquoted (a word in a sentence) declares
 * nothing. Names are kept as given (the server denies those it does not know, DESIGN §7),
 * duplicates once, in order of appearance across every declaration of the reply. An object
 * read is not looked into again, and the first malformed one ends the reading: linear.
 *
 * Returns 1 with out filled (maybe empty: "[]"), 0 when the reply declares nothing, -EINVAL
 * for a declaration not in that form (tell the model CAPS_MALFORMED), -E2BIG for more than
 * PROTO_CAPS_MAX names, -ENOMEM. out must be empty on entry; on an error it is left empty. */
#define BRO_CAP_NAME_MAX 32
int bro_caps_declared(const char *reply, size_t len, struct proto_strv *out);

/* The format of an agent text, for the catalog test and for callers that format it. */
const char *bro_agent_format(enum pol_agent_text t);

/* Formats agent text POL_AGENT_ID (policy/reasons.h) into buf (cut to size, terminated), its
 * arguments checked by the compiler like POL_REASON's. Is buf. */
#define BRO_AGENT_TEXT(buf, size, ID, ...)                                                      \
        POL_WITH_ID(POL_AGENT_##ID, pol_format((buf), (size), POL_AGENT_FMT, ##__VA_ARGS__))

/* Unit tests for policy/agent.c and policy/agent_text.c: a model's reply read as one code
 * action (every accepted form, every refused form, each rule both ways, several blocks,
 * CRLF, unclosed blocks, backticks and </code> inside Python strings, size bounds, NUL and
 * invalid UTF-8, linear time on hostile replies), the capability declaration both ways, the
 * observation of a run and of a reply without code, and the system prompt, verbatim for
 * representative inputs and bounded for hostile ones.
 *
 * Every reply is handed over in a buffer that ends where an unmapped page starts: a read past
 * len faults, and the test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/utf8.h"
#include "policy/agent.h"
#include "policy/reasons.h"

/* ---- a buffer with nothing readable after it ---- */

static char *guard_mem;
static size_t guard_size;

static const char *guarded(const char *s, size_t n)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t span = (n + page - 1) / page * page + page;
        if (guard_mem)
                (void)munmap(guard_mem, guard_size);
        guard_mem = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(guard_mem != MAP_FAILED);
        guard_size = span;
        assert_int_equal(mprotect(guard_mem + span - page, page, PROT_NONE), 0);
        char *p = guard_mem + span - page - n;
        if (n)
                memcpy(p, s, n);
        return p;
}

/* ---- replies ---- */

struct reply_case {
        const char *what;
        const char *reply;
        size_t len;
        const char *code; /* NULL: NO_CODE */
        const char *why;  /* for NO_CODE */
        unsigned blocks, skipped;
};

#define CODE(what, lit, code, blocks, skipped) { what, lit, sizeof(lit) - 1, code, NULL, blocks, skipped }
#define NOPE(what, lit, why, blocks, skipped) { what, lit, sizeof(lit) - 1, NULL, why, blocks, skipped }

/* Each accepted form, and beside it (in refused_cases) the same form broken: the rule both ways. */
static const struct reply_case accepted_cases[] = {
        CODE("smolagents' form: Thought, Code:, ```py, ```<end_code>",
             "Thought: I will read the data.\nCode:\n```py\nimport pandas as pd\ndf = pd.read_csv('./inputs/sales.csv')\n"
             "print(df.head())\n```<end_code>\n",
             "import pandas as pd\ndf = pd.read_csv('./inputs/sales.csv')\nprint(df.head())\n", 1, 0),
        CODE("```python", "```python\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("```Python", "```Python\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("```PY", "```PY\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("```python3", "```python3\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("```Py3", "```Py3\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("``` without a tag", "```\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("trailing spaces after the tag and the fence", "```py   \nprint(1)\n```   \n", "print(1)\n", 1, 0),
        CODE("a tab after the tag", "```py\t\nprint(1)\n```\n", "print(1)\n", 1, 0),
        CODE("more info after the tag", "```python title=\"x.py\"\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("CRLF line ends", "Thought: x\r\n```py\r\nx = 1\r\nprint(x)\r\n```\r\n", "x = 1\nprint(x)\n", 1, 0),
        CODE("CRLF and <end_code>", "Code:\r\n```py\r\nx = 1\r\n```<end_code>\r\n", "x = 1\n", 1, 0),
        CODE("a closing line of spaces, backticks, <end_code>, spaces", "```py\nprint(1)\n  ``` <end_code> \n", "print(1)\n",
             1, 0),
        CODE("<end_code> alone closes", "```py\nprint(4)\n<end_code>\n", "print(4)\n", 1, 0),
        CODE("a longer closing fence", "```py\nx = 1\n`````", "x = 1\n", 1, 0),
        CODE("a fence after Code: on its line", "Code: ```py\nprint(1)\n```", "print(1)\n", 1, 0),
        CODE("smolagents' <code> form", "Thought: x\n<code>\nprint(1)\n</code>\n", "print(1)\n", 1, 0),
        CODE("<code> after Code:, on one line", "Code: <code>print(1)</code>", "print(1)\n", 1, 0),
        CODE("</code> after the code on its line", "<code>\nprint(1)</code>", "print(1)\n", 1, 0),
        CODE("<code> indented", "  <code>\nprint(1)\n  </code>", "print(1)\n", 1, 0),
        CODE("<end_code> closes a <code> too", "<code>\nprint(1)\n<end_code>", "print(1)\n", 1, 0),
        CODE("a fence alone in <code> is unwrapped", "<code>\n\n```py\nprint(3)\n```\n\n</code>", "print(3)\n", 1, 0),
        CODE("a fence and more in <code> is not", "<code>\n```py\nprint(3)\n```\nprint(4)\n</code>",
             "```py\nprint(3)\n```\nprint(4)\n", 1, 0),
        CODE("four backticks hold a line of three", "````py\nx = 1\n```\ny = 2\n````", "x = 1\n```\ny = 2\n", 1, 0),
        CODE("an indented fence (a list item) loses its indent", "1. Load:\n   ```py\n   import pandas as pd\n   if True:\n       print(1)\n   ```\n",
             "import pandas as pd\nif True:\n    print(1)\n", 1, 0),
        CODE("no more than the fence's indent is taken", "  ```py\n  x = 1\ny = 2\n     z = 3\n  ```",
             "x = 1\ny = 2\n   z = 3\n", 1, 0),
        CODE("blank lines inside are kept", "```py\n\nx = 1\n\n```", "\nx = 1\n\n", 1, 0),
        CODE("UTF-8 code", "```py\nprint('h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9D\x84\x9E')\n```",
             "print('h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9D\x84\x9E')\n", 1, 0),
        CODE("backticks inside a string on a line", "```py\ns = \"```\"\nprint(s)\n```", "s = \"```\"\nprint(s)\n", 1, 0),
        CODE("a fence inside a \"\"\" string does not close the block",
             "```py\nreport = \"\"\"# Report\n```\nprint(1)\n```\n\"\"\"\nprint(report)\n```\nDone.",
             "report = \"\"\"# Report\n```\nprint(1)\n```\n\"\"\"\nprint(report)\n", 1, 0),
        CODE("nor inside a ''' string", "```py\nmd = '''\n```text\nx\n```\n'''\n```",
             "md = '''\n```text\nx\n```\n'''\n", 1, 0),
        CODE("nor a <end_code> line inside a string", "```py\ns = '''\n<end_code>\n'''\n```", "s = '''\n<end_code>\n'''\n", 1,
             0),
        /* The next three would come out the same through the fallback (the first closing line)
         * if the lexer were wrong; the second block of each, a fence inside a string, shows it
         * was not: after a fallback, strings are no longer looked at. */
        CODE("\"\"\" in a comment opens no string",
             "```py\n# a \"\"\" in a comment\nx = 1\n```\n```py\ns = \"\"\"\n```\n\"\"\"\n```",
             "# a \"\"\" in a comment\nx = 1\n\ns = \"\"\"\n```\n\"\"\"\n", 2, 0),
        CODE("an escaped quote does not end a string",
             "```py\ns = \"\"\"a\\\"\"\"b\"\"\"\n```\n```py\nt = \"\"\"\n```\n\"\"\"\n```",
             "s = \"\"\"a\\\"\"\"b\"\"\"\n\nt = \"\"\"\n```\n\"\"\"\n", 2, 0),
        CODE("a quote in a '...' string opens no \"\"\" string",
             "```py\ns = 'it\"\"\"s'\n```\n```py\nt = '''\n```\n'''\n```",
             "s = 'it\"\"\"s'\n\nt = '''\n```\n'''\n", 2, 0),
        CODE("a string never closed: the first closing line closes, and strings are no longer looked at",
             "```py\ns = \"\"\"abc\n```\nThen:\n```py\nt = 1\n```\n```py\nu = \'\'\'\n```\n\'\'\'\n```",
             "s = \"\"\"abc\n\nt = 1\n\nu = \'\'\'\n", 3, 1),
        /* The limit of reading strings: a string the model left open is closed by a quote of a
         * later block, and the blocks between run as one string (its code was broken either
         * way; CommonMark alone would break the well-formed case of the two above instead). */
        CODE("a string left open is closed by a later block's quote",
             "```py\ns = \"\"\"abc\n```\nThen:\n```py\nt = \"\"\"\n```\n\"\"\"\n```",
             "s = \"\"\"abc\n```\nThen:\n```py\nt = \"\"\"\n", 1, 1),
        CODE("</code> inside a string does not close", "<code>\nhtml = '<code>x</code>'\nprint(html)\n</code>",
             "html = '<code>x</code>'\nprint(html)\n", 1, 0),
        CODE("nor on a line of a \"\"\" string", "<code>\ns = \"\"\"\n</code>\n\"\"\"\nprint(s)\n</code>",
             "s = \"\"\"\n</code>\n\"\"\"\nprint(s)\n", 1, 0),
        CODE("</code> in a comment closes", "<code>\nx = 1  # done</code>\nmore prose", "x = 1  # done\n", 1, 0),
        CODE("a <code> string never closed: the first </code> closes", "<code>\ns = '''abc\n</code>\nprose",
             "s = '''abc\n", 1, 0),
        CODE("several blocks are joined in order by a blank line",
             "Load:\n```py\nimport pandas as pd\ndf = pd.read_csv('x.csv')\n```\nAggregate:\n```py\nprint(df.sum())\n```\n",
             "import pandas as pd\ndf = pd.read_csv('x.csv')\n\nprint(df.sum())\n", 2, 0),
        CODE("<code> and fences, in order", "<code>\na = 1\n</code>\n```py\nb = a\n```", "a = 1\n\nb = a\n", 2, 0),
        CODE("untagged fences beside tagged code are sample output, skipped",
             "```py\nprint(1)\n```\nOutput:\n```\n1\n```", "print(1)\n", 1, 1),
        CODE("untagged fences alone are code, joined", "```\na = 1\n```\n```\nprint(a)\n```", "a = 1\n\nprint(a)\n", 2, 0),
        CODE("other languages beside are skipped", "```bash\nls\n```\n```py\nprint(1)\n```\n```json\n{}\n```", "print(1)\n", 1,
             2),
        CODE("a JSON tool call beside code is skipped",
             "```py\nprint(1)\n```\n```json\n{\"name\": \"python\", \"arguments\": {}}\n```", "print(1)\n", 1, 1),
        CODE("an empty block beside a full one", "```py\n```\n```py\nprint(1)\n```", "print(1)\n", 2, 0),
        CODE("tool-call words in prose beside code", "I could send {\"name\": \"python\", \"arguments\": {}} but:\n```py\nprint(1)\n```",
             "print(1)\n", 1, 0),
        CODE("a py block that starts with { but is no tool call is code", "```py\n{'a': 1}\n```", "{'a': 1}\n", 1, 0),
        CODE("Observation: after the block is prose", "```py\nprint(1)\n```\nObservation: 1", "print(1)\n", 1, 0),
        CODE("an unclosed fence of another language after code is not code", "```py\nprint(1)\n```\n```text\ncut he",
             "print(1)\n", 1, 1),
        CODE("an unclosed untagged fence after tagged code is not code", "```py\nprint(1)\n```\nOutput:\n```\n1",
             "print(1)\n", 1, 1),
};

static const struct reply_case refused_cases[] = {
        NOPE("empty", "", "an empty reply", 0, 0),
        NOPE("whitespace", " \n\t\r\n \v\f", "a reply of whitespace only", 0, 0),
        NOPE("prose", "I will now compute the totals.", "prose only, no code block", 0, 0),
        NOPE("code without a fence is prose", "import pandas as pd\nprint(1)\n", "prose only, no code block", 0, 0),
        NOPE("a fence in a sentence: an inline span", "Run ```print(1)``` now.", "prose only, no code block", 0, 0),
        NOPE("an info string with a backtick opens nothing", "```py` x\n", "prose only, no code block", 0, 0),
        NOPE("<code> inside a sentence", "Use <code>print(1)</code> to print.", "prose only, no code block", 0, 0),
        NOPE("old Mac line ends: one line", "```py\rprint(1)\r```", "prose only, no code block", 0, 0),
        NOPE("a raw JSON tool call", "{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}",
             "a JSON tool call; here tools are not called, code is run", 0, 0),
        NOPE("OpenAI's tool_calls as text",
             "{\"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"python\", "
             "\"arguments\": \"{\\\"code\\\": \\\"print(1)\\\"}\"}}]}",
             "a JSON tool call; here tools are not called, code is run", 0, 0),
        NOPE("a function_call", "{\"function_call\" : {\"name\": \"python\"}}",
             "a JSON tool call; here tools are not called, code is run", 0, 0),
        NOPE("Hermes' <tool_call>", "<tool_call>\n{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}\n</tool_call>",
             "a JSON tool call; here tools are not called, code is run", 0, 0),
        NOPE("Llama's python tag", "<|python_tag|>print(1)", "a JSON tool call; here tools are not called, code is run", 0,
             0),
        NOPE("Llama's JSON with parameters", "{\"name\": \"python\", \"parameters\": {\"code\": \"print(1)\"}}",
             "a JSON tool call; here tools are not called, code is run", 0, 0),
        NOPE("a tool call in ```json", "```json\n{\"name\": \"python\", \"arguments\": {}}\n```",
             "a JSON tool call; here tools are not called, code is run", 0, 1),
        NOPE("a tool call in ```py", "```py\n{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}\n```",
             "a JSON tool call; here tools are not called, code is run", 0, 1),
        NOPE("a tool call in an untagged fence", "```\n[{\"type\": \"function\", \"function\": {\"arguments\": \"{}\"}}]\n```",
             "a JSON tool call; here tools are not called, code is run", 0, 1),
        NOPE("```bash", "```bash\nls -la\n```", "a ```bash block, which is not Python", 0, 1),
        NOPE("```text", "```text\nprint(1)\n```", "a ```text block, which is not Python", 0, 1),
        NOPE("```json without a tool call", "```json\n{\"a\": 1}\n```", "a ```json block, which is not Python", 0, 1),
        NOPE("```pycon", "```pycon\n>>> print(1)\n```", "a ```pycon block, which is not Python", 0, 1),
        NOPE("```ipython", "```ipython\n%timeit x\n```", "a ```ipython block, which is not Python", 0, 1),
        NOPE("the first other language is named", "```sh\nls\n```\n```bash\nls\n```", "a ```sh block, which is not Python",
             0, 2),
        NOPE("a tag's odd bytes are shown as ?", "```b@sh!\nls\n```", "a ```b?sh? block, which is not Python", 0, 1),
        NOPE("a tag's UTF-8 too", "```pyth\xC3\xB6n\nx\n```", "a ```pyth??n block, which is not Python", 0, 1),
        NOPE("a long tag is cut at 16 bytes", "```abcdefghijklmnopqrstuvwxyz\nx\n```", "a ```abcdefghijklmnop block, which is not Python",
             0, 1),
        NOPE("an untagged fence of JSON", "```\n{\"a\": 1}\n```", "a ``` block of JSON, which is not Python", 0, 1),
        NOPE("an untagged fence of a JSON list", "```\n  [1, 2]\n```", "a ``` block of JSON, which is not Python", 0, 1),
        NOPE("an unclosed ```py", "Thought: x\n```py\nprint(1)\n",
             "a code block opened at line 2 and never closed (no closing ```)", 1, 0),
        NOPE("an unclosed block after a closed one refuses the whole", "```py\na = 1\n```\nand\n```py\nb = 2",
             "a code block opened at line 5 and never closed (no closing ```)", 2, 0),
        NOPE("an unclosed <code>", "<code>\nprint(1)\n", "a code block opened at line 1 and never closed (no closing </code>)",
             1, 0),
        NOPE("an unclosed untagged fence alone", "```\nprint(1)", "a code block opened at line 1 and never closed (no closing ```)",
             1, 0),
        NOPE("an opener on the last line", "Here:\n```py", "a code block opened at line 2 and never closed (no closing ```)",
             1, 0),
        NOPE("a closing line with text after it closes nothing", "```py\nprint(1)\n``` done",
             "a code block opened at line 1 and never closed (no closing ```)", 1, 0),
        NOPE("fewer backticks close nothing", "````py\nprint(1)\n```",
             "a code block opened at line 1 and never closed (no closing ```)", 1, 0),
        NOPE("a fence must begin its line", "Here: ```py\nprint(1)\n```",
             "a code block opened at line 3 and never closed (no closing ```)", 1, 0),
        NOPE("an unclosed \"\"\" string and no closing line at all", "```py\ns = \"\"\"\n",
             "a code block opened at line 1 and never closed (no closing ```)", 1, 0),
        NOPE("an empty block", "```py\n```", "only empty code blocks", 1, 0),
        NOPE("a block of blanks", "```py\n  \n\t\n```", "only empty code blocks", 1, 0),
        NOPE("an empty <code>", "<code></code>", "only empty code blocks", 1, 0),
        NOPE("a NUL byte", "```py\nprint(1)\0\n```", "a NUL byte (at byte 14)", 0, 0),
        NOPE("a NUL byte in prose", "\0", "a NUL byte (at byte 0)", 0, 0),
        NOPE("a truncated sequence", "```py\nprint('\xC3')\n```", "bytes that are not UTF-8 (at byte 13)", 0, 0),
        NOPE("an overlong", "```py\n'\xC0\xAF'\n```", "bytes that are not UTF-8 (at byte 7)", 0, 0),
        NOPE("a surrogate", "x\xED\xA0\x80", "bytes that are not UTF-8 (at byte 1)", 0, 0),
        NOPE("a lone continuation", "\x80", "bytes that are not UTF-8 (at byte 0)", 0, 0),
        NOPE("cut at the end", "abc\xF0\x9F", "bytes that are not UTF-8 (at byte 3)", 0, 0),
};
#undef CODE
#undef NOPE

static void check_reply(const struct reply_case *c)
{
        struct pol_reply r;
        const char *buf = guarded(c->reply, c->len);
        assert_int_equal(pol_reply_parse(buf, c->len, &r), 0);
        if (c->code) {
                if (r.kind != POL_REPLY_CODE)
                        fail_msg("%s: no code (%s)", c->what, r.why);
                if (strcmp(r.code, c->code) != 0)
                        fail_msg("%s: code\n[%s]\nexpected\n[%s]", c->what, r.code, c->code);
                assert_null(r.why);
                assert_true(utf8_valid((const uint8_t *)r.code, strlen(r.code)));
        } else {
                if (r.kind != POL_REPLY_NO_CODE)
                        fail_msg("%s: code found:\n[%s]", c->what, r.code);
                assert_null(r.code);
                if (strcmp(r.why, c->why) != 0)
                        fail_msg("%s: why \"%s\", expected \"%s\"", c->what, r.why, c->why);
        }
        if (r.blocks != c->blocks || r.skipped != c->skipped)
                fail_msg("%s: %u blocks, %u skipped; expected %u, %u", c->what, r.blocks, r.skipped, c->blocks, c->skipped);
        pol_reply_free(&r);
        assert_null(r.code);
        assert_null(r.why);
        pol_reply_free(&r); /* twice is harmless */
}

static void test_reply_accepted(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(accepted_cases); i++)
                check_reply(&accepted_cases[i]);
}

static void test_reply_refused(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(refused_cases); i++)
                check_reply(&refused_cases[i]);
}

/* Only len bytes are the reply: what follows them in memory is not read. */
static void test_reply_len(void **state)
{
        (void)state;
        static const char two[] = "```py\nprint(1)\n```\n```py\nprint(2)\n```";
        struct pol_reply r;
        assert_int_equal(pol_reply_parse(two, 18, &r), 0);
        assert_int_equal(r.kind, POL_REPLY_CODE);
        assert_string_equal(r.code, "print(1)\n");
        pol_reply_free(&r);
        /* cut inside the first block: unclosed */
        assert_int_equal(pol_reply_parse(two, 10, &r), 0);
        assert_int_equal(r.kind, POL_REPLY_NO_CODE);
        assert_string_equal(r.why, "a code block opened at line 1 and never closed (no closing ```)");
        pol_reply_free(&r);
        /* a NUL after len is not the reply's */
        assert_int_equal(pol_reply_parse("```py\nx\n```\0junk", 11, &r), 0);
        assert_string_equal(r.code, "x\n");
        pol_reply_free(&r);
}

static void test_reply_api(void **state)
{
        (void)state;
        struct pol_reply r;
        assert_int_equal(pol_reply_parse("x", 1, NULL), -EINVAL);
        assert_int_equal(pol_reply_parse(NULL, 5, &r), -EINVAL);
        assert_int_equal(pol_reply_parse(NULL, 0, &r), 0);
        assert_int_equal(r.kind, POL_REPLY_NO_CODE);
        assert_string_equal(r.why, "an empty reply");
        pol_reply_free(&r);
        pol_reply_free(NULL);
}

/* ---- size bounds, and time on hostile replies ---- */

static char *fence_of(size_t code_bytes, const char *tail)
{
        size_t n = 6 + code_bytes + 4 + strlen(tail);
        char *s = malloc(n + 1);
        assert_non_null(s);
        memcpy(s, "```py\n", 6);
        memset(s + 6, 'a', code_bytes);
        memcpy(s + 6 + code_bytes, "\n```", 4);
        strcpy(s + 10 + code_bytes, tail);
        return s;
}

static void test_reply_source_max(void **state)
{
        (void)state;
        struct pol_reply r;
        /* PROTO_SOURCE_MAX bytes of code, its LF included: taken */
        _cleanup_free_ char *at = fence_of(PROTO_SOURCE_MAX - 1, "");
        assert_int_equal(pol_reply_parse(guarded(at, strlen(at)), strlen(at), &r), 0);
        assert_int_equal(r.kind, POL_REPLY_CODE);
        assert_int_equal(strlen(r.code), PROTO_SOURCE_MAX);
        pol_reply_free(&r);
        /* one more: refused */
        _cleanup_free_ char *over = fence_of(PROTO_SOURCE_MAX, "");
        assert_int_equal(pol_reply_parse(guarded(over, strlen(over)), strlen(over), &r), 0);
        assert_int_equal(r.kind, POL_REPLY_NO_CODE);
        assert_string_equal(r.why, "1048577 bytes of code, over the limit of 1048576 bytes");
        assert_int_equal(r.blocks, 1);
        pol_reply_free(&r);
        /* two blocks that fit alone, not joined (the blank line between them counts) */
        _cleanup_free_ char *half = fence_of(PROTO_SOURCE_MAX / 2 - 1, "\n");
        size_t h = strlen(half);
        _cleanup_free_ char *both = malloc(2 * h + 1);
        memcpy(both, half, h);
        memcpy(both + h, half, h + 1);
        assert_int_equal(pol_reply_parse(guarded(both, 2 * h), 2 * h, &r), 0);
        assert_int_equal(r.kind, POL_REPLY_NO_CODE);
        assert_string_equal(r.why, "1048577 bytes of code, over the limit of 1048576 bytes");
        assert_int_equal(r.blocks, 2);
        pol_reply_free(&r);
}

static double cpu_s(void)
{
        return (double)clock() / CLOCKS_PER_SEC;
}

/* n copies of unit in one buffer */
static char *repeat(const char *unit, size_t n, size_t *len)
{
        size_t u = strlen(unit);
        char *s = malloc(u * n + 1);
        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
                memcpy(s + i * u, unit, u);
        s[u * n] = 0;
        *len = u * n;
        return s;
}

/* Replies of megabytes made to hurt a scanner: each is read in linear time (a quadratic one
 * would take hours on these), to a sensible answer. */
static void test_reply_hostile(void **state)
{
        (void)state;
        static const struct {
                const char *unit;
                size_t n;
                const char *why; /* NULL: code */
                unsigned blocks;
        } cases[] = {
                { "All prose, no code at all, line after line.\n", 400000, "prose only, no code block", 0 },
                { "```py\nx=1\n```\n", 100000, NULL, 100000 },
                /* every block opens a ''' string the next one closes: two by two */
                { "```py\n'''\n```\n", 100000, NULL, 50000 },
                /* strings that never close, and no closing line: one unclosed block */
                { "```py\n'''\n", 1000000, "a code block opened at line 1 and never closed (no closing ```)", 1 },
                { "<code>\n'''\n", 1000000, "a code block opened at line 1 and never closed (no closing </code>)", 1 },
                /* one line of 12 million backticks opens a block (CommonMark's rule) */
                { "```", 4000000, "a code block opened at line 1 and never closed (no closing ```)", 1 },
                { "`x", 8000000, "prose only, no code block", 0 },
                { "\"arguments\"", 1000000, "prose only, no code block", 0 },
                { "<code>", 2000000, "a code block opened at line 1 and never closed (no closing </code>)", 1 },
                { "```\n", 1000000, "only empty code blocks", 500000 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t len;
                _cleanup_free_ char *s = repeat(cases[i].unit, cases[i].n, &len);
                const char *buf = guarded(s, len);
                struct pol_reply r;
                double t0 = cpu_s();
                assert_int_equal(pol_reply_parse(buf, len, &r), 0);
                double dt = cpu_s() - t0;
                if (dt > 5.0)
                        fail_msg("case %zu: %.1f s for %zu bytes", i, dt, len);
                if (cases[i].why) {
                        if (r.kind != POL_REPLY_NO_CODE || strcmp(r.why, cases[i].why) != 0)
                                fail_msg("case %zu: %s", i, r.why ? r.why : "code");
                } else
                        assert_int_equal(r.kind, POL_REPLY_CODE);
                if (r.blocks != cases[i].blocks)
                        fail_msg("case %zu: %u blocks, expected %u", i, r.blocks, cases[i].blocks);
                pol_reply_free(&r);
        }
}

/* Random bytes and random mixes of the scanner's tokens: never a crash, never a read past len,
 * and what comes out is always well-formed. */
static void test_reply_random(void **state)
{
        (void)state;
        static const char *const tokens[] = { "```", "```py", "````", "\n", "\r\n", "'''", "\"\"\"", "'", "\"", "\\",
                                              "#", "<code>", "</code>", "<end_code>", "Code:", " ", "x = 1", "{",
                                              "\"arguments\":", "\xC3\xA9", "\xFF", "\0", "py", "`" };
        unsigned seed = 12345;
        char buf[512];
        for (int iter = 0; iter < 200000; iter++) {
                size_t n = 0;
                seed = seed * 1103515245 + 12345;
                int k = (int)(seed >> 16) % 40;
                for (int j = 0; j < k; j++) {
                        seed = seed * 1103515245 + 12345;
                        const char *t = tokens[(seed >> 16) % ELEMENTSOF(tokens)];
                        size_t tl = t[0] ? strlen(t) : 1;
                        if (n + tl > sizeof(buf))
                                break;
                        memcpy(buf + n, t, tl);
                        n += tl;
                }
                struct pol_reply r;
                assert_int_equal(pol_reply_parse(guarded(buf, n), n, &r), 0);
                if (r.kind == POL_REPLY_CODE) {
                        assert_non_null(r.code);
                        assert_null(r.why);
                        size_t cl = strlen(r.code);
                        assert_true(cl > 0 && r.code[cl - 1] == '\n');
                        assert_true(utf8_valid((const uint8_t *)r.code, cl));
                        assert_null(memchr(buf, 0, n));
                        assert_true(r.blocks > 0);
                } else {
                        assert_null(r.code);
                        assert_non_null(r.why);
                        assert_true(utf8_valid((const uint8_t *)r.why, strlen(r.why)));
                }
                pol_reply_free(&r);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reply_accepted),
                cmocka_unit_test(test_reply_refused),
                cmocka_unit_test(test_reply_len),
                cmocka_unit_test(test_reply_api),
                cmocka_unit_test(test_reply_source_max),
                cmocka_unit_test(test_reply_hostile),
                cmocka_unit_test(test_reply_random),
        };
        return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}

/* anvil-mcp's part of the catalog (policy/mcp_texts.h): each text formatted through its id, as
 * mcp/ formats it (the compiler checks the arguments against the format), and asserted
 * verbatim; each distinct from the others and from every reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/mcp_texts.h"

static const char *const formats[] = {
#define X(id, fmt) [POL_MCP_##id] = fmt,
        POL_MCP_TEXTS(X)
#undef X
};

/* Text t, with arguments of the kind mcp/ gives it. */
static void format_text(enum pol_mcp_text t, char *b, size_t n)
{
        switch (t) {
#define CASE0(ID)                       \
        case POL_MCP_##ID:              \
                POL_MCP_TEXT(b, n, ID); \
                return
#define CASE(ID, ...) \
        case POL_MCP_##ID: POL_MCP_TEXT(b, n, ID, __VA_ARGS__); return
                CASE(PARSE_ERROR, "'[' or '{' expected near 'x'", 1, 1);
                CASE(TOO_LARGE, 8388608ULL);
                CASE0(BATCH);
                CASE0(NOT_OBJECT);
                CASE0(BAD_VERSION);
                CASE0(BAD_ID);
                CASE(UNKNOWN_MEMBER, "extra");
                CASE0(BAD_METHOD);
                CASE0(NO_METHOD);
                CASE(NOTIFICATION_WITH_ID, "notifications/initialized");
                CASE0(DUPLICATE_ID);
                CASE0(BAD_PARAMS);
                CASE(UNKNOWN_METHOD, "tools/destroy");
                CASE(NOT_INITIALIZED, "tools/list");
                CASE0(ALREADY_INITIALIZED);
                CASE(TOO_MANY, 16u);
                CASE(PARAM_TYPE, "arguments.code", "a string");
                CASE(PARAM_MISSING, "params.name");
                CASE(PARAM_UNKNOWN, "arguments", "shell");
                CASE(UNKNOWN_TOOL, "rm_rf");
                CASE(PARAM_BAD, "arguments.args", "257 arguments is over the limit of 256");
                CASE(BAD_URI, "file:///etc/passwd");
                CASE(RESOURCE_TOO_LARGE, "anvil://run/R/big.bin", 5000000ULL, 4194304ULL);
                CASE(RESOURCE_NOT_READ, "anvil://run/R/a.csv", "not_found: gone");
                CASE(ANVIL_UNREACHABLE, "cannot reach Anvil at /run/anvil.sock: No such file or directory");
                CASE(RUN_REFUSED, "busy", "All 4 run slots are in use");
                CASE(PROBE_REFUSED, "unavailable", "no supervisor");
                CASE(TASK_REFUSED, "bad_request", "no model");
                CASE(TASK_INPUT, (size_t)0, "/x.csv", "No such file or directory");
                CASE(IMAGE_NOT_INLINED, "big.png", 3000000ULL, 2097152ULL, "anvil://run/R/big.png");
                CASE(IMAGE_NOT_READ, "a.png", "not_found: gone");
#undef CASE
#undef CASE0
        case _POL_MCP_TEXT_MAX: break;
        }
        b[0] = 0;
}

static const char *const expected[] = {
        [POL_MCP_PARSE_ERROR] = "not valid JSON: '[' or '{' expected near 'x' (line 1, column 1)",
        [POL_MCP_TOO_LARGE] =
                "a message over the limit of 8388608 bytes: refused, its bytes skipped to the next newline",
        [POL_MCP_BATCH] = "a batch (a JSON array) is not accepted: this server speaks MCP 2025-06-18 and later, which "
                          "removed JSON-RPC batching; send each message on its own line",
        [POL_MCP_NOT_OBJECT] = "a JSON-RPC message is a JSON object",
        [POL_MCP_BAD_VERSION] = "\"jsonrpc\" must be \"2.0\"",
        [POL_MCP_BAD_ID] = "\"id\" must be a string or an integer (MCP: never null)",
        [POL_MCP_UNKNOWN_MEMBER] = "unknown member \"extra\" in a JSON-RPC message",
        [POL_MCP_BAD_METHOD] = "\"method\" must be a string",
        [POL_MCP_NO_METHOD] = "a request has a \"method\"; a response (\"result\" or \"error\") is not expected here",
        [POL_MCP_NOTIFICATION_WITH_ID] = "notifications/initialized is a notification and carries no \"id\"",
        [POL_MCP_DUPLICATE_ID] = "this \"id\" is already used by a request in flight",
        [POL_MCP_BAD_PARAMS] = "\"params\" must be an object",
        [POL_MCP_UNKNOWN_METHOD] = "method not found: tools/destroy",
        [POL_MCP_NOT_INITIALIZED] = "tools/list before initialize: send initialize first",
        [POL_MCP_ALREADY_INITIALIZED] = "initialize was already received in this session",
        [POL_MCP_TOO_MANY] = "16 requests are in flight, the most this server carries at once: retry when one ends",
        [POL_MCP_PARAM_TYPE] = "arguments.code: must be a string",
        [POL_MCP_PARAM_MISSING] = "params.name: is required",
        [POL_MCP_PARAM_UNKNOWN] = "arguments: unknown member \"shell\"",
        [POL_MCP_UNKNOWN_TOOL] = "unknown tool: rm_rf (the tools are run_python, submit_task and probe)",
        [POL_MCP_PARAM_BAD] = "arguments.args: 257 arguments is over the limit of 256",
        [POL_MCP_BAD_URI] = "file:///etc/passwd is not an Anvil resource: expected anvil://run/RUN_ID/PATH",
        [POL_MCP_RESOURCE_TOO_LARGE] = "anvil://run/R/big.bin is 5000000 bytes, over the 4194304 bytes anvil-mcp reads "
                                       "into one message: copy it with anvilctl show RUN_ID -o DIR",
        [POL_MCP_RESOURCE_NOT_READ] = "anvil://run/R/a.csv could not be read: not_found: gone",
        [POL_MCP_ANVIL_UNREACHABLE] = "Anvil could not carry out the request, and the tool did not run: cannot reach "
                                      "Anvil at /run/anvil.sock: No such file or directory",
        [POL_MCP_RUN_REFUSED] = "Anvil refused the run (busy): All 4 run slots are in use",
        [POL_MCP_PROBE_REFUSED] = "Anvil refused the probe (unavailable): no supervisor",
        [POL_MCP_TASK_REFUSED] = "Anvil refused the task (bad_request): no model",
        [POL_MCP_TASK_INPUT] = "inputs[0] /x.csv: No such file or directory",
        [POL_MCP_IMAGE_NOT_INLINED] = "image big.png (3000000 bytes) is over the 2097152 bytes shown inline: read it "
                                      "as anvil://run/R/big.png",
        [POL_MCP_IMAGE_NOT_READ] = "image a.png could not be read back: not_found: gone",
};

static void test_mcp_texts_catalog(void **state)
{
        (void)state;
        for (unsigned t = 0; t < _POL_MCP_TEXT_MAX; t++) {
                char buf[1024];
                if (!expected[t])
                        fail_msg("MCP text %u (format \"%s\") has no expected text in this test", t, formats[t]);
                format_text((enum pol_mcp_text)t, buf, sizeof(buf));
                assert_string_equal(buf, expected[t]);
                for (unsigned q = 0; q < t; q++)
                        assert_string_not_equal(formats[t], formats[q]);
                for (unsigned r = 0; r < _POL_REASON_MAX; r++)
                        assert_string_not_equal(formats[t], pol_reason_format((enum pol_reason)r));
        }
        char small[8];
        assert_ptr_equal(POL_MCP_TEXT(small, sizeof(small), NOT_OBJECT), small);
        assert_string_equal(small, "a JSON-"); /* cut, and terminated */
}

int main(void)
{
        const struct CMUnitTest tests[] = { cmocka_unit_test(test_mcp_texts_catalog) };
        return cmocka_run_group_tests_name("mcp_texts", tests, NULL, NULL);
}

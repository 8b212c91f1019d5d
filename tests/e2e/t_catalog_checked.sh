# The catalog's formats are checked by the compiler (policy/reasons.h: POL_REASON,
# POL_STARTUP_MSG, BRO_AGENT_TEXT, BRO_TB_TEXT; policy/prose.h: BRO_PROSE): a call whose argument does not match its
# id's format, or with too few or too many, or with an id that is not in the list, does not
# compile; the same call with the right arguments does (the control: the check is the
# format, not a call that never compiles). The flags are the build's: -Wformat=2 and
# -Werror=format, which the Makefile's WARN must carry.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
grep -q -- '-Werror=format ' "$TOP/Makefile" || fail "the Makefile's WARN lacks -Werror=format"

# try NAME EXPECT(ok|fail) PATTERN CODE: compiles CODE in a function; PATTERN is what the
# compiler must say when it refuses.
try() {
        local name=$1 expect=$2 pattern=$3 code=$4
        cat >"$T/$name.c" <<EOF
#include "policy/reasons.h"
#include "broker/reply.h"
#include "broker/textbuf.h"
#include "policy/prose.h"
#include <stdio.h>
void probe(void);
void probe(void)
{
        char buf[256];
        struct bro_tb b = { 0 };
        (void)b;
        $code;
        puts(buf);
}
EOF
        if LC_ALL=C "$CC" -std=gnu11 -Wall -Wextra -Wformat=2 -Werror=format -I"$TOP" -fsyntax-only \
                "$T/$name.c" >"$T/$name.out" 2>&1; then
                [ "$expect" = ok ] || fail "$name compiled: $code"
        else
                [ "$expect" = fail ] || { cat "$T/$name.out"; fail "$name did not compile: $code"; }
                grep -q -- "$pattern" "$T/$name.out" || { cat "$T/$name.out"; fail "$name: no '$pattern'"; }
        fi
        echo "ok: $name ($expect)"
}

# A reason: KILLED_MEMORY is "killed: memory (peak %.1f MB > %llu MB cap)".
try reason_right ok "" 'POL_REASON(buf, sizeof(buf), KILLED_MEMORY, 612.4, 512ULL)'
try reason_wrong_type fail "expects argument of type 'double'" \
        'POL_REASON(buf, sizeof(buf), KILLED_MEMORY, "612.4", 512ULL)'
try reason_wrong_width fail "expects argument of type 'long long unsigned int'" \
        'POL_REASON(buf, sizeof(buf), KILLED_MEMORY, 612.4, 512)'
try reason_too_few fail "expects a matching" 'POL_REASON(buf, sizeof(buf), KILLED_MEMORY, 612.4)'
try reason_too_many fail "too many arguments for format" \
        'POL_REASON(buf, sizeof(buf), KILLED_TIMEOUT, 1)'
try reason_no_argument ok "" 'POL_REASON(buf, sizeof(buf), KILLED_TIMEOUT)'
try reason_unknown_id fail "POL_NO_SUCH_REASON" 'POL_REASON(buf, sizeof(buf), NO_SUCH_REASON)'
# A start-up message: SOCK_IN_USE is "%s %s: another daemon (pid %d) ...".
try startup_right ok "" 'POL_STARTUP_MSG(buf, sizeof(buf), SOCK_IN_USE, "--listen", "/s", 42)'
try startup_wrong_type fail "expects argument of type 'int'" \
        'POL_STARTUP_MSG(buf, sizeof(buf), SOCK_IN_USE, "--listen", "/s", "42")'
# An agent text, into a buffer and into a text buffer: REPLY_TOO_LONG is "%llu bytes ... %llu".
try agent_right ok "" 'BRO_AGENT_TEXT(buf, sizeof(buf), REPLY_TOO_LONG, 9ULL, 8ULL)'
try agent_wrong_type fail "expects argument of type 'long long unsigned int'" \
        'BRO_AGENT_TEXT(buf, sizeof(buf), REPLY_TOO_LONG, 9, 8ULL)'
try tb_right ok "" 'BRO_TB_TEXT(&b, OBS_REFUSAL_AT, "audit", 3LL, "blocked")'
try tb_wrong_type fail "expects argument of type 'long long int'" \
        'BRO_TB_TEXT(&b, OBS_REFUSAL_AT, "audit", 3, "blocked")'
try tb_reason_wrong_type fail "expects argument of type 'char \*'" \
        'BRO_TB_REASON(&b, RUNTIME_BLOCKED, 1, "why")'
# A result's prose (policy/prose.h): BLAST_WRITE_ARTIFACTS is "%s (at most %llu bytes)".
try prose_right ok "" 'BRO_PROSE(buf, sizeof(buf), BLAST_WRITE_ARTIFACTS, "/work/artifacts", 9ULL)'
try prose_wrong_width fail "expects argument of type 'long long unsigned int'" \
        'BRO_PROSE(buf, sizeof(buf), BLAST_WRITE_ARTIFACTS, "/work/artifacts", 9)'
echo "the compiler checks every catalog call against its format"

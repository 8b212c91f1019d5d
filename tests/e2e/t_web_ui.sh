# The page (web/, issue 13) in a real headless Chromium (Debian's /usr/bin/chromium, driven by
# playwright-core from npm, tests/browser/web_ui.mjs), against a broker of this test's own
# serving it (--http, --web-dir web), the suite's supervisor and a scripted model
# (tests/model_server.py):
#   try to break it: each canned attempt, both variants, run by its button, shows the layer and
#       the exact message of web/breakit/attempts.json (the two whose kernel layer is explained
#       only with kernel audit on: their status and what the tool saw where it is off, the
#       rootless pass, and no layer named)
#   a tool run by the keyboard alone (Tab to the editor, type, Tab to the shared folder's file,
#       Space, Tab to Run, Enter: the tool reads it; the artifacts
#       opened and the CSV sorted by Enter) printing <script>alert(1)</script> and writing
#       x.html / x.svg holding script: shown as text, the SVG only through <img>, the HTML only
#       as a download; no dialog, no global set (with the controls: the same script as a
#       document does open its dialog and set its global)
#   an agent's task: its first step's code and run shown while the task still runs, then the
#       steps, the trace, the result card and the deliverable's chart (a PNG that loaded), and
#       the same from the stored task later; a second task whose tool raises KeyError looks
#       failed, with the error, the traceback and the raising line marked
#   a run killed by the wall limit set in the form, one cancelled by its Cancel button
#   another uid's session neither lists, opens nor cancels that task
#   the probe's findings, a narrow window without sideways scrolling; no error in either page,
#       a CSP violation included (the control: an inline script put in the page is refused, seen)
# Screenshots of each state are saved in BUILD/test-output/t_web_ui/PASS/ (the path is printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
. "$(dirname "$0")/http_lib.sh"
A=65533
B=65532

[ -x /usr/bin/chromium ] || fail "no /usr/bin/chromium: make deps installs Debian's chromium"
command -v npm >/dev/null || fail "no npm: make deps installs Debian's npm"
# playwright-core, as pinned by tests/browser/package-lock.json (npm ci), once per lock
BR="$TOP/tests/browser"
want=$(sha256sum "$BR/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$BR/node_modules/.anvil-lock" 2>/dev/null)" != "$want" ]; then
        (cd "$BR" && npm ci --no-audit --no-fund --loglevel=error) >"$T/npm.log" 2>&1 ||
                fail "npm ci in tests/browser: $(tail -5 "$T/npm.log")"
        echo "$want" >"$BR/node_modules/.anvil-lock"
fi

# The page's own code inserts no markup and evaluates no text: no assignment to innerHTML or
# outerHTML, no insertAdjacentHTML, eval, Function or document.write (the control: the same
# pattern does find such a line)
UNSAFE='\.(inner|outer)HTML[[:space:]]*=|insertAdjacentHTML|(^|[^A-Za-z_.])eval\(|new Function|document\.write'
grep -Eq "$UNSAFE" <<<'box.innerHTML = reply;' || fail "the pattern for unsafe insertion finds nothing (control)"
if grep -En "$UNSAFE" "$TOP"/web/*.js; then fail "web/ inserts markup or evaluates text (above)"; fi
echo "ok: web/*.js inserts no markup and evaluates no text (and the pattern finds a line that does)"

# The model: a look at the data, then (2 s later, so the page shows the first step while the
# task runs) the chart.
model_script chart <<'PY'
[code('import pandas as pd\ndf = pd.read_csv("inputs/sales.csv")\n'
      'print(df.groupby("region")["revenue"].sum())\n', "Thought: first a look at the data."),
 dict(code('import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nimport pandas as pd\n'
           'totals = pd.read_csv("inputs/sales.csv").groupby("region")["revenue"].sum()\n'
           'ax = totals.plot.bar()\nax.set_ylabel("revenue")\nplt.tight_layout()\n'
           'plt.savefig("artifacts/revenue.png")\ntotals.to_csv("artifacts/revenue.csv")\n'
           'final_answer("chart written")\n', "Thought: now the chart."), delay_s=2),
 # the second task: a real KeyError, then an answer with nothing written: a failed task
 code('import pandas as pd\ndf = pd.read_csv("inputs/sales.csv")\nprint(df["amount_usd"].sum())\n'),
 code('final_answer("could not compute it")\n')]
PY
start_model chart

# The broker, serving the real web/ (http_lib.sh's start_web serves a stand-in of its own)
start_bro web --http 127.0.0.1:0 --web-dir "$TOP/web" --model-url "http://127.0.0.1:$PORT_chart/v1" --model scripted
ORIGIN=$(sed -n 's/.*web UI: \(http:[^ ]*\) (files from .*/\1/p' "$T/web.log" | tail -1)
[ -n "$ORIGIN" ] || fail "the broker names no web UI origin: $(cat "$T/web.log")"
WEB_SOCK="$T/web.sock"
# A's session shares a folder (anvilctl ui --inputs: A's own files, opened by anvilctl as A)
mkdir -p "$T/folder"
cp "$TOP/data/sales.csv" "$T/folder/sales.csv"
chown -R $A "$T/folder"
link_a=$(login_link $A --inputs "$T/folder")
link_b=$(login_link $B)
expect_match "A's login link" "^$ORIGIN/login\\?t=" "$link_a"

# Kept after the test (the build's directory, not the test's, which is removed), one folder
# a pass: ANVIL_E2E_OUT puts them elsewhere.
OUT=${ANVIL_E2E_OUT:-$ANVIL_BUILD/test-output/t_web_ui/$([ -n "$ROOTLESS_USER" ] && echo rootless || echo root)}
rm -rf "$OUT"
WEB_URL="$ORIGIN" WEB_LOGIN_A="$link_a" WEB_LOGIN_B="$link_b" WEB_BREAKIT="$TOP/web/breakit/attempts.json" \
        WEB_INPUT="$TOP/data/sales.csv" WEB_OUT="$OUT" WEB_EXPLAINS="$EXPLAINS" \
        timeout 120 node "$BR/web_ui.mjs" >"$T/browser.out" 2>&1
rc=$?
cat "$T/browser.out"
[ "$rc" = 0 ] || fail "the browser checks (exit $rc); the broker's log: $(tail -5 "$T/web.log")"
echo "screenshots: $OUT"
# The broker kept serving its socket clients throughout
ANVIL_SOCKET="$WEB_SOCK" expect_serving

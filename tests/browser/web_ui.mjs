// The page in a real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core;
// no browser is downloaded), against a real broker's HTTP server and real runs: run by
// tests/e2e/t_web_ui.sh, which starts the daemons and the scripted model and passes:
//   WEB_URL       the broker's http://127.0.0.1:PORT
//   WEB_LOGIN_A   a one-time login link of user A (anvilctl ui --no-browser)
//   WEB_LOGIN_B   one of user B, another uid
//   WEB_BREAKIT   web/breakit/attempts.json (each attempt's expected layer and message)
//   WEB_INPUT     a CSV the agent's task is given (uploaded through the page)
//   WEB_OUT       where the screenshots go
//   WEB_ONLY      (for a look at one part) a comma-separated list of: breakit, tool, agent, probe, other
// Prints "ok: ..." for each check and exits 0, or "FAIL: ..." and exits 1.
import {chromium} from "playwright-core";
import {readFileSync, mkdirSync} from "node:fs";
import {join} from "node:path";

const env = (k) => {
        const v = process.env[k];
        if (!v) throw new Error(`${k} is not set`);
        return v;
};
const URL0 = env("WEB_URL"), OUT = env("WEB_OUT");
mkdirSync(OUT, {recursive: true});
const T0 = Date.now();

function ok(what) {
        console.log(`ok: ${what}`);
}
function fail(what) {
        console.log(`FAIL: ${what}`);
        process.exitCode = 1;
        throw new Error(what);
}
function expectEq(what, want, got) {
        if (want !== got) fail(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
        ok(`${what} = ${JSON.stringify(got)}`);
}
async function shot(page, name) {
        const p = join(OUT, `${name}.png`);
        await page.screenshot({path: p, fullPage: true});
        console.log(`screenshot: ${p}`);
}

// A page of its own context (its own cookie jar: one user), every dialog and page error
// recorded: a tool's or an artifact's script that ran would show there.
const sessions = [];
async function session(browser, login, name) {
        const ctx = await browser.newContext({viewport: {width: 1280, height: 800}, acceptDownloads: true});
        const page = await ctx.newPage();
        const s = {ctx, page, name, dialogs: [], errors: []};
        sessions.push(s);
        page.on("dialog", (d) => {
                s.dialogs.push(d.message());
                d.dismiss().catch(() => {});
        });
        page.on("pageerror", (e) => s.errors.push(`pageerror: ${e.message}`));
        page.on("console", (m) => {
                // A refused request (user B's 404) is logged as an error too: not the page's fault.
                if (m.type() === "error" && !/Failed to load resource/.test(m.text())) s.errors.push(`console: ${m.text()}`);
        });
        const r = await page.goto(login);
        if (!r || !r.ok()) fail(`${name}: the login link answered ${r && r.status()}`);
        await page.waitForFunction(() => /signed in as/.test(document.getElementById("who").textContent), null, {timeout: 10000});
        ok(`${name}: signed in (${await page.textContent("#who")})`);
        return s;
}

async function tab(page, id) {
        await page.click(`#${id}`);
        await page.waitForSelector(`#${id}[aria-selected="true"]`);
}

// ---- try to break it: every attempt, both variants, its verdict read off the page ----
async function breakit(s) {
        const attempts = JSON.parse(readFileSync(env("WEB_BREAKIT"), "utf8"));
        if (attempts.length < 4) fail(`the manifest has ${attempts.length} attempts, not four`);
        const {page} = s;
        await tab(page, "tab-breakit");
        await page.waitForSelector("#breakit-list .attempt");
        for (const a of attempts) {
                for (const v of ["python", "kernel"]) {
                        const want = a[v];
                        const item = `#breakit-list .attempt[data-id="${a.id}"]`;
                        await page.click(`${item} button[data-variant="${v}"]`);
                        const verdict = `${item} .verdict[data-variant="${v}"]`;
                        await page.waitForSelector(`${verdict}[data-status]`, {timeout: 30000});
                        const got = await page.$eval(verdict, (e) => ({layer: e.getAttribute("data-layer"),
                                                                       status: e.getAttribute("data-status"),
                                                                       messages: [...e.querySelectorAll(".message")].map((m) => m.textContent)}));
                        expectEq(`${a.id} (${v}): the run's status`, want.status, got.status);
                        if (want.needs_kernel_audit && process.env.WEB_EXPLAINS === "0") {
                                // Kernel audit off: the kernel refused it, nobody can say which layer
                                if (got.layer !== null) fail(`${a.id} (${v}): a layer is named (${got.layer}) where none can be`);
                                const exText = await page.textContent(`${verdict} .exception`);
                                if (!exText.includes(want.exception)) fail(`${a.id} (${v}): the verdict does not show what the tool saw: ${exText}`);
                                ok(`${a.id} (${v}): refused by the kernel, unexplained (kernel audit off): "${want.exception}"`);
                                continue;
                        }
                        expectEq(`${a.id} (${v}): the layer that stopped it`, want.layer, got.layer);
                        // The first refusal names the layer; the attempt's own message is among those shown
                        // (libxml2's IPv6 probe is refused before its connect, for one)
                        if (!got.messages.includes(want.message)) fail(`${a.id} (${v}): "${want.message}" is not shown: ${JSON.stringify(got.messages)}`);
                        ok(`${a.id} (${v}): its message is shown: "${want.message}"`);
                        // The same event in the trace pane, with its layer as a badge
                        const inTrace = await page.$$eval("#trace-pane li.ev.refusal", (lis, w) =>
                                lis.some((li) => li.querySelector(".badge").textContent === w.layer &&
                                                 li.querySelector(".msg").textContent === w.message), want);
                        if (!inTrace) fail(`${a.id} (${v}): the trace pane does not show the refusal`);
                        if (a.id === attempts[0].id && v === "python") await shot(page, "breakit-python");
                }
        }
        ok(`every break-it attempt stopped where its manifest says, both variants (${attempts.length * 2} runs)`);
        // The free box, both ways: an attempt of one's own is stopped and named; a harmless
        // tool there is not called stopped
        for (const [src, status, layer] of [['print(open("/etc/shadow").read())\n', "blocked", "precheck"],
                                            ['print("just printing")\n', "ok", null]]) {
                await page.fill("#free-source", src);
                await page.click("#free-run");
                await page.waitForSelector("#free-verdict[data-status]", {timeout: 30000});
                expectEq(`the free box, ${src.trim()}: status`, status, await page.getAttribute("#free-verdict", "data-status"));
                expectEq(`the free box, ${src.trim()}: the layer named`, layer, await page.getAttribute("#free-verdict", "data-layer"));
                if (!layer && !/nothing stopped it/.test(await page.textContent("#free-verdict"))) fail("the harmless tool's verdict does not say nothing stopped it");
        }
        // A refusal's line is marked in the code with its layer (the last run shown)
        await shot(page, "breakit-all");
}

// ---- a tool's output and artifacts holding script are shown inert; by keyboard alone ----
const EVIL = [
        'print("<script>alert(1)</script>")',
        'print("<img src=x onerror=\\"window.__pwned=1\\">")',
        'open("artifacts/x.html", "w").write("<script>alert(2); window.__pwned = 2</script><p>hi</p>")',
        'open("artifacts/x.svg", "w").write(\'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">' +
                '<script>alert(3); window.__pwned = 3</script><rect width="40" height="40" fill="red"/></svg>\')',
        'open("artifacts/x.csv", "w").write("name,n\\n<b>bold</b>,2\\nb,10\\na,1\\n\\"c, \\"\\"d\\"\\"\\",3\\n")',
        'print("rows:", sum(1 for _ in open("inputs/sales.csv")) - 1)',
].join("\n") + "\n";

async function keyboardTool(s) {
        const {page} = s;
        await page.goto(`${URL0}/`);
        await page.waitForFunction(() => /signed in as/.test(document.getElementById("who").textContent));
        // The shared folder's list comes from its own request (/api/folder): tabbing before it
        // is drawn would skip the file.
        await page.waitForSelector('#tool-form input[name="folder"]', {state: "attached"});
        // Tab from the top of the page to the source box, type, Tab to "Run it", Enter.
        const order = [];
        for (let i = 0; i < 20; i++) {
                await page.keyboard.press("Tab");
                const id = await page.evaluate(() => document.activeElement && document.activeElement.id);
                order.push(id || "?");
                if (id === "tool-source") break;
        }
        if (order[order.length - 1] !== "tool-source") fail(`Tab never reached the source box: ${order.join(" ")}`);
        ok(`keyboard: Tab reaches the tool's source box (${order.join(" → ")})`);
        const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
        if (ring === "none") fail("keyboard: the focused source box shows no focus ring");
        await page.keyboard.insertText(EVIL);
        // The next stop: the shared folder's file (anvilctl ui --inputs), checked by Space
        await page.keyboard.press("Tab");
        expectEq("keyboard: Tab from the editor reaches the folder's file", "sales.csv",
                 await page.evaluate(() => document.activeElement.name === "folder" && document.activeElement.value));
        await page.keyboard.press("Space");
        for (let i = 0; i < 12; i++) {
                await page.keyboard.press("Tab");
                if ((await page.evaluate(() => document.activeElement.id)) === "tool-run") break;
        }
        expectEq("keyboard: Tab reaches the Run button", "tool-run", await page.evaluate(() => document.activeElement.id));
        await page.keyboard.press("Enter");
        await page.waitForSelector("#trace-pane .result[data-status]", {timeout: 30000});
        expectEq("keyboard: the run's status", "ok", await page.getAttribute("#trace-pane .result", "data-status"));
        // The output, as text
        const out = await page.textContent("#trace-pane .stream.stdout pre");
        if (!out.includes("<script>alert(1)</script>")) fail(`the tool's output is not shown as text: ${out}`);
        ok("the tool's <script> output is shown as text");
        const blast = await page.textContent("#trace-pane .blast");
        for (const k of ["read", "write", "network", "processes", "limits"]) if (!blast.includes(k)) fail(`the blast-radius card has no ${k}: ${blast}`);
        ok("the blast-radius card: read, write, network, processes, limits");
        const tier = await page.textContent("#trace-pane .isolation .tier");
        if (!tier || tier === "unknown") fail(`no isolation tier shown: ${tier}`);
        ok(`the isolation tier: ${tier}`);
        const rows = readFileSync(env("WEB_INPUT"), "utf8").trimEnd().split("\n").length - 1;
        if (!out.includes(`rows: ${rows}`)) fail(`the tool did not read the folder's sales.csv (${rows} rows): ${out}`);
        ok(`the tool read the folder's sales.csv, chosen by the keyboard (rows: ${rows})`);
        // The SVG shown through <img> only; the HTML never rendered, a download link only
        await page.waitForSelector("#artifact-pane .artifact-list");
        const svgBtn = page.locator("#artifact-pane .artifact-list button", {hasText: "x.svg"});
        await svgBtn.focus();
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => {
                const i = document.querySelector("#artifact-pane img.artifact-img");
                return i && i.complete && i.naturalWidth > 0;
        }, null, {timeout: 10000});
        ok("keyboard: the SVG artifact opened (Enter on its button), shown as an <img> that loaded");
        const svgUrl = await page.getAttribute("#artifact-pane img.artifact-img", "src");
        const htmlShown = await page.$$eval("#artifact-pane .artifact-list li", (lis) => {
                const li = lis.find((l) => l.textContent.includes("x.html"));
                return li && {button: !!li.querySelector("button"), download: li.querySelector("a[download]") !== null};
        });
        expectEq("x.html: a download link, no viewer", JSON.stringify({button: false, download: true}), JSON.stringify(htmlShown));
        // The CSV: a table, its row count, sortable by keyboard
        await page.locator("#artifact-pane .artifact-list button", {hasText: "x.csv"}).focus();
        await page.keyboard.press("Enter");
        await page.waitForSelector("#artifact-pane .csv-table");
        expectEq("x.csv: the row count", "4 rows", await page.textContent("#artifact-pane .csv-count"));
        expectEq("x.csv: a quoted field, its comma and quotes kept", true,
                 await page.$$eval("#artifact-pane .csv-table td", (tds) => tds.some((t) => t.textContent === 'c, "d"')));
        expectEq("x.csv: a cell holding markup, as text", "<b>bold</b>", await page.textContent("#artifact-pane .csv-table tbody tr td"));
        await page.locator("#artifact-pane .csv-table th button").nth(1).focus();
        await page.keyboard.press("Enter");
        const col = await page.$$eval("#artifact-pane .csv-table tbody tr", (trs) => trs.map((t) => t.children[1].textContent).join(","));
        expectEq("x.csv: sorted by n, as numbers", "1,2,3,10", col);
        await shot(page, "tool-inert");
        // Fetching the SVG as a document: an attachment under a sandbox policy, never run here
        const r = await page.request.get(new URL(svgUrl, URL0).href);
        expectEq("x.svg served as an attachment", true, /attachment/.test(r.headers()["content-disposition"] || ""));
        // Nothing ran: no dialog, no global set, no script element but the page's own
        await page.waitForTimeout(300);
        expectEq("dialogs opened by a tool's output or artifacts", "[]", JSON.stringify(s.dialogs));
        expectEq("window.__pwned after showing them", "undefined", await page.evaluate(() => typeof window.__pwned));
        expectEq("script elements in the page (its own app.js)", 1, await page.evaluate(() => document.scripts.length));
        // A run killed by the limit set in the form: the kill in the trace and the result
        await page.fill("#tool-source", "while True:\n    pass\n");
        await page.fill("#limit-wall", "1");
        await page.click("#tool-run");
        await page.waitForFunction(() => /killed/.test((document.querySelector("#trace-pane .result") || {}).textContent || ""), null, {timeout: 30000});
        expectEq("a 1 s wall limit: the run's status", "killed", await page.getAttribute("#trace-pane .result", "data-status"));
        const killed = await page.$$eval("#trace-pane li.ev.refusal", (l) => l.map((x) => x.textContent).join(" | "));
        if (!/killed/.test(killed)) fail(`the kill is not in the trace: ${killed}`);
        ok(`the kill is in the trace: ${killed.slice(0, 120)}`);
        const fig = await page.textContent("#trace-pane .result .figures");
        if (!/killed/.test(fig) || !/peak memory \(observed\)/.test(fig)) fail(`the result card lacks the kill or the peaks: ${fig}`);
        ok("the result card shows the kill and the observed peaks");
        await shot(page, "tool-killed");
        await page.fill("#limit-wall", "");
        // Cancelled from the page while it runs (its Cancel button): the run ends at once
        await page.fill("#tool-source", "import time\nprint('waiting', flush=True)\ntime.sleep(30)\n");
        await page.click("#tool-run");
        await page.waitForFunction(() => /waiting/.test((document.querySelector("#trace-pane .live-output") || {}).textContent || ""), null, {timeout: 20000});
        const t0 = Date.now();
        await page.click("#tool-cancel");
        await page.waitForSelector("#trace-pane .result[data-status]", {timeout: 20000});
        const st = await page.textContent("#tool-status");
        if (!/cancel/.test(st)) fail(`the cancelled run's status line: ${st}`);
        ok(`cancelled from the page in ${Date.now() - t0} ms: ${st}`);
        // The controls: the listener does see a dialog, the global check does see a script's
        // write, and the HTML artifact really holds script that runs where it is a document.
        const ctl = await s.ctx.newPage();
        const seen = [];
        ctl.on("dialog", (d) => {
                seen.push(d.message());
                d.dismiss().catch(() => {});
        });
        await ctl.setContent("<script>alert(2); window.__pwned = 2</script><p>hi</p>");
        expectEq("control: the same script as a document opens its dialog", "2", seen.join(","));
        expectEq("control: and sets its global", "2", String(await ctl.evaluate(() => window.__pwned)));
        await ctl.close();
}

// ---- the agent's task: steps as they happen, code, trace, the chart ----
async function agent(s) {
        const {page} = s;
        await tab(page, "tab-agent");
        await page.fill("#agent-task", "Chart the revenue by region in inputs/sales.csv");
        await page.setInputFiles("#agent-inputs input[type=file]", env("WEB_INPUT"));
        await page.click("#agent-run");
        // Submitted: the panes now follow this task (not the newest one shown at start-up)
        await page.waitForFunction(() => /^task \S+: running$/.test(document.getElementById("agent-status").textContent), null, {timeout: 10000});
        // The first step's code is there while the task is still running (the model's next
        // reply is seconds away: its script delays it)
        await page.waitForSelector("#steps .step-card .step-code ol.code", {timeout: 30000});
        const endEarly = await page.textContent("#task-end");
        expectEq("the first action's code is shown before the task ends", "", endEarly.trim());
        // ...and its run's end, before the task's (the next reply is 2 s away)
        await page.waitForSelector("#steps .step-card .run-live", {timeout: 30000});
        expectEq("the first action's run is shown ended before the task ends", "", (await page.textContent("#task-end")).trim());
        ok(`the first action's run, live: ${await page.textContent("#steps .step-card .run-live")}`);
        const reply = await page.textContent("#steps .step-card .reply");
        if (!/Thought/.test(reply)) fail(`the model's reply is not shown in its step: ${reply}`);
        ok("the model's reply is shown in its step");
        await shot(page, "agent-running");
        await page.waitForSelector("#task-end .status-badge", {timeout: 60000});
        expectEq("the task's status", "ok", await page.getAttribute("#task-end .status-badge", "data-status"));
        const steps = await page.$$eval("#steps .step-card", (c) => c.length);
        if (steps < 2) fail(`only ${steps} step shown`);
        ok(`${steps} steps shown`);
        const events = await page.$$eval("#trace-pane li.ev", (l) => l.length);
        if (events < 5) fail(`the trace pane shows ${events} events`);
        ok(`the trace pane shows ${events} lines, the result card and the isolation tier`);
        await page.waitForSelector("#trace-pane .isolation .tier");
        await page.waitForFunction(() => {
                const i = document.querySelector("#artifact-pane img.artifact-img");
                return i && i.complete && i.naturalWidth > 0;
        }, null, {timeout: 10000});
        ok("the deliverable's chart is shown (a PNG that loaded)");
        const code = await page.textContent("#code-pane ol.code");
        if (!/savefig/.test(code)) fail("the code pane does not show the deliverable's code");
        ok("the code pane shows the deliverable's code, with line numbers");
        await shot(page, "agent-done");
        const id = await page.evaluate(async () => (await (await fetch("/api/tasks")).json()).entries[0].id);
        // Later, from the stored task and its trace: the page opened on it (#task=ID), and
        // the page opened plainly, on its user's newest task (as `make demo` opens it)
        for (const url of [`${URL0}/#task=${id}`, `${URL0}/`]) {
                await page.goto("about:blank");
                await page.goto(url);
                await page.waitForSelector("#task-end .status-badge", {timeout: 10000});
                expectEq(`${url}: the stored task's id`, id, await page.textContent("#task-end .id"));
                expectEq(`${url}: its status`, "ok", await page.getAttribute("#task-end .status-badge", "data-status"));
                expectEq(`${url}: its steps, from its trace`, steps, await page.$$eval("#steps .step-card .step-code ol.code", (c) => c.length));
                await page.waitForFunction(() => {
                        const i = document.querySelector("#artifact-pane img.artifact-img");
                        return i && i.complete && i.naturalWidth > 0;
                }, null, {timeout: 10000});
                ok(`${url}: the chart again`);
        }
        // A failed task looks failed: its error, its traceback, the raising line marked
        await tab(page, "tab-agent");
        await page.fill("#agent-task", "Sum the amount_usd column of inputs/sales.csv");
        await page.setInputFiles("#agent-inputs input[type=file]", env("WEB_INPUT"));
        await page.click("#agent-run");
        await page.waitForFunction(() => /^task \S+: running$/.test(document.getElementById("agent-status").textContent), null, {timeout: 10000});
        await page.waitForSelector("#task-end .status-badge", {timeout: 60000});
        expectEq("the failing task's status", "failed", await page.getAttribute("#task-end .status-badge", "data-status"));
        const why = await page.textContent("#task-end .error");
        if (!why.includes("KeyError: 'amount_usd'")) fail(`the failed task's error does not name the exception: ${why}`);
        ok(`the failed task's error: ${why}`);
        const tb = await page.textContent("#task-end pre.traceback");
        if (!/Traceback[\s\S]*KeyError: 'amount_usd'/.test(tb)) fail(`no traceback shown for the failed task: ${tb}`);
        ok("the failed task shows its traceback");
        const raised = await page.$$eval("#code-pane li.line.raised", (l) => l.map((x) => x.getAttribute("data-line")));
        expectEq("the raising line is marked in the code", "3", raised.join(","));
        expectEq("the agent status line", "failed", await page.evaluate(() => /: failed$/.test(document.getElementById("agent-status").textContent) ? "failed" : document.getElementById("agent-status").textContent));
        await shot(page, "agent-failed");
        return {id};
}

// ---- another user: cannot see, open or cancel A's task ----
async function otherUser(s, taskId) {
        const {page} = s;
        const list = await page.evaluate(async () => (await fetch("/api/tasks")).text());
        if (list.includes(taskId)) fail(`user B's task list holds A's task ${taskId}`);
        ok("user B's task list does not hold A's task");
        await page.goto("about:blank"); // a change of the hash alone would not load the page again
        await page.goto(`${URL0}/#task=${taskId}`);
        await page.waitForFunction(() => document.querySelector("#trace-pane li.ev.note"), null, {timeout: 10000});
        const shown = await page.textContent("#trace-pane");
        if (!/40[34]/.test(shown)) fail(`user B opening A's task sees no refusal: ${shown}`);
        ok(`user B opening A's task is refused (${shown.trim().slice(0, 80)})`);
        const st = await page.evaluate(async (id) => (await fetch(`/api/tasks/${id}/cancel`, {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})).status, taskId);
        if (st !== 403 && st !== 404) fail(`user B's cancel of A's task answered ${st}`);
        ok(`user B's cancel of A's task is refused (${st})`);
        await tab(page, "tab-history");
        await page.waitForSelector("#history-tasks li");
        if ((await page.textContent("#history-tasks")).includes(taskId)) fail("user B's history lists A's task");
        ok("user B's history does not list A's task");
        await shot(page, "other-user");
}

async function probeAndNarrow(s) {
        const {page} = s;
        await tab(page, "tab-probe");
        await page.waitForSelector("table.probe tbody tr", {timeout: 30000});
        const rows = await page.$$eval("table.probe tbody tr", (r) => r.length);
        if (rows < 5) fail(`the probe shows ${rows} mechanisms`);
        ok(`the probe's findings: ${rows} mechanisms with available, probed, in force and evidence`);
        await shot(page, "probe");
        await page.setViewportSize({width: 420, height: 800});
        await tab(page, "tab-tool");
        const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (over > 1) fail(`a narrow window scrolls sideways by ${over}px`);
        ok("a 420px window does not scroll sideways");
        await shot(page, "narrow");
}

// headless Chromium as root refuses to start without --no-sandbox: acceptable here, for a
// throwaway test browser that loads only our own page from 127.0.0.1 (the page's own
// protections, CSP and text-only insertion, are what this test checks, not Chromium's sandbox).
const browser = await chromium.launch({executablePath: "/usr/bin/chromium", headless: true,
                                       args: process.getuid() === 0 ? ["--no-sandbox"] : []});
try {
        const only = (process.env.WEB_ONLY || "breakit,tool,agent,probe,other").split(",");
        // Both signed in first: a login link lives 60 s
        const a = await session(browser, env("WEB_LOGIN_A"), "user A");
        const b = only.includes("other") ? await session(browser, env("WEB_LOGIN_B"), "user B") : null;
        const all = b ? [a, b] : [a];
        if (only.includes("breakit")) await breakit(a);
        if (only.includes("tool")) await keyboardTool(a);
        const id = only.includes("agent") ? (await agent(a)).id : null;
        if (only.includes("probe")) await probeAndNarrow(a);
        if (only.includes("other")) {
                await otherUser(b, id);
        }
        for (const x of all) expectEq(`${x.name}: errors in the page (CSP violations included)`, "[]", JSON.stringify(x.errors));
        // The control: an inline script put in the page is refused by its policy, and the
        // check above would have seen it
        const c = a;
        const before = c.errors.length;
        await c.page.evaluate(() => {
                const sc = document.createElement("script");
                sc.textContent = "window.__inline = 1";
                document.body.appendChild(sc);
        });
        await c.page.waitForTimeout(200);
        expectEq("control: an inline script is not run (CSP)", "undefined", await c.page.evaluate(() => typeof window.__inline));
        if (!c.errors.slice(before).some((e) => /Content Security Policy/.test(e))) fail(`control: the CSP refusal was not seen: ${JSON.stringify(c.errors)}`);
        ok("control: the CSP refusal of an inline script is seen as an error in the page");
        console.log(`browser checks done in ${((Date.now() - T0) / 1000).toFixed(1)} s`);
} catch (e) {
        if (!process.exitCode) console.log(`FAIL: ${e.message}`);
        process.exitCode = 1;
        for (const x of sessions) {
                if (x.errors.length) console.log(`${x.name}: errors in the page: ${x.errors.join("; ")}`);
                await shot(x.page, `failed-${x.name.replace(/\W+/g, "-")}`).catch(() => {});
        }
} finally {
        await browser.close();
}

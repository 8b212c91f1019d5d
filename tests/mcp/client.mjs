// The official MCP TypeScript SDK's client against anvil-mcp (tests/e2e/t_mcp.sh runs it):
// spawned over stdio as a host spawns it, against the suite's real broker and supervisor.
// Usage: node client.mjs ANVIL_MCP DATA_CSV OUT_DIR; prints "ok: ..." for each check and exits
// 1 at the first that fails. OUT_DIR/cancelled_run gets the id of the run it cancelled (the
// shell checks its stored result).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import { writeFileSync, readFileSync } from "node:fs";

const [mcpBin, csv, outDir] = process.argv.slice(2);
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function fail(msg) {
    console.error(`FAIL: ${msg}`);
    process.exit(1);
}
// JSON with each object's keys sorted: member order means nothing in JSON.
function canon(v) {
    if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
    if (v && typeof v === "object")
        return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(",")}}`;
    return JSON.stringify(v);
}
function eq(what, want, got) {
    if (canon(want) !== canon(got)) fail(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    console.log(`ok: ${what} = ${JSON.stringify(got).slice(0, 160)}`);
}
function has(what, text, part) {
    if (!text.includes(part)) fail(`${what}: ${JSON.stringify(part)} not in ${JSON.stringify(text.slice(0, 2000))}`);
    console.log(`ok: ${what} says ${JSON.stringify(part).slice(0, 160)}`);
}
// The JSON-RPC error a request is answered with (the SDK throws it as an McpError).
async function rpcError(what, promise) {
    try {
        await promise;
    } catch (e) {
        if (e instanceof McpError) return e;
        fail(`${what}: not an McpError: ${e}`);
    }
    fail(`${what}: answered without an error`);
}

async function connect(args = [], socket = process.env.ANVIL_SOCKET) {
    const transport = new StdioClientTransport({
        command: mcpBin, args, env: { ...process.env, ANVIL_SOCKET: socket }, stderr: "pipe",
    });
    let log = "";
    transport.stderr?.on("data", (d) => { log += d; });
    const client = new Client({ name: "anvil-e2e", version: "1.0" });
    await client.connect(transport);
    return { client, log: () => log };
}

const plot = `
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
df = pd.read_csv("inputs/sales.csv")
print("rows:", len(df))
df.groupby("region")["revenue"].sum().plot.bar()
plt.savefig("artifacts/chart.png")
with open("artifacts/summary.csv", "w") as f:
    f.write("rows\\n%d\\n" % len(df))
`;

const { client, log } = await connect();

// ---- the lifecycle, the lists ----
eq("the server's name", "anvil-mcp", client.getServerVersion().name);
eq("its capabilities", { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
    client.getServerCapabilities());
const tools = await client.listTools();
eq("the tools", ["run_python", "submit_task", "probe"], tools.tools.map((t) => t.name));
eq("run_python requires", ["code"], tools.tools[0].inputSchema.required);

// ---- a run with a PNG: image content, resources ----
const progress = [];
const ok = await client.callTool({ name: "run_python", arguments: { code: plot, inputs: [csv] } }, undefined,
    { onprogress: (p) => progress.push(p) });
const okText = ok.content[0].text;
eq("an ok run's isError", false, ok.isError);
has("an ok run's text", okText, ": ok (exit code 0) in ");
has("its stdout", okText, "stdout:\n  rows: 500\n");
has("its blast radius", okText, "blast radius (");
const run = ok.structuredContent;
eq("its structured status", "ok", run.status);
const png = run.artifacts.find((a) => a.path === "chart.png");
if (!png) fail("no chart.png among the artifacts");
const image = ok.content.find((c) => c.type === "image");
if (!image) fail(`no image content: ${JSON.stringify(ok.content.map((c) => c.type))}`);
eq("the image's type", "image/png", image.mimeType);
const imageBytes = Buffer.from(image.data, "base64");
eq("the image's first bytes are PNG's", PNG_MAGIC.toString("hex"), imageBytes.subarray(0, 8).toString("hex"));
eq("the image is the artifact (sha256)", png.sha256, createHash("sha256").update(imageBytes).digest("hex"));
const links = ok.content.filter((c) => c.type === "resource_link").map((c) => c.uri);
const pngUri = `anvil://run/${run.run_id}/chart.png`;
eq("the resource links", [pngUri, `anvil://run/${run.run_id}/summary.csv`].sort(), links.sort());
if (progress.length < 3) fail(`progress: ${progress.length} notifications`);
if (!progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress)) fail("progress did not increase");
has("progress", progress.map((p) => p.message).join("\n"), `run ${run.run_id}: runner started: tool started`);
has("progress of the output", progress.map((p) => p.message).join("\n"), `run ${run.run_id}: stdout| rows: 500`);

const listed = await client.listResources();
const entry = listed.resources.find((r) => r.uri === pngUri);
eq("resources/list: the chart", { uri: pngUri, name: "chart.png", mimeType: "image/png", size: png.bytes }, entry);
const csvRead = await client.readResource({ uri: `anvil://run/${run.run_id}/summary.csv` });
eq("resources/read of a CSV", [{ uri: `anvil://run/${run.run_id}/summary.csv`, mimeType: "text/csv", text: "rows\n500\n" }],
    csvRead.contents);
const pngRead = await client.readResource({ uri: pngUri });
eq("resources/read of the PNG: its type", "image/png", pngRead.contents[0].mimeType);
eq("resources/read of the PNG: its bytes (sha256)", png.sha256,
    createHash("sha256").update(Buffer.from(pngRead.contents[0].blob, "base64")).digest("hex"));
let e = await rpcError("an artifact the run does not list",
    client.readResource({ uri: `anvil://run/${run.run_id}/nothing.csv` }));
eq("  its code", -32002, e.code);
has("  its message", e.message, `anvil://run/${run.run_id}/nothing.csv could not be read: bad_request: 'nothing.csv' is not an artifact of run ${run.run_id}`);
e = await rpcError("a URI not Anvil's", client.readResource({ uri: "file:///etc/passwd" }));
eq("  its code", -32602, e.code);
has("  its message", e.message, "file:///etc/passwd is not an Anvil resource: expected anvil://run/RUN_ID/PATH");

// ---- refusals: the tool's result, isError, the refusal's text verbatim ----
const blocked = await client.callTool({ name: "run_python", arguments: { code: "import socket\ns = socket.socket()\n" } });
eq("a blocked run's isError", true, blocked.isError);
eq("its status", "blocked", blocked.structuredContent.status);
has("its text", blocked.content[0].text, "refusals (layer: message):\n  precheck: blocked: import socket (network denied by policy) (line 1)\n");
const refused = await client.callTool({ name: "run_python", arguments: { code: "print(1)", limits: { timeout_s: 99999 } } });
eq("a run the server refuses: isError", true, refused.isError);
eq("  its text", "Anvil refused the run (bad_request): run_request.limits.wall_s: 99999 is over the maximum of 3600",
    refused.content[0].text);
const noInput = await client.callTool({ name: "run_python", arguments: { code: "print(1)", inputs: ["/nonexistent/x.csv"] } });
eq("an input that cannot be opened: isError", true, noInput.isError);
eq("  its text", "inputs[0] /nonexistent/x.csv: cannot open it: No such file or directory", noInput.content[0].text);
const notApproved = await client.callTool({ name: "run_python", arguments: { code: "print(1)", capabilities: ["network"] } });
has("a capability not approved", notApproved.content[0].text, "policy: capability network denied: not approved\n");

// ---- invalid params ----
e = await rpcError("an unknown tool", client.callTool({ name: "rm_rf", arguments: {} }));
eq("  its code", -32602, e.code);
has("  its message", e.message, "unknown tool: rm_rf (the tools are run_python, submit_task and probe)");
e = await rpcError("code not a string", client.callTool({ name: "run_python", arguments: { code: 5 } }));
eq("  its code", -32602, e.code);
has("  its message", e.message, "arguments.code: must be a string of at most 1048576 bytes, without NUL");
e = await rpcError("an unknown argument", client.callTool({ name: "run_python", arguments: { code: "1", shell: "sh" } }));
has("  its message", e.message, 'arguments: unknown member "shell"');

// ---- probe ----
const probe = await client.callTool({ name: "probe", arguments: {} });
eq("probe's isError", false, probe.isError);
has("probe's text", probe.content[0].text, `isolation tier: ${probe.structuredContent.tier}\n`);

// ---- cancellation: the run ends killed: cancelled ----
const ac = new AbortController();
let runId = null;
const long = `import time
for i in range(600):
    print("tick", i, flush=True)
    time.sleep(0.1)
`;
const t0 = Date.now();
const cancelled = client.callTool({ name: "run_python", arguments: { code: long, limits: { timeout_s: 120 } } }, undefined, {
    signal: ac.signal,
    onprogress: (p) => {
        const m = /^run (\S+): stdout\| tick/.exec(p.message || "");
        if (m && !runId) {
            runId = m[1];
            ac.abort("the test cancels it");
        }
    },
});
try {
    await cancelled;
    fail("the cancelled call was answered");
} catch (err) {
    if (!runId) fail(`the call ended before any progress: ${err}`);
    console.log(`ok: the cancelled call ended at the client (${err}) after ${Date.now() - t0} ms`);
}
writeFileSync(`${outDir}/cancelled_run`, runId);
// Still serving after the cancel.
eq("a ping after the cancel", {}, await client.ping());
await client.close();
has("anvil-mcp's log", log(), "cancelled by the host: the test cancels it");

// ---- the version negotiated, both ways; approval, both ways ----
{
    const { client: c2 } = await connect(["--approve", "network"]);
    const r = await c2.callTool({ name: "run_python", arguments: { code: "print(1)", capabilities: ["network"] } });
    has("a capability approved: the server's policy decides", r.content[0].text,
        "policy: capability network denied: no host was approved for it\n");
    await c2.close();
}

// ---- Anvil unreachable: a JSON-RPC error, not a tool result ----
{
    const { client: c3 } = await connect([], "/nonexistent/anvil.sock");
    e = await rpcError("the broker unreachable", c3.callTool({ name: "run_python", arguments: { code: "print(1)" } }));
    eq("  its code", -32603, e.code);
    has("  its message", e.message, "Anvil could not carry out the request, and the tool did not run: cannot reach Anvil at " +
        "/nonexistent/anvil.sock: No such file or directory (is anvil-broker running? set ANVIL_SOCKET)");
    await c3.close();
}
// ---- submit_task: refused by a broker with no model; delivered by one with a (scripted) model ----
{
    const r = await (await connect()).client.callTool({ name: "submit_task", arguments: { task: "Sum revenue.", inputs: [csv] } });
    eq("a task the broker has no model for: isError", true, r.isError);
    has("  its text", r.content[0].text, "Anvil refused the task (bad_request): ");
    const { client: c4 } = await connect([], process.env.ANVIL_MCP_TASK_SOCKET);
    const steps = [];
    const t = await c4.callTool({ name: "submit_task", arguments: { task: "Total revenue per region, as a CSV and a chart.",
        inputs: [csv], max_steps: 6 } }, undefined, { onprogress: (p) => steps.push(p.message) });
    const task = t.structuredContent;
    eq("a task delivered: isError", false, t.isError);
    eq("  its status", "ok", task.status);
    has("  its text", t.content[0].text, `task ${task.task_id}: ok\n`);
    has("  the refused action in its text", t.content[0].text, `  action 2: run ${task.steps[1].run.run_id}: blocked\n`);
    const chart = t.content.find((c) => c.type === "image");
    if (!chart) fail(`the task's deliverable: no image content: ${JSON.stringify(t.content.map((c) => c.type))}`);
    eq("  its chart is a PNG", PNG_MAGIC.toString("hex"), Buffer.from(chart.data, "base64").subarray(0, 8).toString("hex"));
    has("  progress", steps.join("\n"), `task ${task.task_id} step 1: `);
    const d = task.deliverable;
    const read = await c4.readResource({ uri: `anvil://run/${d.run_id}/revenue_by_region.csv` });
    has("  its CSV read as a resource", read.contents[0].text, "region,revenue\n");
    e = await rpcError("a task's argument of the wrong type", c4.callTool({ name: "submit_task", arguments: { task: "x", max_steps: 0 } }));
    has("  its message", e.message, "arguments.max_steps: must be an integer, 1..100");
    await c4.close();
}
console.log("ok: all");
process.exit(0);

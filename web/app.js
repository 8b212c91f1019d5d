// The page's driver (in the user's browser, signed in by the one-time link of `anvilctl ui`):
// tabs, the forms that start runs and tasks through /api/, and the live view of one run or
// task at a time in the three panes (render.js), fed by its server-sent events.
import {el, clear, $, api, readB64, ApiError} from "./dom.js";
import {renderCode, renderArtifacts, Trace, statusBadge} from "./render.js";
import {initBreakit} from "./breakit.js";
import {TaskView} from "./task.js";

const trace = new Trace($("trace-pane"));
let current = null; // {kind: "run"|"task", id, es}: what the panes show

// ---- tabs: buttons, arrow keys move between them (the ARIA tabs pattern) ----
const tabs = [...document.querySelectorAll('[role="tab"]')];
let tabChosen = false; // the user picked a tab: the start-up view no longer moves them
function selectTab(tab, focus) {
        for (const t of tabs) {
                const on = t === tab;
                t.setAttribute("aria-selected", on ? "true" : "false");
                t.tabIndex = on ? 0 : -1;
                $(t.getAttribute("aria-controls")).hidden = !on;
        }
        if (focus) tab.focus();
        if (tab.id === "tab-probe") loadProbe(false);
        if (tab.id === "tab-history") loadHistory();
}
tabs.forEach((t, i) => {
        t.addEventListener("click", () => {
                tabChosen = true;
                selectTab(t, false);
        });
        t.addEventListener("keydown", (e) => {
                const d = {ArrowRight: 1, ArrowLeft: -1}[e.key];
                tabChosen = true;
                if (d) selectTab(tabs[(i + d + tabs.length) % tabs.length], true);
                else if (e.key === "Home") selectTab(tabs[0], true);
                else if (e.key === "End") selectTab(tabs[tabs.length - 1], true);
                else return;
                e.preventDefault();
        });
});

function setStatus(id, text, cls) {
        const s = $(id);
        s.textContent = text;
        s.className = `status${cls ? " " + cls : ""}`;
}

// ---- inputs: from the session's folder (anvilctl ui --inputs DIR) and uploads ----
async function loadFolder() {
        let files = [];
        try {
                const f = await api("/api/folder");
                files = Array.isArray(f) ? f : (f && (f.files || f.entries)) || [];
        } catch (_) {
                files = [];
        }
        for (const box of document.querySelectorAll('[data-role="folder"]')) {
                clear(box);
                if (!files.length) {
                        box.appendChild(el("p", {class: "hint"}, "No folder shared: `anvilctl ui --inputs DIR` shares one."));
                        continue;
                }
                for (const f of files) {
                        const name = typeof f === "string" ? f : f.name;
                        box.appendChild(el("label", {}, el("input", {type: "checkbox", name: "folder", value: name}),
                                           ` ${name}`, f.bytes !== undefined ? el("span", {class: "size"}, ` (${f.bytes} bytes)`) : null));
                }
        }
}

async function gatherInputs(form) {
        const inputs = [];
        for (const c of form.querySelectorAll('input[name="folder"]:checked')) inputs.push({name: c.value, from_folder: c.value});
        for (const file of form.querySelector('[data-role="upload"]').files) inputs.push({name: file.name, data_b64: await readB64(file)});
        return inputs;
}

function limits(form) {
        const l = {};
        for (const i of form.querySelectorAll('input[name="limit"]')) if (i.value !== "") l[i.dataset.key] = Number(i.value);
        return l;
}

function caps(form) {
        return [...form.querySelectorAll('input[name="cap"]:checked')].map((c) => c.value);
}

// ---- server-sent events (docs/web-api.md): "trace" (a run's event), "output" ({stream,
// text}), "task_event" (a task's trace line), "model_delta" (a piece of a reply as it
// streams, issue 14), "dropped", "error" ({code, message}) and the
// last, "result"; each payload JSON ----
const SSE_TYPES = ["trace", "output", "task_event", "model_delta", "dropped", "result"];

function listen(path, onData, onLost) {
        const es = new EventSource(path);
        const handle = (type) => (m) => {
                let d;
                try {
                        d = JSON.parse(m.data);
                } catch (_) {
                        d = {message: m.data};
                }
                onData(type, d, es);
        };
        es.onmessage = handle("message");
        for (const t of SSE_TYPES) es.addEventListener(t, handle(t));
        // "error" is both the server's event of that name (it has data) and a lost connection
        es.addEventListener("error", (m) => {
                if (typeof m.data === "string") return handle("error")(m);
                if (es.done) return;
                es.close();
                onLost();
        });
        return es;
}

function stopFollowing() {
        if (current && current.es) {
                current.es.done = true;
                current.es.close();
        }
        current = null;
}

// ---- one run in the panes ----
// followRun(id, source): shows the run live; resolves with its RunResult when it ends.
export function followRun(id, source) {
        stopFollowing();
        const me = {kind: "run", id, es: null};
        current = me;
        renderCode($("code-pane"), source, []);
        trace.reset(`run ${id}`);
        trace.note("running", "the run has started; its events appear as they happen");
        clear($("artifact-pane")).appendChild(el("p", {class: "empty"}, "Running…"));
        return new Promise((resolve) => {
                let finished = false;
                const finish = async (res) => {
                        if (finished) return;
                        finished = true;
                        if (me.es) {
                                me.es.done = true;
                                me.es.close();
                        }
                        const full = (await fetchRun(id)) || res;
                        if (current === me) showRun(full, source);
                        resolve(full);
                };
                me.es = listen(`/api/runs/${encodeURIComponent(id)}/events`, (type, d) => {
                        if (current !== me) return;
                        if (type === "result") return finish(d);
                        if (type === "error") {
                                trace.note("error", `${d.code}: ${d.message}`);
                                return pollRun(id).then(finish);
                        }
                        if (type === "dropped") return trace.note("dropped", `the page keeps the first ${d.kept_bytes} bytes of events; the result below has them all`);
                        runData(type, d);
                }, () => pollRun(id).then(finish));
        });
}

function runData(type, d) {
        if (type === "output") trace.output(d.stream, String(d.text ?? ""));
        else if (type === "trace" && d && typeof d === "object") trace.add(d);
}

async function fetchRun(id) {
        try {
                return await api(`/api/runs/${encodeURIComponent(id)}`);
        } catch (_) {
                return null;
        }
}

// The events stream was lost: the stored result, once there (a run ends within its limits).
async function pollRun(id) {
        for (let i = 0; i < 600; i++) {
                const r = await fetchRun(id);
                if (r && r.status && r.status !== "running") return r;
                await new Promise((ok) => setTimeout(ok, 500));
        }
        return {run_id: id, status: "unknown", events: [], not_stored: "no result could be read for this run"};
}

export function showRun(res, source) {
        renderCode($("code-pane"), typeof res.source === "string" ? res.source : source, res.events);
        trace.result(res);
        renderArtifacts($("artifact-pane"), `/api/runs/${encodeURIComponent(res.run_id)}/artifacts/`, res.artifacts);
}

// ---- run your own tool ----
let toolRun = null;
$("tool-form").addEventListener("submit", async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const source = $("tool-source").value;
        setStatus("tool-status", "starting…");
        $("tool-run").disabled = true;
        try {
                const body = {source, inputs: await gatherInputs(form), caps: caps(form), limits: limits(form), args: []};
                const {id} = await api("/api/runs", body);
                toolRun = id;
                $("tool-cancel").disabled = false;
                setStatus("tool-status", `run ${id}: running`);
                const res = await followRun(id, source);
                setStatus("tool-status", `run ${id}: ${res.killed || res.status}`, `st-${res.status}`);
        } catch (err) {
                setStatus("tool-status", `not started: ${err.message}`, "error");
        } finally {
                $("tool-run").disabled = false;
                $("tool-cancel").disabled = true;
                toolRun = null;
        }
});
$("tool-cancel").addEventListener("click", () => cancel("runs", toolRun, "tool-status"));

async function cancel(what, id, statusId) {
        if (!id) return;
        try {
                await api(`/api/${what}/${encodeURIComponent(id)}/cancel`, {});
                setStatus(statusId, "cancel sent");
        } catch (err) {
                setStatus(statusId, `cancel refused: ${err.message}`, "error");
        }
}

// ---- the agent's task ----
let taskView = null;
$("agent-form").addEventListener("submit", async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        setStatus("agent-status", "submitting…");
        $("agent-run").disabled = true;
        try {
                const body = {task: $("agent-task").value, inputs: await gatherInputs(form), capabilities_approved: caps(form)};
                const {id} = await api("/api/tasks", body);
                $("agent-cancel").disabled = false;
                $("agent-cancel").dataset.id = id;
                setStatus("agent-status", `task ${id}: running`);
                const tr = await followTask(id);
                setStatus("agent-status", `task ${id}: ${tr.status}`, `st-${tr.status}`);
        } catch (err) {
                setStatus("agent-status", `not submitted: ${err.message}`, "error");
        } finally {
                $("agent-run").disabled = false;
                $("agent-cancel").disabled = true;
        }
});
$("agent-cancel").addEventListener("click", () => cancel("tasks", $("agent-cancel").dataset.id, "agent-status"));

function followTask(id) {
        stopFollowing();
        const me = {kind: "task", id, es: null};
        current = me;
        taskView = new TaskView($("steps"), $("task-end"), trace, id);
        clear($("code-pane")).appendChild(el("p", {class: "empty"}, "Waiting for the model's first action…"));
        clear($("artifact-pane")).appendChild(el("p", {class: "empty"}, "The deliverable appears when the task ends."));
        const view = taskView;
        return new Promise((resolve) => {
                let finished = false;
                const finish = async () => {
                        if (finished) return;
                        finished = true;
                        me.es.done = true;
                        me.es.close();
                        const tr = await pollTask(id);
                        if (current === me) view.finish(tr, showRun);
                        resolve(tr);
                };
                me.es = listen(`/api/tasks/${encodeURIComponent(id)}/events`, (type, d) => {
                        if (current !== me) return;
                        if (type === "result" || type === "error") {
                                if (type === "error") trace.note("error", `${d.code}: ${d.message}`);
                                return finish();
                        }
                        if (type === "dropped") return trace.note("dropped", `the page keeps the first ${d.kept_bytes} bytes of events; the result below has them all`);
                        if (type === "output") return trace.output(d.stream, d.text || "");
                        view.event(type, d);
                        if (d.kind === "code" || type === "code") renderCode($("code-pane"), d.code, []);
                        if (d.kind === "end" || type === "end") finish();
                }, finish);
        });
}

async function pollTask(id) {
        for (let i = 0; i < 1200; i++) {
                try {
                        const tr = await api(`/api/tasks/${encodeURIComponent(id)}`);
                        const t = tr.result || tr;
                        if (t.status && t.status !== "running") return tr;
                } catch (err) {
                        if (err instanceof ApiError && err.status !== 404) return {task_id: id, status: "unknown", error: err.message};
                }
                await new Promise((ok) => setTimeout(ok, 500));
        }
        return {task_id: id, status: "unknown", error: "no result could be read for this task"};
}

// openTask(id, always): the stored task in the Agent tab, which is selected if always (the
// user asked for it) or if the user has chosen no tab yet (the page's start)
async function openTask(id, always) {
        stopFollowing();
        const me = {kind: "task", id, es: null};
        current = me;
        taskView = new TaskView($("steps"), $("task-end"), trace, id);
        try {
                const tr = await api(`/api/tasks/${encodeURIComponent(id)}`);
                if (current !== me) return;
                if (always || !tabChosen) selectTab($("tab-agent"), false);
                taskView.replay(tr, showRun);
        } catch (err) {
                trace.reset(`task ${id}`);
                trace.note("error", err.message);
        }
}

async function openRun(id) {
        stopFollowing();
        current = {kind: "run", id, es: null};
        try {
                showRun(await api(`/api/runs/${encodeURIComponent(id)}`));
        } catch (err) {
                trace.reset(`run ${id}`);
                trace.note("error", err.message);
        }
}

// ---- the probe ----
let probeLoaded = false;
async function loadProbe(again) {
        if (probeLoaded && !again) return;
        probeLoaded = true;
        const out = clear($("probe-out"));
        setStatus("probe-status", "probing (a jail of its own, a few seconds)…");
        try {
                const p = await api("/api/probe");
                const r = p.probe_result || p;
                out.appendChild(el("p", {class: "tier"}, "isolation tier: ", el("strong", {}, r.tier || "unknown")));
                const yes = (b) => el("td", {class: b ? "yes" : "no"}, b ? "yes" : "no");
                out.appendChild(el("table", {class: "probe"},
                                   el("thead", {}, el("tr", {}, ["mechanism", "available", "probed", "in force", "evidence"].map((h) => el("th", {scope: "col"}, h)))),
                                   el("tbody", {}, (r.mechanisms || []).map((m) => el("tr", {}, el("th", {scope: "row"}, m.name), yes(m.available),
                                                                                          yes(m.probed), yes(m.in_force), el("td", {}, m.evidence || ""))))));
                setStatus("probe-status", "");
        } catch (err) {
                setStatus("probe-status", `the probe failed: ${err.message}`, "error");
        }
}
$("probe-run").addEventListener("click", () => loadProbe(true));

// ---- history ----
function entries(x) {
        return Array.isArray(x) ? x : (x && (x.entries || x.runs || x.tasks)) || [];
}
async function loadHistory() {
        setStatus("history-status", "loading…");
        try {
                const [tasks, runs] = await Promise.all([api("/api/tasks"), api("/api/runs")]);
                fillHistory($("history-tasks"), entries(tasks), (id) => openTask(id, true));
                fillHistory($("history-runs"), entries(runs), openRun);
                setStatus("history-status", "");
        } catch (err) {
                setStatus("history-status", err.message, "error");
        }
}
function fillHistory(ul, list, open) {
        clear(ul);
        if (!list.length) ul.appendChild(el("li", {class: "empty"}, "none"));
        for (const x of list)
                ul.appendChild(el("li", {}, el("button", {type: "button", class: "link", onclick: () => open(x.id)}, x.id), " ",
                                  statusBadge(x.status), " ", el("span", {class: "what"}, x.tool || x.task || "")));
}
$("history-refresh").addEventListener("click", loadHistory);

// ---- start ----
async function start() {
        try {
                const me = await api("/api/me");
                $("who").textContent = me.user ? `signed in as ${me.user} (uid ${me.uid})` : `signed in as uid ${me.uid}`;
        } catch (err) {
                $("who").textContent = err instanceof ApiError && err.status === 401
                        ? "Not signed in: run `anvilctl ui` in a terminal and open the link it prints."
                        : `The broker did not answer: ${err.message}`;
                $("who").classList.add("error");
                for (const b of document.querySelectorAll("form button")) b.disabled = true;
                return;
        }
        loadFolder();
        initBreakit($("breakit-list"), $("free-form"), followRun);
        const h = /^#(run|task)=([A-Za-z0-9._-]+)$/.exec(location.hash);
        if (h) return h[1] === "run" ? openRun(h[2]) : openTask(h[2], true);
        // Nothing asked for: the newest task, if any (`make demo` opens on its task).
        try {
                const t = entries(await api("/api/tasks"));
                if (t.length && current === null) openTask(t[0].id); // unless the user started something meanwhile
        } catch (_) {
                /* no task to show */
        }
}
start();

// The three panes of the page (in the user's browser): the code with its refusals on their
// lines, the trace as it happens with the result's figures, and the artifacts. Everything a
// tool, a model or the server wrote is shown as text (dom.js's el), artifacts only through
// <img> or as text: an .html or .svg a tool wrote is never a document of this origin.
import {el, clear, badge, encodePath, fmtBytes} from "./dom.js";

// Events that stopped something: their line is marked in the code, their message shown.
const REFUSALS = new Set(["blocked", "refused", "capability_denied", "killed"]);

export function isRefusal(ev) {
        return ev && REFUSALS.has(ev.kind);
}

// ---- code ----
// renderCode(box, source, events): the source with line numbers; each event naming a line is
// marked there (a refusal with its layer and message, an exception with its message).
export function renderCode(box, source, events) {
        clear(box);
        if (typeof source !== "string") {
                box.appendChild(el("p", {class: "empty"}, "The source of this run is not stored."));
                return;
        }
        const byLine = new Map();
        for (const ev of events || []) {
                if (!Number.isInteger(ev.line) || ev.line < 1) continue;
                if (!isRefusal(ev) && ev.kind !== "exception") continue;
                if (!byLine.has(ev.line)) byLine.set(ev.line, []);
                byLine.get(ev.line).push(ev);
        }
        const lines = source.split("\n");
        if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
        const ol = el("ol", {class: "code", "aria-label": "source code"});
        lines.forEach((text, i) => {
                const n = i + 1;
                const evs = byLine.get(n) || [];
                const li = el("li", {class: evs.length ? (evs.some(isRefusal) ? "line refused" : "line raised") : "line",
                                     "data-line": n},
                              el("span", {class: "ln", "aria-hidden": "true"}, String(n)),
                              el("code", {class: "src"}, text || " "));
                for (const ev of evs)
                        li.appendChild(el("div", {class: "mark", "data-kind": ev.kind}, badge(ev.layer),
                                          el("span", {class: "mark-msg"}, ev.message || ev.kind)));
                ol.appendChild(li);
        });
        box.appendChild(ol);
}

// ---- trace ----
export class Trace {
        constructor(box) {
                this.box = box;
                this.reset();
        }

        reset(title) {
                clear(this.box);
                if (title) this.box.appendChild(el("p", {class: "trace-title"}, title));
                this.list = el("ol", {class: "events", "aria-label": "trace events"});
                this.box.appendChild(this.list);
                this.out = null;
                this.summary = el("div", {class: "summary"});
                this.box.appendChild(this.summary);
                this.seen = new Set();
        }

        // add(ev[, step]): one trace event (a RunResult event, or a task's run_event), once
        add(ev, step) {
                const key = JSON.stringify([ev.t_ms, ev.layer, ev.kind, ev.message, ev.line]);
                if (this.seen.has(key)) return;
                this.seen.add(key);
                this.list.appendChild(eventItem(ev, step));
        }

        // note(kind, text[, step]): a task's own line (a model reply, an observation, the end)
        note(kind, text, step) {
                this.list.appendChild(el("li", {class: "ev note", "data-kind": kind},
                                         step !== undefined ? el("span", {class: "step"}, `step ${step}`) : null,
                                         el("span", {class: "kind"}, kind),
                                         text ? el("span", {class: "msg"}, text) : null));
        }

        // output(stream, text): the tool's output as it comes
        output(stream, text) {
                if (!this.out) {
                        this.out = el("pre", {class: "live-output", "aria-label": "the tool's output so far"});
                        this.box.insertBefore(el("h3", {}, "Output so far"), this.summary);
                        this.box.insertBefore(this.out, this.summary);
                }
                this.out.appendChild(el("span", {class: stream === "stderr" ? "stderr" : "stdout"}, text));
        }

        // result(res): the RunResult's figures, the blast radius and the isolation tier
        result(res) {
                for (const n of this.list.querySelectorAll('li.note[data-kind="running"]')) n.remove();
                for (const ev of res.events || []) this.add(ev);
                clear(this.summary).appendChild(resultCard(res));
        }
}

function eventItem(ev, step) {
        const t = typeof ev.t_ms === "number" ? `${ev.t_ms} ms` : "";
        return el("li", {class: isRefusal(ev) ? "ev refusal" : "ev", "data-kind": ev.kind || ""},
                  step !== undefined ? el("span", {class: "step"}, `step ${step}`) : null,
                  el("span", {class: "t"}, t), badge(ev.layer), el("span", {class: "kind"}, ev.kind || ""),
                  ev.op ? el("span", {class: "op"}, ev.op) : null,
                  el("span", {class: "msg"}, ev.message || ev.reason || ""),
                  Number.isInteger(ev.line) ? el("span", {class: "at"}, `line ${ev.line}`) : null,
                  ev.traceback ? el("pre", {class: "traceback"}, ev.traceback) : null);
}

const STATUSES = new Set(["ok", "error", "blocked", "killed", "failed", "cancelled", "interrupted", "running"]);

export function statusBadge(status) {
        const s = String(status || "unknown");
        return el("span", {class: `status-badge${STATUSES.has(s) ? " st-" + s : ""}`, "data-status": s}, s);
}

function resultCard(res) {
        const rows = [];
        const add = (k, v) => {
                if (v !== undefined && v !== null && v !== "") rows.push(el("div", {class: "kv"}, el("dt", {}, k),
                                                                          el("dd", {}, String(v))));
        };
        add("exit code", res.exit_code);
        add("signal", res.signal);
        add("killed", res.killed);
        add("wall time", res.wall_ms !== undefined ? `${res.wall_ms} ms` : undefined);
        add("CPU time", res.cpu_ms !== undefined ? `${res.cpu_ms} ms` : undefined);
        add("peak memory (observed)", res.peak_rss_mb !== undefined ? `${res.peak_rss_mb} MB` : undefined);
        const cg = res.cgroup;
        if (cg) {
                add("cgroup memory peak", fmtBytes(cg.memory_peak_bytes));
                add("cgroup pids peak", cg.pids_peak);
                add("OOM kills", cg.oom_kills);
                add("forks refused", cg.forks_refused);
                add("CPU throttled", cg.cpu_throttled_ms !== undefined ? `${cg.cpu_throttled_ms} ms` : undefined);
        }
        const card = el("div", {class: "result", "data-status": res.status || ""},
                        el("h3", {}, "Result ", statusBadge(res.status), res.run_id ? el("span", {class: "id"}, res.run_id) : null),
                        el("dl", {class: "figures"}, rows));
        if (res.stdout) card.appendChild(block("stdout", res.stdout, res.stdout_truncated));
        if (res.stderr) card.appendChild(block("stderr", res.stderr, res.stderr_truncated));
        if (res.blast_radius) card.appendChild(blastCard(res.blast_radius));
        if (res.isolation) card.appendChild(isolationCard(res.isolation));
        if (res.capabilities) card.appendChild(capsLine(res.capabilities));
        if (res.not_stored) card.appendChild(el("p", {class: "warn"}, res.not_stored));
        return card;
}

function block(name, text, truncated) {
        return el("div", {class: `stream ${name}`}, el("h4", {}, name, truncated ? " (truncated)" : ""),
                  el("pre", {}, text));
}

// value(v): any JSON value as nested text (the blast radius' fields are lists, words and
// objects of figures)
function value(v) {
        if (v === null || v === undefined) return el("span", {class: "none"}, "none");
        if (Array.isArray(v)) return v.length ? el("ul", {}, v.map((x) => el("li", {}, value(x)))) :
                                                el("span", {class: "none"}, "none");
        if (typeof v === "object")
                return el("dl", {class: "obj"}, Object.entries(v).map(([k, x]) => el("div", {class: "kv"}, el("dt", {}, k),
                                                                                      el("dd", {}, value(x)))));
        return el("span", {}, String(v));
}

function blastCard(b) {
        return el("div", {class: "card blast"}, el("h4", {}, "Blast radius: what this run could reach"),
                  el("dl", {class: "obj"}, Object.entries(b).map(([k, v]) => el("div", {class: "kv"}, el("dt", {}, k),
                                                                              el("dd", {}, value(v))))));
}

function isolationCard(iso) {
        const mech = Array.isArray(iso.mechanisms) ? iso.mechanisms : [];
        return el("div", {class: "card isolation"},
                  el("h4", {}, "Isolation tier: ", el("span", {class: "tier"}, iso.tier || "unknown")),
                  mech.length ? el("ul", {class: "mechanisms"}, mech.map((m) => el("li", {}, typeof m === "string" ? m : JSON.stringify(m))))
                              : el("p", {class: "none"}, "no mechanism read back"));
}

function capsLine(c) {
        const list = (x) => (Array.isArray(x) && x.length ? x.join(", ") : "none");
        return el("p", {class: "caps-line"}, `capabilities requested: ${list(c.requested)}; granted: ${list(c.granted)}; denied: ${list(c.denied)}`);
}

// ---- artifacts ----
const TEXT_EXT = new Set(["txt", "json", "md", "log", "py"]);
const IMG_EXT = new Set(["png", "jpg", "jpeg", "svg"]);
const TEXT_MAX = 2 * 1024 * 1024; // read at most this much of a text or CSV to show it

function ext(name) {
        const m = /\.([A-Za-z0-9]+)$/.exec(name);
        return m ? m[1].toLowerCase() : "";
}

// renderArtifacts(box, base, artifacts): the list with download links, and a view of the first
// that can be shown (an image first, then a CSV, then text; the tool's own tool.py last).
export function renderArtifacts(box, base, artifacts) {
        clear(box);
        const list = (artifacts || []).filter((a) => a && typeof a.path === "string");
        if (!list.length) {
                box.appendChild(el("p", {class: "empty"}, "This run left no artifact."));
                return;
        }
        const view = el("div", {class: "artifact-view", "aria-live": "polite"});
        const ul = el("ul", {class: "artifact-list"});
        for (const a of list) {
                const url = base + encodePath(a.path);
                const canShow = ext(a.path) === "csv" || IMG_EXT.has(ext(a.path)) || TEXT_EXT.has(ext(a.path));
                ul.appendChild(el("li", {},
                                  canShow ? el("button", {type: "button", class: "link", onclick: () => showArtifact(view, url, a)}, a.path)
                                          : el("span", {class: "name"}, a.path),
                                  el("span", {class: "size"}, fmtBytes(a.bytes)),
                                  el("a", {href: url, download: a.path.split("/").pop(), class: "download"}, "download")));
        }
        box.appendChild(ul);
        box.appendChild(view);
        const rank = (a) => {
                const e = ext(a.path);
                if (a.path === "tool.py") return 9;
                if (e === "png" || e === "jpg" || e === "jpeg" || e === "svg") return 0;
                if (e === "csv") return 1;
                if (TEXT_EXT.has(e)) return 2;
                return 10;
        };
        const first = [...list].sort((x, y) => rank(x) - rank(y))[0];
        if (rank(first) < 10) showArtifact(view, base + encodePath(first.path), first);
}

async function showArtifact(view, url, a) {
        clear(view);
        const e = ext(a.path);
        view.appendChild(el("h3", {}, a.path));
        if (IMG_EXT.has(e)) {
                // An SVG too only as an image: its scripts never run there, and the server sends
                // it as an attachment with a sandbox policy should anything open it as a page.
                view.appendChild(el("img", {src: url, alt: `the artifact ${a.path}`, class: "artifact-img"}));
                return;
        }
        let text, cut;
        try {
                [text, cut] = await fetchText(url);
        } catch (err) {
                view.appendChild(el("p", {class: "error"}, `could not read ${a.path}: ${err.message}`));
                return;
        }
        if (e === "csv") view.appendChild(csvTable(text, cut));
        else view.appendChild(el("pre", {class: "artifact-text"}, text, cut ? "\n… (only the first 2 MiB shown)" : ""));
}

async function fetchText(url) {
        const r = await fetch(url, {credentials: "same-origin"});
        if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
        const reader = r.body.getReader();
        const parts = [];
        let n = 0, cut = false;
        for (;;) {
                const {done, value: chunk} = await reader.read();
                if (done) break;
                parts.push(chunk);
                n += chunk.length;
                if (n >= TEXT_MAX) {
                        cut = true;
                        reader.cancel();
                        break;
                }
        }
        const all = new Uint8Array(Math.min(n, TEXT_MAX));
        let off = 0;
        for (const p of parts) {
                const take = Math.min(p.length, all.length - off);
                all.set(p.subarray(0, take), off);
                off += take;
        }
        return [new TextDecoder("utf-8", {fatal: false}).decode(all), cut];
}

// parseCsv(text): rows of fields (RFC 4180: quoted fields, "" inside quotes, CRLF or LF)
export function parseCsv(text) {
        const rows = [];
        let row = [], field = "", q = false;
        for (let i = 0; i < text.length; i++) {
                const c = text[i];
                if (q) {
                        if (c === '"' && text[i + 1] === '"') {
                                field += '"';
                                i++;
                        } else if (c === '"') q = false;
                        else field += c;
                } else if (c === '"' && field === "") q = true;
                else if (c === ",") {
                        row.push(field);
                        field = "";
                } else if (c === "\n" || c === "\r") {
                        if (c === "\r" && text[i + 1] === "\n") i++;
                        row.push(field);
                        rows.push(row);
                        row = [];
                        field = "";
                } else field += c;
        }
        if (field !== "" || row.length) {
                row.push(field);
                rows.push(row);
        }
        return rows;
}

const CSV_SHOWN = 100;

function csvTable(text, cut) {
        const rows = parseCsv(text);
        const head = rows.shift() || [];
        let body = rows;
        const wrap = el("div", {class: "csv"});
        const caption = el("p", {class: "csv-count"},
                           `${cut ? "at least " : ""}${body.length} row${body.length === 1 ? "" : "s"}` +
                                   (body.length > CSV_SHOWN ? `, the first ${CSV_SHOWN} shown` : "") +
                                   (cut ? " (in the first 2 MiB read)" : ""));
        const table = el("table", {class: "csv-table"});
        const tbody = el("tbody");
        let sortCol = -1, asc = true;
        const numeric = (c) => body.every((r) => r[c] === undefined || r[c] === "" || !isNaN(Number(r[c])));
        const fill = () => {
                clear(tbody);
                for (const r of body.slice(0, CSV_SHOWN)) tbody.appendChild(el("tr", {}, head.map((_, i) => el("td", {}, r[i] ?? ""))));
        };
        const ths = head.map((h, i) => {
                const b = el("button", {type: "button", class: "sort", onclick: () => {
                        asc = sortCol === i ? !asc : true;
                        sortCol = i;
                        const num = numeric(i);
                        body = [...body].sort((x, y) => {
                                const a = x[i] ?? "", c = y[i] ?? "";
                                const d = num ? Number(a) - Number(c) : a.localeCompare(c);
                                return asc ? d : -d;
                        });
                        ths.forEach((th, j) => th.setAttribute("aria-sort", j === i ? (asc ? "ascending" : "descending") : "none"));
                        fill();
                }}, h);
                return el("th", {scope: "col", "aria-sort": "none"}, b);
        });
        table.appendChild(el("thead", {}, el("tr", {}, ths)));
        table.appendChild(tbody);
        fill();
        wrap.appendChild(caption);
        wrap.appendChild(el("div", {class: "table-scroll"}, table));
        return wrap;
}

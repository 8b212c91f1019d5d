// An agent's task on the page (in the user's browser): its steps as they happen (the model's
// reply, each action's code, its run) from the task's events, then the TaskResult: the
// deliverable, or the failure with its traceback. A task's event is a trace line of
// docs/agent.md ({"t_ms", "step", "kind", "message", "code", "event"}).
import {el, clear, badge, encodePath} from "./dom.js";
import {renderCode, renderArtifacts, statusBadge, isRefusal} from "./render.js";

const REPLY_IN_TRACE = 300; // characters of a model reply shown in the trace (all of it in its step)

export class TaskView {
        constructor(stepsBox, endBox, trace, id) {
                this.stepsBox = clear(stepsBox);
                this.endBox = clear(endBox);
                this.trace = trace;
                this.id = id;
                this.cards = new Map();
                this.order = []; // the steps that had code, in order: TaskResult.steps[i] is the i-th
                trace.reset(`task ${id}`);
        }

        card(step) {
                const key = Number.isInteger(step) ? step : 0;
                if (this.cards.has(key)) return this.cards.get(key);
                const c = {
                        li: el("li", {class: "step-card", "data-step": key}),
                        reply: el("pre", {class: "reply", "aria-label": "the model's reply"}),
                        code: el("div", {class: "step-code"}),
                        run: el("div", {class: "step-run"}),
                        notes: el("div", {class: "step-notes"}),
                };
                c.li.append(el("h3", {}, `Step ${key}`), c.reply, c.code, c.run, c.notes);
                c.reply.hidden = true;
                this.cards.set(key, c);
                this.stepsBox.appendChild(c.li);
                return c;
        }

        event(type, d) {
                const kind = d.kind || type;
                const step = d.step;
                switch (kind) {
                case "model_reply": {
                        const c = this.card(step);
                        c.reply.hidden = false;
                        c.reply.textContent = d.message || "";
                        this.trace.note("model reply", clip(d.message), step);
                        break;
                }
                case "model_delta": { // the reply as it streams (issue 14)
                        const c = this.card(step);
                        c.reply.hidden = false;
                        c.reply.appendChild(document.createTextNode(d.text ?? d.message ?? d.delta ?? ""));
                        break;
                }
                case "code": {
                        const c = this.card(step);
                        if (!this.order.includes(c)) this.order.push(c);
                        c.source = d.code;
                        renderCode(clear(c.code), d.code, []);
                        this.trace.note("code action", `${lineCount(d.code)} lines`, step);
                        break;
                }
                case "run_event":
                        if (d.event) {
                                this.trace.add(d.event, step);
                                if (isRefusal(d.event)) this.card(step).run.appendChild(refusal(d.event));
                        }
                        break;
                case "run_stdout":
                case "run_stderr":
                        this.trace.output(kind === "run_stderr" ? "stderr" : "stdout", d.message || "");
                        break;
                case "run_result": // the action's run ended: its line until the TaskResult's
                case "run_error":
                        this.card(step).run.appendChild(el("p", {class: `run-live${kind === "run_error" ? " error" : ""}`}, d.message || kind));
                        this.trace.note(kind.replace(/_/g, " "), clip(d.message), step);
                        break;
                case "observation":
                        this.card(step).notes.appendChild(el("details", {class: "observation"}, el("summary", {}, "What the model was told"),
                                                             el("pre", {}, d.message || "")));
                        this.trace.note(kind, clip(d.message), step);
                        break;
                case "end":
                        this.trace.note("end", [d.status, d.error].filter(Boolean).join(": "), step);
                        break;
                default:
                        this.trace.note(kind.replace(/_/g, " "), clip(d.message || (d.event && d.event.message)), step);
                }
        }

        // finish(taskResult, showRun): each step's run, the end, the deliverable in the panes
        finish(tr, showRun) {
                const t = tr.result || tr.task_result || tr;
                const steps = Array.isArray(t.steps) ? t.steps : [];
                steps.forEach((s, i) => {
                        let c = this.order[i];
                        if (!c) {
                                c = this.card(1000 + i);
                                c.li.querySelector("h3").textContent = `Step ${i + 1}`;
                                renderCode(c.code, s.code, s.run && s.run.events);
                                this.order[i] = c;
                        } else renderCode(clear(c.code), s.code, s.run && s.run.events);
                        clear(c.run).appendChild(stepRun(s, () => {
                                showRun(s.run, s.code);
                        }));
                });
                this.showEnd(t, steps);
                const d = t.deliverable;
                // In the panes: the deliverable's run, else the last that failed (what the error names)
                const failed = [...steps].reverse().find((s) => s.run && s.run.status !== "ok");
                const chosen = d ? steps.find((s) => s.run && s.run.run_id === d.run_id) : failed || steps[steps.length - 1];
                if (chosen && chosen.run) showRun(chosen.run, d ? d.source : chosen.code);
                if (d) renderArtifacts(document.getElementById("artifact-pane"), `/api/tasks/${encodeURIComponent(this.id)}/artifacts/`, d.artifacts);
        }

        showEnd(t, steps) {
                const box = clear(this.endBox);
                box.className = `task-end st-${/^[a-z]+$/.test(t.status || "") ? t.status : "unknown"}`;
                box.appendChild(el("h3", {}, "Task ", statusBadge(t.status), el("span", {class: "id"}, t.task_id || this.id)));
                if (t.error) box.appendChild(el("p", {class: "error"}, t.error));
                if (t.status !== "ok") {
                        const tb = lastTraceback(steps);
                        if (tb) box.appendChild(el("pre", {class: "traceback"}, tb));
                }
                if (t.deliverable) {
                        const names = (t.deliverable.artifacts || []).map((a) => a.path).join(", ");
                        box.appendChild(el("p", {}, `The deliverable is run ${t.deliverable.run_id}: `, names || "no artifact",
                                           " (in the Artifacts pane; its code in the Code pane)."));
                } else box.appendChild(el("p", {}, "No deliverable."));
                for (const k of ["not_stored", "trace_incomplete"]) if (t[k]) box.appendChild(el("p", {class: "warn"}, t[k]));
        }

        // replay(GET /api/tasks/ID): the stored trace's lines, then the result
        replay(tr, showRun) {
                const lines = Array.isArray(tr.trace) ? tr.trace : [];
                for (const line of lines) if (line && typeof line === "object") this.event(line.kind, line);
                this.finish(tr, showRun);
        }
}

function clip(s) {
        if (typeof s !== "string") return "";
        return s.length > REPLY_IN_TRACE ? `${s.slice(0, REPLY_IN_TRACE)}…` : s;
}

function lineCount(s) {
        return typeof s === "string" ? s.split("\n").filter((x, i, a) => i < a.length - 1 || x !== "").length : 0;
}

function refusal(ev) {
        return el("p", {class: "refusal"}, badge(ev.layer), " ", ev.message || ev.kind);
}

function stepRun(s, show) {
        const r = s.run || {};
        const box = el("div", {class: "run-line"}, "its run ", el("span", {class: "id"}, r.run_id || ""), " ",
                       statusBadge(r.status), r.killed ? ` ${r.killed}` : "",
                       el("button", {type: "button", class: "secondary", onclick: show}, "Show this run in the panes"));
        const wrap = el("div", {}, box);
        for (const ev of r.events || []) {
                if (isRefusal(ev)) wrap.appendChild(refusal(ev));
                if (ev.kind === "exception" && ev.traceback) wrap.appendChild(el("pre", {class: "traceback"}, ev.traceback));
        }
        if (r.stdout) wrap.appendChild(el("pre", {class: "stdout"}, r.stdout));
        const arts = (r.artifacts || []).filter((a) => a.path !== "tool.py");
        if (arts.length) wrap.appendChild(el("p", {class: "arts"}, "artifacts: ",
                                              arts.map((a, i) => [i ? ", " : "", el("a", {href: `/api/runs/${encodeURIComponent(r.run_id)}/artifacts/${encodePath(a.path)}`, download: a.path.split("/").pop()}, a.path)])));
        return wrap;
}

function lastTraceback(steps) {
        for (let i = steps.length - 1; i >= 0; i--) {
                const evs = (steps[i].run && steps[i].run.events) || [];
                const ex = evs.find((e) => e.kind === "exception" && e.traceback);
                if (ex) return ex.traceback;
        }
        return "";
}

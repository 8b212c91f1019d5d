// "Try to break it" (in the user's browser): the canned escape attempts of web/breakit/
// (GET /api/breakit, each with a variant the Python layers see and one only the kernel's can
// stop), each run for real on a click, and a free box for any attempt. The verdict is read
// off the run's own result: the first event that stopped it, its layer and exact message.
import {el, clear, api, badge, encodePath} from "./dom.js";
import {statusBadge, isRefusal} from "./render.js";

const VARIANTS = [
        ["python", "Run it", "as written: the Python layers see it"],
        ["kernel", "Run the kernel-only variant", "written so the Python layers cannot see it"],
];

export async function initBreakit(list, freeForm, followRun) {
        const ctx = {followRun, busy: false, buttons: []};
        clear(list);
        let attempts;
        try {
                const m = await api("/api/breakit");
                attempts = Array.isArray(m) ? m : (m && m.attempts) || [];
        } catch (err) {
                list.appendChild(el("li", {class: "error"}, `the attempts could not be loaded: ${err.message}`));
                attempts = [];
        }
        for (const a of attempts) list.appendChild(attemptItem(ctx, a));
        freeForm.addEventListener("submit", async (e) => {
                e.preventDefault();
                const verdict = document.getElementById("free-verdict");
                const source = document.getElementById("free-source").value;
                await attempt(ctx, async () => source, verdict, null, document.getElementById("free-run"));
        });
}

function attemptItem(ctx, a) {
        const li = el("li", {class: "attempt", "data-id": a.id},
                      el("h3", {}, a.title || a.id), a.what ? el("p", {class: "what"}, a.what) : null);
        const row = el("div", {class: "variants"});
        for (const [v, label, hint] of VARIANTS) {
                const spec = a[v];
                if (!spec || !spec.file) continue;
                const verdict = el("div", {class: "verdict", "data-variant": v, "aria-live": "polite"});
                const button = el("button", {type: "button", "data-variant": v}, label);
                ctx.buttons.push(button);
                button.addEventListener("click", () => attempt(ctx, () => source(spec.file), verdict, spec, button));
                row.appendChild(el("div", {class: "variant"}, button, el("p", {class: "hint"}, hint,
                                                                          spec.layer ? `; expected: the ${spec.layer} layer` : ""),
                                   verdict));
        }
        li.appendChild(row);
        return li;
}

async function source(file) {
        const r = await fetch(`/api/breakit/${encodePath(file)}`, {credentials: "same-origin"});
        if (!r.ok) throw new Error(`${r.status}: the attempt's source could not be read`);
        return r.text();
}

async function attempt(ctx, getSource, verdict, spec, button) {
        if (ctx.busy) return;
        ctx.busy = true;
        for (const b of ctx.buttons) b.disabled = true;
        button.disabled = true;
        clear(verdict).appendChild(el("p", {}, "running…"));
        verdict.removeAttribute("data-layer");
        verdict.removeAttribute("data-status");
        try {
                const src = await getSource();
                const {id} = await api("/api/runs", {source: src, inputs: [], caps: [], limits: {}, args: []});
                const res = await ctx.followRun(id, src);
                showVerdict(verdict, res, spec);
        } catch (err) {
                clear(verdict).appendChild(el("p", {class: "error"}, `not run: ${err.message}`));
        } finally {
                ctx.busy = false;
                for (const b of ctx.buttons) b.disabled = false;
                button.disabled = false;
                button.focus();
        }
}

// The first event that stopped the run (a refusal, else a kill); none: the attempt was not stopped.
function stopper(res) {
        const evs = res.events || [];
        return evs.find(isRefusal) || null;
}

function showVerdict(verdict, res, spec) {
        clear(verdict);
        verdict.setAttribute("data-status", res.status || "");
        const s = stopper(res);
        const evs = res.events || [];
        const ex = evs.find((e) => e.kind === "exception");
        const unexplained = evs.find((e) => e.kind === "not_explained");
        if (s) {
                verdict.className = "verdict stopped";
                verdict.setAttribute("data-layer", s.layer || "");
                verdict.appendChild(el("p", {}, statusBadge(res.status), " stopped by ", badge(s.layer),
                                       Number.isInteger(s.line) ? ` at line ${s.line}` : ""));
                verdict.appendChild(el("p", {class: "message"}, s.message || s.kind));
                const more = evs.filter((e) => isRefusal(e) && e !== s);
                if (more.length)
                        verdict.appendChild(el("ul", {class: "more"}, more.map((e) => el("li", {}, badge(e.layer),
                                                                                  el("span", {class: "message"}, e.message || e.kind)))));
        } else if (unexplained && res.status !== "ok") {
                // Refused by the kernel, but with no record of which layer (kernel audit off)
                verdict.className = "verdict stopped";
                verdict.appendChild(el("p", {}, statusBadge(res.status), " refused by the kernel, the layer not named"));
                verdict.appendChild(el("p", {class: "hint"}, unexplained.message));
        } else {
                verdict.className = "verdict not-stopped";
                verdict.appendChild(el("p", {}, statusBadge(res.status), ` run ${res.run_id}: nothing stopped it`));
                if (res.stdout) verdict.appendChild(el("pre", {}, res.stdout));
        }
        if (ex) verdict.appendChild(el("p", {class: "exception"}, "the tool saw: ", el("code", {}, ex.message || "")));
        if (s && spec && spec.layer && spec.layer !== s.layer)
                verdict.appendChild(el("p", {class: "warn"}, `this attempt was written to be stopped by the ${spec.layer} layer`));
}

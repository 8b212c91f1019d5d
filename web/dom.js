// DOM and API helpers of the page (runs in the user's browser, served by anvil-broker).
// Every string that came from a model, a tool or the server becomes a text node: el() never
// parses HTML, and nothing in the page sets innerHTML.

// el("li", {class: "x", onclick: f}, "text", child, ...): an element; string children are text.
export function el(tag, attrs, ...children) {
        const e = document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
                if (v === undefined || v === null || v === false) continue;
                if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
                else if (k === "class") e.className = v;
                else if (k === "text") e.textContent = v;
                else e.setAttribute(k, v === true ? "" : String(v));
        }
        append(e, children);
        return e;
}

function append(e, children) {
        for (const c of children) {
                if (c === undefined || c === null || c === false) continue;
                if (Array.isArray(c)) append(e, c);
                else if (c instanceof Node) e.appendChild(c);
                else e.appendChild(document.createTextNode(String(c)));
        }
}

export function clear(e) {
        while (e.firstChild) e.removeChild(e.firstChild);
        return e;
}

export function $(id) {
        return document.getElementById(id);
}

// A layer's badge: its name as text, its class from a closed list (an unknown layer gets the
// plain badge, never a class named by the server).
const LAYERS = new Set(["precheck", "audit", "seccomp", "landlock", "namespaces", "netns", "cgroup", "rlimit",
                        "runner", "policy", "supervisor", "broker", "kernel", "model", "agent"]);
export function badge(layer) {
        const name = layer ? String(layer) : "—";
        const cls = LAYERS.has(name) ? ` layer-${name}` : "";
        return el("span", {class: `badge${cls}`, "data-layer": name}, name);
}

export class ApiError extends Error {
        constructor(status, message) {
                super(message);
                this.status = status;
        }
}

// api(path[, body]): GET, or POST of body as JSON; the parsed JSON answer, or an ApiError
// with the server's own message (its JSON "error"/"message", or the status line).
export async function api(path, body) {
        const opts = {credentials: "same-origin", headers: {Accept: "application/json"}};
        if (body !== undefined) {
                opts.method = "POST";
                opts.headers["Content-Type"] = "application/json";
                opts.body = JSON.stringify(body);
        }
        const r = await fetch(path, opts);
        const text = await r.text();
        let j = null;
        try {
                j = text ? JSON.parse(text) : null;
        } catch (_) {
                j = null;
        }
        if (!r.ok) {
                // {"error": {"code", "message"}} (docs/web-api.md), else whatever came
                const e = j && typeof j.error === "object" && j.error ? j.error : j || {};
                const msg = e.message ? (e.code ? `${e.code}: ${e.message}` : e.message) :
                                        (typeof e.error === "string" ? e.error : text.trim() || r.statusText);
                throw new ApiError(r.status, `${r.status} ${msg}`);
        }
        return j;
}

// A path's segments each encoded: an artifact "plots/a b.png" -> "plots/a%20b.png".
export function encodePath(p) {
        return String(p).split("/").map(encodeURIComponent).join("/");
}

export function fmtBytes(n) {
        if (typeof n !== "number") return "";
        if (n < 1024) return `${n} B`;
        if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
        return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

// Files chosen in an <input type=file>, read as base64 for POST /api/runs and /api/tasks.
export function readB64(file) {
        return new Promise((resolve, reject) => {
                const r = new FileReader();
                r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
                r.onerror = () => reject(r.error);
                r.readAsDataURL(file);
        });
}

// Lookout's dev overlay (under `reflex run` only, served by Vite): this tab's errors, live, with the
// trace and log lines of the page load or event that produced each. The backend (dev_routes.py)
// answers what the SDKs sent for this tab's traces; this module polls it and shows it in a shadow
// root of its own, so that the app's CSS and the overlay's do not meet.
// Every string from the API or from a fetched module is data: it is shown with text nodes only.
import { SourceMapConsumer } from "source-map-js";

const POLL_MS = 700;
const FETCH_TIMEOUT_MS = 10000; // a hung request must not stop the polling
// Bounds: what a tab keeps and shows, whatever the backend or a module sends.
const MAX_ISSUES = 100, MAX_FRAMES = 50, MAX_TRANSACTIONS = 50, MAX_SPANS = 200, MAX_LOGS = 200;
const MAX_TEXT = 2000, MAX_CONTEXT = 10, MAX_TRACES_ASKED = 200, MAX_CLEARED = 1000;
const MAX_MODULES_PER_POLL = 20, MAX_MODULE_BYTES = 5 * 1024 * 1024, MAX_CACHED_MODULES = 100;
const TRACE_ID = /^[0-9a-f]{32}$/;
const PAGE_MARKER = /^\s*\/\/ reflex-lookout page: (.*)$/;
const INLINE_MAP = /^sourceMappingURL=data:application\/json(?:;charset=[\w-]+)?;base64,([A-Za-z0-9+/=]+)/;
// A definition a frame's line may be in: `function Name(`, `class Name`, `const Name =`.
const DEFINITION = /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s*([A-Za-z_$][\w$]*)\s*\(|class\s+([A-Za-z_$][\w$]*)|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=)/;
const UNSAFE_SCHEMES = new Set(["javascript", "data", "vbscript", "http", "https"]);
const DEFERRED = Symbol("deferred"); // a module not fetched this poll (over the per-poll budget)

// ---- What the API sent, checked: a malformed entry becomes null and is skipped, never thrown on.
const isNum = (v) => typeof v === "number" && Number.isFinite(v);
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v) => (typeof v === "string" ? v.slice(0, MAX_TEXT) : "");
const arr = (v) => (Array.isArray(v) ? v : []);

function cleanPage(raw) {
  if (!isObj(raw) || typeof raw.file !== "string" || !raw.file || !isNum(raw.line)) return null;
  return { module: str(raw.module), function: str(raw.function), file: str(raw.file), line: raw.line };
}

function cleanFrame(raw) {
  if (!isObj(raw)) return null;
  return {
    filename: str(raw.filename), absPath: str(raw.abs_path), fn: str(raw.function),
    lineno: isNum(raw.lineno) ? raw.lineno : 0, colno: isNum(raw.colno) ? raw.colno : 0,
    contextLine: str(raw.context_line), inApp: raw.in_app === true,
    pre: arr(raw.pre_context).slice(-MAX_CONTEXT).map(str), post: arr(raw.post_context).slice(0, MAX_CONTEXT).map(str),
  };
}

function cleanIssue(raw) {
  if (!isObj(raw) || typeof raw.key !== "string" || !raw.key || raw.key.length > MAX_TEXT) return null;
  if (!isNum(raw.count) || !isNum(raw.seq)) return null;
  return {
    key: raw.key, count: raw.count, seq: raw.seq, last: isNum(raw.last) ? raw.last : isNum(raw.first) ? raw.first : 0,
    source: raw.source === "browser" ? "browser" : "server", type: str(raw.type), value: str(raw.value),
    traceId: typeof raw.trace_id === "string" && TRACE_ID.test(raw.trace_id) ? raw.trace_id : "",
    transaction: str(raw.transaction), element: str(raw.element), pythonPage: cleanPage(raw.python_page),
    // Oldest first, the raising frame last (Sentry's order): the newest 50 are kept.
    frames: arr(raw.frames).slice(-MAX_FRAMES).map(cleanFrame).filter(Boolean),
  };
}

const hasTimes = (v) => isObj(v) && isNum(v.start) && isNum(v.end);

function cleanTrace(raw) {
  if (!isObj(raw)) return null;
  const transactions = [];
  let spans = 0;
  for (const t of arr(raw.transactions).filter(hasTimes).slice(0, MAX_TRANSACTIONS)) {
    const kept = arr(t.spans).filter(hasTimes).slice(0, Math.max(0, MAX_SPANS - spans)).map((s) => ({
      id: str(s.span_id), parent: str(s.parent_span_id), op: str(s.op), name: str(s.description), start: s.start, end: s.end,
    }));
    spans += kept.length;
    transactions.push({ id: str(t.span_id), op: str(t.op), name: str(t.name), start: t.start, end: t.end, spans: kept });
  }
  const logs = arr(raw.logs).filter((l) => isObj(l) && isNum(l.timestamp)).slice(0, MAX_LOGS)
    .map((l) => ({ timestamp: l.timestamp, level: str(l.level), body: str(l.body), source: str(l.source) }));
  return { transactions, logs, version: 0 };
}

// ---- Merging an answer into what the tab shows.
function newState() {
  return {
    instance: null, after: 0, root: "", editor: "", pages: {}, configKey: "", configVersion: 0, version: 0,
    issues: new Map(), traces: new Map(), cleared: new Map(),
  };
}

// A cleared key stays hidden unless the answer brings a newer occurrence (a poll in flight when it was
// cleared brings the old one). A restarted backend forgot it: whatever it sends is new.
function stillCleared(state, issue) {
  const cleared = state.cleared.get(issue.key);
  if (!cleared) return false;
  if (cleared.instance === state.instance && issue.count <= cleared.count && issue.seq <= cleared.seq) return true;
  state.cleared.delete(issue.key);
  return false;
}

function merge(state, answer) {
  if (!isObj(answer) || typeof answer.instance !== "string" || !isNum(answer.seq)) throw new Error("not an answer");
  const restarted = state.instance !== null && answer.instance !== state.instance;
  state.instance = answer.instance;
  // A restarted backend counts from 0 again: ask for all it has; what is listed stays.
  state.after = restarted ? 0 : answer.seq;
  const pages = isObj(answer.pages) ? answer.pages : {};
  const configKey = JSON.stringify([str(answer.root), str(answer.editor), pages]);
  if (configKey !== state.configKey) {
    Object.assign(state, { root: str(answer.root).replace(/\/+$/, ""), editor: str(answer.editor), pages, configKey });
    state.configVersion += 1; // links and pages of every listed issue change
  }
  for (const raw of arr(answer.issues)) {
    const issue = cleanIssue(raw);
    if (issue && !stillCleared(state, issue)) state.issues.set(issue.key, issue);
  }
  if (isObj(answer.traces)) {
    for (const [id, raw] of Object.entries(answer.traces)) {
      const trace = TRACE_ID.test(id) ? cleanTrace(raw) : null;
      if (trace) state.traces.set(id, Object.assign(trace, { version: ++state.version }));
    }
  }
  trim(state);
}

function trim(state) {
  if (state.issues.size > MAX_ISSUES) {
    const oldest = [...state.issues.values()].sort((a, b) => a.last - b.last);
    for (const issue of oldest.slice(0, state.issues.size - MAX_ISSUES)) state.issues.delete(issue.key);
  }
  const wanted = new Set([...state.issues.values()].map((issue) => issue.traceId));
  for (const id of state.traces.keys()) if (!wanted.has(id)) state.traces.delete(id);
  for (const key of state.cleared.keys()) if (state.cleared.size > MAX_CLEARED) state.cleared.delete(key);
}

// ---- Editor links.
// A path under the app's root: "./x", "/x" and "http://host/x" are all "x"; nothing may climb out.
function underRoot(root, path) {
  const relative = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").replace(/^(?:\.?\/)+/, "");
  if (!root || !relative || relative.split("/").includes("..")) return null;
  return `${root}/${relative}`;
}

function editorHref(state, path, line, column) {
  const scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(state.editor);
  if (!path || !scheme || UNSAFE_SCHEMES.has(scheme[1].toLowerCase())) return null;
  const encoded = encodeURI(path).replace(/[#?]/g, encodeURIComponent);
  return state.editor.split("{path}").join(encoded).split("{line}").join(String(line || 1))
    .split("{column}").join(String(column || 1));
}

function framePath(state, frame) {
  if (frame.absPath.startsWith("/")) return frame.absPath;
  const file = frame.filename || frame.absPath;
  return /^[a-z][a-z0-9+.-]*:/i.test(file) ? null : underRoot(state.root, file); // a URL is no file
}

// ---- Source maps of the page's own modules (Vite serves them with inline maps).
const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

function moduleUrl(frame) {
  for (const candidate of [frame.absPath, frame.filename]) {
    try {
      const url = new URL(candidate);
      if (/^https?:$/.test(url.protocol) && url.origin === location.origin) return url.href;
    } catch (_) { /* not a URL */ }
  }
  return null;
}

async function fetchText(url, limit) {
  const response = await fetchWithTimeout(url, { credentials: "same-origin" });
  if (!response.ok || Number(response.headers.get("content-length")) > limit) throw new Error("refused");
  if (!response.body) return response.text();
  const reader = response.body.getReader();
  const chunks = [];
  for (let size = 0; ;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) { reader.cancel(); throw new Error("too big"); }
    chunks.push(value);
  }
  return new TextDecoder().decode(await new Blob(chunks).arrayBuffer());
}

// The last inline map of a module's text (an earlier one may be inside a string), parsed.
function inlineMap(code) {
  const at = code.lastIndexOf("sourceMappingURL=data:application/json");
  const match = at < 0 ? null : INLINE_MAP.exec(code.slice(at));
  if (!match) return null;
  const binary = atob(match[1]);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return JSON.parse(new TextDecoder().decode(bytes));
}

async function loadConsumer(url) {
  const map = inlineMap(await fetchText(url, MAX_MODULE_BYTES));
  if (!map) return null;
  await pause(); // the page gets a turn between fetching and parsing a large map
  return { consumer: new SourceMapConsumer(map), sources: new Map() };
}

// One fetch per module URL (without its query: Vite's ?t= stamps); failures are forgotten, to retry.
function loadModule(overlay, url) {
  const key = url.split(/[?#]/)[0];
  if (overlay.modules.has(key)) return overlay.modules.get(key);
  if (overlay.budget <= 0) return DEFERRED;
  overlay.budget -= 1;
  const loading = loadConsumer(url).catch(() => null).then((loaded) => {
    if (!loaded) overlay.modules.delete(key);
    return loaded;
  });
  overlay.modules.set(key, loading);
  for (const old of overlay.modules.keys()) if (overlay.modules.size > MAX_CACHED_MODULES) overlay.modules.delete(old);
  return loading;
}

// Where a mapped source is, relative to the app's root: Vite's root is `.web`, so the module
// /app/routes/_index.jsx is .web/app/routes/_index.jsx, and its map's "_index.jsx" is that file.
function sourcePath(source, url, root) {
  if (root && source.startsWith(`${root}/`)) return source.slice(root.length + 1);
  const web = source.lastIndexOf("/.web/");
  if (web >= 0 && !/^[a-z][a-z0-9+.-]*:/i.test(source)) return source.slice(web + 1);
  try {
    const resolved = new URL(source, url);
    if (resolved.origin !== location.origin) return null;
    const path = decodeURIComponent(resolved.pathname);
    if (path.startsWith("/@fs/")) return root && path.startsWith(`/@fs${root}/`) ? path.slice(root.length + 5) : null;
    return `.web${path}`;
  } catch (_) {
    return null;
  }
}

function markerPage(lines) {
  for (const line of lines) {
    const marker = PAGE_MARKER.exec(line);
    if (!marker) continue;
    try {
      return cleanPage(JSON.parse(marker[1]));
    } catch (_) { /* a marker that is not JSON: look on */ }
  }
  return null;
}

// The function a line is in: walking up, the nearest definition indented less than everything
// between (its body is indented more than it). Unindented code falls back to the map's name for the
// position, then to the nearest definition above.
function componentAt(lines, line, mappedName) {
  const named = (m) => m[1] || m[2] || m[3];
  const indent = (text) => text.length - text.trimStart().length;
  const start = Math.min(line, lines.length) - 1;
  let limit = Infinity;
  for (let i = start; i >= 0; i--) {
    if (!lines[i].trim() || (i !== start && indent(lines[i]) >= limit)) continue; // blank, sibling or deeper
    const definition = DEFINITION.exec(lines[i]);
    // The frame's own line counts only as `function Name(`: `const x = f()` there is a call.
    if (definition && (i !== start || !definition[3])) return named(definition);
    limit = indent(lines[i]);
    if (limit === 0) break;
  }
  if (typeof mappedName === "string" && /^[A-Za-z_$][\w$]*$/.test(mappedName)) return mappedName;
  for (let i = start; i >= 0; i--) {
    const definition = DEFINITION.exec(lines[i]);
    if (definition) return named(definition);
  }
  return "";
}

function sourceLines(loaded, source) {
  if (!loaded.sources.has(source)) {
    const content = loaded.consumer.sourceContentFor(source, true);
    const lines = typeof content === "string" ? content.split(/\r?\n/) : [];
    loaded.sources.set(source, { lines, page: markerPage(lines) });
  }
  return loaded.sources.get(source);
}

function mapFrame(loaded, frame, url, root) {
  if (!frame.lineno) return null;
  const position = loaded.consumer.originalPositionFor({ line: frame.lineno, column: Math.max(0, frame.colno - 1) });
  if (!position || typeof position.source !== "string" || !isNum(position.line)) return null;
  const { lines, page } = sourceLines(loaded, position.source);
  const at = position.line - 1;
  return {
    source: sourcePath(position.source, url, root), rawSource: str(position.source),
    line: position.line, column: (position.column || 0) + 1, markerPage: page,
    component: lines.length ? componentAt(lines, position.line, position.name) : str(position.name || ""),
    pre: lines.slice(Math.max(0, at - 3), at).map(str), text: str(lines[at] || ""), post: lines.slice(at + 1, at + 4).map(str),
  };
}

// Maps every frame of a browser issue it can, newest first; a failure leaves a frame as sent.
async function mapIssue(overlay, issue) {
  const result = { frames: new Map(), complete: true, version: 0 };
  for (let i = issue.frames.length - 1; i >= 0; i--) {
    const url = moduleUrl(issue.frames[i]);
    const loaded = url ? await loadModule(overlay, url) : null;
    if (loaded === DEFERRED) result.complete = false;
    if (!loaded || loaded === DEFERRED) continue;
    try {
      const mapped = mapFrame(loaded, issue.frames[i], url, overlay.state.root);
      if (mapped) result.frames.set(i, mapped);
    } catch (_) { /* a broken map: the frame stays as sent */ }
    await pause();
  }
  return result;
}

function mappingFor(overlay, issue) {
  if (issue.source !== "browser") return null;
  const known = overlay.mappings.get(issue.key);
  if (known && known.seq === issue.seq) return known;
  const entry = { seq: issue.seq, result: null, version: 0 };
  overlay.mappings.set(issue.key, entry);
  mapIssue(overlay, issue).then((result) => {
    Object.assign(entry, { result, version: ++overlay.state.version });
    render(overlay);
  }, () => {});
  return entry;
}

// The Python page and component of a mapped browser error: from its newest mapped frame of the app's own.
function mappedDetails(state, result) {
  const details = { page: null, component: "" };
  for (const mapped of result.frames.values()) {
    if (!mapped.source || mapped.source.includes("node_modules")) continue;
    details.page = details.page || cleanPage(state.pages[mapped.source]) || mapped.markerPage;
    details.component = details.component || mapped.component;
  }
  return details;
}

// ---- Rendering: DOM built from text nodes only.
function h(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child).slice(0, MAX_TEXT)));
  }
  return node;
}

function link(className, text, href) {
  const node = h(href ? "a" : "span", className, text);
  if (href) node.href = href;
  return node;
}

function ms(seconds) {
  return `${Math.round(seconds * 10000) / 10} ms`;
}

function clock(timestamp) {
  const date = new Date(timestamp * 1000);
  return `${date.toTimeString().slice(0, 8)}.${String(date.getMilliseconds()).padStart(3, "0")}`;
}

function buildContext(pre, line, post) {
  const code = h("pre", "lookout-context");
  for (const text of pre) code.appendChild(h("div", "lookout-line", text));
  code.appendChild(h("div", "lookout-line lookout-current", line));
  for (const text of post) code.appendChild(h("div", "lookout-line", text));
  return code;
}

function buildFrame(state, frame, mapped) {
  let where = `${frame.filename || frame.absPath || "?"}${frame.lineno ? `:${frame.lineno}` : ""}`;
  let href = frame.lineno ? editorHref(state, framePath(state, frame), frame.lineno, 1) : null;
  if (mapped) {
    where = `${mapped.source || mapped.rawSource}:${mapped.line}:${mapped.column}`;
    href = mapped.source ? editorHref(state, underRoot(state.root, mapped.source), mapped.line, mapped.column) : null;
  }
  const node = h("details", `lookout-frame${mapped ? " lookout-mapped" : ""}${frame.inApp ? " lookout-in-app" : ""}`,
    h("summary", null, h("span", "lookout-where", `${frame.fn || "?"} — ${where}`), " ",
      href ? link("lookout-open", "open", href) : null));
  node.open = frame.inApp || Boolean(mapped); // library frames folded
  if (mapped) node.appendChild(buildContext(mapped.pre, mapped.text, mapped.post));
  else if (frame.contextLine) node.appendChild(buildContext(frame.pre, frame.contextLine, frame.post));
  return node;
}

function buildFrames(state, issue, result) {
  const list = h("div", "lookout-frames");
  for (let i = issue.frames.length - 1; i >= 0; i--) {
    list.appendChild(buildFrame(state, issue.frames[i], result ? result.frames.get(i) : null));
  }
  return list;
}

// A transaction's spans in tree order (children under their parent span, by start), with depths.
function spanTree(transaction) {
  const ids = new Set(transaction.spans.map((s) => s.id));
  const children = new Map();
  for (const span of [...transaction.spans].sort((a, b) => a.start - b.start)) {
    const parent = span.parent && ids.has(span.parent) && span.parent !== span.id ? span.parent : "";
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const rows = [], seen = new Set();
  const walk = (parent, depth) => {
    for (const span of children.get(parent) || []) {
      if (seen.has(span)) continue;
      seen.add(span);
      rows.push({ span, depth });
      walk(span.id, depth + 1);
    }
  };
  walk("", 1);
  for (const span of transaction.spans) if (!seen.has(span)) rows.push({ span, depth: 1 }); // parent cycles
  return rows;
}

function spanRow(item, depth, start, total, className) {
  const left = Math.min(100, Math.max(0, ((item.start - start) / total) * 100));
  const width = Math.min(100 - left, Math.max(0, ((item.end - item.start) / total) * 100));
  const bar = h("div", "lookout-bar");
  bar.style.left = `${left}%`;
  bar.style.width = `${width}%`;
  const label = h("div", "lookout-label", h("span", "lookout-op", item.op), " ", item.name, " ",
    h("span", "lookout-duration", ms(Math.max(0, item.end - item.start))));
  label.style.paddingLeft = `${Math.min(depth, 20) * 10}px`;
  return h("div", `lookout-span ${className}`, label, h("div", "lookout-track", bar));
}

function buildTrace(trace) {
  const box = h("div", "lookout-trace");
  if (!trace || (!trace.transactions.length && !trace.logs.length)) {
    box.appendChild(h("div", "lookout-muted", "No trace data."));
    return box;
  }
  const items = trace.transactions.flatMap((t) => [t, ...t.spans]);
  const start = Math.min(...items.map((i) => i.start));
  const total = Math.max(Math.max(...items.map((i) => i.end)) - start, 1e-6);
  for (const transaction of [...trace.transactions].sort((a, b) => a.start - b.start)) {
    box.appendChild(spanRow(transaction, 0, start, total, "lookout-transaction-row"));
    for (const { span, depth } of spanTree(transaction)) box.appendChild(spanRow(span, depth, start, total, "lookout-child"));
  }
  const logs = h("div", "lookout-logs");
  for (const log of [...trace.logs].sort((a, b) => a.timestamp - b.timestamp)) {
    logs.appendChild(h("div", `lookout-log lookout-level-${log.level.replace(/[^a-z]/g, "")}`,
      h("span", "lookout-time", clock(log.timestamp)), " ", h("span", "lookout-level", log.level), " ",
      h("span", "lookout-body", log.body)));
  }
  box.appendChild(logs);
  return box;
}

function buildPage(state, page) {
  const path = page.file.startsWith("/") ? page.file : underRoot(state.root, page.file);
  return h("div", "lookout-page", "Page: ", link("lookout-page-link", `${page.file}:${page.line}`,
    editorHref(state, path, page.line, 1)), page.function ? ` (${page.function})` : null);
}

function buildIssue(overlay, issue, entry) {
  const state = overlay.state;
  const result = entry && entry.result;
  const details = result ? mappedDetails(state, result) : { page: null, component: "" };
  const page = issue.pythonPage || details.page;
  const article = h("article", "lookout-issue",
    h("div", "lookout-head",
      h("span", "lookout-title", [issue.type, issue.value].filter(Boolean).join(": ") || "Error"),
      issue.count > 1 ? h("span", "lookout-count", `×${issue.count}`) : null,
      h("span", "lookout-source", issue.source),
      issue.transaction ? h("span", "lookout-transaction", issue.transaction) : null,
      h("button", "lookout-clear", "Clear")),
    page ? buildPage(state, page) : null,
    issue.element ? h("div", "lookout-element", `Element: ${issue.element}`) : null,
    details.component ? h("div", "lookout-component", `Component: ${details.component}`) : null,
    buildFrames(state, issue, result),
    buildTrace(state.traces.get(issue.traceId)));
  article.dataset.key = issue.key;
  return article;
}

// Newest first; an issue whose data did not change keeps its element (keyed by key, seq, trace, mapping).
function renderList(overlay, issues) {
  const { list, empty } = overlay.ui;
  const state = overlay.state;
  const rendered = new Map();
  for (const issue of issues) {
    const entry = mappingFor(overlay, issue);
    const trace = state.traces.get(issue.traceId);
    const stamp = `${issue.seq}|${trace ? trace.version : 0}|${entry ? entry.version : 0}|${state.configVersion}`;
    const old = overlay.rendered.get(issue.key);
    rendered.set(issue.key, old && old.stamp === stamp ? old : { stamp, node: buildIssue(overlay, issue, entry) });
  }
  overlay.rendered = rendered;
  for (const key of overlay.mappings.keys()) if (!state.issues.has(key)) overlay.mappings.delete(key);
  const nodes = [...rendered.values()].map((r) => r.node);
  const keep = new Set(nodes);
  for (const child of [...list.children]) if (!keep.has(child)) child.remove();
  nodes.forEach((node, i) => {
    if (list.children[i] !== node) list.insertBefore(node, list.children[i] || null);
  });
  empty.hidden = issues.length > 0;
}

function render(overlay) {
  const { ui, state } = overlay;
  const issues = [...state.issues.values()].sort((a, b) => b.last - a.last);
  const total = issues.reduce((sum, issue) => sum + issue.count, 0);
  ui.badge.textContent = `${total} error${total === 1 ? "" : "s"}`;
  ui.badge.classList.toggle("lookout-muted", total === 0);
  ui.status.textContent = overlay.offline ? "reconnecting…" : "";
  if (!ui.panel.hidden) renderList(overlay, issues); // a closed panel costs nothing to keep current
}

// ---- Kept for this tab across page reloads: a backend reload may reload the page too, and the
// developer still wants to see what failed before the edit (sessionStorage: this tab's, and only it).
const STORE_KEY = "lookout-dev-overlay";
const MAX_STORED_CHARS = 2 * 1024 * 1024;

function save(state) {
  try {
    const issues = [...state.issues.values()];
    const traces = [...state.traces.entries()];
    const cleared = [...state.cleared.entries()];
    let text = JSON.stringify({ issues, traces, cleared });
    if (text.length > MAX_STORED_CHARS) text = JSON.stringify({ issues, traces: [], cleared });
    if (text.length <= MAX_STORED_CHARS) window.sessionStorage.setItem(STORE_KEY, text);
  } catch (_) {
    // storage full or refused: the overlay goes on without it
  }
}

function restore(state) {
  let kept;
  try {
    kept = JSON.parse(window.sessionStorage.getItem(STORE_KEY) || "null");
  } catch (_) {
    return;
  }
  if (!isObj(kept)) return;
  for (const issue of arr(kept.issues).slice(-MAX_ISSUES)) {
    if (isObj(issue) && typeof issue.key === "string" && isNum(issue.count) && isNum(issue.last)) state.issues.set(issue.key, issue);
  }
  for (const entry of arr(kept.traces)) {
    if (Array.isArray(entry) && TRACE_ID.test(entry[0]) && isObj(entry[1])) state.traces.set(entry[0], cleanTraceKept(entry[1]));
  }
  for (const entry of arr(kept.cleared).slice(-MAX_CLEARED)) {
    if (Array.isArray(entry) && typeof entry[0] === "string" && isObj(entry[1])) state.cleared.set(entry[0], entry[1]);
  }
  trim(state);
}

// A stored trace, as `cleanTrace` made it: only its arrays are trusted to be arrays.
function cleanTraceKept(trace) {
  return { transactions: arr(trace.transactions), logs: arr(trace.logs), version: 0 };
}

// ---- Talking to the backend.
// The browser's own fetch, not the page's: the SDK wraps window.fetch, and the overlay's polls would
// otherwise be a breadcrumb each and keep the page load's transaction from ever going idle. A fresh
// frame's fetch is untouched (as Sentry's own getNativeImplementation gets it).
let nativeFetch = null;
function plainFetch() {
  if (!nativeFetch) {
    const frame = document.createElement("iframe");
    frame.hidden = true;
    document.documentElement.appendChild(frame);
    const own = frame.contentWindow && frame.contentWindow.fetch;
    nativeFetch = own ? own.bind(window) : window.fetch.bind(window);
    frame.remove();
  }
  return nativeFetch;
}

async function fetchWithTimeout(url, options) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
  try {
    return await plainFetch()(url, { ...options, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

function tabTraces(options) {
  try {
    return arr(options.traces()).filter((id) => typeof id === "string" && TRACE_ID.test(id)).slice(-MAX_TRACES_ASKED);
  } catch (_) {
    return [];
  }
}

async function fetchAnswer(overlay) {
  const { eventsUrl } = overlay.options;
  const query = `traces=${tabTraces(overlay.options).join(",")}&after=${overlay.state.after}`;
  const response = await fetchWithTimeout(`${eventsUrl}${eventsUrl.includes("?") ? "&" : "?"}${query}`,
    { credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

function clearKeys(overlay, keys) {
  const state = overlay.state;
  for (const key of keys) {
    const issue = state.issues.get(key);
    if (issue) state.cleared.set(key, { count: issue.count, seq: issue.seq, instance: state.instance });
    state.issues.delete(key);
  }
  trim(state);
  save(state);
  fetchWithTimeout(overlay.options.clearUrl, {
    method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify({ keys }),
  }).catch(() => {}); // the answer does not matter: the list is already without them
  render(overlay);
}

// React may replace <body>'s children (a hot update of the root clears the <body> it owns): the
// overlay comes back at once, as the change is observed, and on every poll besides.
function attach(overlay) {
  if (!overlay.element.isConnected && document.body) document.body.appendChild(overlay.element);
}

function keepAttached(overlay) {
  let body = null;
  const watch = () => {
    if (document.body && document.body !== body) {
      body = document.body;
      observer.observe(body, { childList: true });
    }
  };
  const observer = new MutationObserver(() => { watch(); attach(overlay); });
  observer.observe(document.documentElement, { childList: true }); // a new <body>
  watch();
}

async function poll(overlay) {
  try {
    attach(overlay);
    if (document.visibilityState === "visible") {
      overlay.budget = MAX_MODULES_PER_POLL;
      for (const [key, entry] of overlay.mappings) if (entry.result && !entry.result.complete) overlay.mappings.delete(key);
      try {
        const before = overlay.state.version;
        const answer = await fetchAnswer(overlay);
        merge(overlay.state, answer);
        if (arr(answer.issues).length || overlay.state.version !== before) save(overlay.state);
        overlay.offline = false;
      } catch (_) {
        overlay.offline = true; // the backend is reloading (network error, 5xx, not JSON): ask again
      }
      render(overlay);
    }
  } catch (error) {
    console.debug("Lookout dev overlay:", error);
  } finally {
    overlay.timer = setTimeout(() => poll(overlay), POLL_MS);
  }
}

// ---- The element.
const CSS = `
:host { all: initial; } * { box-sizing: border-box; } [hidden] { display: none !important; }
button { font: inherit; cursor: pointer; }
#lookout-dev-badge, #lookout-dev-panel { position: fixed; left: 12px; z-index: 2147483000; font: 12px/1.4 system-ui, sans-serif; color: #1f2328; }
#lookout-dev-badge { bottom: 12px; padding: 4px 10px; border-radius: 999px; border: 1px solid #cf222e; background: #cf222e; color: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.3); }
#lookout-dev-badge.lookout-muted { background: #f6f8fa; color: #57606a; border-color: #d0d7de; }
#lookout-dev-panel { bottom: 48px; width: min(720px, 95vw); max-height: 70vh; overflow: auto; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; box-shadow: 0 4px 16px rgba(0,0,0,.25); }
.lookout-header { position: sticky; top: 0; display: flex; gap: 8px; align-items: center; padding: 6px 10px; background: #f6f8fa; border-bottom: 1px solid #d0d7de; }
.lookout-spacer { flex: 1; } .lookout-status { color: #9a6700; }
.lookout-issue { padding: 8px 10px; border-bottom: 1px solid #d8dee4; overflow-wrap: anywhere; }
.lookout-head { display: flex; flex-wrap: wrap; gap: 6px; align-items: baseline; } .lookout-clear { margin-left: auto; }
.lookout-title { font-weight: 600; color: #cf222e; }
.lookout-count, .lookout-source, .lookout-transaction, .lookout-page, .lookout-element, .lookout-component, .lookout-op, .lookout-muted, .lookout-empty { color: #57606a; }
.lookout-frames { margin: 4px 0; } .lookout-mapped .lookout-where { color: #0550ae; } .lookout-empty { padding: 10px; }
.lookout-context { margin: 2px 0 4px 14px; padding: 4px; background: #f6f8fa; overflow-x: auto; font: 11px/1.4 ui-monospace, monospace; }
.lookout-current { background: #fff8c5; }
.lookout-span { display: grid; grid-template-columns: minmax(0, 45%) minmax(0, 1fr); align-items: center; gap: 6px; }
.lookout-label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.lookout-track { position: relative; height: 8px; background: #f6f8fa; }
.lookout-bar { position: absolute; top: 0; height: 8px; min-width: 2px; background: #8250df; }
.lookout-transaction-row .lookout-bar { background: #0969da; }
.lookout-log { font: 11px/1.4 ui-monospace, monospace; } .lookout-level { font-weight: 600; }
.lookout-level-error, .lookout-level-fatal { color: #cf222e; } .lookout-level-warn, .lookout-level-warning { color: #9a6700; }
`;

function buildUi(overlay) {
  const shadow = overlay.element.shadowRoot;
  const badge = h("button", null, "0 errors");
  const status = h("span", "lookout-status");
  const clearAll = h("button", null, "Clear all");
  const close = h("button", "lookout-close", "×");
  const list = h("div", "lookout-list");
  const empty = h("div", "lookout-empty", "No errors in this tab.");
  const panel = h("section", null, h("header", "lookout-header", h("strong", null, "Lookout — this tab"), status,
    h("span", "lookout-spacer"), clearAll, close), empty, list);
  Object.assign(badge, { id: "lookout-dev-badge", type: "button" });
  Object.assign(clearAll, { id: "lookout-dev-clear-all", type: "button", title: "Clear all" });
  Object.assign(close, { type: "button", title: "Close" });
  Object.assign(panel, { id: "lookout-dev-panel", hidden: true });
  const toggle = (open) => { panel.hidden = !open; render(overlay); };
  badge.addEventListener("click", () => toggle(panel.hidden));
  close.addEventListener("click", () => toggle(false));
  clearAll.addEventListener("click", () => clearKeys(overlay, [...overlay.state.issues.keys()]));
  list.addEventListener("click", (event) => {
    const article = event.target.closest("button.lookout-clear") && event.target.closest("article.lookout-issue");
    if (article) clearKeys(overlay, [article.dataset.key]);
  });
  const style = document.createElement("style");
  style.textContent = CSS;
  shadow.append(style, panel, badge);
  overlay.ui = { badge, status, list, empty, panel };
}

function defineElement() {
  if (customElements.get("lookout-dev-overlay")) return;
  customElements.define("lookout-dev-overlay", class extends HTMLElement {
    constructor() { super(); this.attachShadow({ mode: "open" }); }
  });
}

export function mount({ eventsUrl, clearUrl, traces }) {
  const options = { eventsUrl, clearUrl, traces: typeof traces === "function" ? traces : () => [] };
  const existing = window.__lookoutDevOverlay;
  if (existing) {
    // A hot update or a second import: the running overlay takes the new options and goes on.
    existing.options = options;
    attach(existing);
    return;
  }
  defineElement();
  const element = document.createElement("lookout-dev-overlay");
  element.id = "lookout-dev-overlay";
  const overlay = {
    element, options, state: newState(), offline: false, timer: null, budget: MAX_MODULES_PER_POLL,
    modules: new Map(), mappings: new Map(), rendered: new Map(), ui: null,
  };
  window.__lookoutDevOverlay = overlay;
  restore(overlay.state);
  buildUi(overlay);
  render(overlay);
  keepAttached(overlay);
  poll(overlay);
}

// The ha-module dashboard (docs/dashboard.md): plain browser JavaScript, no build step and
// no dependency, loaded under a strict Content-Security-Policy. Every value it shows is
// set as text (never parsed as HTML), since addresses and names are callers' input.
//
// Every I it reads GET /primary (live roles), GET /members (groups) and each group's
// members; roles seen earlier that lost their primary are read one by one, so a vacant
// role stays on the page; the open role's term history is read again too. The lease
// countdown runs between reads on the browser's monotonic clock.

const page = document.body.dataset;
const API_BASE = page.apiBase ?? "/api";
const INTERVAL_MS = positive(page.intervalMs, 1000);
const TIMEOUT_MS = positive(page.timeoutMs, 5000);
/** The function key, passed on as ?code= to every same-origin call (a page cannot send headers it was not given). */
const KEY = new URLSearchParams(window.location.search).get("code");
/**
 * A read slower than this is a failure shown in the banner, not a page that hangs. Longer
 * than the service's own store budget (HA_STORE_TIMEOUT_MS, 2 s by default), so that a
 * store outage shows as the service's 503 rather than as silence.
 */
const CALL_TIMEOUT_MS = Math.round(Math.max(5000, 3 * INTERVAL_MS));
const TICK_MS = 100;

const SYMBOL = { held: "●", revoked: "✕", vacant: "○", joining: "◔", active: "●", unreachable: "▲", leaving: "○" };

const $ = (id) => document.getElementById(id);
const rolesBody = $("roles").tBodies[0];
const roleRows = new Map(); // utype → { row, cells, view, expiresAt }
const memberStates = new Map(); // "group/member" → state, for announcing changes
let selectedRole = null;
let lastSuccess = null;
let firstLoad = true;

class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function positive(text, fallback) {
  const value = Number(text);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function apiUrl(path) {
  const url = new URL(`${API_BASE}${path}`, window.location.origin);
  if (KEY !== null) url.searchParams.set("code", KEY);
  return url;
}

async function getJson(path) {
  let response;
  try {
    response = await fetch(apiUrl(path), {
      headers: { accept: "application/json" },
      cache: "no-store",
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (error) {
    const why = error instanceof DOMException && error.name === "TimeoutError" ? `no answer within ${CALL_TIMEOUT_MS} ms` : "the connection failed";
    throw new ApiError(0, "Unreachable", why, null);
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body && typeof body === "object" && body.error ? body.error : {};
    throw new ApiError(response.status, String(error.code ?? ""), String(error.message ?? response.statusText), response.headers.get("retry-after"));
  }
  return body;
}

/** el("td", { className: "x" }, "text", child…): an element with properties and text or element children. */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("aria-") || name === "role" || name === "scope") node.setAttribute(name, value);
    else node[name] = value;
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

function badge(state) {
  return el("span", { className: `badge state-${state}` }, el("span", { "aria-hidden": "true" }, `${SYMBOL[state] ?? "?"} `), state);
}

function timeText(iso) {
  if (iso === null || iso === undefined) return "—";
  const at = new Date(iso);
  return el("time", { dateTime: iso, title: iso }, at.toLocaleTimeString([], { hour12: false }));
}

function seconds(ms) {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

function announce(message) {
  if (firstLoad) return;
  const line = el("p", {}, message);
  const announcer = $("announcer");
  announcer.append(line);
  while (announcer.childElementCount > 5) announcer.firstElementChild.remove();
}

// ---- roles ------------------------------------------------------------------------------

function roleRow(utype) {
  const existing = roleRows.get(utype);
  if (existing !== undefined) return existing;
  const button = el("button", { type: "button", className: "role", "aria-expanded": "false", "aria-controls": "history" }, utype);
  button.addEventListener("click", () => toggleHistory(utype));
  const cells = {
    state: el("td", { className: "state" }),
    primary: el("td", { className: "primary" }),
    address: el("td", { className: "address" }),
    epoch: el("td", { className: "epoch num" }),
    countdown: el("span", { className: "countdown", role: "timer", "aria-label": `Lease left for ${utype}` }),
    meter: el("meter", { min: 0, max: TIMEOUT_MS, low: INTERVAL_MS * 2, optimum: TIMEOUT_MS, "aria-hidden": "true" }),
    button,
  };
  const row = el("tr", { dataset: { utype } }, el("th", { scope: "row" }, button), cells.state, cells.primary, cells.address, cells.epoch, el("td", { className: "lease" }, cells.countdown, cells.meter));
  const entry = { row, cells, view: null, expiresAt: 0 };
  roleRows.set(utype, entry);
  // Rows stay put and are updated in place, so keyboard focus survives every refresh.
  const after = [...roleRows.keys()].sort().find((other) => other > utype);
  rolesBody.insertBefore(row, after === undefined ? null : roleRows.get(after).row);
  return entry;
}

function showRole(view, receivedAt) {
  const entry = roleRow(view.utype);
  const before = entry.view;
  const primary = view.primary;
  const state = primary === null ? "vacant" : primary.revoked ? "revoked" : "held";
  entry.view = view;
  entry.expiresAt = primary === null ? 0 : receivedAt + primary.expiresInMs;
  entry.row.dataset.state = state;
  entry.cells.state.replaceChildren(badge(state));
  entry.cells.primary.replaceChildren(primary === null ? "—" : el("code", {}, primary.uuid));
  entry.cells.address.textContent = primary?.address ?? "—";
  entry.cells.epoch.textContent = String(primary?.epoch ?? view.epoch ?? 0);
  entry.cells.meter.max = view.timeoutMs ?? TIMEOUT_MS;
  if (before !== null && before.primary?.uuid !== primary?.uuid) {
    announce(primary === null ? `Role ${view.utype} has no primary.` : `Role ${view.utype}: new primary ${primary.address ?? primary.uuid}, epoch ${primary.epoch}.`);
  } else if (before === null && primary !== null) {
    announce(`Role ${view.utype}: primary ${primary.address ?? primary.uuid}, epoch ${primary.epoch}.`);
  }
  tickRole(entry, performance.now());
}

function tickRole(entry, now) {
  const { countdown, meter } = entry.cells;
  if (entry.view?.primary == null) {
    countdown.textContent = "no lease";
    meter.value = 0;
    return;
  }
  const left = entry.expiresAt - now;
  countdown.textContent = left > 0 ? seconds(left) : "expired";
  meter.value = Math.max(0, left);
}

function tick() {
  const now = performance.now();
  for (const entry of roleRows.values()) tickRole(entry, now);
}

// ---- term history -------------------------------------------------------------------------

function toggleHistory(utype) {
  selectedRole = selectedRole === utype ? null : utype;
  for (const [other, entry] of roleRows) entry.cells.button.setAttribute("aria-expanded", String(other === selectedRole));
  $("history").hidden = selectedRole === null;
  if (selectedRole === null) return;
  $("history-heading").textContent = `Term history of ${utype}`;
  $("history-body").replaceChildren(el("p", { className: "empty" }, "Loading…"));
  void loadHistory(utype).then(
    (history) => showHistory(utype, history),
    (error) => showHistoryError(utype, error),
  );
}

/** The history, or null when the service has no history route (404: an older ha-module). */
async function loadHistory(utype) {
  try {
    return await getJson(`/primary/${encodeURIComponent(utype)}/history`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

function showHistory(utype, history) {
  if (utype !== selectedRole) return;
  const body = $("history-body");
  if (history === null) {
    body.replaceChildren(
      el("p", { className: "notice" }, `This service does not serve term history (GET ${API_BASE}/primary/${utype}/history answered 404); it is in newer versions of ha-module.`),
    );
    return;
  }
  if (history.terms.length === 0) {
    body.replaceChildren(el("p", { className: "empty" }, `No term of ${utype} is recorded.`));
    return;
  }
  const rows = history.terms.map((term) =>
    el(
      "tr",
      { dataset: { epoch: String(term.epoch) } },
      el("th", { className: "num", scope: "row" }, String(term.epoch)),
      el("td", {}, el("code", {}, term.uuid)),
      el("td", {}, term.address ?? "—"),
      el("td", {}, timeText(term.startedAt)),
      el("td", {}, timeText(term.endedAt)),
      el("td", {}, term.endedBy === null ? badge("held") : term.endedBy),
    ),
  );
  body.replaceChildren(
    el(
      "table",
      { className: "history" },
      el("caption", {}, `The last ${history.terms.length} terms of ${utype}, newest first (current epoch ${history.epoch})`),
      el("thead", {}, el("tr", {}, ...["Epoch", "Holder", "Address", "Started", "Ended", "Ended by"].map((name) => el("th", { scope: "col" }, name)))),
      el("tbody", {}, ...rows),
    ),
  );
}

function showHistoryError(utype, error) {
  if (utype !== selectedRole) return;
  $("history-body").replaceChildren(el("p", { className: "notice" }, `The term history could not be read: ${describe(error)}`));
}

// ---- membership groups --------------------------------------------------------------------

function showGroups(lists) {
  const container = $("groups");
  $("groups-empty").hidden = lists.length > 0;
  container.replaceChildren(
    ...lists.map((list) => {
      const counts = {};
      for (const member of list.members) counts[member.state] = (counts[member.state] ?? 0) + 1;
      const summary = Object.entries(counts)
        .map(([state, count]) => `${count} ${state}`)
        .join(", ");
      for (const member of list.members) {
        const key = `${list.group}/${member.member}`;
        const before = memberStates.get(key);
        if (before !== member.state) announce(`Group ${list.group}: ${member.member} is ${member.state}.`);
        memberStates.set(key, member.state);
      }
      const headingId = `group-${list.group.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      return el(
        "section",
        { className: "group", dataset: { group: list.group }, "aria-labelledby": headingId },
        el("h3", { id: headingId }, list.group, el("span", { className: "summary" }, ` — ${summary || "no members"}`)),
        el(
          "table",
          {},
          el("caption", { className: "visually-hidden" }, `Members of ${list.group} with their state`),
          el("thead", {}, el("tr", {}, ...["Member", "State", "Address", "Last heartbeat", "Heartbeats", "Joined"].map((name) => el("th", { scope: "col" }, name)))),
          el(
            "tbody",
            {},
            ...list.members.map((member) =>
              el(
                "tr",
                { dataset: { member: member.member, state: member.state } },
                el("th", { scope: "row" }, member.member),
                el("td", { className: "state" }, badge(member.state)),
                el("td", {}, member.address ?? "—"),
                el("td", { className: "num" }, `${seconds(member.ageMs)} ago`),
                el("td", { className: "num" }, String(member.heartbeats)),
                el("td", {}, timeText(member.joinedAt)),
              ),
            ),
          ),
        ),
      );
    }),
  );
}

// ---- status and banner --------------------------------------------------------------------

function describe(error) {
  if (!(error instanceof ApiError)) return String(error?.message ?? error);
  if (error.status === 0) return `the service does not answer (${error.message}).`;
  return `${error.status}${error.code ? ` ${error.code}` : ""}: ${error.message}`;
}

function showFailure(error) {
  const banner = $("banner");
  let text;
  if (error instanceof ApiError && error.status === 503) {
    const retry = error.retryAfter ? ` It asks to retry after ${error.retryAfter} s.` : "";
    text = `Service unavailable (503 ${error.code || "Service Unavailable"}): ${error.message}${retry}`;
  } else if (error instanceof ApiError && error.status === 401) {
    text = `The service refused the key (401). Open this page as ${API_BASE}/dashboard?code=<function key>.`;
  } else {
    text = `The dashboard cannot read the service: ${describe(error)}`;
  }
  const since = lastSuccess === null ? "Nothing has been read yet." : `What is shown is from ${lastSuccess.toLocaleTimeString([], { hour12: false })} and is not live.`;
  banner.replaceChildren(el("strong", {}, text), " ", since);
  banner.dataset.status = String(error instanceof ApiError ? error.status : 0);
  banner.hidden = false;
  document.body.classList.add("stale");
  $("status").textContent = `Not live: ${text}`;
}

function showSuccess(roles, groups) {
  lastSuccess = new Date();
  const banner = $("banner");
  banner.hidden = true;
  banner.replaceChildren();
  delete banner.dataset.status;
  document.body.classList.remove("stale");
  $("status").textContent = `Live · updated ${lastSuccess.toLocaleTimeString([], { hour12: false })} · ${roles} role${roles === 1 ? "" : "s"}, ${groups} group${groups === 1 ? "" : "s"}`;
}

// ---- the refresh loop ---------------------------------------------------------------------

/** Live roles, and the roles seen earlier that have no primary now, as one list of views. */
async function readRoles() {
  const { primaries } = await getJson("/primary");
  const live = new Set(primaries.map((view) => view.utype));
  const vacant = [...roleRows.keys()].filter((utype) => !live.has(utype));
  const vacantViews = await Promise.all(vacant.map((utype) => getJson(`/primary/${encodeURIComponent(utype)}`)));
  return { views: [...primaries, ...vacantViews], receivedAt: performance.now() };
}

async function readGroups() {
  const { groups } = await getJson("/members");
  return Promise.all(groups.map((group) => getJson(`/members/${encodeURIComponent(group.group)}`)));
}

/**
 * One refresh. Roles and groups are read independently, so that one failing (a store that
 * answers for leases but not for members) still shows the other; any failure is the banner.
 */
async function refresh() {
  const started = performance.now();
  try {
    const [roles, groups, history] = await Promise.allSettled([
      readRoles(),
      readGroups(),
      selectedRole === null ? Promise.resolve(undefined) : loadHistory(selectedRole),
    ]);
    if (roles.status === "fulfilled") {
      for (const view of roles.value.views) showRole(view, roles.value.receivedAt);
      $("roles-empty").hidden = roleRows.size > 0;
    }
    if (groups.status === "fulfilled") showGroups(groups.value);
    if (selectedRole !== null) {
      if (history.status === "rejected") showHistoryError(selectedRole, history.reason);
      else showHistory(selectedRole, history.value);
    }
    const failed = [roles, groups].find((outcome) => outcome.status === "rejected");
    if (failed === undefined) {
      showSuccess(roleRows.size, groups.value.length);
      firstLoad = false;
    } else {
      showFailure(failed.reason);
    }
  } catch (error) {
    showFailure(error); // a bug in the page itself: shown, and the loop goes on
  } finally {
    window.setTimeout(refresh, Math.max(0, INTERVAL_MS - (performance.now() - started)));
  }
}

window.setInterval(tick, TICK_MS);
void refresh();

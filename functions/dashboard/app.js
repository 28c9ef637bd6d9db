// The ha-module dashboard (docs/dashboard.md): plain browser JavaScript, no build step and
// no dependency, loaded under a strict Content-Security-Policy. Every value it shows is
// set as text (never parsed as HTML), since addresses and names are callers' input.
//
// Every I it reads GET /primary?standbys=true&vacant=true (live and vacant roles with their
// standbys), GET /members (groups) and each group's members; the open role's term history
// is read again too. The lease countdown and a vacancy's duration run between reads on the
// browser's monotonic clock, from durations measured on the service's clock (never the
// browser's wall clock, which may be set differently). Its one write is an operator's
// "Hand over" (POST /primary/{utype}/handover).

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

const SYMBOL = { held: "●", revoked: "✕", vacant: "◌", joining: "◔", active: "●", unreachable: "▲", leaving: "○" };

const $ = (id) => document.getElementById(id);
const rolesBody = $("roles").tBodies[0];
const roleRows = new Map(); // utype → { row, cells, view, expiresAt, vacantAt, busy }
const memberStates = new Map(); // "group/member" → state, for announcing changes
let selectedRole = null;
let lastSuccess = null;
/** The service's clock less the browser's, from the last read that told it: stamps the page's own messages. */
let clockOffsetMs = 0;
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

/**
 * One call to the service: its JSON body and the service's clock when it answered (from the
 * Date header, to the second; null without one). A failure is an ApiError.
 */
async function call(method, path, body) {
  let response;
  try {
    response = await fetch(apiUrl(path), {
      method,
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (error) {
    const why = error instanceof DOMException && error.name === "TimeoutError" ? `no answer within ${CALL_TIMEOUT_MS} ms` : "the connection failed";
    throw new ApiError(0, "Unreachable", why, null);
  }
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const error = answer && typeof answer === "object" && answer.error ? answer.error : {};
    throw new ApiError(response.status, String(error.code ?? ""), String(error.message ?? response.statusText), response.headers.get("retry-after"));
  }
  const date = Date.parse(response.headers.get("date") ?? "");
  return { body: answer, serviceDate: Number.isNaN(date) ? null : date };
}

async function getJson(path) {
  return (await call("GET", path)).body;
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

/** A longer duration in whole units: "12 s", "4 min 5 s", "2 h 3 min". */
function duration(ms) {
  const total = Math.floor(Math.max(0, ms) / 1000);
  if (total < 60) return `${total} s`;
  if (total < 3600) return `${Math.floor(total / 60)} min ${total % 60} s`;
  return `${Math.floor(total / 3600)} h ${Math.floor((total % 3600) / 60)} min`;
}

function clockText(iso) {
  return new Date(iso).toLocaleTimeString([], { hour12: false });
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
  const target = el("select", { className: "handover-to", "aria-label": `Hand over ${utype} to` });
  const handover = el("button", { type: "button", className: "handover" }, "Hand over");
  handover.setAttribute("aria-label", `Hand over ${utype}`);
  handover.addEventListener("click", () => void requestHandover(utype));
  const cells = {
    state: el("td", { className: "state" }),
    detail: el("span", { className: "detail" }),
    primary: el("td", { className: "primary" }),
    epoch: el("td", { className: "epoch num" }),
    countdown: el("span", { className: "countdown", role: "timer", "aria-label": `Lease left for ${utype}` }),
    meter: el("meter", { min: 0, max: TIMEOUT_MS, low: INTERVAL_MS * 2, optimum: TIMEOUT_MS, "aria-hidden": "true" }),
    standbys: el("td", { className: "standbys" }),
    controls: el("span", { className: "controls" }, target, handover),
    target,
    handover,
    result: el("span", { className: "handover-result", role: "status" }),
    button,
  };
  const row = el(
    "tr",
    { dataset: { utype } },
    el("th", { scope: "row" }, button),
    cells.state,
    cells.primary,
    cells.epoch,
    el("td", { className: "lease" }, cells.countdown, cells.meter),
    cells.standbys,
    el("td", { className: "handover-cell" }, cells.controls, cells.result),
  );
  const entry = { row, cells, view: null, expiresAt: 0, vacantAt: null, busy: false };
  roleRows.set(utype, entry);
  // Rows stay put and are updated in place, so keyboard focus survives every refresh.
  const after = [...roleRows.keys()].sort().find((other) => other > utype);
  rolesBody.insertBefore(row, after === undefined ? null : roleRows.get(after).row);
  return entry;
}

/** A standby's name for people: its address, else its uuid. */
function standbyName(view, uuid) {
  if (uuid === null) return "any standby";
  const standby = (view.standbys ?? []).find((candidate) => candidate.uuid === uuid);
  return standby?.address ?? uuid;
}

/**
 * Shows one role's view. `serviceNow` is the service's clock when it answered and
 * `receivedAt` the browser's performance.now() then: durations (vacant for, seen ago) are
 * the service's, carried on by the monotonic clock between reads.
 */
function showRole(view, serviceNow, receivedAt) {
  const entry = roleRow(view.utype);
  const before = entry.view;
  const primary = view.primary;
  const state = primary === null ? "vacant" : primary.revoked ? "revoked" : "held";
  entry.view = view;
  entry.expiresAt = primary === null ? 0 : receivedAt + primary.expiresInMs;
  // The moment the vacancy began, on the browser's monotonic clock; null when unknown. The
  // same vacancy keeps the moment it was first placed at: each read estimates the service's
  // clock anew (from the Date header, to the second, when no role is held), and a duration
  // on the page must not step back.
  const sameVacancy = primary === null && before !== null && before.primary === null && before.vacantSince === view.vacantSince && entry.vacantAt !== null;
  if (!sameVacancy) {
    entry.vacantAt = primary === null && view.vacantSince !== undefined && serviceNow !== null ? receivedAt - (serviceNow - Date.parse(view.vacantSince)) : null;
  }
  entry.row.dataset.state = state;
  entry.row.dataset.handover = view.handover?.phase ?? "";
  entry.cells.state.replaceChildren(badge(state), " ", entry.cells.detail);
  // The machine first, as an operator looks for it; the uuid's first 8 characters after it,
  // all of it on hover and in the term history (as the standbys are shown).
  entry.cells.primary.dataset.uuid = primary?.uuid ?? "";
  entry.cells.primary.replaceChildren(...(primary === null ? ["—"] : machine(primary)));
  entry.cells.epoch.textContent = String(primary?.epoch ?? view.epoch ?? 0);
  entry.cells.meter.max = view.timeoutMs ?? TIMEOUT_MS;
  showStandbys(entry, view, serviceNow);
  showHandoverControls(entry, view);
  if (before !== null && before.primary?.uuid !== primary?.uuid) {
    announce(primary === null ? `Role ${view.utype} has no primary.` : `Role ${view.utype}: new primary ${primary.address ?? primary.uuid}, epoch ${primary.epoch}.`);
  } else if (before === null && primary !== null) {
    announce(`Role ${view.utype}: primary ${primary.address ?? primary.uuid}, epoch ${primary.epoch}.`);
  }
  if (view.handover !== null && view.handover?.phase !== before?.handover?.phase) announce(`Role ${view.utype}: ${handoverText(view)}.`);
  tickRole(entry, performance.now());
}

function handoverText(view) {
  const { handover } = view;
  const to = standbyName(view, handover.to);
  // A preemption: a standby of higher priority stood by for its hold-down (docs/protocol.md#priorities-and-preemption).
  const why = handover.reason === "preempt" ? " (preempted by priority)" : "";
  return handover.phase === "pending" ? `handing over to ${to}${why} …` : `reserved for ${to}${why} until ${clockText(handover.until)}`;
}

/**
 * A holder or standby as people look for it: its address, then its uuid short (all of it on
 * hover), then its priority when it has one (a role without priorities shows none).
 */
function machine({ uuid, address, priority }) {
  return [
    el("span", { className: "machine-address" }, address ?? "no address"),
    " ",
    el("code", { className: "uuid", title: uuid }, `${uuid.slice(0, 8)}…`),
    ...(priority === undefined || priority === 0 ? [] : [el("span", { className: "priority", title: "Its priority: higher is preferred" }, ` priority ${priority}`)]),
  ];
}

/**
 * What a standby will do to the role (docs/protocol.md#priorities-and-preemption): named by a
 * pending preemption, it takes over at the primary's next renewal (within I); of higher
 * priority than the primary, it takes the role over once it has stood by for its hold-down
 * (its own setting, which the service does not know); with no primary, the highest one takes it.
 */
function standbyPlan(view, standby) {
  const mine = standby.priority ?? 0;
  if (view.handover?.reason === "preempt" && view.handover.to === standby.uuid) {
    return view.handover.phase === "pending" ? "takes over at the primary's next renewal" : `takes over now (reserved until ${clockText(view.handover.until)})`;
  }
  if (view.primary !== null && view.primary !== undefined && !view.primary.revoked && mine > (view.primary.priority ?? 0)) return "outranks the primary: takes over after its hold-down";
  return "";
}

function showStandbys(entry, view, serviceNow) {
  // As the service lists them (oldest announcement first), each by its uuid: two may share
  // an address (two electors on one host, or one that competes again under a new uuid).
  const standbys = view.standbys ?? [];
  entry.cells.standbys.replaceChildren(
    standbys.length === 0
      ? el("span", { className: "empty" }, "none seen")
      : el(
          "ul",
          { className: "standby-list" },
          ...standbys.map((standby) =>
            el(
              "li",
              { dataset: { uuid: standby.uuid } },
              ...machine(standby),
              serviceNow === null ? null : el("span", { className: "seen" }, ` seen ${seconds(serviceNow - Date.parse(standby.seenAt))} ago`),
              standbyPlan(view, standby) === "" ? null : el("span", { className: "plan" }, ` · ${standbyPlan(view, standby)}`),
            ),
          ),
        ),
  );
}

/** The role's Hand over controls: for a live, unrevoked primary; the chosen standby kept across refreshes. */
function showHandoverControls(entry, view) {
  const { controls, target } = entry.cells;
  controls.hidden = view.primary === null || view.primary.revoked;
  const options = [["", "any standby"], ...(view.standbys ?? []).map((standby) => [standby.uuid, standby.address === null ? standby.uuid : `${standby.address} (${standby.uuid.slice(0, 8)}…)`])];
  const key = options.map(([value, label]) => `${value}\u0000${label}`).join("\u0001");
  if (target.dataset.options === key) return; // unchanged: an open list or a choice is left alone
  const chosen = target.value;
  target.replaceChildren(...options.map(([value, label]) => el("option", { value }, label)));
  target.value = options.some(([value]) => value === chosen) ? chosen : "";
  target.dataset.options = key;
}

/** POST /primary/{utype}/handover, to the chosen standby or to any; the answer or the refusal in words. */
async function requestHandover(utype) {
  const entry = roleRows.get(utype);
  if (entry === undefined || entry.busy) return;
  const { handover, target, result } = entry.cells;
  const to = target.value;
  entry.busy = true;
  handover.setAttribute("aria-disabled", "true");
  target.disabled = true;
  handover.textContent = "Handing over…";
  result.textContent = "";
  const stamp = () => new Date(Date.now() + clockOffsetMs).toLocaleTimeString([], { hour12: false });
  try {
    const answer = await call("POST", `/primary/${encodeURIComponent(utype)}/handover`, to === "" ? {} : { to });
    const view = { ...answer.body, standbys: entry.view?.standbys };
    showRole(view, serviceNowOf([view], answer.serviceDate), performance.now());
    result.textContent = `${stamp()} · Asked ${view.primary?.address ?? view.primary?.uuid ?? "the primary"} to hand over to ${standbyName(view, view.handover?.to ?? null)}: it steps down at its next renewal.`;
    result.dataset.outcome = "requested";
  } catch (error) {
    result.textContent = `${stamp()} · Not handed over: ${handoverRefusal(error)}`;
    result.dataset.outcome = "refused";
  } finally {
    entry.busy = false;
    handover.removeAttribute("aria-disabled");
    target.disabled = false;
    handover.textContent = "Hand over";
  }
}

function handoverRefusal(error) {
  if (!(error instanceof ApiError)) return describe(error);
  if (error.status === 401) {
    return `the service refused the key (401). The handover needs a key that opens handoverPrimary: open this page as ${API_BASE}/dashboard?code=<key>.`;
  }
  return describe(error);
}

function tickRole(entry, now) {
  const { countdown, meter, detail } = entry.cells;
  const view = entry.view;
  if (view?.primary == null) {
    countdown.textContent = "no lease";
    meter.value = 0;
    // After the badge: "vacant for 12 s".
    const vacancy = entry.vacantAt === null ? "" : `for ${duration(now - entry.vacantAt)}`;
    const reserved = view?.handover?.phase === "reserved" ? handoverText(view) : "";
    detail.textContent = [vacancy, reserved].filter((part) => part !== "").join(" · ");
    return;
  }
  const left = entry.expiresAt - now;
  countdown.textContent = left > 0 ? seconds(left) : "expired";
  meter.value = Math.max(0, left);
  detail.textContent = view.handover?.phase === "pending" ? handoverText(view) : "";
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

/** `serviceNow`: the service's clock at the read, so that every time on the page is the service's; else the browser's. */
function showSuccess(roles, groups, serviceNow) {
  if (serviceNow !== null) clockOffsetMs = serviceNow - Date.now();
  lastSuccess = new Date(Date.now() + clockOffsetMs);
  const banner = $("banner");
  banner.hidden = true;
  banner.replaceChildren();
  delete banner.dataset.status;
  document.body.classList.remove("stale");
  $("status").textContent = `Live · updated ${lastSuccess.toLocaleTimeString([], { hour12: false })} · ${roles} role${roles === 1 ? "" : "s"}, ${groups} group${groups === 1 ? "" : "s"}`;
}

// ---- the refresh loop ---------------------------------------------------------------------

/**
 * The service's clock when it answered: exact from a live primary's lease (its renewal plus
 * T, less what is left), else the answer's Date header (to the second), else null.
 */
function serviceNowOf(views, serviceDate) {
  const held = views.find((view) => view.primary !== null);
  if (held !== undefined) return Date.parse(held.primary.renewedAt) + held.timeoutMs - held.primary.expiresInMs;
  return serviceDate === null ? null : serviceDate + 500; // the Date header is truncated to the second
}

/** Live and vacant roles with their standbys, and the service's clock when it answered. */
async function readRoles() {
  const answer = await call("GET", "/primary?standbys=true&vacant=true");
  const receivedAt = performance.now();
  const views = answer.body.primaries;
  return { views, serviceNow: serviceNowOf(views, answer.serviceDate), receivedAt };
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
      const { views, serviceNow, receivedAt } = roles.value;
      for (const view of views) showRole(view, serviceNow, receivedAt);
      // A role the service no longer lists (its entry is gone) leaves the page.
      const listed = new Set(views.map((view) => view.utype));
      for (const [utype, entry] of roleRows) {
        if (listed.has(utype)) continue;
        entry.row.remove();
        roleRows.delete(utype);
      }
      $("roles-empty").hidden = roleRows.size > 0;
    }
    if (groups.status === "fulfilled") showGroups(groups.value);
    if (selectedRole !== null) {
      if (history.status === "rejected") showHistoryError(selectedRole, history.reason);
      else showHistory(selectedRole, history.value);
    }
    const failed = [roles, groups].find((outcome) => outcome.status === "rejected");
    if (failed === undefined) {
      showSuccess(roleRows.size, groups.value.length, roles.value.serviceNow);
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

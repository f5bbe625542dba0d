// The agent console: signs in with a one-time link's code (never a token in the URL), follows the agent's inbox
// live, lists the queue, the agent's own and every open interaction, and opens one to work in. Every text from the
// API is set as text, never as HTML.
import { api, element, follow, session } from "./api.js";
import { closeConversation, currentInteraction, openConversation, showNote, wireConversation } from "./conversation.js";

const $ = (id) => document.getElementById(id);

function show(text) {
  const box = $("message");
  box.textContent = text ?? "";
  box.hidden = !text;
}

async function signIn() {
  const code = new URLSearchParams(location.hash.slice(1)).get("code");
  if (code) {
    history.replaceState(null, "", location.pathname);  // the code leaves the address bar at once
    const response = await fetch("/v1/console/sessions", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code }),
    });
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new Error(data?.detail ?? "This sign-in link cannot be used.");
    session.token = data.token;
  }
  if (!session.token) throw new Error("Open the sign-in link your administrator sent you.");
  return api("GET", "/v1/sessions/current");
}

// The inbox: every started interaction, by id, as the stream last showed it.
const interactions = new Map();

function render(me) {
  const open = [...interactions.values()].filter((i) => i.state === "started")
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
  for (const [list, test] of [["queue", (i) => !i.assigned_agent_id], ["mine", (i) => i.assigned_agent_id === me],
                              ["all", () => true]]) {
    $(list).replaceChildren(...open.filter(test).map((i) => {
      const item = element("li");
      const button = element("button", i.subject ?? "(no subject)", "open");
      button.type = "button";
      button.dataset.id = i.id;
      button.addEventListener("click", () => openConversation(i.id, show));
      item.append(button);
      if (i.unread_count > 0) {
        const badge = element("span", String(i.unread_count), "unread");
        badge.setAttribute("aria-label", `${i.unread_count} unread`);
        item.append(badge);
      }
      if (i.last_message) {
        item.append(element("span", (i.last_message.kind === "note" ? "Note: " : "") + i.last_message.text, "preview"));
      }
      return item;
    }));
  }
}

// What the inbox stream says, from the tabs' shared worker or, without one, from a stream of this tab's own.
function onInbox(me, message) {
  if (message.type === "state") {
    $("connection").textContent = message.state === "live" ? "Live" : "Reconnecting…";
    if (message.detail) show(message.detail);
  } else if (message.type === "snapshot" || message.type === "restart") {
    interactions.clear();
    for (const entry of message.interactions ?? []) interactions.set(entry.id, entry);
    if (message.state) $("connection").textContent = message.state === "live" ? "Live" : "Reconnecting…";
    render(me);
  } else if (message.event === "interaction") {
    const data = message.data;
    if (data.in_view) interactions.set(data.id, data); else interactions.delete(data.id);
    render(me);
  } else if (message.event === "note") {
    showNote(message.data);
  }
}

function followInbox(me) {
  if (window.SharedWorker) {
    const worker = new SharedWorker("inbox-worker.js", { type: "module", name: "switchboard-inbox" });
    worker.port.onmessage = (message) => onInbox(me, message.data);
    worker.port.start();
    worker.port.postMessage({ type: "hello", token: session.token });
    addEventListener("pagehide", () => worker.port.postMessage({ type: "bye" }));
    return;
  }
  follow("/v1/inbox/events?assigned=any&state=started", {
    signal: new AbortController().signal,
    onState: (state, detail) => onInbox(me, { type: "state", state, detail }),
    onEvent: (event, data) => onInbox(me, event === "restart" ? { type: "restart" } : { type: "event", event, data }),
  });
}

$("sign-out").addEventListener("click", async () => {
  try { await api("DELETE", "/v1/sessions/current"); } catch { /* signed out either way */ }
  session.token = null;
  location.reload();
});

$("status").addEventListener("change", async () => {
  try { await api("POST", "/v1/agents/me/status", { status: $("status").value }); } catch (error) { show(error.message); }
});

document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeConversation(); });

signIn().then((me) => {
  $("who").textContent = me.user_id;
  $("who").dataset.agent = me.user_id;
  for (const id of ["sign-out", "status"]) $(id).hidden = false;
  $("lists").hidden = false;
  show("");
  wireConversation(show);
  followInbox(me.user_id);
}).catch((error) => show(error.message));

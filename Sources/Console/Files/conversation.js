// One interaction on screen: its log replayed and followed live (messages, typing, media, reads, assignment, state),
// the agents' notes beside it, and what the agent can do — reply, note, claim, unassign, end, fail.
import { api, element, follow } from "./api.js";

let current = null;  // { id, controller, lastOwnSeq, customerRead }

const $ = (id) => document.getElementById(id);

function append(node) {
  const list = $("messages");
  list.append(node);
  node.scrollIntoView?.({ block: "nearest" });
}

function showMessage(message) {
  const mine = message.sender_role === "agent";
  const item = element("li", null, mine ? "message agent" : "message customer");
  item.append(element("span", mine ? message.sender_id : "Customer", "sender"));
  item.append(element("span", message.text, "text"));
  item.append(element("time", new Date(message.created_at).toLocaleTimeString()));
  item.dataset.seq = message.seq;
  append(item);
}

/// A note: shown apart, marked private (customers never see notes).
export function showNote(note) {
  if (!current || note.interaction_id !== current.id) return;
  if (document.querySelector(`[data-note="${note.note_seq}"]`)) return;
  const item = element("li", null, "note");
  item.dataset.note = note.note_seq;
  item.append(element("span", `Private note · ${note.author_id}`, "sender"));
  item.append(element("span", note.text, "text"));
  append(item);
}

function showState(interaction) {
  $("conversation-title").textContent = interaction.subject ?? "(no subject)";
  $("conversation-state").textContent = `${interaction.state}${interaction.assigned_agent_id ? ` · ${interaction.assigned_agent_id}` : " · unassigned"}`;
  const open = interaction.state === "started";
  for (const id of ["reply-text", "send", "claim", "unassign", "assignee", "assign", "end", "fail"]) $(id).disabled = !open;
  if (!open) $("typing").hidden = true;
}

/// The online agents the interaction may be handed to.
async function listAgents() {
  const agents = await api("GET", "/v1/agents");
  $("assignee").replaceChildren(...agents.items.filter((a) => a.status === "online").map((a) => {
    const option = element("option", `${a.agent_id} (${a.open_interactions} open)`);
    option.value = a.agent_id;
    return option;
  }));
}

function updateSeen() {
  $("seen").hidden = !(current && current.lastOwnSeq > 0 && current.customerRead >= current.lastOwnSeq);
}

export async function openConversation(id, onError) {
  closeConversation();
  const controller = new AbortController();
  current = { id, controller, lastOwnSeq: 0, customerRead: 0 };
  $("conversation").hidden = false;
  $("messages").replaceChildren();
  $("typing").hidden = true;
  $("seen").hidden = true;
  try {
    const interaction = await api("GET", `/v1/interactions/${id}`);
    showState(interaction);
    listAgents().catch(() => {});
    current.customerRead = interaction.read_by_other_through;
    const notes = await api("GET", `/v1/interactions/${id}/notes?limit=100`);
    let typingTimer = null;
    let lastSeq = 0;
    follow(`/v1/interactions/${id}/events`, {
      lastEventID: "0",
      signal: controller.signal,
      onState: (state, detail) => { if (detail) onError(detail); },
      onEvent: (event, data, eventID) => {
        if (!current || current.id !== id) return;
        const seq = Number(eventID);
        if (event === "restart") { $("messages").replaceChildren(); lastSeq = 0; return; }
        if (eventID && seq <= lastSeq) return;
        if (eventID) lastSeq = seq;
        if (event === "message") {
          showMessage({ ...data, seq });
          if (data.sender_role === "agent") current.lastOwnSeq = seq;
          else api("POST", `/v1/interactions/${id}/read`, { event_id: seq }).catch(() => {});
          $("typing").hidden = true;
        } else if (event === "typing" && data.sender_role === "customer") {
          $("typing").hidden = !data.typing;
          clearTimeout(typingTimer);
          typingTimer = setTimeout(() => { $("typing").hidden = true; }, (data.expires_in ?? 5) * 1000);
        } else if (event === "read" && data.reader_role === "customer") {
          current.customerRead = Math.max(current.customerRead, data.read_through);
        } else if (event === "media") {
          append(element("li", `${data.sender_role} ${data.kind}: ${data.state}`, "event"));
        } else if (event === "state" || event === "assignment") {
          api("GET", `/v1/interactions/${id}`).then(showState).catch(() => {});
        }
        // Notes written after this event (and before the next) take their place right after it.
        if (eventID) {
          for (const note of notes.items.filter((n) => n.after_seq <= seq)) showNote({ ...note, interaction_id: id });
          notes.items = notes.items.filter((n) => n.after_seq > seq);
        }
        updateSeen();
      },
      isFinal: (event, data) => event === "state" && data.state !== "started" && !data.snapshot,
    });
  } catch (error) {
    onError(error.message);
  }
}

export function closeConversation() {
  current?.controller.abort();
  current = null;
  $("conversation").hidden = true;
}

export function currentInteraction() { return current?.id ?? null; }

export function wireConversation(onError) {
  const act = (work) => async (event) => {
    event?.preventDefault();
    if (!current) return;
    try { await work(current.id); } catch (error) { onError(error.message); }
  };
  let typingSent = 0;
  $("reply-text").addEventListener("input", act(async (id) => {
    if (Date.now() - typingSent < 3000) return;
    typingSent = Date.now();
    await api("POST", `/v1/interactions/${id}/typing`, { typing: true });
  }));
  $("reply-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("reply").requestSubmit(); }
    if (event.key === "Escape") closeConversation();
  });
  $("reply").addEventListener("submit", act(async (id) => {
    const text = $("reply-text").value.trim();
    if (!text) return;
    await api("POST", `/v1/interactions/${id}/messages`, { text });
    $("reply-text").value = "";
    typingSent = 0;
  }));
  $("note-form").addEventListener("submit", act(async (id) => {
    const text = $("note-text").value.trim();
    if (!text) return;
    const note = await api("POST", `/v1/interactions/${id}/notes`, { text });
    showNote({ ...note, interaction_id: id });
    $("note-text").value = "";
  }));
  $("claim").addEventListener("click", act((id) => api("POST", `/v1/interactions/${id}/claim`, {}).then(showState)));
  $("unassign").addEventListener("click", act((id) => api("POST", `/v1/interactions/${id}/assign`, { agent_id: null }).then(showState)));
  $("assign").addEventListener("click", act(async (id) => {
    if (!$("assignee").value) { onError("No agent is online to take it."); return; }
    showState(await api("POST", `/v1/interactions/${id}/assign`, { agent_id: $("assignee").value }));
  }));
  $("end").addEventListener("click", act((id) => api("POST", `/v1/interactions/${id}/end`, {}).then(showState)));
  $("fail").addEventListener("click", act(async (id) => {
    const reason = $("fail-reason").value.trim();
    if (!reason) { onError("Say why it failed first."); return; }
    showState(await api("POST", `/v1/interactions/${id}/fail`, { reason }));
  }));
  $("close").addEventListener("click", () => closeConversation());
}

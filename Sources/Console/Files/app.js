// The agent console: signs in with a one-time link's code (never a token in the URL), keeps the session in
// sessionStorage, and follows the agent's inbox live with fetch and a stream reader (EventSource cannot send the
// Authorization header), resuming with Last-Event-ID after a drop. Every text from the API is set as text, never HTML.

const session = {
  get token() { return sessionStorage.getItem("switchboard.token"); },
  set token(value) { value ? sessionStorage.setItem("switchboard.token", value) : sessionStorage.removeItem("switchboard.token"); },
};

const $ = (id) => document.getElementById(id);

function show(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Authorization": `Bearer ${session.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new Error(data?.detail ?? data?.title ?? `The server answered ${response.status}.`);
  return data;
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

// The inbox: what is in view, by interaction id.
const interactions = new Map();

function render() {
  const me = $("who").dataset.agent;
  for (const [list, test] of [["queue", (i) => !i.assigned_agent_id], ["mine", (i) => i.assigned_agent_id === me]]) {
    const items = [...interactions.values()].filter((i) => i.in_view && i.state === "started" && test(i))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    $(list).replaceChildren(...items.map((i) => {
      const item = document.createElement("li");
      item.textContent = i.subject ?? "(no subject)";
      if (i.unread_count > 0) {
        const badge = document.createElement("span");
        badge.className = "unread";
        badge.textContent = String(i.unread_count);
        badge.setAttribute("aria-label", `${i.unread_count} unread`);
        item.append(badge);
      }
      if (i.last_message) {
        const preview = document.createElement("span");
        preview.className = "preview";
        preview.textContent = (i.last_message.kind === "note" ? "Note: " : "") + i.last_message.text;
        item.append(preview);
      }
      return item;
    }));
  }
}

async function followInbox() {
  let lastEventID = null;
  for (let delay = 500; ; delay = Math.min(delay * 2, 15000)) {
    try {
      const headers = { "Authorization": `Bearer ${session.token}`, "Accept": "text/event-stream" };
      if (lastEventID) headers["Last-Event-ID"] = lastEventID;
      const response = await fetch("/v1/inbox/events?assigned=any", { headers });
      if (response.status === 400 && lastEventID) { lastEventID = null; interactions.clear(); continue; }
      if (!response.ok) throw new Error((await response.json().catch(() => null))?.detail ?? `The server answered ${response.status}.`);
      $("connection").textContent = "Live";
      delay = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message", data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) lastEventID = line.slice(4);
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (event === "interaction") {
            const entry = JSON.parse(data.join("\n"));
            if (entry.in_view) interactions.set(entry.id, entry); else interactions.delete(entry.id);
            render();
          }
        }
      }
    } catch (error) {
      show(error.message);
    }
    $("connection").textContent = "Reconnecting…";
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

$("sign-out").addEventListener("click", async () => {
  try { await api("DELETE", "/v1/sessions/current"); } catch { /* signed out either way */ }
  session.token = null;
  location.reload();
});

signIn().then((me) => {
  $("who").textContent = me.user_id;
  $("who").dataset.agent = me.user_id;
  $("sign-out").hidden = false;
  $("lists").hidden = false;
  show("");
  followInbox();
}).catch((error) => show(error.message));

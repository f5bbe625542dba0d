// The console's way to the API: the session kept in sessionStorage, JSON calls that turn problems into errors
// carrying their `detail`, and event streams read with fetch (EventSource cannot send Authorization), resumed with
// Last-Event-ID after every drop.

export const session = {
  get token() { return sessionStorage.getItem("switchboard.token"); },
  set token(value) { value ? sessionStorage.setItem("switchboard.token", value) : sessionStorage.removeItem("switchboard.token"); },
};

export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Authorization": `Bearer ${session.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new Error(data?.detail ?? data?.title ?? `The server answered ${response.status}.`);
  return data;
}

// Follows the event stream at `path` until `signal` aborts: calls onEvent(event, data, id) for each event and
// onState("live" | "reconnecting" | "over", detail) as the connection changes. A 204 or an event `isFinal` accepts
// ends it; a 400 for the last id starts over without it (onEvent("restart")). `token` gives the bearer token.
export async function follow(path, { onEvent, onState, signal, lastEventID = null, isFinal = () => false,
                                     token = () => session.token }) {
  for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 15000)) {
    try {
      const headers = { "Authorization": `Bearer ${token()}`, "Accept": "text/event-stream" };
      if (lastEventID) headers["Last-Event-ID"] = lastEventID;
      const response = await fetch(path, { headers, signal });
      if (response.status === 204) { onState("over"); return; }
      if (response.status === 400 && lastEventID) { lastEventID = null; onEvent("restart", null, null); continue; }
      if (!response.ok) {
        const problem = await response.json().catch(() => null);
        throw new Error(problem?.detail ?? `The server answered ${response.status}.`);
      }
      onState("live");
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
          let event = "message", data = [], id = null;
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = line.slice(4);
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (id !== null) lastEventID = id;
          if (data.length === 0) continue;
          const parsed = JSON.parse(data.join("\n"));
          onEvent(event, parsed, id);
          if (isFinal(event, parsed)) { onState("over"); return; }
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      onState("reconnecting", error.message);
    }
    if (signal.aborted) return;
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

// A text node's worth of `text`, for building the page without ever parsing markup from the API.
export function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

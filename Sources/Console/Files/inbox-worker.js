// One inbox stream per browser, shared by all of its console tabs: browsers allow about six HTTP/1.1 connections per
// origin across every tab, and held streams count, so each tab holding its own would soon leave API calls waiting.
// Tabs connect with their token; the worker follows the inbox with the latest one, keeps what is in view, gives a new
// tab all of it, and passes every event on. When the last tab closes, the browser ends the worker and its stream.
import { follow } from "./api.js";

const ports = new Set();
const interactions = new Map();
let token = null;
let state = "connecting";
let started = false;

function broadcast(message) {
  for (const port of ports) port.postMessage(message);
}

function start() {
  started = true;
  follow("/v1/inbox/events?assigned=any&state=started", {
    token: () => token,
    signal: new AbortController().signal,
    onState: (next, detail) => {
      state = next;
      broadcast({ type: "state", state: next, detail });
    },
    onEvent: (event, data) => {
      if (event === "restart") {
        interactions.clear();
        broadcast({ type: "restart" });
        return;
      }
      if (event === "interaction") {
        if (data.in_view) interactions.set(data.id, data); else interactions.delete(data.id);
      }
      broadcast({ type: "event", event, data });
    },
  });
}

self.onconnect = (connection) => {
  const port = connection.ports[0];
  port.onmessage = (message) => {
    if (message.data.type === "hello") {
      token = message.data.token;
      ports.add(port);
      port.postMessage({ type: "snapshot", interactions: [...interactions.values()], state });
      if (!started) start();
    } else if (message.data.type === "bye") {
      ports.delete(port);
    }
  };
  port.start();
};

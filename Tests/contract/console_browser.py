#!/usr/bin/env python3
"""The agent console in a real browser: Debian's headless Chromium, driven by selenium (pinned in the project's
tool environment) through chromium-driver, against the real binary and Postgres.

An agent signs in through a one-time link (the code leaves the address bar; a second use of the link shows a clear
error); the queue shows the tenant's interactions live — one a customer opens through the API appears within 2 s,
with its preview and unread count when the customer writes; a subject and a message carrying HTML and script show as
text and run nothing. Two agents, A and B, each in a browser: a new interaction reaches both queues within 2 s;
A opens it and claims it (it leaves B's queue within 2 s), replies with Enter (the customer's stream gets it), sees
the customer typing and "Seen", writes private notes (B, watching, sees them; the customer's stream and list never
do) and ends it. Then two tabs hold one inbox stream, a server restart is survived, Tab and Enter alone work, and a
390x844 window is usable; signing out ends the session. No JavaScript error may reach the browser's console.

    console_browser.py BINARY      (DATABASE_URL must point at an empty or migrated database)

With CONSOLE_SCREENSHOTS=DIR it also saves DIR/console-queue.png and DIR/console-conversation.png, the README's.
"""
import json, os, pathlib, signal, socket, subprocess, sys, time, urllib.error, urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

ADMIN = "console-admin-token-0123456789"
METRICS = "console-metrics-token-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port = free_port()
base = f"http://127.0.0.1:{port}"
env = dict(os.environ, PORT=str(port), STREAM_PORT="off", HOST="127.0.0.1", LOG_LEVEL="error",
           SWITCHBOARD_ADMIN_TOKEN=ADMIN, RATE_LIMIT_PER_MINUTE="0", PUBLIC_URL=base, METRICS_TOKEN=METRICS)


def launch():
    return subprocess.Popen([sys.argv[1], "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ready():
    for _ in range(300):
        try:
            if urllib.request.urlopen(base + "/readyz", timeout=1).status == 200:
                return
        except Exception:
            time.sleep(0.1)
    raise SystemExit("console: the server did not become ready")


server = launch()


def call(method, path, token=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


SCREENSHOTS = os.environ.get("CONSOLE_SCREENSHOTS")


def screenshot(driver, name):
    if SCREENSHOTS:
        pathlib.Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(pathlib.Path(SCREENSHOTS) / name))


def inbox_streams():
    request = urllib.request.Request(base + "/metrics", headers={"Authorization": f"Bearer {METRICS}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("switchboard_inbox_streams "):
                return int(float(line.split()[1]))
    return None


def wait(driver, what, condition, seconds=10):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: condition(d))
    except Exception:
        raise SystemExit(f"console: {what} did not happen within {seconds} s; the page shows:\n"
                         + driver.find_element(By.TAG_NAME, "body").text)


def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


class CustomerStream:
    """The customer's event stream of one interaction, read on a thread of its own."""

    def __init__(self, interaction, token):
        import threading
        self.text, self.events = "", []
        request = urllib.request.Request(f"{base}/v1/interactions/{interaction}/events",
                                         headers={"Authorization": f"Bearer {token}", "Last-Event-ID": "0"})
        self.response = urllib.request.urlopen(request, timeout=60)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for line in self.response:
                self.text += line.decode()
        except Exception:
            pass

    def close(self):
        try:
            self.response.close()
        except Exception:
            pass


driver = None
colleague = None
try:
    ready()
    _, tenant = call("POST", "/v1/admin/tenants", ADMIN, {"name": "Console"})
    key = tenant["api_key"]
    _, customer = call("POST", "/v1/sessions", key, {"user_id": "alice", "role": "customer"})
    _, link = call("POST", "/v1/console/links", key, {"agent_id": "agent-7"})
    assert link["url"].startswith(base + "/console/#code="), link

    driver = browser()
    colleague = browser()
    _, colleague_link = call("POST", "/v1/console/links", key, {"agent_id": "agent-8"})
    colleague.get(colleague_link["url"])
    wait(colleague, "agent B signing in", lambda d: d.find_element(By.ID, "who").text == "agent-8")

    # Signing in through the link: the code leaves the address bar, the agent's name shows, the stream goes live.
    driver.get(link["url"])
    wait(driver, "signing in", lambda d: d.find_element(By.ID, "who").text == "agent-7")
    assert "code=" not in driver.current_url, driver.current_url
    wait(driver, "the inbox going live", lambda d: d.find_element(By.ID, "connection").text == "Live")

    # A customer opens an interaction (with markup in its subject): it appears in the queue within 2 s, as text.
    payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    status, interaction = call("POST", "/v1/interactions", customer["token"], {"subject": payload})
    assert status == 201, interaction
    started = time.monotonic()
    wait(driver, "the new interaction in A's queue", lambda d: payload in d.find_element(By.ID, "queue").text, 2)
    wait(colleague, "the new interaction in B's queue", lambda d: payload in d.find_element(By.ID, "queue").text, 2)
    print(f"console: a new interaction reached both agents' queues in {time.monotonic() - started:.2f} s")
    stream = CustomerStream(interaction["id"], customer["token"])
    status, _ = call("POST", f"/v1/interactions/{interaction['id']}/messages", customer["token"],
                     {"text": "<b>bold?</b><img src=x onerror=\"window.__pwned=3\">"})
    wait(driver, "the message's preview and unread count",
         lambda d: "<b>bold?</b>" in d.find_element(By.ID, "queue").text
         and d.find_element(By.CSS_SELECTOR, "#queue .unread").text == "1")
    assert driver.execute_script("return window.__pwned === undefined"), "markup from the API ran in the page"
    assert not driver.find_elements(By.CSS_SELECTOR, "#queue img, #queue b, #queue script")

    # Opening it: claim, reply, the customer's typing and reading, a private note, the end.
    driver.find_element(By.CSS_SELECTOR, f'#queue button[data-id="{interaction["id"]}"]').click()
    wait(driver, "the conversation's history", lambda d: "<b>bold?</b>" in d.find_element(By.ID, "messages").text)
    driver.find_element(By.ID, "claim").click()
    wait(driver, "the claim", lambda d: "agent-7" in d.find_element(By.ID, "conversation-state").text)
    started = time.monotonic()
    wait(colleague, "the claimed interaction leaving B's queue", lambda d: payload not in d.find_element(By.ID, "queue").text, 2)
    print(f"console: a claimed interaction left the other agent's queue in {time.monotonic() - started:.2f} s")
    wait(driver, "the interaction in Mine", lambda d: payload in d.find_element(By.ID, "mine").text)
    wait(driver, "the interaction leaving the queue", lambda d: payload not in d.find_element(By.ID, "queue").text)
    box = driver.find_element(By.ID, "reply-text")
    box.send_keys("Hello, I can help.")
    box.send_keys("\n")  # Enter sends
    wait(driver, "the reply in the conversation", lambda d: "Hello, I can help." in d.find_element(By.ID, "messages").text)
    _, page = call("GET", f"/v1/interactions/{interaction['id']}/messages", customer["token"])
    assert [m["text"] for m in page["items"]][-1] == "Hello, I can help.", page
    deadline = time.monotonic() + 5
    while "Hello, I can help." not in stream.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Hello, I can help." in stream.text, "the reply never reached the customer's stream"
    call("POST", f"/v1/interactions/{interaction['id']}/typing", customer["token"], {"typing": True})
    wait(driver, "the typing indicator", lambda d: d.find_element(By.ID, "typing").is_displayed())
    last = page["items"][-1]["seq"]
    call("POST", f"/v1/interactions/{interaction['id']}/read", customer["token"], {"event_id": last})
    wait(driver, "Seen", lambda d: d.find_element(By.ID, "seen").is_displayed())
    driver.find_element(By.ID, "note-text").send_keys("Checked the card's history.")
    driver.find_element(By.CSS_SELECTOR, "#note-form button").click()
    wait(driver, "the private note", lambda d: "Private note" in d.find_element(By.ID, "messages").text
         and "Checked the card's history." in d.find_element(By.ID, "messages").text)
    _, page = call("GET", f"/v1/interactions/{interaction['id']}/messages", customer["token"])
    assert not any("card's history" in m["text"] for m in page["items"]), "a note reached the customer"
    # B, with the interaction open, sees A's note arrive; the customer's stream never carries it.
    colleague.find_element(By.CSS_SELECTOR, f'#all button[data-id="{interaction["id"]}"]').click()
    wait(colleague, "A's note in B's view", lambda d: "Checked the card's history." in d.find_element(By.ID, "messages").text)
    driver.find_element(By.ID, "note-text").send_keys("Second note, while B watches.")
    driver.find_element(By.CSS_SELECTOR, "#note-form button").click()
    wait(colleague, "A's live note in B's view", lambda d: "Second note, while B watches." in d.find_element(By.ID, "messages").text)
    assert "card's history" not in stream.text and "while B watches" not in stream.text, "a note reached the customer's stream"
    # A hands it to B, who is online: it moves to B's own list.
    driver.find_element(By.ID, "close").click()
    driver.find_element(By.CSS_SELECTOR, f'#all button[data-id="{interaction["id"]}"]').click()
    wait(driver, "B among the online agents", lambda d: "agent-8" in d.find_element(By.ID, "assignee").text)
    Select(driver.find_element(By.ID, "assignee")).select_by_value("agent-8")
    driver.find_element(By.ID, "assign").click()
    wait(driver, "the assignment", lambda d: "agent-8" in d.find_element(By.ID, "conversation-state").text)
    wait(colleague, "the interaction in B's own list", lambda d: payload in d.find_element(By.ID, "mine").text, 2)
    colleague_errors = [e for e in colleague.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert not colleague_errors, "errors in B's browser console:\n" + "\n".join(e["message"] for e in colleague_errors)
    screenshot(driver, "console-conversation.png")
    driver.find_element(By.ID, "end").click()
    wait(driver, "the end", lambda d: d.find_element(By.ID, "conversation-state").text.startswith("ended"))
    wait(driver, "the interaction leaving the lists", lambda d: payload not in d.find_element(By.ID, "all").text)
    stream.close()
    colleague.quit()
    colleague = None

    # A second tab of the same agent shares the first one's inbox stream: one stream on the server for both.
    first_tab = driver.current_window_handle
    driver.execute_script("window.open('/console/', '_blank')")
    second_tab = [handle for handle in driver.window_handles if handle != first_tab][0]
    driver.switch_to.window(second_tab)
    wait(driver, "the second tab signing in", lambda d: d.find_element(By.ID, "who").text == "agent-7")
    wait(driver, "the second tab going live", lambda d: d.find_element(By.ID, "connection").text == "Live")
    status, second = call("POST", "/v1/interactions", customer["token"], {"subject": "Second tab"})
    for handle in [second_tab, first_tab]:
        driver.switch_to.window(handle)
        wait(driver, "the new interaction in both tabs", lambda d: "Second tab" in d.find_element(By.ID, "queue").text, 2)
    assert inbox_streams() == 1, f"two tabs hold {inbox_streams()} inbox streams"
    driver.switch_to.window(second_tab)
    driver.close()
    driver.switch_to.window(first_tab)
    print("console: two tabs of one agent held one inbox stream between them")
    if SCREENSHOTS:
        for subject in ["Card blocked abroad", "Change of address", "Statement for March"]:
            call("POST", "/v1/interactions", customer["token"], {"subject": subject})
        wait(driver, "the queue for its picture", lambda d: "Statement for March" in d.find_element(By.ID, "queue").text)
        driver.find_element(By.ID, "close").click()
        screenshot(driver, "console-queue.png")

    # The server restarts: the page says it is reconnecting, comes back by itself, and misses nothing — an
    # interaction opened the moment the new process is up, before the page is back, still arrives.
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    wait(driver, "the page saying it reconnects", lambda d: d.find_element(By.ID, "connection").text == "Reconnecting…")
    server = launch()
    ready()
    status, after = call("POST", "/v1/interactions", customer["token"], {"subject": "Opened during the restart"})
    assert status == 201, after
    wait(driver, "the page back, with what happened meanwhile",
         lambda d: "Opened during the restart" in d.find_element(By.ID, "queue").text, 20)
    wait(driver, "the page live again", lambda d: d.find_element(By.ID, "connection").text == "Live")
    print("console: after a server restart the page reconnected by itself and missed nothing")

    # Keyboard only: Tab to the conversation, Enter opens it, Tab to the reply, type, Enter sends.
    def tab_to(condition, limit=40):
        for _ in range(limit):
            if driver.execute_script(condition):
                return
            ActionChains(driver).send_keys(Keys.TAB).perform()
        raise SystemExit(f"console: Tab never reached {condition}")
    driver.execute_script("document.activeElement?.blur()")
    tab_to(f"return document.activeElement?.dataset?.id === '{after['id']}'")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, "the conversation opened from the keyboard",
         lambda d: d.find_element(By.ID, "conversation-title").text == "Opened during the restart")
    tab_to("return document.activeElement?.id === 'reply-text'")
    ActionChains(driver).send_keys("Typed without a mouse").send_keys(Keys.ENTER).perform()
    wait(driver, "the keyboard reply", lambda d: "Typed without a mouse" in d.find_element(By.ID, "messages").text)
    print("console: Tab and Enter alone opened a conversation and sent a reply")

    # A phone-sized window: the same page, one column, still usable (claim, send).
    driver.set_window_size(390, 844)
    status, small = call("POST", "/v1/interactions", customer["token"], {"subject": "From a small screen"})
    wait(driver, "the interaction on the small screen", lambda d: "From a small screen" in d.find_element(By.ID, "queue").text)
    driver.find_element(By.CSS_SELECTOR, f'#queue button[data-id="{small["id"]}"]').click()
    wait(driver, "the conversation on the small screen",
         lambda d: d.find_element(By.ID, "conversation-title").text == "From a small screen")
    driver.find_element(By.ID, "claim").click()
    wait(driver, "the claim on the small screen", lambda d: "agent-7" in d.find_element(By.ID, "conversation-state").text)
    driver.find_element(By.ID, "reply-text").send_keys("Sent from a phone-sized window")
    driver.find_element(By.ID, "send").click()
    wait(driver, "the reply on the small screen",
         lambda d: "Sent from a phone-sized window" in d.find_element(By.ID, "messages").text)
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    driver.set_window_size(1280, 800)
    print("console: at 390x844 the page claimed and sent, with nothing wider than the screen")

    # The link works once: opened again, it says so.
    driver.execute_script("sessionStorage.clear()")
    driver.get("about:blank")  # a new document: the same URL with only its fragment changed would not load again
    driver.get(link["url"])
    wait(driver, "the used link's error", lambda d: "used already" in d.find_element(By.ID, "message").text)

    # Signing out ends the session.
    _, again = call("POST", "/v1/console/links", key, {"agent_id": "agent-7"})
    driver.get("about:blank")
    driver.get(again["url"])
    wait(driver, "signing in again", lambda d: d.find_element(By.ID, "who").text == "agent-7")
    token = driver.execute_script("return sessionStorage.getItem('switchboard.token')")
    driver.find_element(By.ID, "sign-out").click()
    wait(driver, "signing out", lambda d: d.execute_script("return sessionStorage.getItem('switchboard.token')") is None)
    assert call("GET", "/v1/sessions/current", token)[0] == 401, "the session outlived signing out"

    errors = [entry for entry in driver.get_log("browser")
              if entry["level"] == "SEVERE" and "favicon" not in entry["message"] and "401" not in entry["message"]]
    if errors:
        raise SystemExit("console: errors in the browser's console:\n" + "\n".join(e["message"] for e in errors))
    print("console: signed in through a one-time link; the queue live and as text; claimed, replied (Enter), saw the "
          "customer type and read, wrote a private note the customer never saw, ended it; a used link refused; signed "
          "out; no error in the browser's console")
finally:
    for browser_left in [driver, colleague]:
        if browser_left:
            browser_left.quit()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)

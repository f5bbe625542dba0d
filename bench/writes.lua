-- wrk: message POSTs spread over the interactions listed in $WRITES_IDS (one id a line), as $WRITES_TOKEN, to
-- $WRITES_PATH{id}/messages (default /v1/interactions/: FastAPI's reference takes /interactions/); with
-- WRITES_IDEMPOTENT=1 each carries an Idempotency-Key never used before (the run's start time, the thread's number
-- and a counter: a key used again would be answered from its stored response, which is not what is measured).
-- WRITES_ACTION=typing posts to {id}/typing instead, typing and then not, in turn.
local threads = 0

function setup(thread)
    threads = threads + 1
    thread:set("tag", string.format("%d-%d", os.time(), threads))
end

local ids = {}
for line in io.lines(os.getenv("WRITES_IDS")) do ids[#ids + 1] = line end
local token = os.getenv("WRITES_TOKEN")
local idempotent = os.getenv("WRITES_IDEMPOTENT") == "1"
local path = os.getenv("WRITES_PATH") or "/v1/interactions/"
local action = os.getenv("WRITES_ACTION") or "messages"
local counter = 0

request = function()
    counter = counter + 1
    local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
    if idempotent then headers["Idempotency-Key"] = tag .. "-" .. counter end
    local id = ids[(counter % #ids) + 1]
    local body = '{"text":"a message of the bench"}'
    if action == "typing" then body = (counter % 2 == 0) and '{"typing":true}' or '{"typing":false}' end
    return wrk.format("POST", path .. id .. "/" .. action, headers, body)
end

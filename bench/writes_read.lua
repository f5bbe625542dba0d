-- wrk: read positions that move, spread over the interactions listed in $WRITES_READS (one "id first-event" a line):
-- as $WRITES_TOKEN, POST /v1/interactions/{id}/read through the interaction's first event, then one further on each
-- pass over the list (each move appends a `read` event, so the log keeps ahead of the position). Each thread of
-- wrk takes its own share of the interactions, so no two threads read the same one.
local threads = 0

function setup(thread)
    threads = threads + 1
    thread:set("number", threads)
    thread:set("count", tonumber(os.getenv("WRK_THREADS") or "2"))
end

local token = os.getenv("WRITES_TOKEN")
local mine = nil
local counter = 0

local function load()
    mine = {}
    local index = 0
    for line in io.lines(os.getenv("WRITES_READS")) do
        local id, first = line:match("^(%S+)%s+(%d+)$")
        if id and index % count == number - 1 then mine[#mine + 1] = { id = id, first = tonumber(first) } end
        index = index + 1
    end
end

request = function()
    if mine == nil then load() end
    local target = mine[(counter % #mine) + 1]
    local through = target.first + math.floor(counter / #mine)
    counter = counter + 1
    local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
    return wrk.format("POST", "/v1/interactions/" .. target.id .. "/read", headers,
        string.format('{"event_id":%d}', through))
end

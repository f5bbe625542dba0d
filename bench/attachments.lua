-- wrk: message POSTs to the interaction in $WRITES_IDS as $WRITES_TOKEN; with ATTACH_KIND=attachment each carries one
-- upload from $ATTACH_IDS (one id a line, each used once: threads take alternate lines), else text alone.
local threads = 0
function setup(thread)
    thread:set("index", threads)
    threads = threads + 1
end

local ids = {}
for line in io.lines(os.getenv("ATTACH_IDS")) do ids[#ids + 1] = line end
local interaction = io.lines(os.getenv("WRITES_IDS"))()
local token = os.getenv("WRITES_TOKEN")
local attach = os.getenv("ATTACH_KIND") == "attachment"
local counter = 0

request = function()
    local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
    local body = '{"text":"a message of the bench"}'
    if attach then
        local id = ids[counter * 2 + index + 1]
        counter = counter + 1
        if id == nil then return wrk.format("GET", "/healthz") end  -- out of uploads: counted as a non-POST
        body = '{"text":"a message of the bench","attachment_ids":["' .. id .. '"]}'
    end
    return wrk.format("POST", "/v1/interactions/" .. interaction .. "/messages", headers, body)
end

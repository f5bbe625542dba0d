-- wrk: an agent ($WRITES_TOKEN) claiming the interactions listed in $WRITES_IDS (one id a line) and giving them up,
-- in turns: each pass over the list claims every interaction (POST …/claim), the next unassigns it
-- (POST …/assign {"agent_id":null}); each change logs an `assignment` event and an audit entry.
local ids = {}
for line in io.lines(os.getenv("WRITES_IDS")) do ids[#ids + 1] = line end
local token = os.getenv("WRITES_TOKEN")
local counter = 0

request = function()
    local id = ids[(counter % #ids) + 1]
    local claim = math.floor(counter / #ids) % 2 == 0
    counter = counter + 1
    local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
    if claim then return wrk.format("POST", "/v1/interactions/" .. id .. "/claim", headers, "") end
    return wrk.format("POST", "/v1/interactions/" .. id .. "/assign", headers, '{"agent_id":null}')
end

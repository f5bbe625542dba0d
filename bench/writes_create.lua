-- wrk: a customer ($WRITES_TOKEN) opening interactions, POST /v1/interactions with a subject; each one logs its
-- `started` event (the bench's tenant does not assign automatically).
request = function()
    local headers = { ["Authorization"] = "Bearer " .. os.getenv("WRITES_TOKEN"), ["Content-Type"] = "application/json" }
    return wrk.format("POST", "/v1/interactions", headers, '{"subject":"an interaction of the bench"}')
end

-- Takes up to ARGV[4] texts of a sender's rate at once: the GCRA of
-- github.com/go-redis/redis_rate v10 (allowAtMost; BSD-2-Clause, Copyright (c) 2013
-- The github.com/go-redis/redis_rate Authors), on its key and in its units, so that
-- it meets the same state, with one change: it grants whole texts. redis_rate's own
-- sets the cost to the fractional remainder and reports its integer part, so every
-- partial grant dropped a fraction of a text (a 1,000/s sender reached 700/s).
-- KEYS[1]: the key; ARGV: burst, rate, period in seconds, texts wanted.
-- Returns {texts granted, seconds to wait when none ("-1" otherwise)}.
redis.replicate_commands()

local key = KEYS[1]
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local want = tonumber(ARGV[4])

local emission_interval = period / rate
local burst_offset = emission_interval * burst

local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)

local tat = redis.call("GET", key)
if not tat then
  tat = now
else
  tat = tonumber(tat)
end
tat = math.max(tat, now)

local diff = now - (tat - burst_offset)
-- A microsecond of slack: now is about 3e8 seconds, whose doubles are 6e-8 s apart, so a
-- full bucket's diff may come out a hair under its burst (0.02 s as 0.01999998): without
-- it a burst of one at 3 or 50 a second never granted its first text.
local whole = math.floor((diff + 0.000001) / emission_interval)
if whole < 1 then
  return {0, tostring(emission_interval - diff)}
end

local cost = math.min(whole, want)
local new_tat = tat + emission_interval * cost
local reset_after = new_tat - now
if reset_after > 0 then
  redis.call("SET", key, new_tat, "EX", math.ceil(reset_after))
end
return {cost, "-1"}

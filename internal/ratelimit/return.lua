-- Gives back one event of a go-redis/redis_rate (v10) bucket: its key holds the
-- bucket's theoretical arrival time (TAT), in seconds since 2017-01-01 as redis_rate
-- counts them, and one event moves it one emission interval later. Moving it back one
-- interval returns the event. A TAT at or before now means a full bucket: the key is
-- deleted, which is what redis_rate reads as full, so a return never fills a bucket
-- beyond its burst. (redis_rate's own AllowN with a cost of -1 leaves the key untouched
-- in that case, keeping up to one event spent for up to one interval.)
--
-- KEYS[1]: the bucket's key. ARGV[1]: the emission interval in seconds.
-- Returns 1 when an event was given back, 0 when the bucket was already full.
redis.replicate_commands()

local tat = tonumber(redis.call("GET", KEYS[1]))
if not tat then
  return 0
end
local now = redis.call("TIME")
now = (now[1] - 1483228800) + (now[2] / 1000000)
if tat <= now then
  redis.call("DEL", KEYS[1])
  return 0
end
local new_tat = tat - tonumber(ARGV[1])
if new_tat <= now then
  redis.call("DEL", KEYS[1])
else
  redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(new_tat - now))
end
return 1

-- KEYS[1] lock key, ARGV[1] token.
-- Returns the remaining TTL in milliseconds if the key holds our token, else 0.
if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("pttl", KEYS[1])
end
return 0

-- KEYS[1] lock key, ARGV[1] token, ARGV[2] new ttl in milliseconds.
-- Sets the TTL only if the key still holds our token.
-- Returns 1 if extended, 0 if the key was not ours.
if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("pexpire", KEYS[1], ARGV[2])
end
return 0

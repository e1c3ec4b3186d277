-- KEYS[1] lock key, ARGV[1] token, ARGV[2] ttl in milliseconds.
-- Returns 1 if the caller holds the lock now, 0 if someone else does.
--
-- SET NX PX, and also succeed when the key already holds our own token: if a
-- reply is lost, go-redis sends the command again, and that retry must not
-- mistake the lock we just took for someone else's.
if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return 1
end
if redis.call("get", KEYS[1]) == ARGV[1] then
	redis.call("pexpire", KEYS[1], ARGV[2])
	return 1
end
return 0

-- KEYS[1] lock key, ARGV[1] token, ARGV[2] channel, ARGV[3] message.
-- Like release.lua, and when the key was ours, publishes the message on the
-- channel in the same step, so that a waiter woken by it finds the key free.
-- Returns 1 if deleted, 0 if the key was not ours (nothing is published).
if redis.call("get", KEYS[1]) == ARGV[1] then
	redis.call("del", KEYS[1])
	redis.call("publish", ARGV[2], ARGV[3])
	return 1
end
return 0

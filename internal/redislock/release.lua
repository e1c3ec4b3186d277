-- KEYS[1] lock key, ARGV[1] token.
-- Deletes the key only if it still holds our token: after our lock expired,
-- someone else may hold the key, and a blind DEL would free their lock.
-- Returns 1 if deleted, 0 if the key was not ours.
if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("del", KEYS[1])
end
return 0

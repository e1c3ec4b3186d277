package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisOptions turns REDIS_URL into options for a go-redis UniversalClient:
//
//	redis://[user:pass@]host:port/db           one node (rediss:// for TLS)
//	redis://host:port?addr=host2:port2&...      a Redis Cluster (go-redis cluster URL form)
//	redis+sentinel://[:pass@]host:port,host:port/master?db=0   Sentinel
//
// The error never repeats the URL, which may carry a password.
func RedisOptions(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Query().Has("addr") {
			o, err := redis.ParseClusterURL(raw)
			if err != nil {
				return nil, errors.New("bad cluster URL")
			}
			return &redis.UniversalOptions{
				Addrs: o.Addrs, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
				IsClusterMode: true,
			}, nil
		}
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, errors.New("bad redis URL")
		}
		return &redis.UniversalOptions{
			Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, DB: o.DB,
			TLSConfig: o.TLSConfig,
		}, nil
	case "redis+sentinel":
		master := strings.Trim(u.Path, "/")
		if master == "" || u.Host == "" {
			return nil, errors.New("sentinel URL needs hosts and a master name: redis+sentinel://host:26379,host2:26379/mymaster")
		}
		opts := &redis.UniversalOptions{Addrs: strings.Split(u.Host, ","), MasterName: master}
		if u.User != nil {
			opts.Password, _ = u.User.Password()
		}
		if db := u.Query().Get("db"); db != "" {
			if _, err := fmt.Sscan(db, &opts.DB); err != nil {
				return nil, errors.New("db must be a number")
			}
		}
		return opts, nil
	default:
		return nil, errors.New("scheme must be redis, rediss or redis+sentinel")
	}
}

// loadRedis reads REDIS_URL (REDIS_KEY_PREFIX is loadRedisKeyPrefix's).
func (c *Config) loadRedis(get func(string) string, bad func(name, why string)) {
	c.RedisURL = get("REDIS_URL")
	if c.RedisURL == "" {
		bad("REDIS_URL", "is required (e.g. redis://127.0.0.1:6379/0)")
	} else if _, err := RedisOptions(c.RedisURL); err != nil {
		bad("REDIS_URL", "is malformed: "+err.Error())
	}
}

// loadRedisKeyPrefix reads REDIS_KEY_PREFIX, Load's last step.
func (c *Config) loadRedisKeyPrefix(get func(string) string, bad func(name, why string)) {
	c.RedisKeyPrefix = get("REDIS_KEY_PREFIX")
	if c.RedisKeyPrefix != "" && strings.ContainsAny(c.RedisKeyPrefix, " {}") {
		bad("REDIS_KEY_PREFIX", "must not contain spaces or braces")
	}
}

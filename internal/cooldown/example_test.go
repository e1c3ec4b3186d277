package cooldown_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func ExampleStore_Cooling() {
	ctx := context.Background()
	opt, err := redis.ParseURL(redistest.URL())
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	// In production Prefix is "" and Default 0 (24 hours). Here the prefix is this
	// process's own, so that two test runs sharing a Redis do not see each other's keys.
	prefix := fmt.Sprintf("example:cooldown:%d:%d:", os.Getpid(), time.Now().UnixNano())
	cooldowns, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	if err != nil {
		panic(err)
	}
	defer rdb.Del(ctx, cooldowns.Key("alice"))

	if err := cooldowns.Start(ctx, "alice", time.Hour); err != nil {
		fmt.Println("redis is unavailable:", err)
		return
	}
	cooling, err := cooldowns.Cooling(ctx, []string{"alice", "bob"})
	if err != nil {
		fmt.Println("redis is unavailable:", err)
		return
	}
	fmt.Println("alice:", cooling["alice"], "bob:", cooling["bob"])

	// Output:
	// alice: true bob: false
}

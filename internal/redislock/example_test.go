package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func ExampleClient_Obtain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opt, err := redis.ParseURL(redistest.URL())
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	locks := redislock.New(rdb)
	// A key and a channel of this process's own, so that two test runs sharing a Redis
	// do not meet.
	prefix := fmt.Sprintf("example:redislock:%d:%d:", os.Getpid(), time.Now().UnixNano())
	key, channel := prefix+"report", prefix+"released"

	// Waiters watch the key's release notices before they try it.
	watcher := redislock.NewWatcher(rdb, channel)
	defer watcher.Close()
	<-watcher.Ready()
	notes, stop := watcher.Watch(key)
	defer stop()

	lock, err := locks.Obtain(ctx, key, 30*time.Second)
	if errors.Is(err, redislock.ErrNotObtained) {
		fmt.Println("someone else is writing the report")
		return
	}
	if err != nil {
		fmt.Println("redis is unavailable:", err) // fail closed
		return
	}
	// A second caller is told at once; it waits for the release notice, not by polling.
	_, err = locks.Obtain(ctx, key, 30*time.Second)
	fmt.Println("second caller not obtained:", errors.Is(err, redislock.ErrNotObtained))

	// Release even if ctx ends first, and tell the waiters what was decided.
	if err := lock.ReleaseAndNotify(context.WithoutCancel(ctx), channel, "report written"); err != nil {
		fmt.Println("release:", err)
		return
	}
	select {
	case note := <-notes:
		fmt.Println("waiter told:", note)
	case <-ctx.Done():
		fmt.Println("no release notice") // notices can be missed: waiters bound their wait
	}

	// Output:
	// second caller not obtained: true
	// waiter told: report written
}

package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/redistest"
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
	// A key of this process's own, so that two test runs sharing a Redis do not
	// wait for each other.
	key := fmt.Sprintf("example:redislock:%d:%d:report", os.Getpid(), time.Now().UnixNano())

	// Wait up to ctx for the key, trying every 10ms.
	retry := &redislock.Options{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond)}
	lock, err := locks.Obtain(ctx, key, 30*time.Second, retry)
	if errors.Is(err, redislock.ErrNotObtained) {
		fmt.Println("someone else is writing the report")
		return
	}
	if err != nil {
		fmt.Println("redis is unavailable:", err) // fail closed
		return
	}
	// Release even if ctx ends first.
	defer lock.Release(context.WithoutCancel(ctx))
	fmt.Println("locked:", lock.Key() == key)

	// A second caller, without retries, is told at once.
	_, err = locks.Obtain(ctx, key, 30*time.Second, nil)
	fmt.Println("second caller not obtained:", errors.Is(err, redislock.ErrNotObtained))

	// Output:
	// locked: true
	// second caller not obtained: true
}

func ExampleClient_Do() {
	ctx := context.Background()
	opt, err := redis.ParseURL(redistest.URL())
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	locks := redislock.New(rdb)

	retry := &redislock.Options{RetryStrategy: redislock.ExponentialBackoff(5*time.Millisecond, 100*time.Millisecond)}
	key := fmt.Sprintf("example:redislock:%d:%d:do", os.Getpid(), time.Now().UnixNano())
	err = locks.Do(ctx, key, 10*time.Second, retry, func(ctx context.Context) error {
		// The lock is refreshed while this runs; ctx ends if it is lost.
		fmt.Println("working under the lock")
		return nil
	})
	fmt.Println(err)

	// Output:
	// working under the lock
	// <nil>
}

package outboxdriver

import "time"

// MaxRateLimit is the largest Endpoint.RateLimit, in deliveries per second.
const MaxRateLimit = 10000

// RateInterval is the spacing of a rate limit of limit deliveries per second: one
// second divided by limit, rounded up to the microsecond (the stores' precision), so
// that the rate kept is never above the limit.
func RateInterval(limit int) time.Duration {
	if limit <= 0 {
		return 0
	}
	return time.Duration((int64(time.Second/time.Microsecond)+int64(limit)-1)/int64(limit)) * time.Microsecond
}

// RateRoom is how many deliveries an endpoint limited to limit per second may start
// at now, given the time its bucket is next full of nothing (tat: the theoretical
// arrival time of the generic cell rate algorithm, nil for an endpoint never
// limited), and the tat to store after taking n of them (RateAfter). The bucket
// holds limit tokens and refills one every RateInterval: at most limit start at
// once, and limit per second over time. Both stores compute exactly this (the
// PostgreSQL store in its claim statement), so that every node sharing one store
// keeps the one bucket.
func RateRoom(limit int, tat *time.Time, now time.Time) int {
	if limit <= 0 {
		return 1 << 30
	}
	t := RateInterval(limit)
	base := rateBase(tat, now)
	tolerance := time.Duration(limit-1) * t
	if base.After(now.Add(tolerance)) {
		return 0
	}
	return min(limit, int(now.Add(tolerance).Sub(base)/t)+1)
}

// RateAfter is the tat of an endpoint limited to limit per second once n more
// deliveries started at now.
func RateAfter(limit int, tat *time.Time, now time.Time, n int) time.Time {
	return rateBase(tat, now).Add(time.Duration(n) * RateInterval(limit)).UTC().Truncate(time.Microsecond)
}

func rateBase(tat *time.Time, now time.Time) time.Time {
	if tat == nil || tat.Before(now) {
		return now
	}
	return *tat
}

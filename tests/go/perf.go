// The benchmarks' kgo side (benches/fake, benches/captures), not a test
// flow: -mode produce-perf creates -topic with -partitions partitions and
// produces -records records of -record-size random bytes (no key, no
// compression, acks=all, idempotent: kgo's defaults but for compression),
// as fast as kgo's buffering lets it; -mode consume-perf reads -records
// records of -topic back from the start of every partition, without a group.
//
// It prints one JSON object: the records and value bytes moved, the seconds
// from the first record handed to kgo to the last one acknowledged (or
// read), and the rates derived from them (MB is 10^6 bytes, of values).
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type perfResult struct {
	Mode             string  `json:"mode"`
	Records          int     `json:"records"`
	Bytes            int64   `json:"bytes"`
	Seconds          float64 `json:"seconds"`
	MBPerSecond      float64 `json:"mbPerSecond"`
	RecordsPerSecond float64 `json:"recordsPerSecond"`
}

func newPerfResult(mode string, records int, bytes int64, elapsed time.Duration) *perfResult {
	seconds := elapsed.Seconds()
	return &perfResult{
		Mode:             mode,
		Records:          records,
		Bytes:            bytes,
		Seconds:          seconds,
		MBPerSecond:      float64(bytes) / 1e6 / seconds,
		RecordsPerSecond: float64(records) / seconds,
	}
}

func perfClient(o options, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(o.brokers, ",")...),
		kgo.ClientID(o.prefix + "-" + o.mode),
		kgo.RetryTimeout(30 * time.Second),
	}
	return kgo.NewClient(append(opts, extra...)...)
}

func producePerf(o options) (*perfResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cl, err := perfClient(o,
		kgo.DefaultProduceTopic(o.topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := createTopic(ctx, cl, o.topic, int32(o.partitions)); err != nil {
		return nil, err
	}
	// One random value, shared by every record: kgo copies nothing, and
	// nothing compresses it.
	value := make([]byte, o.recordSize)
	if _, err := rand.Read(value); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var firstErr error
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	start := time.Now()
	for i := 0; i < o.records; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	elapsed := time.Since(start)
	if firstErr != nil {
		return nil, fmt.Errorf("produce: %w", firstErr)
	}
	return newPerfResult(o.mode, o.records, int64(o.records)*int64(o.recordSize), elapsed), nil
}

func consumePerf(o options) (*perfResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cl, err := perfClient(o,
		kgo.ConsumeTopics(o.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var records int
	var bytes int64
	start := time.Now()
	for records < o.records {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("consumed %d of %d records: %w", records, o.records, err)
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return nil, fmt.Errorf("fetch %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			records++
			bytes += int64(len(r.Value))
		})
	}
	return newPerfResult(o.mode, records, bytes, time.Since(start)), nil
}

// The kgo side of the chaos runs (issue 44, tests/tests/chaos.rs), -mode
// chaos: an idempotent producer (acks=all, kgo's default) sends -records
// records, record i to partition i % -partitions with value i, while a
// group of -consumers read_committed consumers (clients of this process,
// auto commit every second) reads them until the group has covered every
// offset the producer was told of; a record the group reads twice is a
// redelivery. Then one reader assigned every partition reads the topic
// read_committed from the start to its end (ListOffsets, isolation level
// 1) and checks each acknowledged record is there once, in order per
// partition. It prints one JSON object with the counts.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type chaosSummary struct {
	Sent           int   `json:"sent"`
	Read           int   `json:"read"`
	Lost           int   `json:"lost"`
	Duplicated     int   `json:"duplicated"`
	OutOfOrder     int   `json:"outOfOrder"`
	Misplaced      int   `json:"misplaced"`
	Unacknowledged int   `json:"unacknowledged"`
	Redelivered    int   `json:"redelivered"`
	GroupRead      int   `json:"groupRead"`
	GroupMissing   int64 `json:"groupMissing"`
}

// chaosState is what the producer and the group share.
type chaosState struct {
	mu       sync.Mutex
	acked    []bool
	ends     []int64
	covered  []map[int64]bool
	produced bool
	s        chaosSummary
}

// missing is the offsets below the producer's ends the group has not read;
// the caller holds mu.
func (c *chaosState) missing() int64 {
	var n int64
	for p, end := range c.ends {
		for o := int64(0); o < end; o++ {
			if !c.covered[p][o] {
				n++
			}
		}
	}
	return n
}

func runChaos(o options) (*chaosSummary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	client := func(role string, extra ...kgo.Opt) (*kgo.Client, error) {
		opts := []kgo.Opt{
			kgo.SeedBrokers(strings.Split(o.brokers, ",")...),
			kgo.ClientID(o.prefix + "-" + role),
			kgo.RetryTimeout(60 * time.Second),
			kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
			// The faults cut connections on purpose, some right after
			// their first request. kgo takes such an EOF for a missing
			// SASL or TLS setting and fails the request for good (1
			// chaos run in 4 here failed all its sends so); this option
			// is kgo's own for a configuration known to be right.
			kgo.AlwaysRetryEOF(),
			kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, func() string { return role + " " })),
		}
		return kgo.NewClient(append(opts, extra...)...)
	}
	admin, err := client("admin")
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if err := createTopic(ctx, admin, o.topic, int32(o.partitions)); err != nil {
		return nil, err
	}

	c := &chaosState{
		acked:   make([]bool, o.records),
		ends:    make([]int64, o.partitions),
		covered: make([]map[int64]bool, o.partitions),
	}
	for p := range c.covered {
		c.covered[p] = map[int64]bool{}
	}
	var group sync.WaitGroup
	failures := make(chan error, o.consumers)
	for n := 0; n < o.consumers; n++ {
		group.Add(1)
		go func(n int) {
			defer group.Done()
			if err := chaosConsume(ctx, o, c, client, n); err != nil {
				failures <- err
			}
		}(n)
	}

	producer, err := client("producer",
		kgo.DefaultProduceTopic(o.topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(20*time.Millisecond),
		kgo.MaxBufferedRecords(50000),
	)
	if err != nil {
		return nil, err
	}
	failed := 0
	var firstErr error
	for i := 0; i < o.records; i++ {
		r := &kgo.Record{Partition: int32(i % o.partitions), Value: []byte(strconv.Itoa(i))}
		producer.Produce(ctx, r, func(r *kgo.Record, err error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			c.acked[i] = true
			if r.Offset+1 > c.ends[r.Partition] {
				c.ends[r.Partition] = r.Offset + 1
			}
		})
	}
	if err := producer.Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	producer.Close()
	c.mu.Lock()
	c.produced = true
	if failed > 0 {
		c.mu.Unlock()
		return nil, fmt.Errorf("%d sends failed, the first: %w", failed, firstErr)
	}
	c.mu.Unlock()
	group.Wait()
	close(failures)
	if err := <-failures; err != nil {
		return nil, err
	}
	c.s.GroupMissing = c.missing()
	if err := chaosVerify(ctx, o, c, client, admin); err != nil {
		return nil, err
	}
	return &c.s, nil
}

// chaosConsume is one member of the group, until the group covers every
// offset produced.
func chaosConsume(ctx context.Context, o options, c *chaosState, client func(string, ...kgo.Opt) (*kgo.Client, error), n int) error {
	cl, err := client(fmt.Sprintf("consumer-%d", n),
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(o.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.AutoCommitInterval(time.Second),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		if err := ctx.Err(); err != nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			return fmt.Errorf("consumer %d: the group has %d offsets missing: %w", n, c.missing(), err)
		}
		poll, stop := context.WithTimeout(ctx, 300*time.Millisecond)
		fetches := cl.PollFetches(poll)
		stop()
		fetches.EachError(func(t string, p int32, err error) {
			if poll.Err() == nil {
				fmt.Fprintf(os.Stderr, "consumer %d: fetch %s[%d]: %v\n", n, t, p, err)
			}
		})
		c.mu.Lock()
		fetches.EachRecord(func(r *kgo.Record) {
			c.s.GroupRead++
			if c.covered[r.Partition][r.Offset] {
				c.s.Redelivered++
			}
			c.covered[r.Partition][r.Offset] = true
		})
		done := c.produced && c.missing() == 0
		c.mu.Unlock()
		if done {
			return nil
		}
	}
}

// chaosEnds is each partition's read_committed end (the last stable offset).
func chaosEnds(ctx context.Context, o options, cl *kgo.Client) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = o.topic
	for p := 0; p < o.partitions; p++ {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition = int32(p)
		lp.Timestamp = -1
		t.Partitions = append(t.Partitions, lp)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	ends := make([]int64, o.partitions)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return nil, fmt.Errorf("list offsets %s[%d]: %w", rt.Topic, rp.Partition, err)
			}
			ends[rp.Partition] = rp.Offset
		}
	}
	return ends, nil
}

// chaosVerify reads the topic from the start with every partition assigned.
func chaosVerify(ctx context.Context, o options, c *chaosState, client func(string, ...kgo.Opt) (*kgo.Client, error), admin *kgo.Client) error {
	var ends []int64
	var err error
	for attempt := 0; ; attempt++ {
		ends, err = chaosEnds(ctx, o, admin)
		if err == nil || attempt == 20 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	start := map[int32]kgo.Offset{}
	for p := 0; p < o.partitions; p++ {
		start[int32(p)] = kgo.NewOffset().AtStart()
	}
	reader, err := client("reader",
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.topic: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		return err
	}
	defer reader.Close()
	position := make([]int64, o.partitions)
	next := make([]int, o.partitions)
	for p := range next {
		next[p] = p
	}
	seen := make([]bool, o.records)
	for {
		done := true
		for p := range ends {
			done = done && position[p] >= ends[p]
		}
		if done {
			break
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("the reader read %d records, at %v of %v: %w", c.s.Read, position, ends, err)
		}
		poll, stop := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := reader.PollFetches(poll)
		stop()
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			c.s.Read++
			position[r.Partition] = r.Offset + 1
			i, err := strconv.Atoi(string(r.Value))
			if err != nil || i < 0 || i >= o.records {
				bad = fmt.Errorf("unexpected value %q", r.Value)
				return
			}
			if i%o.partitions != int(r.Partition) {
				c.s.Misplaced++
			}
			if seen[i] {
				c.s.Duplicated++
				return
			}
			seen[i] = true
			if i != next[r.Partition] {
				c.s.OutOfOrder++
			}
			next[r.Partition] = i + o.partitions
		})
		if bad != nil {
			return bad
		}
	}
	for i := range seen {
		switch {
		case c.acked[i] && !seen[i]:
			c.s.Lost++
		case seen[i] && !c.acked[i]:
			c.s.Unacknowledged++
		}
		if c.acked[i] {
			c.s.Sent++
		}
	}
	return nil
}

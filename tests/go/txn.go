// The transactional flow (-mode txn): input records from an idempotent
// producer, a consume-transform-produce loop in a GroupTransactSession
// (read_committed, one transaction per poll, the group's offsets in each),
// one transaction of poison records that aborts, then the output read back
// read_committed (exactly the transformed records, in order per partition,
// with keys, values, headers and timestamps) and read_uncommitted (the
// poison too), and the group's committed offsets.
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	txnPartitions = 2
	poisonEach    = 3
)

type txnSummary struct {
	Produced     int   `json:"produced"`
	Transformed  int   `json:"transformed"`
	Transactions int   `json:"transactions"`
	Aborted      int   `json:"aborted"`
	Consumed     int   `json:"consumed"`
	Uncommitted  int   `json:"uncommitted"`
	Committed    int64 `json:"committed"`
}

func describe(r *kgo.Record) string {
	s := string(r.Key) + "/" + string(r.Value)
	for _, h := range r.Headers {
		s += "/" + h.Key + "=" + string(h.Value)
	}
	return fmt.Sprintf("%s@%d", s, r.Timestamp.UnixMilli())
}

func runTxn(o options) (*txnSummary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	mech, err := mechanism(o)
	if err != nil {
		return nil, err
	}
	base := func(role string, extra ...kgo.Opt) []kgo.Opt {
		opts := []kgo.Opt{
			kgo.SeedBrokers(strings.Split(o.brokers, ",")...),
			kgo.ClientID(o.prefix + "-" + role),
			kgo.RetryTimeout(30 * time.Second),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
		}
		if mech != nil {
			opts = append(opts, kgo.SASL(mech))
		}
		return append(opts, extra...)
	}
	input, output := o.topic+"-in", o.topic+"-out"
	s := &txnSummary{}
	admin, err := kgo.NewClient(base("admin")...)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	for _, t := range []string{input, output} {
		if err := createTopic(ctx, admin, t, txnPartitions); err != nil {
			return nil, err
		}
	}

	// The input, with explicit partitions and timestamps.
	start := time.Now().Add(-time.Hour).UnixMilli()
	expected := map[int32][]string{}
	producer, err := kgo.NewClient(base("producer")...)
	if err != nil {
		return nil, err
	}
	for i := 0; i < o.records; i++ {
		p := int32(i % txnPartitions)
		r := &kgo.Record{
			Topic:     input,
			Partition: p,
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte(fmt.Sprintf("value-%d", i)),
			Headers:   []kgo.RecordHeader{{Key: "index", Value: []byte(fmt.Sprint(i))}},
			Timestamp: time.UnixMilli(start + int64(i)),
		}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			producer.Close()
			return nil, fmt.Errorf("produce %d: %w", i, err)
		}
		expected[p] = append(expected[p], fmt.Sprintf("key-%d/out-value-%d/index=%d/stage=transformed@%d", i, i, i, start+int64(i)))
		s.Produced++
	}
	producer.Close()

	// Consume, transform, produce: one transaction per poll.
	sess, err := kgo.NewGroupTransactSession(base("txn", append([]kgo.Opt{
		kgo.TransactionalID(o.prefix + "-txn"),
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(input),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, groupOpts(o)...)...)...)
	if err != nil {
		return nil, err
	}
	poisoned := false
	for s.Transformed < o.records {
		fetches := sess.PollRecords(ctx, 5)
		if err := ctx.Err(); err != nil {
			sess.Close()
			return nil, fmt.Errorf("transformed %d of %d: %w", s.Transformed, o.records, err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err) })
		if ferr != nil {
			sess.Close()
			return nil, ferr
		}
		records := fetches.Records()
		if len(records) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			sess.Close()
			return nil, fmt.Errorf("begin: %w", err)
		}
		var out []*kgo.Record
		for _, r := range records {
			headers := append(append([]kgo.RecordHeader{}, r.Headers...), kgo.RecordHeader{Key: "stage", Value: []byte("transformed")})
			out = append(out, &kgo.Record{
				Topic:     output,
				Partition: r.Partition,
				Key:       r.Key,
				Value:     append([]byte("out-"), r.Value...),
				Headers:   headers,
				Timestamp: r.Timestamp,
			})
		}
		if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
			sess.Close()
			return nil, fmt.Errorf("transactional produce: %w", err)
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			sess.Close()
			return nil, fmt.Errorf("end: %w", err)
		}
		if !committed {
			// A rebalance or a lost commit: the same records come again.
			continue
		}
		s.Transformed += len(records)
		s.Transactions++
		if !poisoned {
			if err := poison(ctx, base, o.prefix, output); err != nil {
				sess.Close()
				return nil, err
			}
			s.Aborted = txnPartitions * poisonEach
			poisoned = true
		}
	}
	sess.Close()

	// The output, committed only, then everything.
	for _, level := range []kgo.IsolationLevel{kgo.ReadCommitted(), kgo.ReadUncommitted()} {
		committedLevel := level == kgo.ReadCommitted()
		want := o.records
		if !committedLevel {
			want += s.Aborted
		}
		got, err := readAll(ctx, base, output, level, want)
		if err != nil {
			return nil, err
		}
		count := 0
		for _, list := range got {
			count += len(list)
		}
		if committedLevel {
			for p := int32(0); p < txnPartitions; p++ {
				if fmt.Sprint(got[p]) != fmt.Sprint(expected[p]) {
					return nil, fmt.Errorf("read_committed partition %d: got %v, want %v", p, got[p], expected[p])
				}
			}
			s.Consumed = count
		} else {
			if count != want {
				return nil, fmt.Errorf("read_uncommitted: %d records, want %d", count, want)
			}
			s.Uncommitted = count
		}
	}

	// The group's offsets: the input's end offsets.
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = o.group
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic = input
	ft.Partitions = []int32{0, 1}
	fetch.Topics = append(fetch.Topics, ft)
	resp, err := fetch.RequestWith(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("offset fetch: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("offset fetch %s[%d]: %w", t.Topic, p.Partition, err)
			}
			if p.Offset != int64(len(expected[p.Partition])) {
				return nil, fmt.Errorf("committed %s[%d] = %d, want %d", t.Topic, p.Partition, p.Offset, len(expected[p.Partition]))
			}
			s.Committed += p.Offset
		}
	}
	return s, nil
}

// poison writes records to every partition of topic in a transaction of
// its own, which aborts.
func poison(ctx context.Context, base func(string, ...kgo.Opt) []kgo.Opt, prefix, topic string) error {
	cl, err := kgo.NewClient(base("poison", kgo.TransactionalID(prefix+"-poison"))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("poison begin: %w", err)
	}
	for p := int32(0); p < txnPartitions; p++ {
		for j := 0; j < poisonEach; j++ {
			r := &kgo.Record{Topic: topic, Partition: p, Key: []byte("poison"), Value: []byte(fmt.Sprintf("poison-%d-%d", p, j))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				return fmt.Errorf("poison produce: %w", err)
			}
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("poison abort: %w", err)
	}
	return nil
}

// readAll reads topic from the start at level until want records came,
// then polls once more to see that nothing else does.
func readAll(ctx context.Context, base func(string, ...kgo.Opt) []kgo.Opt, topic string, level kgo.IsolationLevel, want int) (map[int32][]string, error) {
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < txnPartitions; p++ {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(base("reader",
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(level),
	)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := map[int32][]string{}
	count := 0
	for count < want {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %d of %d: %w", count, want, err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], describe(r))
			count++
		})
	}
	extra, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	cl.PollFetches(extra).EachRecord(func(r *kgo.Record) {
		got[r.Partition] = append(got[r.Partition], describe(r))
	})
	return got, nil
}

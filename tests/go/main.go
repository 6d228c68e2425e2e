// The franz-go (kgo) side of the real-client tests: one flow against a
// broker, given by -brokers (the fake cluster, real Kafka, or kafka-protocol
// proxy in front of either). It creates the topic, produces -records records with
// keys, values and headers, consumes them back in a consumer group, commits,
// leaves the group, and reads the committed offset back with a fresh client.
//
// It prints one JSON object on stdout: what it produced, consumed and found
// committed, the addresses the brokers advertised in Metadata, and, per
// client id, how many responses of each api it read (from kgo's hooks), so
// that the Rust driver can hold a proxy's log against them. Any failure
// exits 1 with one line on stderr. With -mode txn it runs the transactional
// flow of txn.go instead; -mode produce-perf and consume-perf are the
// benchmarks' producer and consumer (perf.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// responses counts the responses each client read, by api key.
type responses struct {
	mu     sync.Mutex
	counts map[string]map[string]int
}

// hook counts for one client id.
type hook struct {
	into     *responses
	clientID string
}

func (h hook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	name := strconv.Itoa(int(key))
	h.into.mu.Lock()
	defer h.into.mu.Unlock()
	if h.into.counts[h.clientID] == nil {
		h.into.counts[h.clientID] = map[string]int{}
	}
	h.into.counts[h.clientID][name]++
}

type options struct {
	brokers   string
	topic     string
	group     string
	records   int
	prefix    string
	mechanism string
	user      string
	password  string
	timeout   time.Duration
	mode      string
	protocol  string
	txn       bool
	// -mode chaos (chaos.go) and produce-perf (perf.go): the topic's
	// partitions; chaos: the group's members; produce-perf: each value's size.
	partitions int
	consumers  int
	recordSize int
}

// groupOpts are the options of the group protocol asked for: classic (the
// default), or consumer (KIP-848: the broker assigns, with the range
// assignor).
func groupOpts(o options) []kgo.Opt {
	if o.protocol == "consumer" {
		return []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())}
	}
	return nil
}

type summary struct {
	Produced   int                       `json:"produced"`
	Consumed   int                       `json:"consumed"`
	Committed  int64                     `json:"committed"`
	Advertised []string                  `json:"advertised"`
	Responses  map[string]map[string]int `json:"responses"`
	// With -transactions: transactions committed and aborted.
	TxnCommitted int `json:"transactionsCommitted,omitempty"`
	TxnAborted   int `json:"transactionsAborted,omitempty"`
}

func main() {
	var o options
	flag.StringVar(&o.brokers, "brokers", "", "bootstrap HOST:PORT, or several separated by commas")
	flag.StringVar(&o.topic, "topic", "kgo-flow", "topic to create and use")
	flag.StringVar(&o.group, "group", "kgo-flow-group", "consumer group")
	flag.IntVar(&o.records, "records", 20, "records to produce and consume")
	flag.StringVar(&o.prefix, "client-prefix", "kgo", "prefix of the client ids")
	flag.StringVar(&o.mechanism, "sasl-mechanism", "", "PLAIN or SCRAM-SHA-256 (none by default)")
	flag.StringVar(&o.user, "sasl-user", "", "SASL user")
	flag.StringVar(&o.password, "sasl-password", "", "SASL password")
	flag.DurationVar(&o.timeout, "timeout", 90*time.Second, "the whole flow's time limit")
	flag.StringVar(&o.mode, "mode", "basic", "basic, txn (the transactional flow of txn.go), chaos (chaos.go), or the benchmarks' produce-perf and consume-perf (perf.go)")
	flag.IntVar(&o.consumers, "consumers", 3, "-mode chaos: the group's consumers")
	flag.StringVar(&o.protocol, "group-protocol", "classic", "classic, or consumer (KIP-848)")
	flag.BoolVar(&o.txn, "transactions", false, "then a transactional producer (client PREFIX-txn) commits one transaction and aborts one")
	flag.IntVar(&o.partitions, "partitions", 12, "-mode chaos and produce-perf: the topic's partitions")
	flag.IntVar(&o.recordSize, "record-size", 1024, "produce-perf: bytes of each record's value")
	flag.Parse()
	if o.brokers == "" {
		fmt.Fprintln(os.Stderr, "kgo flow: -brokers is required")
		os.Exit(2)
	}
	var s any
	var err error
	switch o.mode {
	case "txn":
		s, err = runTxn(o)
	case "chaos":
		s, err = runChaos(o)
	case "produce-perf":
		s, err = producePerf(o)
	case "consume-perf":
		s, err = consumePerf(o)
	default:
		s, err = run(o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kgo flow: %v\n", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(s)
	fmt.Println(string(out))
}

func mechanism(o options) (sasl.Mechanism, error) {
	switch o.mechanism {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Auth{User: o.user, Pass: o.password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: o.user, Pass: o.password}.AsSha256Mechanism(), nil
	}
	return nil, fmt.Errorf("unknown SASL mechanism %q", o.mechanism)
}

func run(o options) (*summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	counts := &responses{counts: map[string]map[string]int{}}
	mech, err := mechanism(o)
	if err != nil {
		return nil, err
	}
	client := func(role string, extra ...kgo.Opt) (*kgo.Client, error) {
		id := o.prefix + "-" + role
		opts := []kgo.Opt{
			kgo.SeedBrokers(strings.Split(o.brokers, ",")...),
			kgo.ClientID(id),
			kgo.WithHooks(hook{into: counts, clientID: id}),
			kgo.RetryTimeout(30 * time.Second),
		}
		if mech != nil {
			opts = append(opts, kgo.SASL(mech))
		}
		return kgo.NewClient(append(opts, extra...)...)
	}
	s := &summary{}

	// The topic, created explicitly, and the addresses Metadata advertises.
	admin, err := client("admin")
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if err := createTopic(ctx, admin, o.topic, 1); err != nil {
		return nil, err
	}
	meta := kmsg.NewPtrMetadataRequest()
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr(o.topic)
	meta.Topics = append(meta.Topics, topic)
	metaResp, err := meta.RequestWith(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	for _, b := range metaResp.Brokers {
		s.Advertised = append(s.Advertised, fmt.Sprintf("%s:%d", b.Host, b.Port))
	}

	// Produce: keys, values, a header and a timestamp (an hour ago plus i
	// ms), acks=all, idempotent (kgo's default).
	start := time.Now().Add(-time.Hour).UnixMilli()
	producer, err := client("producer", kgo.DefaultProduceTopic(o.topic))
	if err != nil {
		return nil, err
	}
	for i := 0; i < o.records; i++ {
		r := &kgo.Record{
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte(fmt.Sprintf("value-%d", i)),
			Headers:   []kgo.RecordHeader{{Key: "index", Value: []byte(fmt.Sprint(i))}},
			Timestamp: time.UnixMilli(start + int64(i)),
		}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			producer.Close()
			return nil, fmt.Errorf("produce %d: %w", i, err)
		}
		s.Produced++
	}
	producer.Close()

	// Consume in a group from the start, commit, leave.
	consumer, err := client("consumer", append([]kgo.Opt{
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(o.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	}, groupOpts(o)...)...)
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for s.Consumed < o.records {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			consumer.Close()
			return nil, fmt.Errorf("consumed %d of %d records: %w", s.Consumed, o.records, err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
		})
		if ferr != nil {
			consumer.Close()
			return nil, ferr
		}
		var bad error
		fetches.EachRecord(func(r *kgo.Record) {
			i := int(r.Offset)
			want := fmt.Sprintf("key-%d/value-%d/index=%d@%d", i, i, i, start+int64(i))
			got := string(r.Key) + "/" + string(r.Value)
			if len(r.Headers) == 1 {
				got += "/" + r.Headers[0].Key + "=" + string(r.Headers[0].Value)
			}
			got += fmt.Sprintf("@%d", r.Timestamp.UnixMilli())
			if got != want && bad == nil {
				bad = fmt.Errorf("record at offset %d: got %q, want %q", r.Offset, got, want)
			}
			if !seen[i] {
				seen[i] = true
				s.Consumed++
			}
		})
		if bad != nil {
			consumer.Close()
			return nil, bad
		}
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		consumer.Close()
		return nil, fmt.Errorf("commit: %w", err)
	}
	if err := consumer.LeaveGroupContext(ctx); err != nil {
		consumer.Close()
		return nil, fmt.Errorf("leave: %w", err)
	}
	consumer.Close()

	// What the group committed, read by another client.
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = o.group
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic = o.topic
	ft.Partitions = []int32{0}
	fetch.Topics = append(fetch.Topics, ft)
	fetchResp, err := fetch.RequestWith(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("offset fetch: %w", err)
	}
	if err := kerr.ErrorForCode(fetchResp.ErrorCode); err != nil {
		return nil, fmt.Errorf("offset fetch: %w", err)
	}
	s.Committed = -1
	for _, t := range fetchResp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("offset fetch %s[%d]: %w", t.Topic, p.Partition, err)
			}
			s.Committed = p.Offset
		}
	}
	admin.Close()

	if o.txn {
		if err := transactions(ctx, o, s, client); err != nil {
			return nil, err
		}
	}

	counts.mu.Lock()
	s.Responses = counts.counts
	counts.mu.Unlock()
	sort.Strings(s.Advertised)
	return s, nil
}

func createTopic(ctx context.Context, cl *kgo.Client, name string, partitions int32) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = name
	t.NumPartitions = partitions
	t.ReplicationFactor = 1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t.Topic, err)
		}
	}
	return nil
}

// transactions: a transactional producer (InitProducerId, AddPartitionsToTxn,
// Produce, EndTxn) commits one transaction of two records and aborts one.
func transactions(ctx context.Context, o options, s *summary, client func(string, ...kgo.Opt) (*kgo.Client, error)) error {
	txn, err := client("txn",
		kgo.DefaultProduceTopic(o.topic),
		kgo.TransactionalID(o.prefix+"-txn-id"),
	)
	if err != nil {
		return err
	}
	defer txn.Close()
	for _, commit := range []bool{true, false} {
		if err := txn.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		for i := 0; i < 2; i++ {
			r := &kgo.Record{Key: []byte(fmt.Sprintf("txn-%v-%d", commit, i)), Value: []byte("in a transaction")}
			if err := txn.ProduceSync(ctx, r).FirstErr(); err != nil {
				return fmt.Errorf("transactional produce: %w", err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			return fmt.Errorf("end transaction (commit %v): %w", commit, err)
		}
		if commit {
			s.TxnCommitted++
		} else {
			s.TxnAborted++
		}
	}
	return nil
}

package dev.kafkawire.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java side of the chaos runs (issue 44, {@code tests/tests/chaos.rs}):
 * one client flow under the faults the fake cluster injects, or against
 * real Kafka without faults as a control.
 *
 * <ul>
 *   <li>{@code --mode idempotent}: an idempotent producer (acks=all) sends
 *       {@code --records} records, record i to partition i % P with value
 *       {@code i}, while a group of {@code --consumers} read_committed
 *       consumers (threads of this process, auto commit every second) reads
 *       them until the group has covered every offset the producer was
 *       told of; a record the group reads twice is a redelivery.</li>
 *   <li>{@code --mode plain}: a producer without idempotence (acks=all,
 *       retries, one request in flight per connection, so that only a
 *       lost answer makes a duplicate), no group.</li>
 *   <li>{@code --mode eos-input}: the input of eos, sent as in
 *       idempotent mode (no group), and the output topic created; it
 *       prints only what it sent. {@code --mode eos}: on that input, a
 *       consume-transform-produce loop (a read_committed consumer in a
 *       group, a transactional producer writing {@code out-i} to the same
 *       partition of the output topic with the consumer's offsets, one
 *       transaction per poll; a failed transaction aborts and the consumer
 *       goes back to its committed offsets) until the group's committed
 *       offsets are the input's end.</li>
 * </ul>
 *
 * <p>Then one reader assigned every partition reads the topic (eos: the
 * output) read_committed from the start to its end and checks what it
 * finds against what was acknowledged: each index once, in order per
 * partition. It prints one JSON object: sent (acknowledged), read, lost,
 * duplicated, outOfOrder, misplaced, redelivered (the group's second
 * reads; eos: input records transformed again after an abort), groupRead,
 * groupMissing, aborted, commitTimeouts (eos: commits that timed out
 * and were tried again). Anything else that fails exits 1. {@code
 * --batch-size} sets the producer's batch.size (262144 by default).
 */
public final class Chaos {
    private Chaos() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("--records", "1000");
        options.put("--partitions", "12");
        options.put("--consumers", "3");
        options.put("--mode", "idempotent");
        options.put("--client-prefix", "chaos");
        options.put("--timeout", "300");
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("chaos: bad argument " + args[i]);
                System.exit(2);
            }
            options.put(args[i], args[i + 1]);
        }
        for (String required : List.of("--bootstrap", "--topic", "--group")) {
            if (!options.containsKey(required)) {
                System.err.println("chaos: " + required + " is required");
                System.exit(2);
            }
        }
        try {
            System.out.println(new Chaos.Run(options).run());
            System.exit(0);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    /** The settings of every client, with quick reconnects. */
    static Properties common(Map<String, String> options, String role) {
        Properties p = Flow.common(options, role);
        p.put("reconnect.backoff.max.ms", "500");
        p.put("retry.backoff.max.ms", "500");
        return p;
    }

    private static final class Run {
        final Map<String, String> options;
        final String topic;
        final String group;
        final int records;
        final int partitions;
        final int consumers;
        final String mode;
        final long deadline;
        /** Indexes acknowledged, and each partition's end as the producer saw it. */
        final BitSet acked = new BitSet();
        final long[] ends;
        /** The group's reads. */
        final BitSet[] covered;
        long groupRead;
        long redelivered;
        int aborted;
        int commitTimeouts;

        Run(Map<String, String> options) {
            this.options = options;
            topic = options.get("--topic");
            group = options.get("--group");
            records = Integer.parseInt(options.get("--records"));
            partitions = Integer.parseInt(options.get("--partitions"));
            consumers = Integer.parseInt(options.get("--consumers"));
            mode = options.get("--mode");
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("--timeout")));
            ends = new long[partitions];
            covered = new BitSet[partitions];
            for (int p = 0; p < partitions; p++) {
                covered[p] = new BitSet();
            }
        }

        void check(String what) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("out of time: " + what);
            }
        }

        String run() throws Exception {
            if (mode.equals("eos")) {
                // The input is there (eos-input): every record of it.
                acked.set(0, records);
                transform();
                return verify(topic + "-out", "out-");
            }
            try (Admin admin = Admin.create(common(options, "admin"))) {
                create(admin, topic);
                if (mode.equals("eos-input")) {
                    create(admin, topic + "-out");
                }
            }
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean produced = new java.util.concurrent.atomic.AtomicBoolean();
            if (mode.equals("idempotent")) {
                for (int c = 0; c < consumers; c++) {
                    int n = c;
                    Thread t = new Thread(() -> {
                        try {
                            consume(n, produced);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }, "chaos-consumer-" + c);
                    t.start();
                    threads.add(t);
                }
            }
            produce(!mode.equals("plain"));
            produced.set(true);
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a group consumer failed", failure.get());
            }
            if (mode.equals("eos-input")) {
                return "{\"sent\":" + acked.cardinality() + "}";
            }
            return verify(topic, "");
        }

        void create(Admin admin, String name) throws Exception {
            try {
                admin.createTopics(List.of(new NewTopic(name, Optional.of(partitions), Optional.empty())))
                        .all().get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // A retry after an answer lost finds the topic there.
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            Flow.waitForTopic(admin, name, true);
        }

        void produce(boolean idempotent) throws Exception {
            Properties pp = common(options, "producer");
            pp.put("acks", "all");
            pp.put("enable.idempotence", Boolean.toString(idempotent));
            pp.put("linger.ms", "20");
            pp.put("batch.size", options.getOrDefault("--batch-size", "262144"));
            pp.put("buffer.memory", "33554432");
            pp.put("delivery.timeout.ms", "240000");
            if (!idempotent) {
                pp.put("retries", Integer.toString(Integer.MAX_VALUE));
                pp.put("max.in.flight.requests.per.connection", "1");
            }
            AtomicLong failed = new AtomicLong();
            AtomicReference<Exception> firstFailure = new AtomicReference<>();
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < records; i++) {
                    int index = i;
                    producer.send(new ProducerRecord<>(topic, i % partitions, null, Flow.bytes(Integer.toString(i))),
                            (meta, e) -> {
                                synchronized (this) {
                                    if (e != null) {
                                        failed.incrementAndGet();
                                        firstFailure.compareAndSet(null, e);
                                        return;
                                    }
                                    acked.set(index);
                                    ends[meta.partition()] = Math.max(ends[meta.partition()], meta.offset() + 1);
                                }
                            });
                }
                producer.flush();
            }
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " sends failed", firstFailure.get());
            }
        }

        /** One member of the group, until it covers every offset produced. */
        void consume(int n, java.util.concurrent.atomic.AtomicBoolean produced) {
            Properties cp = common(options, "consumer-" + n);
            cp.put("group.id", group);
            cp.put("auto.offset.reset", "earliest");
            cp.put("isolation.level", "read_committed");
            cp.put("enable.auto.commit", "true");
            cp.put("auto.commit.interval.ms", "1000");
            cp.put("max.poll.records", "5000");
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (true) {
                    check("the group covered " + coveredCount() + " records");
                    ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                    synchronized (this) {
                        for (ConsumerRecord<byte[], byte[]> r : batch) {
                            groupRead++;
                            int offset = Math.toIntExact(r.offset());
                            if (covered[r.partition()].get(offset)) {
                                redelivered++;
                            }
                            covered[r.partition()].set(offset);
                        }
                        if (produced.get() && groupMissing() == 0) {
                            break;
                        }
                    }
                }
                consumer.close(Duration.ofSeconds(5));
            }
        }

        synchronized long coveredCount() {
            long n = 0;
            for (BitSet b : covered) {
                n += b.cardinality();
            }
            return n;
        }

        /** Offsets below the producer's ends the group has not read. */
        synchronized long groupMissing() {
            long missing = 0;
            for (int p = 0; p < partitions; p++) {
                missing += ends[p] - covered[p].get(0, Math.toIntExact(ends[p])).cardinality();
            }
            return missing;
        }

        /** The consume-transform-produce loop, until the group committed the input's end. */
        void transform() throws Exception {
            String output = topic + "-out";
            Properties cp = common(options, "eos-consumer");
            cp.put("group.id", group);
            cp.put("auto.offset.reset", "earliest");
            cp.put("isolation.level", "read_committed");
            cp.put("enable.auto.commit", "false");
            cp.put("max.poll.records", "2000");
            Properties tp = common(options, "eos-producer");
            tp.put("transactional.id", options.get("--client-prefix") + "-txn");
            tp.put("linger.ms", "5");
            tp.put("batch.size", "262144");
            tp.put("delivery.timeout.ms", "240000");
            BitSet transformed = new BitSet();
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                 KafkaProducer<byte[], byte[]> txn =
                    new KafkaProducer<>(tp, new ByteArraySerializer(), new ByteArraySerializer())) {
                List<TopicPartition> inputs = new ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    inputs.add(new TopicPartition(topic, p));
                }
                Map<TopicPartition, Long> inputEnds = consumer.endOffsets(inputs, Duration.ofSeconds(60));
                txn.initTransactions();
                consumer.subscribe(List.of(topic));
                while (true) {
                    check("transformed " + transformed.cardinality() + " of " + records);
                    ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                    if (batch.isEmpty()) {
                        if (committedAll(consumer, inputEnds)) {
                            break;
                        }
                        continue;
                    }
                    List<Integer> indexes = new ArrayList<>();
                    try {
                        txn.beginTransaction();
                        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                        for (ConsumerRecord<byte[], byte[]> r : batch) {
                            String value = Flow.string(r.value());
                            txn.send(new ProducerRecord<>(output, r.partition(), null, Flow.bytes("out-" + value)));
                            offsets.put(new TopicPartition(r.topic(), r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1));
                            indexes.add(Integer.parseInt(value));
                        }
                        txn.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                        commit(txn);
                    } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException
                            | UnsupportedVersionException e) {
                        throw e;
                    } catch (KafkaException e) {
                        System.err.println("chaos eos: aborting: " + e);
                        txn.abortTransaction();
                        aborted++;
                        rewind(consumer);
                        continue;
                    }
                    for (int i : indexes) {
                        if (transformed.get(i)) {
                            redelivered++;
                        }
                        transformed.set(i);
                    }
                }
            }
        }

        /**
         * Commits the transaction; a commit that times out (max.block.ms) is
         * tried again, as the producer requires, and counted.
         */
        void commit(KafkaProducer<byte[], byte[]> txn) {
            while (true) {
                try {
                    txn.commitTransaction();
                    return;
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    check("a commit timed out: " + e);
                    commitTimeouts++;
                    System.err.println("chaos eos: committing again: " + e);
                }
            }
        }

        /** Back to the group's committed offsets (the start where none). */
        void rewind(KafkaConsumer<byte[], byte[]> consumer) {
            Set<TopicPartition> assigned = consumer.assignment();
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
            for (TopicPartition tp : assigned) {
                OffsetAndMetadata at = committed.get(tp);
                consumer.seek(tp, at == null ? 0 : at.offset());
            }
        }

        boolean committedAll(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> inputEnds) {
            try {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        consumer.committed(inputEnds.keySet(), Duration.ofSeconds(10));
                for (Map.Entry<TopicPartition, Long> e : inputEnds.entrySet()) {
                    OffsetAndMetadata at = committed.get(e.getKey());
                    if (at == null || at.offset() < e.getValue()) {
                        return false;
                    }
                }
                return true;
            } catch (KafkaException e) {
                return false;
            }
        }

        /** Reads `name` from the start, every partition, and judges it against what was acknowledged. */
        String verify(String name, String prefix) throws Exception {
            Properties rp = common(options, "reader");
            rp.put("isolation.level", "read_committed");
            rp.put("enable.auto.commit", "false");
            rp.put("max.poll.records", "10000");
            long read = 0;
            long duplicated = 0;
            long outOfOrder = 0;
            long misplaced = 0;
            BitSet seen = new BitSet();
            try (KafkaConsumer<byte[], byte[]> reader =
                    new KafkaConsumer<>(rp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> parts = new ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    parts.add(new TopicPartition(name, p));
                }
                reader.assign(parts);
                reader.seekToBeginning(parts);
                Map<TopicPartition, Long> endOffsets = reader.endOffsets(parts, Duration.ofSeconds(60));
                long[] next = new long[partitions];
                for (int p = 0; p < partitions; p++) {
                    next[p] = p;
                }
                while (true) {
                    boolean done = true;
                    for (TopicPartition tp : parts) {
                        done &= reader.position(tp, Duration.ofSeconds(60)) >= endOffsets.get(tp);
                    }
                    if (done) {
                        break;
                    }
                    check("the reader read " + read + " records");
                    for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ofMillis(200))) {
                        read++;
                        String value = Flow.string(r.value());
                        if (!value.startsWith(prefix)) {
                            throw new IllegalStateException("unexpected value " + value);
                        }
                        int i = Integer.parseInt(value.substring(prefix.length()));
                        if (i % partitions != r.partition()) {
                            misplaced++;
                        }
                        if (seen.get(i)) {
                            duplicated++;
                            continue;
                        }
                        seen.set(i);
                        if (i != next[r.partition()]) {
                            outOfOrder++;
                        }
                        next[r.partition()] = i + partitions;
                    }
                }
            }
            BitSet lost = (BitSet) acked.clone();
            lost.andNot(seen);
            BitSet extra = (BitSet) seen.clone();
            extra.andNot(acked);
            return "{\"sent\":" + acked.cardinality()
                    + ",\"read\":" + read
                    + ",\"lost\":" + lost.cardinality()
                    + ",\"duplicated\":" + duplicated
                    + ",\"outOfOrder\":" + outOfOrder
                    + ",\"misplaced\":" + misplaced
                    + ",\"unacknowledged\":" + extra.cardinality()
                    + ",\"redelivered\":" + redelivered
                    + ",\"groupRead\":" + groupRead
                    + ",\"groupMissing\":" + (mode.equals("idempotent") ? groupMissing() : 0)
                    + ",\"aborted\":" + aborted
                    + ",\"commitTimeouts\":" + commitTimeouts + "}";
        }
    }
}

package dev.kafkawire.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The transactional flow of {@link Flow} ({@code --mode transactions}):
 *
 * <ol>
 *   <li>The admin client creates an input and an output topic of two
 *       partitions each.</li>
 *   <li>An idempotent producer (acks=all) writes the input records: keys,
 *       values, a header and a timestamp each, record i to partition i % 2.</li>
 *   <li>A consume-transform-produce loop: a consumer in a group
 *       ({@code read_committed}, no auto commit) reads the input, and a
 *       transactional producer writes each record transformed to the same
 *       partition of the output, with the consumer's offsets, one
 *       transaction per poll. After the first commit one transaction writes
 *       poison records to both partitions and aborts.</li>
 *   <li>A {@code read_committed} consumer reads the output from the start:
 *       exactly the transformed records, in order per partition, with keys,
 *       values, headers and timestamps, and no poison; a
 *       {@code read_uncommitted} one sees the poison too.</li>
 *   <li>The group's committed offsets are the input's end offsets.</li>
 *   <li>The admin client describes the transactional id, lists it, and
 *       describes the producers of an output partition.</li>
 * </ol>
 *
 * <p>It prints one JSON object: the counts of each step. Any mismatch
 * throws.
 */
final class Transactions {
    private Transactions() {}

    private static final int PARTITIONS = 2;
    private static final int POISON_PER_PARTITION = 3;

    private static String describe(ConsumerRecord<byte[], byte[]> r) {
        StringBuilder s = new StringBuilder();
        s.append(Flow.string(r.key())).append('/').append(Flow.string(r.value()));
        for (Header h : r.headers()) {
            s.append('/').append(h.key()).append('=').append(Flow.string(h.value()));
        }
        s.append("@").append(r.timestamp());
        return s.toString();
    }

    static String run(Map<String, String> options) throws Exception {
        String prefix = options.get("--client-prefix");
        String input = options.get("--topic") + "-in";
        String output = options.get("--topic") + "-out";
        String group = options.get("--group");
        int records = Integer.parseInt(options.get("--records"));
        long base = System.currentTimeMillis() - 3_600_000L;
        Map<Integer, List<String>> expected = new HashMap<>();
        int transactions = 0;
        int transformed = 0;
        int uncommitted = 0;
        int committedRead = 0;
        long committedOffsets = 0;
        String txnState = "";
        String listed = "";
        int txnEpoch = -1;
        int producerEpoch = -1;
        long openSince = -2;

        try (Admin admin = Admin.create(Flow.common(options, "admin"))) {
            admin.createTopics(List.of(new NewTopic(input, PARTITIONS, (short) 1),
                    new NewTopic(output, PARTITIONS, (short) 1))).all().get(60, TimeUnit.SECONDS);
            Flow.waitForTopic(admin, input, true);
            Flow.waitForTopic(admin, output, true);

            Properties pp = Flow.common(options, "producer");
            pp.put("acks", "all");
            pp.put("enable.idempotence", "true");
            pp.put("linger.ms", "0");
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < records; i++) {
                    RecordHeaders headers = new RecordHeaders();
                    headers.add("index", Flow.bytes(Integer.toString(i)));
                    producer.send(new ProducerRecord<>(input, i % PARTITIONS, base + i,
                            Flow.bytes("key-" + i), Flow.bytes("value-" + i), headers)).get(60, TimeUnit.SECONDS);
                    expected.computeIfAbsent(i % PARTITIONS, k -> new ArrayList<>()).add(
                            "key-" + i + "/out-value-" + i + "/index=" + i + "/stage=transformed@" + (base + i));
                }
            }

            Properties cp = Flow.common(options, "consumer");
            cp.put("group.id", group);
            cp.put("auto.offset.reset", "earliest");
            cp.put("enable.auto.commit", "false");
            cp.put("isolation.level", "read_committed");
            cp.put("max.poll.records", "5");
            if (options.containsKey("--group-protocol")) {
                cp.put("group.protocol", options.get("--group-protocol"));
            }
            Properties tp = Flow.common(options, "txn");
            tp.put("transactional.id", prefix + "-txn");
            tp.put("linger.ms", "0");
            boolean poisoned = false;
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                 KafkaProducer<byte[], byte[]> txn =
                    new KafkaProducer<>(tp, new ByteArraySerializer(), new ByteArraySerializer())) {
                txn.initTransactions();
                consumer.subscribe(List.of(input));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (transformed < records) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("transformed " + transformed + " of " + records);
                    }
                    ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                    if (batch.isEmpty()) {
                        continue;
                    }
                    txn.beginTransaction();
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (ConsumerRecord<byte[], byte[]> r : batch) {
                        RecordHeaders headers = new RecordHeaders();
                        for (Header h : r.headers()) {
                            headers.add(h.key(), h.value());
                        }
                        headers.add("stage", Flow.bytes("transformed"));
                        txn.send(new ProducerRecord<>(output, r.partition(), r.timestamp(), r.key(),
                                Flow.bytes("out-" + Flow.string(r.value())), headers));
                        offsets.put(new TopicPartition(r.topic(), r.partition()),
                                new OffsetAndMetadata(r.offset() + 1));
                        transformed++;
                    }
                    txn.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    txn.commitTransaction();
                    transactions++;
                    if (!poisoned) {
                        // A transaction that aborts: none of it may be read committed.
                        txn.beginTransaction();
                        for (int p = 0; p < PARTITIONS; p++) {
                            for (int j = 0; j < POISON_PER_PARTITION; j++) {
                                txn.send(new ProducerRecord<>(output, p, base, Flow.bytes("poison"),
                                        Flow.bytes("poison-" + p + "-" + j)));
                            }
                        }
                        txn.flush();
                        txn.abortTransaction();
                        poisoned = true;
                    }
                }
                if (transformed != records) {
                    throw new IllegalStateException("transformed " + transformed + " of " + records);
                }
            }

            // Read the output back, committed only, then everything.
            for (String isolation : List.of("read_committed", "read_uncommitted")) {
                Properties rp = Flow.common(options, "reader-" + isolation.replace("read_", ""));
                rp.put("isolation.level", isolation);
                rp.put("enable.auto.commit", "false");
                try (KafkaConsumer<byte[], byte[]> reader =
                        new KafkaConsumer<>(rp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    List<TopicPartition> parts = new ArrayList<>();
                    for (int p = 0; p < PARTITIONS; p++) {
                        parts.add(new TopicPartition(output, p));
                    }
                    reader.assign(parts);
                    reader.seekToBeginning(parts);
                    Map<TopicPartition, Long> ends = reader.endOffsets(parts);
                    Map<Integer, List<String>> got = new HashMap<>();
                    int count = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (true) {
                        boolean done = true;
                        for (TopicPartition tp2 : parts) {
                            done &= reader.position(tp2) >= ends.get(tp2);
                        }
                        if (done) {
                            break;
                        }
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException(isolation + ": read " + count + ", ends " + ends);
                        }
                        for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ofMillis(200))) {
                            got.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(describe(r));
                            count++;
                        }
                    }
                    if (isolation.equals("read_committed")) {
                        for (int p = 0; p < PARTITIONS; p++) {
                            List<String> want = expected.getOrDefault(p, List.of());
                            List<String> have = got.getOrDefault(p, List.of());
                            if (!want.equals(have)) {
                                throw new IllegalStateException("read_committed partition " + p + ": got "
                                        + have + ", want " + want);
                            }
                        }
                        committedRead = count;
                    } else {
                        int poison = 0;
                        for (List<String> list : got.values()) {
                            for (String s : list) {
                                poison += s.startsWith("poison/") ? 1 : 0;
                            }
                        }
                        if (poison != PARTITIONS * POISON_PER_PARTITION || count != records + poison) {
                            throw new IllegalStateException("read_uncommitted: " + count + " records, "
                                    + poison + " poison");
                        }
                        uncommitted = count;
                    }
                }
            }

            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
            for (int p = 0; p < PARTITIONS; p++) {
                OffsetAndMetadata o = committed.get(new TopicPartition(input, p));
                int want = expected.getOrDefault(p, List.of()).size();
                if (o == null || o.offset() != want) {
                    throw new IllegalStateException("committed offset of " + input + "-" + p + ": " + o
                            + ", want " + want);
                }
                committedOffsets += o.offset();
            }
            // The transaction as the admin client describes it.
            String tid = prefix + "-txn";
            TransactionDescription txn = admin.describeTransactions(List.of(tid)).description(tid)
                    .get(60, TimeUnit.SECONDS);
            txnState = txn.state().toString();
            txnEpoch = txn.producerEpoch();
            for (TransactionListing listing : admin.listTransactions().all().get(60, TimeUnit.SECONDS)) {
                if (listing.transactionalId().equals(tid)) {
                    listed = listing.state().toString();
                }
            }
            TopicPartition out0 = new TopicPartition(output, 0);
            for (ProducerState producer : admin.describeProducers(List.of(out0)).partitionResult(out0)
                    .get(60, TimeUnit.SECONDS).activeProducers()) {
                if (producer.producerId() == txn.producerId()) {
                    producerEpoch = producer.producerEpoch();
                    openSince = producer.currentTransactionStartOffset().orElse(-1);
                }
            }
            admin.deleteTopics(List.of(input, output)).all().get(60, TimeUnit.SECONDS);
        }

        return "{\"txnState\":\"" + txnState + "\",\"txnEpoch\":" + txnEpoch + ",\"listed\":\"" + listed
                + "\",\"producerEpoch\":" + producerEpoch + ",\"openSince\":" + openSince
                + ",\"produced\":" + records + ",\"transformed\":" + transformed + ",\"transactions\":"
                + transactions + ",\"aborted\":" + (PARTITIONS * POISON_PER_PARTITION)
                + ",\"consumed\":" + committedRead + ",\"uncommitted\":" + uncommitted
                + ",\"committed\":" + committedOffsets + "}";
    }
}

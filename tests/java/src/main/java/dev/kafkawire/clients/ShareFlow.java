package dev.kafkawire.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The share-group flow of {@link Flow} ({@code --mode share}): the group's
 * {@code share.auto.offset.reset} set to earliest with
 * IncrementalAlterConfigs on the GROUP resource, records produced to two
 * partitions, then a share consumer (explicit acknowledgement) reads them:
 * each with its key, value, header and timestamp, in order per partition,
 * delivered once, except the first record, which it releases and gets
 * again, after the others, with a delivery count of 2. It prints the counts and the group's
 * state after the consumer closed.
 */
final class ShareFlow {
    private ShareFlow() {}

    private static String describe(ConsumerRecord<byte[], byte[]> r) {
        StringBuilder s = new StringBuilder();
        s.append(Flow.string(r.key())).append('/').append(Flow.string(r.value()));
        for (Header h : r.headers()) {
            s.append('/').append(h.key()).append('=').append(Flow.string(h.value()));
        }
        return s.append('@').append(r.timestamp()).toString();
    }

    static String run(Map<String, String> options) throws Exception {
        String topic = options.get("--topic");
        String group = options.get("--group");
        int records = Integer.parseInt(options.get("--records"));
        long base = System.currentTimeMillis() - 3_600_000L;
        Map<Integer, List<String>> expected = new HashMap<>();
        Map<Integer, List<String>> got = new HashMap<>();
        int redelivered = 0;
        int redeliveryCount = 0;
        String groupState;
        try (Admin admin = Admin.create(Flow.common(options, "admin"))) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
            Flow.waitForTopic(admin, topic, true);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get(60, TimeUnit.SECONDS);

            Properties pp = Flow.common(options, "producer");
            pp.put("acks", "all");
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < records; i++) {
                    RecordHeaders headers = new RecordHeaders();
                    headers.add("index", Flow.bytes(Integer.toString(i)));
                    producer.send(new ProducerRecord<>(topic, i % 2, base + i, Flow.bytes("key-" + i),
                            Flow.bytes("value-" + i), headers)).get(60, TimeUnit.SECONDS);
                    expected.computeIfAbsent(i % 2, k -> new ArrayList<>())
                            .add("key-" + i + "/value-" + i + "/index=" + i + "@" + (base + i));
                }
            }

            Properties cp = Flow.common(options, "share");
            cp.put("group.id", group);
            cp.put("share.acknowledgement.mode", "explicit");
            try (KafkaShareConsumer<byte[], byte[]> consumer =
                    new KafkaShareConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                boolean released = false;
                int seen = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (seen < records) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("share consumer got " + seen + " of " + records);
                    }
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        short count = r.deliveryCount().orElse((short) -1);
                        boolean first = r.partition() == 0 && r.offset() == 0;
                        if (first && !released) {
                            if (count != 1) {
                                throw new IllegalStateException("first delivery count " + count);
                            }
                            consumer.acknowledge(r, AcknowledgeType.RELEASE);
                            released = true;
                            continue;
                        }
                        if (first) {
                            redelivered++;
                            redeliveryCount = count;
                        } else if (count != 1) {
                            throw new IllegalStateException("offset " + r.offset() + " of partition "
                                    + r.partition() + " delivered " + count + " times");
                        }
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                        // The released record comes back after the others:
                        // it goes back in its place.
                        List<String> list = got.computeIfAbsent(r.partition(), k -> new ArrayList<>());
                        if (first) {
                            list.add(0, describe(r));
                        } else {
                            list.add(describe(r));
                        }
                        seen++;
                    }
                    consumer.commitSync();
                }
            }
            for (int p = 0; p < 2; p++) {
                if (!expected.getOrDefault(p, List.of()).equals(got.getOrDefault(p, List.of()))) {
                    throw new IllegalStateException("partition " + p + ": got " + got.get(p) + ", want "
                            + expected.get(p));
                }
            }
            ShareGroupDescription description = admin.describeShareGroups(List.of(group)).all()
                    .get(60, TimeUnit.SECONDS).get(group);
            groupState = description.groupState() + ":" + description.members().size();
            admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
        }
        int consumed = 0;
        for (List<String> list : got.values()) {
            consumed += list.size();
        }
        return "{\"produced\":" + records + ",\"consumed\":" + consumed + ",\"redelivered\":" + redelivered
                + ",\"redeliveryCount\":" + redeliveryCount + ",\"group\":\"" + groupState + "\"}";
    }
}

package dev.kafkawire.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
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
 *
 * <p>Then the share group's administration, as the admin client does it: its offsets altered,
 * deleted and the group deleted while the consumer is a member (refused: the group is not
 * empty), then, once it closed, the group listed among the share groups, its offsets listed
 * (the lag of every partition), altered (and listed again), deleted (and listed again), and the
 * group deleted and described. It prints what each step saw.
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

    /** What a call ended in: "ok", or its failure's exception class. */
    private static String outcome(KafkaFuture<?> future) throws InterruptedException {
        try {
            future.get(60, TimeUnit.SECONDS);
            return "ok";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (java.util.concurrent.TimeoutException e) {
            return "timeout";
        }
    }

    /** A group's share offsets, partition by partition: "start/lag" (-1: none). */
    private static String offsets(Admin admin, String group) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> info = admin
                .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(group).get(60, TimeUnit.SECONDS);
        Map<String, String> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : info.entrySet()) {
            SharePartitionOffsetInfo o = e.getValue();
            sorted.put(Integer.toString(e.getKey().partition()),
                    o.startOffset() + "/" + o.lag().map(String::valueOf).orElse("none"));
        }
        return sorted.toString();
    }

    /** Lags only (the start offsets Kafka keeps trail by one acknowledgement). */
    private static String lags(Admin admin, String group) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> info = admin
                .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(group).get(60, TimeUnit.SECONDS);
        Map<String, String> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : info.entrySet()) {
            SharePartitionOffsetInfo o = e.getValue();
            sorted.put(Integer.toString(e.getKey().partition()),
                    (o.startOffset() >= 0) + "/" + o.lag().map(String::valueOf).orElse("none"));
        }
        return sorted.toString();
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
        String active = "";
        String listed;
        String consumedLags;
        String altered;
        String offsetsDeleted;
        String groupDeleted;
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
                // While the consumer is a member: refused.
                TopicPartition first = new TopicPartition(topic, 0);
                active = outcome(admin.alterShareGroupOffsets(group, Map.of(first, 0L)).all()) + ","
                        + outcome(admin.deleteShareGroupOffsets(group, Set.of(topic)).all()) + ","
                        + outcome(admin.deleteShareGroups(List.of(group)).all());
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

            StringBuilder seenAdmin = new StringBuilder();
            for (GroupListing listing : admin.listGroups(ListGroupsOptions.forShareGroups()).all()
                    .get(60, TimeUnit.SECONDS)) {
                if (listing.groupId().equals(group)) {
                    seenAdmin.append(listing.type().map(Object::toString).orElse("?")).append(':')
                            .append(listing.groupState().map(Object::toString).orElse("?"));
                }
            }
            listed = seenAdmin.toString();
            consumedLags = lags(admin, group);
            altered = outcome(admin.alterShareGroupOffsets(group, Map.of(
                    new TopicPartition(topic, 0), 0L, new TopicPartition(topic, 1), 1L)).all())
                    + " " + offsets(admin, group);
            offsetsDeleted = outcome(admin.deleteShareGroupOffsets(group, Set.of(topic)).all())
                    + " " + offsets(admin, group);
            String deleted = outcome(admin.deleteShareGroups(List.of(group)).all());
            groupDeleted = deleted + " " + outcome(admin.describeShareGroups(List.of(group)).all());
            admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
        }
        int consumed = 0;
        for (List<String> list : got.values()) {
            consumed += list.size();
        }
        return "{\"produced\":" + records + ",\"consumed\":" + consumed + ",\"redelivered\":" + redelivered
                + ",\"redeliveryCount\":" + redeliveryCount + ",\"group\":\"" + groupState + "\""
                + ",\"whileActive\":\"" + active + "\",\"listed\":\"" + listed + "\""
                + ",\"lags\":\"" + consumedLags + "\",\"altered\":\"" + altered + "\""
                + ",\"offsetsDeleted\":\"" + offsetsDeleted + "\",\"groupDeleted\":\"" + groupDeleted
                + "\"}";
    }
}

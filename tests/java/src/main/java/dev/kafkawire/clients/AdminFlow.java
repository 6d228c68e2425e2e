package dev.kafkawire.clients;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The admin flow of {@link Flow} ({@code --mode admin}): topics created,
 * described and deleted, topic configs described and changed, a group's
 * offsets altered, listed and deleted, the group listed, described and
 * deleted, records deleted. It prints what it saw as one JSON object whose
 * every field must be the same against real Kafka and against the fake
 * (nothing in it depends on the cluster: no ids, no addresses).
 */
final class AdminFlow {
    private AdminFlow() {}

    private static final long WAIT = 60;

    static String run(Map<String, String> options) throws Exception {
        String topic = options.get("--topic");
        String group = options.get("--group");
        int records = Integer.parseInt(options.get("--records"));
        Map<String, Object> seen = new TreeMap<>();
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (Admin admin = Admin.create(Flow.common(options, "admin"))) {
            NewTopic newTopic = new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "3600000"));
            admin.createTopics(List.of(newTopic)).all().get(WAIT, TimeUnit.SECONDS);
            Flow.waitForTopic(admin, topic, true);
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(WAIT, TimeUnit.SECONDS).get(topic);
            seen.put("partitions", description.partitions().size());
            seen.put("internal", description.isInternal());

            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            seen.put("retention.ms", config(admin, resource, "retention.ms"));
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET))))
                    .all().get(WAIT, TimeUnit.SECONDS);
            seen.put("retention.ms altered", configOnceApplied(admin, resource, "retention.ms", "7200000"));
            seen.put("cleanup.policy altered", configOnceApplied(admin, resource, "cleanup.policy", "compact"));
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", ""), AlterConfigOp.OpType.DELETE))))
                    .all().get(WAIT, TimeUnit.SECONDS);
            seen.put("cleanup.policy deleted", configOnceApplied(admin, resource, "cleanup.policy", "delete"));

            Properties pp = Flow.common(options, "producer");
            pp.put("acks", "all");
            pp.put("enable.idempotence", "true");
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>(topic, i % 2, Flow.bytes("k" + i), Flow.bytes("v" + i)))
                            .get(WAIT, TimeUnit.SECONDS);
                }
            }
            seen.put("end offsets", offsets(admin, List.of(p0, p1), OffsetSpec.latest()));

            // A group's offsets, set by the admin client alone.
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(3), p1,
                    new OffsetAndMetadata(4, "meta"))).all().get(WAIT, TimeUnit.SECONDS);
            seen.put("group offsets", groupOffsets(admin, group));
            List<String> listed = new ArrayList<>();
            for (GroupListing g : admin.listGroups().all().get(WAIT, TimeUnit.SECONDS)) {
                if (g.groupId().equals(group)) {
                    listed.add(g.type().map(Object::toString).orElse("?") + ":"
                            + g.groupState().map(Object::toString).orElse("?"));
                }
            }
            seen.put("groups listed", listed);
            ConsumerGroupDescription cg = admin.describeConsumerGroups(List.of(group)).all()
                    .get(WAIT, TimeUnit.SECONDS).get(group);
            seen.put("group described", cg.groupState() + ":" + cg.members().size());
            admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get(WAIT, TimeUnit.SECONDS);
            seen.put("group offsets after delete", groupOffsets(admin, group));

            // Records deleted before offset 2 of partition 0.
            DeletedRecords deleted = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(2)))
                    .lowWatermarks().get(p0).get(WAIT, TimeUnit.SECONDS);
            seen.put("low watermark", deleted.lowWatermark());
            seen.put("earliest offsets", offsets(admin, List.of(p0, p1), OffsetSpec.earliest()));

            admin.deleteConsumerGroups(List.of(group)).all().get(WAIT, TimeUnit.SECONDS);
            boolean stillListed = false;
            for (GroupListing g : admin.listGroups().all().get(WAIT, TimeUnit.SECONDS)) {
                stillListed |= g.groupId().equals(group);
            }
            seen.put("group deleted", !stillListed);

            admin.deleteTopics(List.of(topic)).all().get(WAIT, TimeUnit.SECONDS);
            Flow.waitForTopic(admin, topic, false);
            seen.put("topic deleted", true);
        }
        StringBuilder json = new StringBuilder("{");
        List<String> fields = new ArrayList<>();
        for (Map.Entry<String, Object> e : seen.entrySet()) {
            fields.add("\"" + e.getKey() + "\":" + json(e.getValue()));
        }
        return json.append(String.join(",", fields)).append("}").toString();
    }

    private static String json(Object value) {
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        if (value instanceof Collection<?> items) {
            List<String> out = new ArrayList<>();
            for (Object item : items) {
                out.add(json(item));
            }
            return "[" + String.join(",", out) + "]";
        }
        if (value instanceof Map<?, ?> map) {
            List<String> out = new ArrayList<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.add("\"" + e.getKey() + "\":" + json(e.getValue()));
            }
            return "{" + String.join(",", out) + "}";
        }
        return "\"" + value + "\"";
    }

    private static String config(Admin admin, ConfigResource resource, String name) throws Exception {
        return shown(entry(admin, resource, name));
    }

    private static ConfigEntry entry(Admin admin, ConfigResource resource, String name) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get(WAIT, TimeUnit.SECONDS).get(resource);
        return config.get(name);
    }

    private static String shown(ConfigEntry entry) {
        return entry == null ? "absent" : entry.value() + " (" + entry.source() + ")";
    }

    /**
     * The config as described once its value is {@code expected}, or as last
     * described after 10 s: Kafka applies an altered topic config when its
     * metadata record reaches the broker, a little after the answer to the
     * alteration, so reading it back at once may see the old value.
     */
    private static String configOnceApplied(Admin admin, ConfigResource resource, String name, String expected)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            ConfigEntry entry = entry(admin, resource, name);
            if ((entry != null && expected.equals(entry.value())) || System.nanoTime() > deadline) {
                return shown(entry);
            }
            Thread.sleep(50);
        }
    }

    private static Map<String, Long> offsets(Admin admin, List<TopicPartition> parts, OffsetSpec spec)
            throws Exception {
        Map<TopicPartition, OffsetSpec> wanted = new java.util.HashMap<>();
        for (TopicPartition p : parts) {
            wanted.put(p, spec);
        }
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e :
                admin.listOffsets(wanted).all().get(WAIT, TimeUnit.SECONDS).entrySet()) {
            out.put(Integer.toString(e.getKey().partition()), e.getValue().offset());
        }
        return out;
    }

    private static Map<String, String> groupOffsets(Admin admin, String group) throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(WAIT, TimeUnit.SECONDS).entrySet()) {
            out.put(Integer.toString(e.getKey().partition()),
                    e.getValue().offset() + "/" + e.getValue().metadata());
        }
        return out;
    }
}

package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kafkawire.junit.FakeKafka;
import dev.kafkawire.junit.FakeKafkaCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The README's example, made demanding: kafka-clients 4.4.0 against @FakeKafka. */
@FakeKafka(brokers = 3, topics = "orders:6")
class OrdersTest {
    static final int RECORDS = 1_000;

    static Map<String, Object> producerConfig(FakeKafkaCluster kafka) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        return config;
    }

    static KafkaConsumer<String, String> consumer(FakeKafkaCluster kafka, String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        return new KafkaConsumer<>(config);
    }

    @Test
    void aThousandRecordsProducedComeBackInOrderPerPartition(FakeKafkaCluster kafka) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig(kafka))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sent.add(producer.send(new ProducerRecord<>("orders", "key-" + (i % 60), "order " + i)));
            }
            for (Future<RecordMetadata> ack : sent) {
                ack.get(30, TimeUnit.SECONDS);
            }
        }
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(kafka, "readers")) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (records.size() < RECORDS && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        assertEquals(RECORDS, records.size());
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        Map<String, Integer> partitionOfKey = new HashMap<>();
        List<String> values = new ArrayList<>();
        for (ConsumerRecord<String, String> record : records) {
            offsets.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(record.offset());
            assertEquals(partitionOfKey.computeIfAbsent(record.key(), k -> record.partition()), record.partition());
            values.add(record.value());
        }
        values.sort(null);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            expected.add("order " + i);
        }
        expected.sort(null);
        assertEquals(expected, values);
        assertTrue(offsets.size() > 1, "one partition only: " + offsets.keySet());
        for (List<Long> list : offsets.values()) {
            for (int i = 0; i < list.size(); i++) {
                assertEquals(i, list.get(i));
            }
        }
        assertEquals(0L, kafka.injected().get("error"));
    }

    @Test
    @FakeKafka(brokers = 1, topics = "orders:1")
    void aProducerThatDoesNotRetryFailsWithTheInjectedCode(FakeKafkaCluster kafka) throws Exception {
        // A retriable error: a producer that retries would go through.
        assertTrue(kafka.fault("produce:error=NOT_ENOUGH_REPLICAS:times=1").isPresent());
        Map<String, Object> config = producerConfig(kafka);
        config.put(ProducerConfig.RETRIES_CONFIG, 0);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>("orders", "first")).get(30, TimeUnit.SECONDS));
            assertInstanceOf(NotEnoughReplicasException.class, failed.getCause());
            assertEquals(19, Errors.forException(failed.getCause()).code());
            assertEquals(1L, kafka.injected().get("error"));
            // The fault fired its one time: the next record goes through.
            producer.send(new ProducerRecord<>("orders", "second")).get(30, TimeUnit.SECONDS);
        }
        assertEquals(1L, kafka.injected().get("error"));
    }
}

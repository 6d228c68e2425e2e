package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kafkawire.junit.FakeKafka;
import dev.kafkawire.junit.FakeKafkaCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * An idempotent producer while every partition's leader moves every 100 ms.
 * The cluster follows Kafka 4.5's first-sequence rule: under Kafka 4.4.0's
 * (KAFKA-15591), a partition's first batch that meets a leader move while
 * its second is appended is refused until its delivery timeout.
 */
class LeaderMovesTest {
    static final int RECORDS = 20_000;
    static final int KEYS = 100;

    @Test
    @FakeKafka(brokers = 3, topics = "moves:6", faults = "every=100ms:move-leaders", seed = 7,
            firstSequenceFromZero = true)
    void anIdempotentProducerLosesNothingWhileLeadersMove(FakeKafkaCluster kafka) throws Exception {
        Map<String, Object> config = OrdersTest.producerConfig(kafka);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>("moves", "key-" + (i % KEYS), Integer.toString(i)),
                        (metadata, error) -> {
                            if (error != null) {
                                failures.add(error);
                            }
                        });
            }
            producer.flush();
        }
        assertTrue(failures.isEmpty(), failures.size() + " sends failed, the first: " + failures.peek());

        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < 6; p++) {
            partitions.add(new TopicPartition("moves", p));
        }
        int[] seen = new int[RECORDS];
        Map<String, Integer> lastOfKey = new HashMap<>();
        int read = 0;
        try (KafkaConsumer<String, String> consumer = OrdersTest.consumer(kafka, "movers")) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (read < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    int value = Integer.parseInt(record.value());
                    seen[value]++;
                    read++;
                    // One key lives on one partition: its records in the order sent.
                    Integer last = lastOfKey.put(record.key(), value);
                    assertTrue(last == null || last < value, record.key() + ": " + value + " after " + last);
                }
            }
        }
        for (int i = 0; i < RECORDS; i++) {
            assertEquals(1, seen[i], "record " + i + " was read " + seen[i] + " times");
        }
        assertEquals(RECORDS, read);
        long moves = kafka.injected().get("move-leaders");
        assertTrue(moves >= 2, "the leaders moved " + moves + " times");
    }
}

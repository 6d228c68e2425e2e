package dev.kafkawire.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A fake Kafka cluster ({@code kafka-protocol fake}) for the annotated test
 * class or method, injected as a {@link FakeKafkaCluster} parameter.
 *
 * <p>On a class: one cluster, started before the class's first test (and
 * before its {@code @BeforeAll} methods, which may take it as a parameter)
 * and stopped after its last. On a method: a cluster of its own for that
 * test, stopped after it. Either way it stops on every path: a failed test,
 * an exception in a callback, an interrupted JVM, and a JVM killed outright
 * (the cluster's process stops when the pipe from this JVM ends).
 *
 * <pre>{@code
 * @FakeKafka(brokers = 3, topics = "orders:6")
 * class OrdersTest {
 *     @Test
 *     void sends(FakeKafkaCluster kafka) {
 *         try (var producer = new KafkaProducer<String, String>(Map.of(
 *                 "bootstrap.servers", kafka.bootstrap(), ...))) { ... }
 *     }
 * }
 * }</pre>
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@ExtendWith(FakeKafkaExtension.class)
public @interface FakeKafka {
    /** Brokers, node ids 0 to N-1 (1 to 64). */
    int brokers() default 3;

    /** Seed topics, {@code "NAME:PARTITIONS"}; others are created on first use. */
    String[] topics() default {};

    /**
     * Fault specs applied from the start, as {@code kafka-protocol fake --fault}
     * takes them: {@code "produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05"},
     * {@code "every=500ms:move-leaders"}, ...
     */
    String[] faults() default {};

    /** Seeds every random choice of the faults. */
    long seed() default 0;

    /** SASL users, {@code "MECHANISM:USER:PASSWORD"}; with any, every listener requires SASL. */
    String[] sasl() default {};

    /**
     * Refuse an idempotent producer's first batch on a partition that has
     * never held a record unless it starts at sequence 0, as Kafka 4.5 does;
     * Kafka 4.4.0, the default, accepts any (KAFKA-15591: under leader moves
     * or retriable errors, a producer can then lose a partition's first
     * batch to OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout).
     */
    boolean firstSequenceFromZero() default false;

    /** More arguments of {@code kafka-protocol fake}, as they are. */
    String[] args() default {};
}

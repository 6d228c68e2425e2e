package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kafkawire.junit.ControlException;
import dev.kafkawire.junit.FakeKafka;
import dev.kafkawire.junit.FakeKafkaCluster;
import dev.kafkawire.junit.FakeKafkaException;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** What the extension gives: one cluster per class or per method, control, errors. */
@FakeKafka(brokers = 2, topics = "t:2")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExtensionTest {
    static FakeKafkaCluster fromBeforeAll;
    static long methodClusterPid;
    private final FakeKafkaCluster fromConstructor;

    ExtensionTest(FakeKafkaCluster kafka) {
        this.fromConstructor = kafka;
    }

    @BeforeAll
    static void remember(FakeKafkaCluster kafka) {
        fromBeforeAll = kafka;
    }

    @Test
    @Order(1)
    void oneClusterForTheClass(FakeKafkaCluster kafka) {
        assertSame(fromBeforeAll, kafka);
        assertSame(fromConstructor, kafka);
        assertEquals(2, kafka.bootstrap().split(",").length);
        assertTrue(kafka.isRunning());
    }

    @Test
    @Order(2)
    @FakeKafka(brokers = 1)
    void aMethodHasAClusterOfItsOwn(FakeKafkaCluster kafka) {
        assertNotSame(fromBeforeAll, kafka);
        assertEquals(1, kafka.bootstrap().split(",").length);
        methodClusterPid = kafka.pid();
    }

    @Test
    @Order(3)
    void theMethodsClusterStoppedAfterItsTest() {
        assertTrue(methodClusterPid > 0);
        assertFalse(ProcessHandle.of(methodClusterPid).map(ProcessHandle::isAlive).orElse(false),
                "the cluster of the previous test still runs");
    }

    @Test
    @Order(4)
    void controlCommandsAnswerOrThrow(FakeKafkaCluster kafka) {
        Map<String, Object> before = kafka.control("leader", "topic", "t", "partition", 1);
        Map<String, Object> moved = kafka.control(Map.of("cmd", "move-leader", "topic", "t", "partition", 1));
        assertEquals(((Number) before.get("leader_epoch")).longValue() + 1, ((Number) moved.get("leader_epoch")).longValue());
        ControlException refused = assertThrows(ControlException.class, () -> kafka.control("no-such-command"));
        assertEquals("unknown command `no-such-command`", refused.getMessage());
        assertThrows(ControlException.class, () -> kafka.fault("produce:error=NO_SUCH_ERROR"));
    }

    @Test
    @Order(5)
    void theCommandsMessagesBecomeExceptions() {
        FakeKafkaException refused = assertThrows(FakeKafkaException.class,
                () -> FakeKafkaCluster.builder().brokers(0).start());
        assertTrue(refused.getMessage().contains("the number of brokers is 1 to 64, not `0`"), refused.getMessage());
        assertEquals(2, refused.exitCode());
        FakeKafkaException badSpec = assertThrows(FakeKafkaException.class,
                () -> FakeKafkaCluster.builder().faults("produce:error=NO_SUCH_ERROR").start());
        assertTrue(badSpec.getMessage().contains("fault `produce:error=NO_SUCH_ERROR`"), badSpec.getMessage());
    }

    @Test
    @Order(6)
    void stopReturnsTheCountsAndEndsTheProcess() {
        long pid;
        Map<String, Long> counts;
        try (FakeKafkaCluster cluster = FakeKafkaCluster.builder().brokers(1).faults("metadata:delay=1ms").start()) {
            pid = cluster.pid();
            counts = cluster.stop();
            assertEquals(counts, cluster.stop());
        }
        assertTrue(counts.containsKey("drop-after-records"), counts.toString());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
    }

    @Nested
    class Inner {
        @Test
        void seesTheEnclosingClassCluster(FakeKafkaCluster kafka) {
            assertSame(fromBeforeAll, kafka);
        }
    }
}
